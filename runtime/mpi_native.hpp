// What a Comm holds: for runtime/mpi_*.cpp only (the one header with
// mpi.h; docs/design.md §2).
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "runtime/mpi_comm.hpp"

namespace genx::mpi {

struct Comm::Impl {
    MPI_Comm comm = MPI_COMM_NULL;
    bool owned = false;  // MPI_Comm_free at the end
};

}  // namespace genx::mpi
