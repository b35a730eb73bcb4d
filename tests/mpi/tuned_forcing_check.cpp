// Checks runtime/mpi_tuned.hpp against Open MPI: each of tuned's allreduce
// algorithms forced on a duplicate communicator really runs (genx-tune
// times Open MPI's algorithms this way; docs/genx-tune.md).  A summing
// operation records the length of every call the algorithm makes on each
// rank; at 4 ranks and 4096 floats each algorithm leaves its own trace.
// Run under mpirun -np 4 --mca coll ^genx.  Exit 0 passed, 1 failed,
// 77 when tuned cannot be forced here.
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/mpi_native.hpp"  // mpi.h, and a Comm's MPI_Comm
#include "runtime/mpi_tuned.hpp"

namespace {

std::string g_trace;

void traced_sum(void* in, void* inout, int* len, MPI_Datatype*) {
    const float* a = static_cast<const float*>(in);
    float* b = static_cast<float*>(inout);
    for (int i = 0; i < *len; ++i) b[i] += a[i];
    g_trace += (g_trace.empty() ? "" : " ") + std::to_string(*len);
}

// Every rank's trace of one MPI_Allreduce on `comm`, "|"-separated (on
// rank 0 only).
std::string trace(MPI_Comm comm, MPI_Op op, bool* right) {
    std::vector<float> v(4096, 1.0f);
    g_trace.clear();
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_FLOAT, op, comm);
    *right = v[0] == 4.0f && v.back() == 4.0f;
    char mine[128] = {0};
    std::snprintf(mine, sizeof mine, "%s", g_trace.empty() ? "-" : g_trace.c_str());
    std::vector<char> all(4 * sizeof mine);
    MPI_Gather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, 0, comm);
    std::string out;
    for (int r = 0; r < 4; ++r) out += (r ? "|" : "") + std::string(&all[static_cast<size_t>(r) * sizeof mine]);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    genx::mpi::allow_forced_algorithms();
    MPI_Init(&argc, &argv);
    int size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::string why = genx::mpi::forced_algorithms_unavailable();
    if (size != 4 || !why.empty()) {
        if (rank == 0) std::printf("SKIP: %s\n", size != 4 ? "run on 4 ranks" : why.c_str());
        MPI_Finalize();
        return 77;
    }
    MPI_Op op;
    MPI_Op_create(traced_sum, 1, &op);
    const genx::mpi::Comm world = genx::mpi::Comm::world();
    bool right = false;
    const std::string plain = trace(MPI_COMM_WORLD, op, &right);
    // tuned's number and the trace its algorithm leaves ("2" may follow
    // tuned's own reduce decision, so only its difference is checked).
    const struct {
        int id;
        const char* name;
        const char* expect;
    } algs[] = {{1, "basic_linear", "4096 4096 4096|-|-|-"},
                {2, "nonoverlapping", nullptr},
                {3, "recursive_doubling", "4096 4096|4096 4096|4096 4096|4096 4096"},
                {4, "ring", "1024 1024 1024|1024 1024 1024|1024 1024 1024|1024 1024 1024"},
                {6, "rabenseifner", "2048 1024|2048 1024|2048 1024|2048 1024"}};
    int failed = 0;
    for (const auto& a : algs) {
        const genx::mpi::Comm forced = genx::mpi::forced_allreduce_comm(world, a.id);
        const std::string got = trace(forced.impl().comm, op, &right);
        const bool ok = right && (a.expect != nullptr ? got == a.expect : got != plain);
        if (rank == 0)
            std::printf("%s: %s %s (%s%s)\n", ok ? "PASS" : "FAIL", a.name, got.c_str(),
                        a.expect != nullptr ? "expected " : "differs from the default ",
                        a.expect != nullptr ? a.expect : plain.c_str());
        failed += ok ? 0 : 1;
    }
    // The world keeps tuned's own decision.
    const std::string again = trace(MPI_COMM_WORLD, op, &right);
    if (rank == 0 && again != plain) std::printf("FAIL: the world's allreduce changed: %s\n", again.c_str());
    failed += again == plain ? 0 : 1;
    if (rank == 0 && failed == 0) std::printf("PASS: every forced algorithm ran; the world's allreduce unchanged\n");
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);  // the traces are rank 0's
    MPI_Op_free(&op);
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
