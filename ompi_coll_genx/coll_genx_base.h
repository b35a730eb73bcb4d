/*
 * coll_genx_base.h: Open MPI's own blocking allreduce algorithms (the
 * coll/base functions that coll/tuned runs when coll_tuned_allreduce_algorithm
 * forces one), which a "fallback" rule may name (params "base=NAME",
 * docs/rules.md) where one of them measured faster than both genx's plans
 * and the displaced component's own choice.  genx calls them; it carries
 * no copy of them.
 *
 * `which` is tuned's number (the core's genx_base_algorithm_name names
 * it): 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
 * 6 rabenseifner.
 *
 * Used by the component only (genx-tune times the same algorithms as
 * coll/tuned runs them when forced: runtime/mpi_tuned.hpp).
 */
#ifndef MCA_COLL_GENX_BASE_H
#define MCA_COLL_GENX_BASE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether algorithm `which` exists here and runs a call with `op`: ring
 * and rabenseifner combine contributions out of rank order, so they take
 * commutative ops only (coll/tuned's own rule). */
int mca_coll_genx_base_applies(int which, MPI_Op op);

/* Runs algorithm `which`.  module: a coll module whose base_data is set
 * (basic_linear's broadcast takes its request array from there);
 * nonoverlapping calls the communicator's installed reduce and bcast.
 * MPI_ERR_ARG for an unknown `which`. */
int mca_coll_genx_base_allreduce(int which, const void *sbuf, void *rbuf, int count,
                                 MPI_Datatype dtype, MPI_Op op, MPI_Comm comm, void *module);

/* Gives `module` (a coll module) the base_data the algorithms need, once;
 * 0 when it could not be allocated. */
int mca_coll_genx_base_attach(void *module);

#ifdef __cplusplus
}
#endif

#endif /* MCA_COLL_GENX_BASE_H */
