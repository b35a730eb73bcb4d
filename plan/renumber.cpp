// Rank numberings (renumber.hpp).
#include "plan/renumber.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>

#include "plan/registry.hpp"

namespace genx {

namespace {

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

int log2_exact(int p) {
    int l = 0;
    while ((1 << l) < p) ++l;
    return l;
}

uint32_t reverse_bits(uint32_t x, int bits) {
    uint32_t out = 0;
    for (int i = 0; i < bits; ++i) out |= ((x >> i) & 1u) << (bits - 1 - i);
    return out;
}

// The smallest and largest values `digits` negabinary digits hold.
void negabinary_range(int digits, long* lo, long* hi) {
    *lo = *hi = 0;
    long w = 1;
    for (int i = 0; i < digits; ++i, w *= -2) (w > 0 ? *hi : *lo) += w;
}

// Negabinary digits of v (base −2), as bits.
uint32_t to_negabinary(long v) {
    uint32_t out = 0;
    for (int i = 0; v != 0; ++i) {
        long r = v % -2;
        v /= -2;
        if (r < 0) r += 2, v += 1;
        out |= static_cast<uint32_t>(r) << i;
    }
    return out;
}

// Bine's ν(r) for a power of two P (renumber.hpp).
int bine_nu(int r, int P) {
    const int bits = log2_exact(P);
    long lo, hi;
    negabinary_range(bits, &lo, &hi);
    const long a = (r % 2) ? r : -static_cast<long>(r);
    const long b = (r % 2) ? static_cast<long>(r) - P : static_cast<long>(P) - r;
    const bool a_fits = a >= lo && a <= hi, b_fits = b >= lo && b <= hi;
    uint32_t nb = 0;
    if (a_fits && b_fits)
        nb = (to_negabinary(a) >> (bits - 1)) & 1u ? to_negabinary(a) : to_negabinary(b);
    else
        nb = to_negabinary(a_fits ? a : b);
    nb ^= nb >> 1;
    return static_cast<int>(reverse_bits(nb & ((1u << bits) - 1), bits));
}

// The ranks in the network's order (renumber.hpp, "topo").  On a grid of
// power-of-two sides, cells are sorted by their coordinates' bits
// interleaved (Z-order), so that each bit of a number moves along one
// dimension; on a torus each coordinate is first read in reflected Gray
// code, so that on a ring of n numbers differing in a coordinate's top bit
// sit n/4 apart instead of n/2 and every other bit keeps its distance.
Status network_order(const TopologyView& v, std::vector<int>* out) {
    out->clear();
    if (!v.grid.empty() && !v.grid_host.empty()) {
        bool morton = true;
        int levels = 0;  // bits of the largest side
        for (int d : v.grid) morton = morton && power_of_two(d), levels = std::max(levels, log2_exact(d));
        morton = morton && levels * static_cast<int>(v.grid.size()) <= 64;
        std::vector<std::pair<uint64_t, int>> cells;  // (Z-order key, grid index)
        const int n = static_cast<int>(v.grid_host.size());
        for (int g = 0; g < n; ++g) {
            uint64_t key = static_cast<uint64_t>(g);
            if (morton) {
                key = 0;
                int rest = g, bit = 0;
                std::vector<int> coord;
                for (int d : v.grid) coord.push_back(rest % d), rest /= d;
                if (v.grid_wrap)
                    for (int& c : coord) c ^= c >> 1;
                for (int level = 0; level < levels; ++level)
                    for (size_t dim = 0; dim < coord.size(); ++dim, ++bit)
                        key |= static_cast<uint64_t>((coord[dim] >> level) & 1) << bit;
            }
            cells.emplace_back(key, g);
        }
        std::sort(cells.begin(), cells.end());
        for (const auto& c : cells) {
            const TopoNode& h = v.nodes[static_cast<size_t>(v.grid_host[static_cast<size_t>(c.second)])];
            out->insert(out->end(), h.ranks.begin(), h.ranks.end());
        }
    } else {
        for (int n : preorder(v.nodes, 0)) {
            const TopoNode& h = v.nodes[static_cast<size_t>(n)];
            out->insert(out->end(), h.ranks.begin(), h.ranks.end());
        }
    }
    if (static_cast<int>(out->size()) != v.nranks())
        return Status::invalid("order=topo: the topology does not place every rank on a host");
    return Status::ok();
}

}  // namespace

bool renumberable_family(const std::string& family) {
    return family == "butterfly" || family == "rd" || family == "rhd";
}

bool order_reads_topology(const std::string& params) {
    return params.find("order=topo") != std::string::npos;
}

Status rank_numbering(const std::string& order, int P, const TopologyView* view, std::vector<int>* perm) {
    perm->resize(static_cast<size_t>(P));
    if (order == "identity") {
        std::iota(perm->begin(), perm->end(), 0);
        return Status::ok();
    }
    if (order == "bine") {
        if (!power_of_two(P))
            return Status::invalid("order=bine: Bine's remapping needs a power-of-two number of ranks, not " +
                                   std::to_string(P));
        for (int r = 0; r < P; ++r) (*perm)[static_cast<size_t>(bine_nu(r, P))] = r;
        return Status::ok();
    }
    if (order == "topo" || order == "topo-rev") {
        if (view == nullptr || view->empty())
            return Status::invalid("order=" + order + " needs the network (a topology file, preset or Slurm's addresses)");
        if (order == "topo-rev" && !power_of_two(P))
            return Status::invalid("order=topo-rev: bit reversal needs a power-of-two number of ranks, not " +
                                   std::to_string(P));
        std::vector<int> sorted;
        GENX_RETURN_IF_ERROR(network_order(*view, &sorted));
        for (int v = 0; v < P; ++v) {
            const int pos = order == "topo" ? v : static_cast<int>(reverse_bits(static_cast<uint32_t>(v), log2_exact(P)));
            (*perm)[static_cast<size_t>(v)] = sorted[static_cast<size_t>(pos)];
        }
        return Status::ok();
    }
    return Status::invalid("order='" + order + "': expected identity, topo, topo-rev or bine");
}

void renumber(const std::vector<int>& perm, RankGenerator* gen) {
    bool identity = true;
    for (size_t v = 0; v < perm.size(); ++v) identity = identity && perm[v] == static_cast<int>(v);
    if (identity) return;
    auto table = std::make_shared<const std::vector<int>>(perm);
    auto inverse = std::make_shared<std::vector<int>>(perm.size());
    for (size_t v = 0; v < perm.size(); ++v) (*inverse)[static_cast<size_t>(perm[v])] = static_cast<int>(v);
    gen->emit = [inner = std::move(gen->emit), table, inv = std::shared_ptr<const std::vector<int>>(inverse)](
                    int rank, Program* out) {
        const size_t first = out->steps.size();
        inner((*inv)[static_cast<size_t>(rank)], out);
        for (size_t s = first; s < out->steps.size(); ++s) {
            for (Transfer& t : out->steps[s].sends) t.peer = (*table)[static_cast<size_t>(t.peer)];
            for (Transfer& t : out->steps[s].recvs) t.peer = (*table)[static_cast<size_t>(t.peer)];
        }
    };
    // Renamed ranks keep their workloads (representatives map along) but
    // no longer form the declared translation group, and rank order is
    // lost.
    for (int& r : gen->header.representatives) r = perm[static_cast<size_t>(r)];
    gen->header.symmetry.clear();
    gen->header.symmetry_fixed.clear();
    gen->header.order_preserving = false;
}

std::vector<std::string> numberings_for(int P, const TopologyView* view) {
    std::vector<std::string> out;
    if (view == nullptr || view->empty()) return out;
    out.push_back("topo");
    if (power_of_two(P)) {
        out.push_back("topo-rev");
        out.push_back("bine");
    }
    return out;
}

}  // namespace genx
