// Closed-form prices: the cost model's prediction for a few families on one
// rank per node without a topology, from P and the params alone, without
// generating a program (docs/model.md, "Pricing at scale").
//
// With RankMap{} every transfer goes through the two ranks' own NICs, so a
// step's link cost depends only on its rank's own bytes, messages, sending
// ranks and whether it is a shift, and the critical path is a chain known
// in advance:
//   ring, cps, hcps, cyclic butterfly: rank 0's steps in order (every rank
//     runs rank 0's program translated, so each step waits only for its
//     own predecessor and its partners' steps cost the same);
//   rb (root 0): the root's gather and broadcast, each as slow as the
//     busier of the root and a leaf;
//   rd on a non-power of two: rank 1 (the first folding rank) folds rank
//     0's vector in and runs the log2 p' exchanges, then rank 0 takes the
//     result back.  Folding ranks are the last to finish every exchange:
//     the others start no earlier and their exchanges cost the same.
// Each step is priced by the same functions as PlanModel's pricing pass
// (step_price.hpp) on the same loads and its times added in the same
// order, so seconds, terms, coefficients and the critical path equal
// PlanModel's to the bit whenever every block holds the same number of
// elements (count a multiple of nblocks), which is what the decision
// table prices; other counts are refused.  tests/unit/test_per_rank.cpp
// compares both on many P (primes and 2^k ± 1 among them), params and
// sizes.
//
// The per-step volumes: ring and hcps as their generators state; the
// cyclic butterfly's step i (n_i live vectors, N_J translates) sends
// min(P, ⌊n_i/2⌋ + N_J − 1) blocks and combines as many, or N_J +
// min(P, ⌊n_i/2⌋ + N_J − 2) once an odd n_i has passed and n_i is even
// (the receive lands beside a kept copy); butterfly.hpp has the
// construction.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "plan/registry.hpp"
#include "tuning/cost_model.hpp"

namespace genx {

class ClosedForm {
  public:
    // Whether `algorithm` with `params` (generator keys) on `nranks` ranks
    // has a closed form under `ranks`; fills *out when it has.  False for
    // params the generator would refuse: preparing it reports why.
    static bool make(const std::string& algorithm, const ParamMap& params, int nranks,
                     const RankMap& ranks, ClosedForm* out);

    int nblocks() const { return nblocks_; }
    // As PlanModel::predict; count must be a positive multiple of nblocks()
    // (else the status says so and seconds is +infinity).
    Prediction predict(size_t count, size_t elem_size, const ModelParams& params) const;

  private:
    // One rank's link use in one step, in blocks, and where it sits.
    struct Links {
        long sent = 0, recv = 0;
        int nsent = 0, nrecv = 0;  // transfers
        int sources = 0;           // distinct ranks sending to it
        bool shift = false;        // sends and receives, not pairwise
        int rank = 0, step = 0;
    };
    // A step of the critical path, `repeat` times in a row (step labels
    // counting up): its own links, the matched step at the other end when
    // that one may be busier, and the blocks it combines and accesses
    // (weighted as PlanModel counts them: k−1 and k+1 per block of a k-ary
    // reduce).
    struct Step {
        Links own;
        bool has_partner = false;
        Links partner;
        long reduce = 0, memory = 0;
        long repeat = 1;
    };

    static void ring(int P, ClosedForm* out);
    static void hcps(const std::vector<int>& factors, ClosedForm* out);
    static void rb(int P, ClosedForm* out);
    static void rd(int P, ClosedForm* out);
    static void butterfly(int P, int r, ClosedForm* out);

    int nblocks_ = 1;
    std::vector<Step> steps_;  // in time order
};

}  // namespace genx
