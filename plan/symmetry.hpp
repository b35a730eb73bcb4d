// Finite abelian groups of ranks: Z_n1 × Z_n2 × ... with element
// x = x1 + n1·(x2 + n2·(...)) identified with rank x.
//
// Two users: the butterfly generator builds its schedule over such a group
// (Kolmakov & Zhang's construction), and every generator whose plan is
// invariant under the group's translations declares it in
// PlanHeader::symmetry, which lets the cost model and the statistics read a
// plan of 10⁵ ranks off the programs of one node.  The checker proves a
// declared symmetry (check_symmetry in checker.hpp).
#pragma once

#include <utility>
#include <vector>

namespace genx {

struct RankGroup {
    std::vector<int> radix;
    std::vector<int> stride;
    int order = 1;
    bool binary = true;  // all factors 2: + is XOR

    RankGroup() = default;
    explicit RankGroup(std::vector<int> r) : radix(std::move(r)) {
        for (int n : radix) {
            stride.push_back(order);
            order *= n;
            binary = binary && n == 2;
        }
    }
    int digit(int x, size_t k) const { return (x / stride[k]) % radix[k]; }
    // x with its digits `fixed` (indices) set to 0: the translation of x
    // among those that leave these digits at 0 (PlanHeader::symmetry_fixed).
    int free_part(int x, const std::vector<int>& fixed) const {
        for (int k : fixed) x -= digit(x, static_cast<size_t>(k)) * stride[static_cast<size_t>(k)];
        return x;
    }
    int add(int a, int b) const {
        if (binary) return a ^ b;
        if (radix.size() == 1) return a + b < order ? a + b : a + b - order;
        if (radix.size() == 2) {  // e.g. ppn x nodes: two divisions, not one per digit and term
            const int n0 = radix[0], n1 = radix[1];
            int lo = a % n0 + b % n0, hi = a / n0 + b / n0;
            if (lo >= n0) lo -= n0;
            if (hi >= n1) hi -= n1;
            return lo + n0 * hi;
        }
        int out = 0;
        for (size_t k = 0; k < radix.size(); ++k)
            out += ((digit(a, k) + digit(b, k)) % radix[k]) * stride[k];
        return out;
    }
    int neg(int a) const {
        if (binary) return a;
        if (radix.size() == 1) return (order - a) % order;
        if (radix.size() == 2) {
            const int n0 = radix[0], n1 = radix[1], lo = a % n0, hi = a / n0;
            return (lo == 0 ? 0 : n0 - lo) + n0 * (hi == 0 ? 0 : n1 - hi);
        }
        int out = 0;
        for (size_t k = 0; k < radix.size(); ++k)
            out += ((radix[k] - digit(a, k)) % radix[k]) * stride[k];
        return out;
    }
    int sub(int a, int b) const {
        if (binary) return a ^ b;
        if (radix.size() == 1) return a >= b ? a - b : a - b + order;
        return add(a, neg(b));
    }
    // Block index of element x: its digits reversed (x1 most significant).
    // Butterfly and hcps both number blocks this way, so that the blocks a
    // rank owns after folding the first factor form one index range.
    int block_of(int x) const {
        if (radix.size() <= 1) return x;
        int out = 0;
        if (binary) {  // bit reversal: shifts, not a division per digit
            for (size_t k = 0; k < radix.size(); ++k) out = (out << 1) | ((x >> k) & 1);
            return out;
        }
        for (size_t k = 0; k < radix.size(); ++k) out = out * radix[k] + digit(x, k);
        return out;
    }
};

}  // namespace genx
