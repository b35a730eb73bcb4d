// The allreduce genx displaced, as the cost model prices it: the incumbent
// of a rules file's "fallback" model rule (docs/rules.md).
//
// Where genx knows which component it displaced and how that component
// decides, the incumbent is priced as that component's own choice at each
// size: Open MPI 4.1 coll/tuned's fixed decision for a commutative
// allreduce (ompi_coll_tuned_allreduce_intra_dec_fixed), its algorithm
// mapped onto genx's plan of the same schedule.  Elsewhere (han, tuned's
// dynamic rules, Open MPI 5.0, a non-blocking call's libnbc) it is priced
// as the cheapest of Open MPI's own algorithms, an optimistic stand-in.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tuning/cost_model.hpp"

namespace genx {

enum class Displaced {
    Unknown,       // priced as the cheapest of Open MPI's modelled algorithms
    TunedFixed41,  // Open MPI 4.1 coll/tuned with its fixed decision
};

// "unknown" and "tuned-4.1", as genx-plan --displaced spells them.
const char* displaced_name(Displaced d);
bool parse_displaced(const std::string& text, Displaced* out);

// What a communicator's blocking table prices the displaced component as,
// from what the glue knows of it: `component`, the name of the coll
// component whose allreduce genx saved ("tuned", "han", ...; "" unknown),
// `tuned_dynamic`, whether coll_tuned_use_dynamic_rules is set (tuned may
// then follow a rules file or a forced algorithm), and `mpi_version`
// ("4.1.4"; "" unknown).  Tuned's fixed decision only for tuned without
// dynamic rules on Open MPI 4.1; *why says which and why, in a few words.
Displaced displaced_for(const std::string& component, bool tuned_dynamic,
                        const std::string& mpi_version, std::string* why);

// Open MPI 4.1's coll/tuned fixed decision for a commutative allreduce of
// `bytes` bytes (count × type size) on `comm_size` ranks, as tuned numbers
// its algorithms: 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling,
// 4 ring, 5 segmented_ring, 6 rabenseifner.
int ompi41_tuned_allreduce(int comm_size, size_t bytes);
// Tuned's name of algorithm 1..6 ("rabenseifner"), "" for another number.
const char* tuned_allreduce_name(int tuned_id);

// The genx plans the displaced component's choice is priced as: the
// incumbent costs the cheapest of `plans`.  The first is the plan of the
// same schedule, and must be priced for the incumbent to be; the others are
// what tuned runs instead when the count of elements, which genx's table
// does not know, is small (its ring with fewer elements than ranks runs
// recursive doubling, its rabenseifner with fewer than 2^⌊log2 P⌋ runs
// basic_linear).  For nonoverlapping (tuned's own reduce, then its bcast:
// trees no genx plan follows) `stand_in` is set: rb root=0 and Open MPI's
// modelled algorithms, whichever is priced and cheapest, stand in for it.
// why[k] says why plans[k] is there ("" for the first).  few_below: the
// element count below which tuned runs one of the others instead of the
// first (the ring's P, rabenseifner's 2^⌊log2 P⌋; 0 where the count does
// not matter), so a call of at least that many elements runs the first.
struct DisplacedPlans {
    int tuned_id = 0;
    bool stand_in = false;
    size_t few_below = 0;
    std::vector<Candidate> plans;
    std::vector<std::string> why;
};
DisplacedPlans ompi41_tuned_plans(int comm_size, size_t bytes);

// Which of `d.plans` (ompi41_tuned_plans(comm_size, bytes)) tuned runs for
// `count` elements, where the count is known (genx-plan --displaced-plan):
// coll/base's ring runs recursive doubling for fewer elements than ranks,
// its rabenseifner basic_linear for fewer than 2^floor(log2 P).  -1 for
// nonoverlapping, whose trees no genx plan follows.
int ompi41_tuned_run_index(const DisplacedPlans& d, int comm_size, size_t count);

// Family-list token for enumerate_candidates: every plan
// ompi41_tuned_plans names for some size (ring, rd, Open MPI's rabenseifner
// as rhd distance=doubling, rb root=0), priced once per table.
inline constexpr const char* kTunedFamilies = "@tuned-4.1";
std::vector<Candidate> tuned_candidates();
// What the stand-in for an unknown component is the cheapest of: ring, rd
// and rhd in rank order, and rhd as Open MPI's rabenseifner orders its
// exchanges (distance=doubling).
std::vector<Candidate> openmpi_candidates();

}  // namespace genx
