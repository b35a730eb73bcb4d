// genx's fused reduction kernels against a naive scalar reference, the
// MPI validity table, and the callback path (incl. a non-commutative op).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/reduce.hpp"
#include "typed_data.hpp"

using namespace genx;
using namespace genx_test;

TEST_CASE("dtype sizes and names", "[reduce]") {
    for (genx_dtype t : builtin_types()) {
        INFO(dtype_name(t));
        CHECK(genx_dtype_size(t) == type_size(t));
    }
    CHECK(genx_dtype_size(GENX_DT_LONG_DOUBLE) == sizeof(long double));
    CHECK(genx_dtype_size(GENX_DT_OTHER) == 0);
    CHECK(std::string(dtype_name(GENX_DT_UINT16)) == "uint16");
    CHECK(std::string(op_name(GENX_OP_BXOR)) == "BXOR");
}

TEST_CASE("kernels exist exactly for the pairs MPI defines", "[reduce]") {
    int valid = 0;
    for (genx_dtype t : builtin_types()) {
        for (genx_op op : builtin_ops()) {
            INFO(dtype_name(t) << " " << op_name(op));
            ReduceKernel k;
            Status st = resolve_kernel(t, op, type_size(t), nullptr, &k);
            if (mpi_defines(t, op)) {
                ++valid;
                CHECK(st.is_ok());
                CHECK(k.valid());
                CHECK_FALSE(k.is_callback());
            } else {
                CHECK(st.code() == Code::Unsupported);
                CHECK(st.message().find(dtype_name(t)) != std::string::npos);
                CHECK(st.message().find(op_name(op)) != std::string::npos);
            }
        }
    }
    // 8 integer types x 10 ops + 3 floating types x 4 + bool x 3.
    CHECK(valid == 8 * 10 + 3 * 4 + 3);
}

TEST_CASE("invalid pairs stay invalid even with a callback", "[reduce]") {
    genx_reduce_cb cb{nullptr, [](void*, const void*, void*, size_t) {}};
    ReduceKernel k;
    Status st = resolve_kernel(GENX_DT_FLOAT, GENX_OP_BAND, 4, &cb, &k);
    CHECK(st.code() == Code::Unsupported);
    CHECK(st.message().find("BAND") != std::string::npos);
    CHECK(st.message().find("float") != std::string::npos);
    st = resolve_kernel(GENX_DT_BOOL, GENX_OP_SUM, 1, &cb, &k);
    CHECK(st.code() == Code::Unsupported);
}

TEST_CASE("element size must match the type", "[reduce]") {
    ReduceKernel k;
    CHECK(resolve_kernel(GENX_DT_INT32, GENX_OP_SUM, 8, nullptr, &k).code() == Code::InvalidArgument);
    genx_reduce_cb cb{nullptr, [](void*, const void*, void*, size_t) {}};
    CHECK(resolve_kernel(GENX_DT_OTHER, GENX_OP_SUM, 0, &cb, &k).code() == Code::InvalidArgument);
    CHECK(resolve_kernel(GENX_DT_OTHER, GENX_OP_SUM, 12, nullptr, &k).code() == Code::Unsupported);
    CHECK(resolve_kernel(GENX_DT_INT32, GENX_OP_OTHER, 4, nullptr, &k).code() == Code::Unsupported);
    CHECK(resolve_kernel(GENX_DT_INT32, static_cast<genx_op>(77), 4, nullptr, &k).code() ==
          Code::InvalidArgument);
}

namespace {

// The ISAs this CPU runs: every test of the built-in kernels runs on each.
std::vector<ReduceIsa> isas() {
    std::vector<ReduceIsa> v{ReduceIsa::Baseline};
    if (reduce_isa_available(ReduceIsa::Avx2)) {
        v.push_back(ReduceIsa::Avx2);
    } else {
        WARN("this CPU has no AVX2: the avx2 kernels are not tested here");
    }
    return v;
}

}  // namespace

TEST_CASE("fused kernels match the naive left fold for every pair and k = 2..9", "[reduce]") {
    // 5003 elements: odd (vector tails) and longer than one 8 KiB strip for
    // every type, so the k > 4 strip loop runs several strips.
    const size_t n = 5003;
    for (ReduceIsa isa : isas())
    for (genx_dtype t : builtin_types()) {
        const size_t es = type_size(t);
        for (genx_op op : builtin_ops()) {
            if (!mpi_defines(t, op)) continue;
            ReduceKernel k;
            REQUIRE(resolve_kernel(t, op, es, nullptr, false, isa, &k).is_ok());
            for (int arity = 2; arity <= 9; ++arity) {
                INFO(reduce_isa_name(isa) << " " << dtype_name(t) << " " << op_name(op) << " k=" << arity);
                std::vector<std::vector<unsigned char>> in;
                for (int j = 0; j < arity; ++j) in.push_back(make_input(t, op, j, n, 7));
                std::vector<unsigned char> expect = in[0];
                for (int j = 1; j < arity; ++j)
                    for (size_t i = 0; i < n; ++i)
                        ref_combine(t, op, expect.data() + i * es, in[j].data() + i * es);
                std::vector<unsigned char> dst = in[0];
                std::vector<const void*> srcs;
                for (int j = 1; j < arity; ++j) srcs.push_back(in[j].data());
                k.apply(dst.data(), srcs.data(), arity - 1, n);
                CHECK(first_difference(t, dst.data(), expect.data(), n) == -1);
                // Sources are read-only.
                for (int j = 1; j < arity; ++j)
                    CHECK(in[j] == make_input(t, op, j, n, 7));
            }
        }
    }
}

TEST_CASE("integer SUM and PROD wrap like two's complement", "[reduce]") {
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_INT8, GENX_OP_SUM, 1, nullptr, &k).is_ok());
    int8_t d[2] = {127, -128};
    const int8_t a[2] = {1, -1};
    const void* s[1] = {a};
    k.apply(d, s, 1, 2);
    CHECK(d[0] == -128);
    CHECK(d[1] == 127);
    REQUIRE(resolve_kernel(GENX_DT_UINT16, GENX_OP_PROD, 2, nullptr, &k).is_ok());
    uint16_t x[1] = {65535};
    const uint16_t y[1] = {65535};
    const void* sy[1] = {y};
    k.apply(x, sy, 1, 1);
    CHECK(x[0] == 1);  // 65535^2 mod 2^16
}

namespace {

// 2x2 matrices of uint64 under multiplication mod 2^64: associative and
// not commutative, the classic stand-in for a user op with an order.
struct Mat {
    uint64_t a, b, c, d;
    bool operator==(const Mat& o) const { return a == o.a && b == o.b && c == o.c && d == o.d; }
};
Mat mul(const Mat& x, const Mat& y) {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
}
// MPI_Reduce_local contract: inout = in (op) inout.
void mat_cb(void* ctx, const void* in, void* inout, size_t count) {
    ++*static_cast<int*>(ctx);
    const Mat* i = static_cast<const Mat*>(in);
    Mat* io = static_cast<Mat*>(inout);
    for (size_t e = 0; e < count; ++e) io[e] = mul(i[e], io[e]);
}
Mat sample_mat(int j, size_t i) {
    const uint64_t h = mix(static_cast<uint64_t>(j) * 7919 + i);
    return {h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, (h >> 24) & 0xff};
}

}  // namespace

TEST_CASE("order-exact callback computes dst * s1 * ... * s(k-1)", "[reduce]") {
    // 5000 32-byte elements: several 64 KiB callback strips.
    const size_t n = 5000;
    int calls = 0;
    genx_reduce_cb cb{&calls, mat_cb};
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_OTHER, GENX_OP_OTHER, sizeof(Mat), &cb, false, &k).is_ok());
    REQUIRE(k.is_callback());
    REQUIRE(k.temp_bytes() >= sizeof(Mat));
    std::vector<unsigned char> temp(k.temp_bytes());
    for (int arity = 2; arity <= 5; ++arity) {
        INFO("k=" << arity);
        std::vector<std::vector<Mat>> in(static_cast<size_t>(arity), std::vector<Mat>(n));
        for (int j = 0; j < arity; ++j)
            for (size_t i = 0; i < n; ++i) in[static_cast<size_t>(j)][i] = sample_mat(j, i);
        std::vector<Mat> expect = in[0];
        for (int j = 1; j < arity; ++j)
            for (size_t i = 0; i < n; ++i) expect[i] = mul(expect[i], in[static_cast<size_t>(j)][i]);
        std::vector<Mat> dst = in[0];
        std::vector<const void*> srcs;
        for (int j = 1; j < arity; ++j) srcs.push_back(in[static_cast<size_t>(j)].data());
        k.apply(dst.data(), srcs.data(), arity - 1, n, temp.data());
        CHECK(dst == expect);
        // The reversed product differs, so the check above can fail.
        std::vector<Mat> reversed = in[static_cast<size_t>(arity - 1)];
        for (int j = arity - 2; j >= 0; --j)
            for (size_t i = 0; i < n; ++i) reversed[i] = mul(reversed[i], in[static_cast<size_t>(j)][i]);
        CHECK_FALSE(dst == reversed);
    }
    CHECK(calls > 0);
}

TEST_CASE("commutative callback applies sources directly", "[reduce]") {
    auto sum3 = [](void*, const void* in, void* inout, size_t count) {
        const int32_t* i = static_cast<const int32_t*>(in);
        int32_t* io = static_cast<int32_t*>(inout);
        for (size_t e = 0; e < 3 * count; ++e) io[e] += i[e];
    };
    genx_reduce_cb cb{nullptr, sum3};
    ReduceKernel k;
    REQUIRE(resolve_kernel(GENX_DT_OTHER, GENX_OP_SUM, 12, &cb, true, &k).is_ok());
    CHECK(k.temp_bytes() == 0);
    std::vector<int32_t> d = {1, 2, 3, 4, 5, 6}, a = {10, 20, 30, 40, 50, 60}, b = {100, 0, 100, 0, 100, 0};
    const void* s[2] = {a.data(), b.data()};
    k.apply(d.data(), s, 2, 2);
    CHECK(d == std::vector<int32_t>{111, 22, 133, 44, 155, 66});
}

TEST_CASE("short and misaligned arrays: every ISA gives the reference's bits", "[reduce]") {
    // Lengths around the vector widths (16 and 32 bytes) and operands one
    // element off their allocation's alignment: the vector loops' heads and
    // tails.
    for (ReduceIsa isa : isas()) {
        for (genx_dtype t : {GENX_DT_INT8, GENX_DT_INT32, GENX_DT_UINT64, GENX_DT_FLOAT, GENX_DT_DOUBLE}) {
            const size_t es = type_size(t);
            for (genx_op op : {GENX_OP_SUM, GENX_OP_MAX, GENX_OP_PROD}) {
                ReduceKernel k;
                REQUIRE(resolve_kernel(t, op, es, nullptr, false, isa, &k).is_ok());
                for (size_t n = 1; n <= 70; ++n) {
                    for (int arity : {2, 3, 4}) {
                        INFO(reduce_isa_name(isa) << " " << dtype_name(t) << " " << op_name(op) << " n=" << n
                                                  << " k=" << arity);
                        std::vector<std::vector<unsigned char>> in;
                        for (int j = 0; j < arity; ++j) {
                            // One element in front: the operand starts misaligned.
                            std::vector<unsigned char> v(es, 0);
                            const std::vector<unsigned char> x = make_input(t, op, j, n, 3);
                            v.insert(v.end(), x.begin(), x.end());
                            in.push_back(v);
                        }
                        std::vector<unsigned char> expect(in[0].begin() + static_cast<long>(es), in[0].end());
                        for (int j = 1; j < arity; ++j)
                            for (size_t i = 0; i < n; ++i)
                                ref_combine(t, op, expect.data() + i * es, in[j].data() + es + i * es);
                        std::vector<const void*> srcs;
                        for (int j = 1; j < arity; ++j) srcs.push_back(in[j].data() + es);
                        k.apply(in[0].data() + es, srcs.data(), arity - 1, n);
                        CHECK(first_difference(t, in[0].data() + es, expect.data(), n) == -1);
                    }
                }
            }
        }
    }
}

TEST_CASE("the kernels' ISA: the CPU's by default, names, and what a CPU lacks is refused", "[reduce]") {
    CHECK(std::string(reduce_isa_name(ReduceIsa::Baseline)) == "baseline");
    CHECK(std::string(reduce_isa_name(ReduceIsa::Avx2)) == "avx2");
    CHECK(reduce_isa_available(ReduceIsa::Baseline));
    CHECK(reduce_isa_available(reduce_isa()));
#if defined(__x86_64__)
    CHECK(reduce_isa_available(ReduceIsa::Avx2) == static_cast<bool>(__builtin_cpu_supports("avx2")));
#endif
    ReduceKernel k;
    const Status st = resolve_kernel(GENX_DT_FLOAT, GENX_OP_SUM, 4, nullptr, false, ReduceIsa::Avx2, &k);
    if (reduce_isa_available(ReduceIsa::Avx2)) {
        CHECK(st.is_ok());
    } else {
        CHECK(st.code() == Code::Unsupported);
        CHECK(st.message().find("avx2") != std::string::npos);
    }
}

namespace {

// Values on which two vector lowerings of one operator could differ:
// non-integers (rounding), NaN, signed zeros, infinities, denormals, the
// extremes; integers over their whole range.
template <typename F>
F hostile_float(uint64_t h) {
    switch (h % 12) {
        case 0: return std::numeric_limits<F>::quiet_NaN();
        case 1: return -0.0;
        case 2: return 0.0;
        case 3: return std::numeric_limits<F>::infinity();
        case 4: return -std::numeric_limits<F>::infinity();
        case 5: return std::numeric_limits<F>::denorm_min() * static_cast<F>(h % 7 + 1);
        case 6: return std::numeric_limits<F>::max();
        case 7: return std::numeric_limits<F>::lowest();
        default: {
            const F x = static_cast<F>(static_cast<double>(h >> 11) / 9007199254740992.0);  // [0, 1)
            return (h & 1 ? -1 : 1) * x * static_cast<F>(std::ldexp(1.0, static_cast<int>(h % 40) - 20));
        }
    }
}

std::vector<unsigned char> hostile_input(genx_dtype t, int j, size_t n) {
    const size_t es = type_size(t);
    std::vector<unsigned char> v(n * es);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t h = mix(static_cast<uint64_t>(j) * 7919 + i * 104729 + 17);
        unsigned char* p = v.data() + i * es;
        if (t == GENX_DT_FLOAT) {
            const float x = hostile_float<float>(h);
            std::memcpy(p, &x, es);
        } else if (t == GENX_DT_DOUBLE) {
            const double x = hostile_float<double>(h);
            std::memcpy(p, &x, es);
        } else if (t == GENX_DT_BOOL) {
            p[0] = static_cast<unsigned char>(h & 1);
        } else {
            std::memcpy(p, &h, es);  // every bit pattern of the integer type
        }
    }
    return v;
}

}  // namespace

TEST_CASE("baseline and avx2 kernels give the same bytes on hostile values", "[reduce]") {
    // ISA against ISA, byte for byte: NaN payloads and signed zeros must
    // come out of MIN/MAX's compare-and-blend exactly as from SSE2's.
    if (!reduce_isa_available(ReduceIsa::Avx2)) {
        WARN("this CPU has no AVX2: nothing to compare");
        return;
    }
    const size_t n = 1031;
    int compared = 0;
    for (genx_dtype t : builtin_types()) {
        if (t == GENX_DT_LONG_DOUBLE) continue;  // one kernel for both
        const size_t es = type_size(t);
        for (genx_op op : builtin_ops()) {
            if (!mpi_defines(t, op)) continue;
            ReduceKernel base, avx2;
            REQUIRE(resolve_kernel(t, op, es, nullptr, false, ReduceIsa::Baseline, &base).is_ok());
            REQUIRE(resolve_kernel(t, op, es, nullptr, false, ReduceIsa::Avx2, &avx2).is_ok());
            for (int arity = 2; arity <= 5; ++arity) {
                INFO(dtype_name(t) << " " << op_name(op) << " k=" << arity);
                std::vector<std::vector<unsigned char>> in;
                for (int j = 0; j < arity; ++j) in.push_back(hostile_input(t, j, n));
                std::vector<const void*> srcs;
                for (int j = 1; j < arity; ++j) srcs.push_back(in[j].data());
                std::vector<unsigned char> a = in[0], b = in[0];
                base.apply(a.data(), srcs.data(), arity - 1, n);
                avx2.apply(b.data(), srcs.data(), arity - 1, n);
                CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
                // The data reaches the cases it was built for.
                if (t == GENX_DT_FLOAT || t == GENX_DT_DOUBLE) CHECK(a != in[0]);
                ++compared;
            }
        }
    }
    CHECK(compared == (8 * 10 + 2 * 4 + 3) * 4);
}
