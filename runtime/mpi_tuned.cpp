// MPI_T access to Open MPI's coll variables (runtime/mpi_tuned.hpp).
#include "runtime/mpi_tuned.hpp"

#include <cstdlib>
#include <vector>

#include "runtime/mpi_native.hpp"

namespace genx::mpi {

namespace {

constexpr const char* kDynamicRules = "coll_tuned_use_dynamic_rules";
constexpr const char* kAlgorithm = "coll_tuned_allreduce_algorithm";
constexpr const char* kRulesFile = "coll_tuned_dynamic_rules_filename";

// MPI_T for the lifetime of one object (MPI_T_init_thread nests).
struct ToolInterface {
    bool ok = false;
    ToolInterface() {
        int provided = 0;
        ok = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
    }
    ~ToolInterface() {
        if (ok) MPI_T_finalize();
    }
};

// A handle on the control variable `name`; `handle` stays null when the
// variable does not exist in this process.
struct Cvar {
    MPI_T_cvar_handle handle = nullptr;
    int count = 0;
    explicit Cvar(const char* name) {
        int idx = -1;
        if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS) return;
        if (MPI_T_cvar_handle_alloc(idx, nullptr, &handle, &count) != MPI_SUCCESS) handle = nullptr;
    }
    ~Cvar() {
        if (handle != nullptr) MPI_T_cvar_handle_free(&handle);
    }
    bool read(void* buf) const { return handle != nullptr && MPI_T_cvar_read(handle, buf) == MPI_SUCCESS; }
};

}  // namespace

bool genx_component_active() {
    ToolInterface t;
    if (!t.ok) return false;
    Cvar v("coll_genx_priority");
    int priority = -1;
    return v.count == 1 && v.read(&priority) && priority >= 0;
}

void allow_forced_algorithms() { setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0); }

std::string forced_algorithms_unavailable() {
    ToolInterface t;
    if (!t.ok) return "MPI_T is not available";
    if (Cvar(kAlgorithm).handle == nullptr) return "coll/tuned is not loaded";
    unsigned long long on = 0;  // a bool: its first byte
    if (!Cvar(kDynamicRules).read(&on) || on == 0)
        return std::string(kDynamicRules) + " is off, and tuned then ignores forced algorithms";
    Cvar file(kRulesFile);
    std::vector<char> name(static_cast<size_t>(file.count > 0 ? file.count : 1) + 1, 0);
    if (file.read(name.data()) && name[0] != 0)
        return std::string("a tuned rules file (") + kRulesFile +
               ") would take precedence over forced algorithms";
    return "";
}

Comm forced_allreduce_comm(const Comm& comm, int tuned_id) {
    ToolInterface t;
    Cvar alg(kAlgorithm);
    int before = 0;
    const bool forced = alg.read(&before) && MPI_T_cvar_write(alg.handle, &tuned_id) == MPI_SUCCESS;
    Comm dup = comm.dup();  // tuned reads the variable as it enables its module here
    if (forced) MPI_T_cvar_write(alg.handle, &before);
    return dup;
}

}  // namespace genx::mpi
