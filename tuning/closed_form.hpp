// Closed-form prices: the cost model's prediction for a few families
// without generating a program (docs/model.md, "Pricing at scale"), with
// one rank per node or K consecutive ranks per node (RankMap::by_slot,
// mpirun's default), no topology.
//
// A closed form is a compact model: a few model ranks, each a list of
// steps whose loads are summarised in blocks (no block lists), with the
// matched steps each one waits for.  predict() prices it exactly as
// PlanModel prices the generated plan: the same step functions
// (step_price.hpp) on the same loads, the same start rule (own previous
// step, else the latest partner's, ties to the own step, then to the lowest
// rank), the same last step and critical path.  So seconds, terms,
// coefficients and the critical path equal PlanModel's to the bit whenever
// every block holds the same number of elements (count a multiple of
// nblocks), which is what the decision table prices; other counts are
// refused.  tests/unit/test_per_rank.cpp compares both on many P (primes
// and 2^k ± 1 among them), K, params and sizes.
//
// Which ranks are modelled, family by family:
//   ring, cps, hcps, butterfly (cyclic, xor or any n1xn2x... group): node
//     0's ranks, as PlanModel's one-node quotient does, where the quotient
//     applies because node 0 is an initial block of the group's digits:
//     K = n1·…·n_t·g with g dividing n_(t+1).  A transfer to rank q is
//     matched with q's translate in node 0; the node's NIC carries all K
//     ranks' inter-node blocks.  The per-step volumes are the generators'
//     (closed_form_families.cpp has each derivation); the butterfly's
//     factor c step, with N live values and J's width w_c, moves
//     Π_{c'<c} w_c' · min(n_c, ⌊N/2⌋ + w_c − 1) · Π_{c'>c} n_c' blocks.
//   rb (root 0): the root and the first leaf of each kind (on the root's
//     node, on a full node, on a short last node): the root sets every
//     step's pace and ends last.
//   rd on a non-power of two, one rank per node: rank 1 (the first folding
//     rank: it finishes every exchange last) and rank 0; with K > 1 per
//     node, every rank, each step of one (pairwise) transfer, since nodes
//     mix folding and plain ranks in their NIC loads (up to
//     kClosedFormMaxRankSteps steps in all).
//   rhd (either distance) on a non-power of two, one rank per node: rank 1
//     and rank 0 as for rd, step j of the reduce-scatter moving p'/2^(j+1)
//     blocks and the allgather the same counts in reverse (the distance
//     changes who the partner is, not the counts).  With K > 1 per node,
//     every rank as for rd, each swap's partner at the generator's
//     distance (which decides the exchanges that stay on a node), up to
//     kClosedFormMaxRankSteps steps in all (65,535 ranks), as rd's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "tuning/cost_model.hpp"

namespace genx {

// The most steps rd's and rhd's every-rank models (K > 1 per node) may
// have: rd's at 10⁵ ranks (1.19·10⁶) fit, rhd's there (2.24·10⁶ a
// distance) do not, so that a 10⁵-rank table stays within its second
// (bench/RESULTS.md); rhd fits up to 65,535 ranks, rd up to about 1.4·10⁵.
constexpr long kClosedFormMaxRankSteps = 2000000;

class ClosedForm {
  public:
    // The ranks per node of `ranks` as the closed forms read it: 1 for
    // RankMap{} (every rank alone on a node), K when rank r is on node r / K
    // for every r (RankMap::by_slot; K = nranks when all share one node),
    // 0 otherwise (a topology's map, any other placement): no closed form.
    static int ranks_per_node(const RankMap& ranks, int nranks);

    // Whether `algorithm` with `params` (generator keys) on `nranks` ranks,
    // `ppn` per node as ranks_per_node() reads it, has a closed form; fills
    // *out when it has.  False for params the generator would refuse:
    // preparing it reports why.
    static bool make(const std::string& algorithm, const ParamMap& params, int nranks, int ppn,
                     ClosedForm* out);
    static bool make(const std::string& algorithm, const ParamMap& params, int nranks,
                     const RankMap& ranks, ClosedForm* out) {
        return make(algorithm, params, nranks, ranks_per_node(ranks, nranks), out);
    }

    int nblocks() const { return nblocks_; }
    // As PlanModel::predict; count must be a positive multiple of nblocks()
    // (else the status says so and seconds is +infinity).
    Prediction predict(size_t count, size_t elem_size, const ModelParams& params) const;

  private:
    class Pricing;
    class NodeZero;
    // A model rank's load in one step, in blocks, as PlanModel tallies the
    // step's transfers and ops ([0] intra-node, [1] inter-node).
    struct Own {
        long sent[2] = {0, 0}, recv[2] = {0, 0};
        int nsent[2] = {0, 0}, nrecv[2] = {0, 0};  // transfers
        int flows_in = 0;                          // intra-node transfers received
        // Bit c: the step sends and receives over class c, not pairwise.
        uint8_t shift = 0;
        // Blocks combined and accessed (k−1 and k+1 per block of a k-ary
        // reduce, as PlanModel weighs them).
        long reduce = 0, memory = 0;
    };
    // The rank's node in that step: the inter-node blocks of all its ranks
    // in their steps of the same index, and the distinct nodes sending to
    // it (PlanModel's NIC load).
    struct Nic {
        long sent = 0, recv = 0;
        int sources = 0;
    };
    // Steps step, step+1, ... of one model rank, alike: `own` and `nic`
    // index owns_ and nics_; its partners (entries_ indices, the matched
    // steps of the ranks it exchanges with, in the order PlanModel meets
    // them, without repeats or itself) are at the same offset from their
    // own first steps.  How many steps: its phase's repeat.
    struct Entry {
        int rank = 0;
        int step = 0;
        int own = 0, nic = 0;
        uint32_t first_partner = 0, npartners = 0;
    };
    // Entries priced `repeat` times over (each time one step later), in
    // order_[first, first + n).  An entry's partners are in its phase;
    // every entry's previous step and its partners' previous steps are in
    // an earlier phase or an earlier repeat.
    struct Phase {
        long repeat = 1;
        uint32_t first = 0, n = 0;
    };

    // Builders (closed_form_families.cpp); each fills the model of one
    // family and returns false where it has none.
    static bool ring(int P, int K, ClosedForm* out);
    static bool hcps(const std::vector<int>& factors, int K, ClosedForm* out);
    static bool butterfly(const std::vector<int>& radix, int r, int K, ClosedForm* out);
    static void rb(int P, int K, ClosedForm* out);
    static void rd(int P, int K, ClosedForm* out);
    static void rd_all_ranks(int P, int K, ClosedForm* out);
    static void rhd(int P, ClosedForm* out);
    static void rhd_all_ranks(int P, int K, bool doubling, ClosedForm* out);
    // rd's and rhd's chain with K ranks per node, every rank modelled: the
    // fold of `all` blocks, `steps` core steps (step j swaps blocks(j) with
    // new rank n ^ distance(j), adding them where reduces(j)), the unfold.
    struct FoldedCore {
        int steps = 0;
        long all = 1;
        std::function<long(int)> blocks;
        std::function<int(int)> distance;
        std::function<bool(int)> reduces;
    };
    static void folded_all_ranks(int P, int K, const FoldedCore& core, ClosedForm* out);
    // rd's and rhd's chain with one rank per node: rank 0 hands rank 1 its
    // `all` blocks (step 0), `core` adds rank 1's steps 1..n and returns
    // n, and rank 1 hands the result back (its step n + 1, rank 0's 1).
    static void folded(long all, const std::function<int(int)>& core, ClosedForm* out);

    // Model building: model ranks with their real ranks, loads, entries,
    // partners and phases; finish() indexes the entries by rank.
    int add_rank(int real);
    int add_own(const Own& o);
    int add_nic(const Nic& n);
    uint32_t add_entry(int rank, int step, int own, int nic);
    void set_partners(uint32_t entry, const std::vector<uint32_t>& partners);
    void add_phase(long repeat, const std::vector<uint32_t>& entries);
    void finish();

    int nblocks_ = 1;
    std::vector<int> real_;  // real rank of each model rank
    std::vector<Own> owns_;
    std::vector<Nic> nics_;
    std::vector<Entry> entries_;
    std::vector<uint32_t> partners_;
    std::vector<Phase> phases_;
    std::vector<uint32_t> order_;
    // By finish(): each model rank's entries by step (rank_entries_[m] ..
    // rank_entries_[m + 1] in by_rank_), its step count and the index of
    // its first step in a per-step array (time_first_).
    std::vector<uint32_t> rank_entries_, by_rank_;
    std::vector<int> nsteps_;
    std::vector<size_t> time_first_;
};

}  // namespace genx
