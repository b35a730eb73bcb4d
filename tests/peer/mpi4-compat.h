/*
 * mpi4-compat.h: force-included (-include) into MPICH's tests by
 * run-peer.sh.  MPICH's persistent-collective tests call the MPI 4 names
 * (MPI_Allreduce_init, ...); Open MPI 4.1 reports MPI 3.1 and has the same
 * calls, with the same arguments, as MPIX_..._init in its pcollreq
 * extension (mpi-ext.h).  Map the reduction ones to those; where neither
 * exists the test does not build and run-peer.sh lists it as not built.
 */
#ifndef GENX_PEER_MPI4_COMPAT_H
#define GENX_PEER_MPI4_COMPAT_H

#include <mpi.h>

#if MPI_VERSION < 4 && defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Reduce_init MPIX_Reduce_init
#define MPI_Reduce_scatter_init MPIX_Reduce_scatter_init
#define MPI_Reduce_scatter_block_init MPIX_Reduce_scatter_block_init
#define MPI_Scan_init MPIX_Scan_init
#define MPI_Exscan_init MPIX_Exscan_init
#endif
#endif

#endif
