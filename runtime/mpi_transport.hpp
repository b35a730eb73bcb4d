// genx's Transport over the public MPI API (what genx-tune times plans
// on): one tag on one communicator, so MPI's non-overtaking rule gives the
// executor its matching order.
#pragma once

#include <memory>

#include "runtime/mpi_comm.hpp"
#include "runtime/transport.hpp"

namespace genx::mpi {

// `comm` must outlive the transport.
std::unique_ptr<Transport> make_transport(const Comm& comm);

}  // namespace genx::mpi
