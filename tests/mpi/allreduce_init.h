/*
 * allreduce_init.h: the persistent allreduce under the name this MPI
 * library gives it.  MPI 4 made it MPI_Allreduce_init, which Open MPI 5.0
 * provides (while still reporting MPI 3.1); Open MPI 4.1 has it as
 * MPIX_Allreduce_init in its pcollreq extension (mpi-ext.h).  Both reach
 * the same coll module slot, coll_allreduce_init.
 *
 * GENX_HAVE_ALLREDUCE_INIT is 1 where one of them exists, and then
 * GENX_ALLREDUCE_INIT names it.  Include after mpi.h.
 */
#ifndef GENX_TESTS_ALLREDUCE_INIT_H
#define GENX_TESTS_ALLREDUCE_INIT_H

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define GENX_HAVE_ALLREDUCE_INIT 1
#define GENX_ALLREDUCE_INIT MPI_Allreduce_init
#define GENX_ALLREDUCE_INIT_NAME "MPI_Allreduce_init"
#else
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define GENX_HAVE_ALLREDUCE_INIT 1
#define GENX_ALLREDUCE_INIT MPIX_Allreduce_init
#define GENX_ALLREDUCE_INIT_NAME "MPIX_Allreduce_init"
#else
#define GENX_HAVE_ALLREDUCE_INIT 0
#endif
#endif

#endif /* GENX_TESTS_ALLREDUCE_INIT_H */
