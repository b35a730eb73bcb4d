// FNV-1a, the one hash genx uses to summarise decisions (decision-table
// digests, forced-algorithm digests, the glue's once-per-reason log keys
// through genx_hash() in genx/genx_core.h): stable across processes and
// builds, which ranks comparing digests need; not for adversarial input.
#pragma once

#include <cmath>
#include <cstddef>
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

// FNV-1a over typed fields, for fingerprints of structures (topology
// views, topologies): integers in a fixed byte order (least significant
// first) so that the hash is the same on every platform, strings with their
// length, doubles rounded to the nearest integer (callers scale them to the
// unit they mean: bytes/s, ns).
struct FnvHasher {
    uint64_t h = kFnvOffset;
    void bytes(const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= kFnvPrime;
        }
    }
    void i64(int64_t v) {
        for (int i = 0; i < 8; ++i) {
            const unsigned char b =
                static_cast<unsigned char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
            bytes(&b, 1);
        }
    }
    void f64(double v) { i64(static_cast<int64_t>(std::llround(v))); }
    void str(const std::string& s) {
        i64(static_cast<int64_t>(s.size()));
        bytes(s.data(), s.size());
    }
};

// A list of link classes (topology/'s LinkClass and plan/'s TopoLinkClass:
// name, rate in B/s, latency in s, cross_dc), hashed the same way by both
// fingerprints: rates to 1 B/s, latencies to 1 ns.
template <typename Classes>
void hash_link_classes(FnvHasher& f, const Classes& classes) {
    f.i64(static_cast<int64_t>(classes.size()));
    for (const auto& c : classes) {
        f.str(c.name);
        f.f64(c.rate);
        f.f64(c.latency * 1e9);
        f.i64(c.cross_dc);
    }
}

}  // namespace genx
