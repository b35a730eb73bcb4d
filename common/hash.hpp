// FNV-1a, the one hash genx uses to summarise decisions (decision-table
// digests, forced-algorithm digests, the glue's once-per-reason log keys
// through genx_hash() in genx/genx_core.h): stable across processes and
// builds, which ranks comparing digests need; not for adversarial input.
#pragma once

#include <cstdint>
#include <string>

namespace genx {

constexpr uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

inline uint64_t fnv1a(const std::string& text, uint64_t h = kFnvOffset) {
    for (unsigned char c : text) {
        h ^= c;
        h *= kFnvPrime;
    }
    return h;
}

// Mixes one field and a terminator, so that ("ab", "c") and ("a", "bc")
// hash apart.
inline uint64_t fnv1a_field(const std::string& text, uint64_t h) {
    h = fnv1a(text, h);
    h ^= 0xff;
    return h * kFnvPrime;
}

}  // namespace genx
