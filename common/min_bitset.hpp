// A set of integers in [0, n) that finds its least member in O(log64 n):
// one bit per member and, above it, one bit per nonzero word of the level
// below, up to a single word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace genx {

class MinBitset {
  public:
    MinBitset() = default;
    explicit MinBitset(size_t n) { reset(n); }

    // Empties the set and sizes it for [0, n).
    void reset(size_t n) {
        levels_.clear();
        size_t words = n;
        do {
            words = (words + 63) / 64;
            levels_.emplace_back(words, 0);
        } while (words > 1);
        count_ = 0;
    }
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    bool contains(size_t i) const { return (levels_[0][i / 64] >> (i % 64)) & 1; }

    void insert(size_t i) {
        if (contains(i)) return;
        ++count_;
        for (std::vector<uint64_t>& level : levels_) {
            uint64_t& w = level[i / 64];
            const bool was_zero = w == 0;
            w |= uint64_t{1} << (i % 64);
            if (!was_zero) break;
            i /= 64;
        }
    }
    void erase(size_t i) {
        if (!contains(i)) return;
        --count_;
        for (std::vector<uint64_t>& level : levels_) {
            uint64_t& w = level[i / 64];
            w &= ~(uint64_t{1} << (i % 64));
            if (w != 0) break;
            i /= 64;
        }
    }
    // The least member; the set must not be empty.
    size_t first() const {
        size_t i = 0;
        for (size_t l = levels_.size(); l-- > 0;)
            i = i * 64 + static_cast<size_t>(__builtin_ctzll(levels_[l][i]));
        return i;
    }

  private:
    std::vector<std::vector<uint64_t>> levels_;  // levels_[0]: the members
    size_t count_ = 0;
};

}  // namespace genx
