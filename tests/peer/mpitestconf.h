/*
 * mpitestconf.h for MPICH's test suite (test/mpi) built by run-peer.sh
 * against Open MPI's mpicc: the answers MPICH's test configure would give
 * on Debian 12 with gcc, written by hand instead of running that configure.
 * USE_STRICT_MPI keeps the tests to the MPI standard (no MPIX_ calls), as
 * MPICH's configure does for an MPI other than MPICH.
 */
#ifndef GENX_PEER_MPITESTCONF_H
#define GENX_PEER_MPITESTCONF_H

#define USE_STRICT_MPI 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX

#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_USLEEP 1

#define HAVE__BOOL 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_LONG_DOUBLE_COMPLEX 1

#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1

#endif
