// genx-tune's progress lines, fatal errors and the text of sizes and times
// (shared by the phases, tune/phases.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "common/status.hpp"
#include "common/text_util.hpp"

namespace genx::tune {

// Who prints (world rank 0) and the clock progress lines show (seconds
// since `t0`, an MPI_Wtime).
void set_reporter(int rank, double t0);
// "[genx-tune   1.2s] msg" on stderr, rank 0 only.
void progress(const std::string& msg);
// Prints "genx-tune (rank R): msg" and aborts the job with `code`.
[[noreturn]] void die(const std::string& msg, int code = 1);
void check(const Status& st, const std::string& what);

std::string describe(const std::string& alg, const std::string& params);

}  // namespace genx::tune
