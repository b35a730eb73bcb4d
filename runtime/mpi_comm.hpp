// The public MPI API as genx's MPI tools use it (genx-tune, genx-topo
// --probe): the process, communicators and the few collectives they need.
// This header does not include mpi.h: only runtime/mpi_*.cpp see MPI
// (docs/design.md §2); the component has its own PML transport instead.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace genx::mpi {

void init(int* argc, char*** argv);  // MPI_Init
void finalize();
[[noreturn]] void abort(int code);  // MPI_Abort on MPI_COMM_WORLD
double wtime();
// "4.1.4": the running Open MPI's MAJOR.MINOR.RELEASE (MPI_Get_library_version).
std::string library_version();

// A communicator; a null one (split() on a rank left out) answers only
// operator bool.  Owned communicators are freed with their Comm.
class Comm {
  public:
    struct Impl;  // runtime/mpi_native.hpp
    Comm();
    ~Comm();
    Comm(Comm&&) noexcept;
    Comm& operator=(Comm&&) noexcept;
    static Comm world();
    explicit operator bool() const;
    Impl& impl() const { return *impl_; }

    int rank() const;
    int size() const;
    void barrier() const;
    void bcast(int* v, int n, int root = 0) const;
    void bcast(double* v, int n, int root = 0) const;
    void bcast(std::string* s, int root = 0) const;
    // Rank 0's value to every rank, waiting asleep (see mpi_comm.cpp).
    void bcast_asleep(double* v) const;
    // Rank 0's vector (any length) to every rank, the same way.
    void bcast_asleep(std::vector<double>* v) const;
    int max(int v) const;
    double max(double v) const;
    double sum(double v) const;
    unsigned long long max(unsigned long long v) const;
    unsigned long long min(unsigned long long v) const;
    std::vector<int> allgather(int v) const;
    // Every rank's name (at most MPI_MAX_PROCESSOR_NAME - 1 characters
    // kept), in rank order: what ranks are placed or grouped by.
    std::vector<std::string> allgather_names(const std::string& mine) const;
    // `mine` of every rank, concatenated in rank order on `root`.
    std::vector<double> gather(const std::vector<double>& mine, int root = 0) const;
    void send(const void* buf, size_t bytes, int peer, int tag) const;
    void recv(void* buf, size_t bytes, int peer, int tag) const;
    // The ranks of each color (< 0: none; a null Comm) ordered by key.
    Comm split(int color, int key) const;
    Comm split_shared() const;  // the ranks sharing this one's memory
    Comm dup() const;
    // MPI_Allreduce(MPI_SUM) on floats, in place; MPI's return code (errors
    // abort unless return_errors() was called).
    int allreduce_sum(float* inout, size_t count) const;
    int allreduce_sum(const float* in, float* out, size_t count) const;
    void return_errors() const;  // MPI_ERRORS_RETURN

  private:
    explicit Comm(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

int error_class(int rc);  // MPI_Error_class
constexpr int kSuccess = 0;  // MPI_SUCCESS (checked in mpi_comm.cpp)

}  // namespace genx::mpi
