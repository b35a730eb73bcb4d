/*
 * coll_genx.h: the Open MPI 4.1 side of genx (coll API 2.0.0, module
 * 2.3.0).  The glue is C because Open MPI's internal headers are not valid
 * C++; it turns MPI objects into the plain values of genx/genx_core.h,
 * supplies the PML as the core's transport, and sends everything the core
 * cannot or will not run to the component that owned MPI_Allreduce before
 * genx (normally tuned), saved when the module is enabled.
 *
 * Only mca_coll_genx_component has to be visible to Open MPI's loader; the
 * other mca_coll_genx_* symbols are shared between the glue's files and
 * hidden by the build.
 */
#ifndef MCA_COLL_GENX_EXPORT_H
#define MCA_COLL_GENX_EXPORT_H

#include "ompi_config.h"

#include <stdint.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"

#include "genx/genx_core.h"

BEGIN_C_DECLS

typedef struct mca_coll_genx_component_t {
    mca_coll_base_component_2_0_0_t super;

    /* MCA parameters (coll_genx_*), read once at registration. */
    int priority;
    int verbose;
    char *allreduce_algorithm;
    char *allreduce_params;
    /* The per-cluster rules file (docs/rules.md) and whether a file genx
     * cannot use (or any other bad setting) aborts the job. */
    char *rules;
    bool rules_strict;

    /* opal_output stream for decisions, verbosity = coll_genx_verbose. */
    int output;
    /* A bad coll_genx_allreduce_algorithm/params value is reported once per
     * process, whatever the verbosity, not once per communicator. */
    bool config_error_reported;
} mca_coll_genx_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_genx_component_t mca_coll_genx_component;

/* Fallbacks the glue already reported on one communicator: hashes of
 * (size class, reason).  Fixed capacity, so that logging never allocates;
 * once full, further ones on that communicator are not printed (said once). */
#define MCA_COLL_GENX_LOGGED_MAX 128

typedef struct mca_coll_genx_module_t {
    mca_coll_base_module_t super;

    ompi_communicator_t *comm;
    genx_comm *core;
    genx_transport_ops transport;

    /* The allreduce that was installed before genx (retained). */
    mca_coll_base_module_allreduce_fn_t fallback_allreduce;
    mca_coll_base_module_t *fallback_allreduce_module;
    const char *fallback_name;

    /* Whether every rank's core decides alike (genx_comm_digest), checked
     * with the fallback allreduce at genx's first call: 0 not yet, 1 yes,
     * -1 no (every call then goes to the fallback). */
    int agreed;

    uint64_t logged[MCA_COLL_GENX_LOGGED_MAX];
    int nlogged;
    bool logged_full;
} mca_coll_genx_module_t;

OBJ_CLASS_DECLARATION(mca_coll_genx_module_t);

int mca_coll_genx_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_genx_comm_query(ompi_communicator_t *comm, int *priority);

int mca_coll_genx_allreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);

/* Fills ops with the PML transport over module->comm. */
void mca_coll_genx_pml_transport(mca_coll_genx_module_t *module, genx_transport_ops *ops);

END_C_DECLS

#endif /* MCA_COLL_GENX_EXPORT_H */
