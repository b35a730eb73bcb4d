// Every rank's host name, gathered over an MPI communicator: what
// genx-tune --topology and genx-topo --probe place or group ranks by.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

namespace genx::tools {

// Collective over `comm`: each rank gives its own name (at most
// MPI_MAX_PROCESSOR_NAME - 1 characters are kept) and gets every rank's,
// in rank order.
inline std::vector<std::string> allgather_names(const std::string& mine, MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    constexpr int kWidth = MPI_MAX_PROCESSOR_NAME;
    std::vector<char> own(kWidth, 0), all(static_cast<size_t>(size) * kWidth);
    std::copy_n(mine.begin(), std::min<size_t>(mine.size(), kWidth - 1), own.begin());
    MPI_Allgather(own.data(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, comm);
    std::vector<std::string> names;
    for (int r = 0; r < size; ++r) names.emplace_back(&all[static_cast<size_t>(r) * kWidth]);
    return names;
}

}  // namespace genx::tools
