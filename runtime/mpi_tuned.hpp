// Open MPI's coll components seen through MPI_T, for genx-tune: whether
// genx's own component is loaded, and Open MPI's allreduce algorithms run
// as coll/tuned runs one when it is forced (docs/genx-tune.md, "Open MPI's
// algorithms").  Public MPI API only; the component is not involved.
#pragma once

#include <string>

#include "runtime/mpi_comm.hpp"

namespace genx::mpi {

// Whether genx's component is loaded with a priority that lets it take
// MPI_Allreduce (coll_genx_priority >= 0; the variable exists only where
// Open MPI opened the component, not under --mca coll ^genx).
bool genx_component_active();

// Before init: turns on coll_tuned_use_dynamic_rules through the
// environment (MPI_T cannot: tuned registers it read-only), unless the
// user set it.  Without a rules file or a forced algorithm tuned still
// decides by its fixed rules, as it does with the variable off.
void allow_forced_algorithms();

// After init: empty when tuned will run a forced algorithm, else why not.
std::string forced_algorithms_unavailable();

// A duplicate of `comm` whose MPI_Allreduce runs tuned's algorithm
// `tuned_id` (1 basic_linear, 2 nonoverlapping, 3 recursive_doubling,
// 4 ring, 6 rabenseifner): coll_tuned_allreduce_algorithm written through
// MPI_T for the duplicate's creation, when tuned reads it, then restored.
// Collective over `comm`.
Comm forced_allreduce_comm(const Comm& comm, int tuned_id);

}  // namespace genx::mpi
