// The displaced allreduce's choice as genx's plans (displaced.hpp).
#include "tuning/displaced.hpp"

#include <climits>
#include <cstdint>

namespace genx {

namespace {

// One band of communicator sizes of tuned's table: below `below_ranks`
// ranks, the algorithm of the first cut whose `below_bytes` exceeds the
// message's bytes.  Read from Open MPI 4.1.4's
// ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, the commutative branch
// of ompi_coll_tuned_allreduce_intra_dec_fixed (the table came with 4.1.0,
// open-mpi/ompi#7952; 5.0 has another).
struct Cut {
    size_t below_bytes;
    int alg;
};
struct Band {
    int below_ranks;
    std::vector<Cut> cuts;
};

constexpr size_t kAll = SIZE_MAX;

const std::vector<Band>& tuned41_bands() {
    static const std::vector<Band> bands = {
        {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {kAll, 6}}},
        {8, {{16, 4}, {8192, 3}, {kAll, 6}}},
        {16, {{8192, 3}, {kAll, 6}}},
        {32, {{64, 5}, {4096, 3}, {kAll, 6}}},
        {64, {{128, 5}, {kAll, 6}}},
        {128, {{262144, 3}, {kAll, 6}}},
        {256, {{131072, 2}, {262144, 3}, {kAll, 6}}},
        {512, {{4096, 2}, {kAll, 6}}},
        {2048, {{2048, 2}, {16384, 3}, {kAll, 6}}},
        {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {kAll, 6}}},
        {INT_MAX, {{2048, 2}, {16384, 5}, {32768, 3}, {kAll, 6}}},
    };
    return bands;
}

const Candidate kRing{"ring", ""};
const Candidate kRd{"rd", ""};
const Candidate kRhd{"rhd", ""};
// tuned's rabenseifner: vector halving with distance doubling.
const Candidate kRabenseifner{"rhd", "distance=doubling"};
// tuned's basic_linear: a linear reduce to rank 0, then a linear bcast.
const Candidate kLinear{"rb", "root=0"};

}  // namespace

const char* displaced_name(Displaced d) {
    return d == Displaced::TunedFixed41 ? "tuned-4.1" : "unknown";
}

bool parse_displaced(const std::string& text, Displaced* out) {
    if (text == "tuned-4.1") {
        *out = Displaced::TunedFixed41;
    } else if (text == "unknown") {
        *out = Displaced::Unknown;
    } else {
        return false;
    }
    return true;
}

Displaced displaced_for(const std::string& component, bool tuned_dynamic,
                        const std::string& mpi_version, std::string* why) {
    std::string unknown;
    if (component != "tuned")
        unknown = component.empty() ? "the displaced component is not known"
                                    : "the displaced allreduce is " + component + "'s, not tuned's";
    else if (tuned_dynamic)
        unknown = "coll_tuned_use_dynamic_rules is set: tuned may follow a rules file or a forced "
                  "algorithm";
    else if (mpi_version.compare(0, 4, "4.1.") != 0)
        unknown = "Open MPI " + (mpi_version.empty() ? std::string("of unknown version") : mpi_version) +
                  ": genx knows tuned's fixed decision of 4.1 only";
    if (unknown.empty()) {
        if (why != nullptr) *why = "fallback incumbents priced as Open MPI 4.1 tuned's fixed decision";
        return Displaced::TunedFixed41;
    }
    if (why != nullptr)
        *why = "fallback incumbents priced as Open MPI's best modelled algorithm (" + unknown + ")";
    return Displaced::Unknown;
}

int ompi41_tuned_allreduce(int comm_size, size_t bytes) {
    for (const Band& b : tuned41_bands()) {
        if (comm_size >= b.below_ranks) continue;
        for (const Cut& c : b.cuts)
            if (bytes < c.below_bytes) return c.alg;
    }
    return 6;  // not reached: the last band and cut hold everything
}

const char* tuned_allreduce_name(int tuned_id) {
    static const char* const names[] = {"",     "basic_linear",   "nonoverlapping", "recursive_doubling",
                                        "ring", "segmented_ring", "rabenseifner"};
    return tuned_id >= 1 && tuned_id <= 6 ? names[tuned_id] : "";
}

DisplacedPlans ompi41_tuned_plans(int comm_size, size_t bytes) {
    DisplacedPlans d;
    d.tuned_id = ompi41_tuned_allreduce(comm_size, bytes);
    auto add = [&d](const Candidate& c, const std::string& why) {
        d.plans.push_back(c);
        d.why.push_back(why);
    };
    if (comm_size <= 1) {  // nothing to exchange: every family is the same empty plan
        add(kRing, "");
        return d;
    }
    switch (d.tuned_id) {
    case 1:
        add(kLinear, "");
        break;
    case 2:
        d.stand_in = true;
        add(kLinear, "a stand-in for tuned's reduce and bcast trees");
        for (const Candidate& c : {kRd, kRing, kRabenseifner})
            add(c, "a stand-in for tuned's reduce and bcast trees");
        break;
    case 3:
        add(kRd, "");
        break;
    case 4:
    case 5:  // segmented with no segment size: the plain ring
        add(kRing, "");
        add(kRd, "as tuned runs it for fewer elements than ranks");
        d.few_below = static_cast<size_t>(comm_size);
        break;
    default:
        d.few_below = 1;
        while (d.few_below * 2 <= static_cast<size_t>(comm_size)) d.few_below *= 2;
        add(kRabenseifner, "");
        add(kLinear, "basic_linear, as tuned runs it for fewer elements than 2^floor(log2 P)");
        break;
    }
    return d;
}

int ompi41_tuned_run_index(const DisplacedPlans& d, int comm_size, size_t count) {
    if (d.stand_in) return -1;
    if (comm_size <= 1) return 0;  // the one empty plan
    // ring and segmented_ring: plans ring, rd; rabenseifner: rhd
    // distance=doubling, rb root=0; the others run as chosen.
    return count < d.few_below ? 1 : 0;
}

std::vector<Candidate> tuned_candidates() { return {kRing, kRd, kRabenseifner, kLinear}; }

std::vector<Candidate> openmpi_candidates() { return {kRing, kRd, kRhd, kRabenseifner}; }

}  // namespace genx
