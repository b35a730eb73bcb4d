// genx::mpi::Comm over the public MPI API (runtime/mpi_comm.hpp).
#include "runtime/mpi_native.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <ctime>

namespace genx::mpi {

static_assert(kSuccess == MPI_SUCCESS, "kSuccess mirrors MPI_SUCCESS");

void init(int* argc, char*** argv) { MPI_Init(argc, argv); }
void finalize() { MPI_Finalize(); }
void abort(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
}
double wtime() { return MPI_Wtime(); }

std::string library_version() {
    // The library this process runs ("Open MPI v4.1.4, package: ..."), not
    // the headers genx was built with; those only when the text is not
    // Open MPI's.
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(text, &len);
    const std::string s(text, static_cast<size_t>(std::max(0, len)));
    const std::string tag = "Open MPI v";
    const size_t at = s.find(tag);
    if (at != std::string::npos) {
        const size_t b = at + tag.size();
        size_t e = b;
        while (e < s.size() && (std::isdigit(static_cast<unsigned char>(s[e])) || s[e] == '.')) ++e;
        if (e > b) return s.substr(b, e - b);
    }
#if defined(OMPI_MAJOR_VERSION) && defined(OMPI_MINOR_VERSION) && defined(OMPI_RELEASE_VERSION)
    return std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION) + "." +
           std::to_string(OMPI_RELEASE_VERSION);
#else
    return "unknown";
#endif
}
int error_class(int rc) {
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

Comm::Comm() : impl_(std::make_unique<Impl>()) {}
Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() {
    if (impl_ && impl_->owned && impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&& o) noexcept {
    std::swap(impl_, o.impl_);  // o frees what this held
    return *this;
}
Comm Comm::world() {
    auto i = std::make_unique<Impl>();
    i->comm = MPI_COMM_WORLD;
    return Comm(std::move(i));
}
Comm::operator bool() const { return impl_ && impl_->comm != MPI_COMM_NULL; }

int Comm::rank() const {
    int r = 0;
    MPI_Comm_rank(impl_->comm, &r);
    return r;
}
int Comm::size() const {
    int s = 0;
    MPI_Comm_size(impl_->comm, &s);
    return s;
}
void Comm::barrier() const { MPI_Barrier(impl_->comm); }
void Comm::bcast(int* v, int n, int root) const { MPI_Bcast(v, n, MPI_INT, root, impl_->comm); }
void Comm::bcast(double* v, int n, int root) const {
    MPI_Bcast(v, n, MPI_DOUBLE, root, impl_->comm);
}
void Comm::bcast(std::string* s, int root) const {
    int len = static_cast<int>(s->size());
    MPI_Bcast(&len, 1, MPI_INT, root, impl_->comm);
    s->resize(static_cast<size_t>(len));
    MPI_Bcast(&(*s)[0], len, MPI_CHAR, root, impl_->comm);
}

// Ranks that sat a measurement out wait here asleep, not in a blocking
// MPI_Bcast: that busy-polls, and where ranks share cores the idle
// spinners take the cores the measured ranks need (on a 7-host emulated
// cluster on 2 cores they doubled the 2-rank co-located PS times;
// bench/RESULTS.md).
namespace {
void ibcast_asleep(void* v, int n, MPI_Datatype type, MPI_Comm comm) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibcast(v, n, type, 0, comm, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) break;
        const struct timespec nap = {0, 200 * 1000};
        nanosleep(&nap, nullptr);
    }
}
}  // namespace

void Comm::bcast_asleep(double* v) const { ibcast_asleep(v, 1, MPI_DOUBLE, impl_->comm); }

void Comm::bcast_asleep(std::vector<double>* v) const {
    int n = static_cast<int>(v->size());
    ibcast_asleep(&n, 1, MPI_INT, impl_->comm);
    v->resize(static_cast<size_t>(n));
    if (n > 0) ibcast_asleep(v->data(), n, MPI_DOUBLE, impl_->comm);
}

int Comm::max(int v) const {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, impl_->comm);
    return v;
}
double Comm::max(double v) const {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, impl_->comm);
    return v;
}
double Comm::sum(double v) const {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, impl_->comm);
    return v;
}
unsigned long long Comm::max(unsigned long long v) const {
    unsigned long long out = v;
    MPI_Allreduce(&v, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, impl_->comm);
    return out;
}
unsigned long long Comm::min(unsigned long long v) const {
    unsigned long long out = v;
    MPI_Allreduce(&v, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, impl_->comm);
    return out;
}

std::vector<int> Comm::allgather(int v) const {
    std::vector<int> all(static_cast<size_t>(size()));
    MPI_Allgather(&v, 1, MPI_INT, all.data(), 1, MPI_INT, impl_->comm);
    return all;
}

std::vector<std::string> Comm::allgather_names(const std::string& mine) const {
    const int n = size();
    constexpr int kWidth = MPI_MAX_PROCESSOR_NAME;
    std::vector<char> own(kWidth, 0), all(static_cast<size_t>(n) * kWidth);
    std::copy_n(mine.begin(), std::min<size_t>(mine.size(), kWidth - 1), own.begin());
    MPI_Allgather(own.data(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, impl_->comm);
    std::vector<std::string> names;
    for (int r = 0; r < n; ++r) names.emplace_back(&all[static_cast<size_t>(r) * kWidth]);
    return names;
}

std::vector<double> Comm::gather(const std::vector<double>& mine, int root) const {
    const int n = static_cast<int>(mine.size());
    std::vector<double> all(rank() == root ? mine.size() * static_cast<size_t>(size()) : 0);
    MPI_Gather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, root, impl_->comm);
    return all;
}

void Comm::send(const void* buf, size_t bytes, int peer, int tag) const {
    MPI_Send(const_cast<void*>(buf), static_cast<int>(bytes), MPI_BYTE, peer, tag, impl_->comm);
}
void Comm::recv(void* buf, size_t bytes, int peer, int tag) const {
    MPI_Recv(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, impl_->comm, MPI_STATUS_IGNORE);
}

Comm Comm::split(int color, int key) const {
    auto i = std::make_unique<Impl>();
    MPI_Comm_split(impl_->comm, color < 0 ? MPI_UNDEFINED : color, key, &i->comm);
    i->owned = true;
    return Comm(std::move(i));
}
Comm Comm::split_shared() const {
    auto i = std::make_unique<Impl>();
    MPI_Comm_split_type(impl_->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &i->comm);
    i->owned = true;
    return Comm(std::move(i));
}
Comm Comm::dup() const {
    auto i = std::make_unique<Impl>();
    MPI_Comm_dup(impl_->comm, &i->comm);
    i->owned = true;
    return Comm(std::move(i));
}

int Comm::allreduce_sum(float* inout, size_t count) const {
    return MPI_Allreduce(MPI_IN_PLACE, inout, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                         impl_->comm);
}
int Comm::allreduce_sum(const float* in, float* out, size_t count) const {
    return MPI_Allreduce(in, out, static_cast<int>(count), MPI_FLOAT, MPI_SUM, impl_->comm);
}
void Comm::return_errors() const { MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN); }

}  // namespace genx::mpi
