/*
 * coll_genx_component.c: the component Open MPI's loader finds
 * (mca_coll_genx_component) and its MCA parameters.
 *
 * The priority defaults above tuned's 30 so that loading the DSO is enough
 * to get genx: components are enabled in ascending priority and genx saves
 * whatever allreduce sits below it as its fallback.
 */
#include "ompi_config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "ompi/constants.h"
#include "ompi/mca/coll/coll.h"

#include "coll_genx.h"

/* coll_genx_site's default, SYSCONFDIR/genx (Makefile.am). */
#ifndef GENX_SITE_DIR
#error "GENX_SITE_DIR (the default site directory) is set by Makefile.am"
#endif

static int genx_register(void);
static void genx_register_cuda(mca_base_component_t *c, mca_coll_genx_component_t *cs);
static int genx_open(void);
static int genx_close(void);

mca_coll_genx_component_t mca_coll_genx_component = {
    .super = {
        .collm_version = {
            MCA_COLL_GENX_BASE_VERSION, /* coll_genx_compat.h */

            .mca_component_name = "genx",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),

            .mca_open_component = genx_open,
            .mca_close_component = genx_close,
            .mca_register_component_params = genx_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_NONE
        },

        .collm_init_query = mca_coll_genx_init_query,
        .collm_comm_query = mca_coll_genx_comm_query,
    },
    .output = -1,
};

static int genx_register(void)
{
    mca_base_component_t *c = &mca_coll_genx_component.super.collm_version;
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    char help[2048];

    cs->priority = 40;
    (void) mca_base_component_var_register(c, "priority",
        "Priority of the genx coll component (genx provides MPI_Allreduce only; "
        "it must be above the component it falls back to, normally tuned at 30; "
        "a negative value disables genx)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->priority);

    cs->verbose = 0;
    (void) mca_base_component_var_register(c, "verbose",
        "Verbosity of genx: 0 silent (configuration errors are always printed), "
        "1 each allreduce decision (algorithm, or fallback and why) once per "
        "communicator, size class (power-of-two bucket of bytes) and reason, "
        "2 and more adds communicator set-up details",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->verbose);

    snprintf(help, sizeof(help),
             "MPI_Allreduce algorithm: \"auto\" lets genx choose per call, or one of: %s "
             "(calls that the named algorithm cannot run go to the fallback component)",
             genx_algorithm_names());
    cs->allreduce_algorithm = "auto";
    (void) mca_base_component_var_register(c, "allreduce_algorithm", help,
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->allreduce_algorithm);

    cs->allreduce_params = "";
    (void) mca_base_component_var_register(c, "allreduce_params",
        "Parameters of the allreduce algorithm as key=value pairs separated by commas, "
        "sizes with K/M/G suffixes, e.g. \"segment=64K\"; empty for the defaults "
        "(an unknown key disables genx with a message naming it)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->allreduce_params);

    cs->rules = "";
    (void) mca_base_component_var_register(c, "rules",
        "Path of a genx rules file (written by genx-tune, format in genx's docs/rules.md): "
        "the cluster's fitted cost model and its allreduce decisions; empty for genx's "
        "built-in defaults.  A file genx cannot use is reported with file, line and field, "
        "and genx continues with its built-in defaults (or aborts, see coll_genx_rules_strict)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->rules);

    cs->rules_strict = false;
    (void) mca_base_component_var_register(c, "rules_strict",
        "If true, a coll_genx_rules file genx cannot use (or a rule that cannot run on a "
        "communicator, or any other bad genx setting) aborts the job instead of being "
        "reported and worked around",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->rules_strict);

    cs->topology_file = "";
    (void) mca_base_component_var_register(c, "topology_file",
        "Path of the cluster's switch tree as a Slurm topology.conf (tree form: "
        "SwitchName=... Switches=...|Nodes=...; format in genx's docs/topology.md), read on "
        "every node; ranks are placed on it by host name.  Empty: hosts are grouped by name "
        "only.  A file genx cannot use is reported with file, line and field, and genx "
        "groups hosts by name instead",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->topology_file);

    cs->topology_overlay = "";
    (void) mca_base_component_var_register(c, "topology_overlay",
        "Path of a JSON overlay for coll_genx_topology_file: link rates and latencies per "
        "level, switch or host, cross-datacenter links, the intra-host link (docs/topology.md); "
        "empty for none",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->topology_overlay);

    cs->trial_rounds = 5;
    (void) mca_base_component_var_register(c, "trial_rounds",
        "First-call trials: where a site's rules leave a message size to the displaced "
        "component although the model prices one of genx's plans ahead of it, a "
        "communicator's first blocking MPI_Allreduce calls of that size run the displaced "
        "component and each such plan in turn, in two runs of this many calls each (plus one "
        "untimed call per run), and keep a plan only "
        "where it was at least 10 % faster on the slowest rank (docs/rules.md).  0: no "
        "trials; every size runs what the rules decide, the same in every run",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->trial_rounds);

    cs->site = GENX_SITE_DIR;
    (void) mca_base_component_var_register(c, "site",
        "Site directory written once per cluster by genx-tune --site DIR (docs/site.md): "
        "its topology.conf, overlay.json and rules.json serve where coll_genx_topology_file, "
        "coll_genx_topology_overlay and coll_genx_rules are empty; its site.json says what "
        "was measured, and a site tuned with another genx or Open MPI keeps its network but "
        "not its rules.  A directory that does not exist is ignored silently; empty for no site",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->site);

    cs->slurm_topology = true;
    (void) mca_base_component_var_register(c, "slurm_topology",
        "Without a topology file (coll_genx_topology_file, or the coll_genx_site directory's "
        "topology.conf): if every rank of a communicator has Slurm's "
        "SLURM_TOPOLOGY_ADDR (set for each task where the site runs topology/tree), gather "
        "the addresses at the communicator's first MPI_Allreduce and place the ranks on "
        "the switch tree they describe (coll_genx_topology_overlay, else the site's overlay.json, "
        "gives its link rates). "
        "False: hosts are grouped by name only",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->slurm_topology);

    cs->discover = true;
    (void) mca_base_component_var_register(c, "discover",
        "Gather each rank's locality inside its node (the package and NUMA node of its "
        "binding from Open MPI's hwloc topology; the host's packages, NUMA nodes and NICs "
        "from hwloc and sysfs, and at coll_genx_verbose 2 libfabric for NIC rates, which "
        "are only reported) at a communicator's first MPI_Allreduce, once per job, and give "
        "genx's plans the levels inside each host where ranks are bound. False: each host "
        "is one level",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->discover);

    genx_register_cuda(c, cs);
    return OMPI_SUCCESS;
}

/* The device memory parameters (docs/device.md). */
static void genx_register_cuda(mca_base_component_t *c, mca_coll_genx_component_t *cs)
{
    cs->cuda = true;
    (void) mca_base_component_var_register(c, "cuda",
        "Accept CUDA device (and managed) memory in MPI_Allreduce: where a CUDA driver with a "
        "device is present, genx asks the driver where each call's buffers are and stages "
        "device memory through page-locked host memory, also around the component it "
        "displaced.  false: every buffer is taken as host memory and never queried (a device "
        "pointer then crashes, as in any component that is not CUDA-aware)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->cuda);

    cs->cuda_library = "";
    (void) mca_base_component_var_register(c, "cuda_library",
        "Path of libgenx-cuda.so (genx's CUDA copies and kernels, loaded at the first device "
        "buffer).  Empty: the one installed with genx",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->cuda_library);

    cs->cuda_reduce = "auto";
    (void) mca_base_component_var_register(c, "cuda_reduce",
        "Where an MPI_Allreduce on device memory reduces when this Open MPI is not "
        "CUDA-aware: auto (genx's estimate from the plan, the bus rate and both reduction "
        "rates picks the cheaper), host (on a page-locked host copy of the buffer) or device "
        "(in genx's CUDA kernels, every message copied through page-locked memory)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->cuda_reduce);

    cs->cuda_rates = "";
    (void) mca_base_component_var_register(c, "cuda_rates",
        "The device figures of coll_genx_cuda_reduce's estimate, "
        "\"pcie=B/s,copy_latency=s,device_reduce=B/s,kernel_latency=s\" (any subset; "
        "empty: 20e9, 300e-6, 1e12, 300e-6).  The host's reduction rates come from the "
        "rules file's model",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_READONLY, &cs->cuda_rates);
}

/* What genx will do with device memory, said once (first process) at
 * verbosity 1.  Whether this Open MPI is CUDA-aware is asked through
 * MPIX_Query_cuda_support, looked up at run time: Open MPI builds without
 * CUDA (Debian's) may lack it or answer 0.  genx stages device memory
 * through host memory either way (docs/device.md): a CUDA-aware Open MPI
 * puts its coll/cuda component (priority 78) above genx, which then only
 * ever sees host memory, unless coll_genx_priority is raised above 78. */
int mca_coll_genx_mpi_cuda_aware(void)
{
    int (*query)(void);
    const bool *enabled = NULL;
    int idx;

    *(void **) (&query) = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
    if (NULL == query || 1 != query()) {
        return 0;
    }
    /* Open MPI 4.1 answers at compile time; whether its CUDA support is on
     * in this run (opal_cuda_support: set to 0 by the user, or cleared when
     * libcuda could not be loaded) is this variable. */
    idx = mca_base_var_find("opal", "opal", NULL, "cuda_support");
    if (0 <= idx && OPAL_SUCCESS == mca_base_var_get_value(idx, &enabled, NULL, NULL) &&
        NULL != enabled && !*enabled) {
        return 0;
    }
    return 1;
}

static void genx_report_devices(mca_coll_genx_component_t *cs)
{
    char note[256];
    int aware;

    if (1 > cs->verbose || 0 != OPAL_PROC_MY_NAME.vpid) {
        return;
    }
    (void) genx_device_probe(cs->cuda ? 0 : 1, cs->cuda_library, note, sizeof(note));
    aware = mca_coll_genx_mpi_cuda_aware();
    opal_output(cs->output, "genx: %s; this Open MPI is %sCUDA-aware%s", note,
                aware ? "" : "not ",
                aware ? " (genx hands device memory to its PML and reduces on the device; its "
                        "coll/cuda, priority 78, stages device memory before genx sees it unless "
                        "coll_genx_priority is above 78)" : "");
}

static int genx_open(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    cs->output = opal_output_open(NULL);
    opal_output_set_verbosity(cs->output, cs->verbose);
    cs->config_error_reported = false;
    OBJ_CONSTRUCT(&cs->nb_lock, opal_mutex_t);
    cs->nb_active = NULL;
    cs->nb_agreeing = NULL;
    cs->nb_count = 0;
    cs->nb_progress_registered = false;

    /* `--mca coll genx` alone: complete the selection with Open MPI's own
     * coll components before any communicator selects its collectives
     * (coll_genx_alone.c), and say what was done: at verbosity 1 on the
     * first process (like the decisions), on every process from 2; a
     * failure whatever the verbosity, once (first process). */
    mca_coll_genx_complete_selection();
    if ('\0' != cs->alone_problem[0]) {
        if (0 == OPAL_PROC_MY_NAME.vpid) {
            opal_output(0, "%s", cs->alone_problem);
        }
    } else if ('\0' != cs->added_components[0] &&
               (2 <= cs->verbose || (1 == cs->verbose && 0 == OPAL_PROC_MY_NAME.vpid))) {
        opal_output(cs->output,
                    "genx: --mca coll genx: genx provides only MPI_Allreduce and "
                    "MPI_Iallreduce, so it added Open MPI's coll components %s for the other "
                    "collectives (as with --mca coll genx,%s)",
                    cs->added_components, cs->added_components);
    }
    genx_report_devices(cs);
    return OMPI_SUCCESS;
}

static int genx_close(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    mca_coll_genx_nb_fini();
    OBJ_DESTRUCT(&cs->nb_lock);
    if (0 <= cs->output) {
        opal_output_close(cs->output);
        cs->output = -1;
    }
    return OMPI_SUCCESS;
}
