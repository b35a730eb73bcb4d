/*
 * coll_genx_base.c: runs Open MPI's coll/base allreduce algorithms for a
 * "fallback" rule that names one (coll_genx_base.h).
 */
#include "ompi_config.h"

#include "ompi/constants.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/coll/base/coll_base_functions.h"
#include "ompi/op/op.h"

#include "coll_genx_base.h"

int mca_coll_genx_base_applies(int which, MPI_Op op)
{
    switch (which) {
    case 1: /* basic_linear: reduce to rank 0 in rank order, broadcast */
    case 2: /* nonoverlapping: the installed reduce, then bcast */
    case 3: /* recursive_doubling: keeps the order of operations */
        return 1;
    case 4: /* ring */
    case 6: /* rabenseifner (reduce-scatter + allgather) */
        return ompi_op_is_commute(op) ? 1 : 0;
    default:
        return 0;
    }
}

int mca_coll_genx_base_allreduce(int which, const void *sbuf, void *rbuf, int count,
                                 MPI_Datatype dtype, MPI_Op op, MPI_Comm comm, void *module)
{
    mca_coll_base_module_t *m = (mca_coll_base_module_t *) module;

    switch (which) {
    case 1:
        return ompi_coll_base_allreduce_intra_basic_linear(sbuf, rbuf, count, dtype, op, comm, m);
    case 2:
        return ompi_coll_base_allreduce_intra_nonoverlapping(sbuf, rbuf, count, dtype, op, comm,
                                                             m);
    case 3:
        return ompi_coll_base_allreduce_intra_recursivedoubling(sbuf, rbuf, count, dtype, op,
                                                                comm, m);
    case 4:
        return ompi_coll_base_allreduce_intra_ring(sbuf, rbuf, count, dtype, op, comm, m);
    case 6:
        return ompi_coll_base_allreduce_intra_redscat_allgather(sbuf, rbuf, count, dtype, op,
                                                                comm, m);
    default:
        return MPI_ERR_ARG;
    }
}

int mca_coll_genx_base_attach(void *module)
{
    mca_coll_base_module_t *m = (mca_coll_base_module_t *) module;

    /* The module's destructor (mca_coll_base_module_t's) releases it. */
    if (NULL == m->base_data) {
        m->base_data = OBJ_NEW(mca_coll_base_comm_t);
    }
    return (NULL != m->base_data) ? 1 : 0;
}
