// genx-tune's reports (tune/report.hpp).
#include "tune/report.hpp"

#include <cstdio>

#include "runtime/mpi_comm.hpp"
#include "tuning/rules.hpp"

namespace genx::tune {

namespace {
int g_rank = 0;
double g_t0 = 0;
}  // namespace

void set_reporter(int rank, double t0) {
    g_rank = rank;
    g_t0 = t0;
}

void progress(const std::string& msg) {
    if (g_rank != 0) return;
    std::fprintf(stderr, "[genx-tune %6.1fs] %s\n", mpi::wtime() - g_t0, msg.c_str());
    std::fflush(stderr);
}

void die(const std::string& msg, int code) {
    std::fprintf(stderr, "genx-tune (rank %d): %s\n", g_rank, msg.c_str());
    mpi::abort(code);
}

void check(const Status& st, const std::string& what) {
    if (!st) die(what + ": " + st.message());
}

std::string describe(const std::string& alg, const std::string& params) {
    return params.empty() ? alg : alg + " " + params;
}

}  // namespace genx::tune
