/*
 * Stand-in for an Open MPI header that Debian's libopenmpi-dev does not ship.
 * ompi/op/op.h needs only OMPI_INT_2_FINT from it; on every platform genx
 * supports, MPI_Fint is a C int, where Open MPI defines that macro as a plain
 * conversion.  Searched with -idirafter, so a complete installation's own
 * header takes precedence.
 */
#ifndef GENX_COMPAT_FINT_2_INT_H
#define GENX_COMPAT_FINT_2_INT_H
#define OMPI_INT_2_FINT(a) ((MPI_Fint)(a))
#endif
