/*
 * coll_genx_module.c: per-communicator life cycle.
 *
 * comm_query decides whether genx may serve a communicator and builds the
 * core state there, because a bad coll_genx_allreduce_algorithm or _params
 * value must disqualify genx before Open MPI counts on it.  module_enable
 * runs after every lower-priority component was enabled, so the allreduce
 * it finds in the communicator is the one genx falls back to; it keeps a
 * reference to that module and only then offers genx's own allreduce.
 * Nothing here communicates: Open MPI runs selection while the
 * communicator is still being built.  That is also why the placement
 * passed to the core (nodes, ranks per node) is computed from what every
 * rank knows alike, and why the ranks' agreement on decisions is checked
 * later, at genx's first allreduce (coll_genx_allreduce.c).
 */
#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"
#include "ompi/constants.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/mpiruntime.h"
#include "opal/mca/hwloc/hwloc-internal.h"

#include "coll_genx.h"

static int genx_module_enable(mca_coll_base_module_t *module, ompi_communicator_t *comm);

static void genx_module_construct(mca_coll_genx_module_t *module)
{
    module->comm = NULL;
    module->core = NULL;
    memset(&module->transport, 0, sizeof(module->transport));
    module->fallback_allreduce = NULL;
    module->fallback_allreduce_module = NULL;
    module->fallback_name = "the previous component";
    module->fallback_iallreduce = NULL;
    module->fallback_iallreduce_module = NULL;
    module->fallback_iallreduce_name = "the previous component";
    module->fallback_allreduce_init = NULL;
    module->fallback_allreduce_init_module = NULL;
    module->pml.comm = NULL;
    module->pml.tag = MCA_COLL_BASE_TAG_ALLREDUCE;
    module->agreed = 0;
    memset(&module->agree, 0, sizeof(module->agree));
    module->agree.state = MCA_COLL_GENX_AGREE_IDLE;
    memset(&module->shape, 0, sizeof(module->shape));
    memset(&module->ishape, 0, sizeof(module->ishape));
    module->nlogged = 0;
    module->logged_full = false;
}

static void genx_module_destruct(mca_coll_genx_module_t *module)
{
    /* A request queued for the agreement retains the communicator, so an
     * agreement is normally done by now.  One still in flight leaves the
     * progress callback's list, and its buffers, into which a receive may
     * still be posted, stay allocated. */
    if (MCA_COLL_GENX_AGREE_RUNNING == module->agree.state) {
        mca_coll_genx_nb_unwatch(module);
    } else {
        mca_coll_genx_agreement_fini(&module->agree);
    }
    if (NULL != module->fallback_allreduce_module) {
        OBJ_RELEASE(module->fallback_allreduce_module);
        module->fallback_allreduce_module = NULL;
    }
    if (NULL != module->fallback_iallreduce_module) {
        OBJ_RELEASE(module->fallback_iallreduce_module);
        module->fallback_iallreduce_module = NULL;
    }
    if (NULL != module->fallback_allreduce_init_module) {
        OBJ_RELEASE(module->fallback_allreduce_init_module);
        module->fallback_allreduce_init_module = NULL;
    }
    if (NULL != module->core) {
        genx_comm_destroy(module->core);
        module->core = NULL;
    }
}

OBJ_CLASS_INSTANCE(mca_coll_genx_module_t, mca_coll_base_module_t,
                   genx_module_construct, genx_module_destruct);

int mca_coll_genx_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    /* All genx state is per communicator, and MPI forbids concurrent
     * collectives on one communicator, so threads need nothing extra. */
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}

/* The core's lines (algorithm decisions, its declines) already follow the
 * once-per-size-class rule at verbosity 1. */
static void genx_core_log(void *ctx, int level, const char *msg)
{
    (void) ctx;
    opal_output_verbose(level, mca_coll_genx_component.output, "%s", msg);
}

/* Name of the component whose module provides `target` on comm, from the
 * list of modules Open MPI enabled so far (genx's is not in it yet). */
static const char *genx_component_name_of(ompi_communicator_t *comm,
                                          mca_coll_base_module_t *target)
{
    mca_coll_base_avail_coll_t *avail;

    if (NULL == comm->c_coll->module_list) {
        return NULL;
    }
    OPAL_LIST_FOREACH(avail, comm->c_coll->module_list, mca_coll_base_avail_coll_t) {
        if (avail->ac_module == target) {
            return avail->ac_component_name;
        }
    }
    return NULL;
}

/* Every rank's host name as Open MPI's runtime knows it (the same on every
 * rank, no communication), each a string of its own (NULL where one is
 * unknown), or NULL when out of memory; genx_free_host_names frees them. */
static char **genx_host_names(ompi_communicator_t *comm, int size)
{
    char **hosts = calloc((size_t) size, sizeof(*hosts));

    if (NULL != hosts) {
        for (int i = 0; i < size; ++i) {
            hosts[i] = mca_coll_genx_proc_hostname(ompi_comm_peer_lookup(comm, i));
        }
    }
    return hosts;
}

static void genx_free_host_names(char **hosts, int size)
{
    if (NULL != hosts) {
        for (int i = 0; i < size; ++i) {
            free(hosts[i]);
        }
        free(hosts);
    }
}

static int genx_strcmp_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The communicator's placement for the selector: the nodes it spans and
 * the largest number of its ranks on one node, or 0/0 when unknown.  Every
 * rank must get the same answer without communicating, so only what all
 * ranks know alike is used: when every peer is on this node the answer is
 * 1/size; otherwise the host names Open MPI keeps for its processes, and
 * if one of them is missing the placement is unknown. */
static void genx_placement(ompi_communicator_t *comm, int *nodes, int *ppn)
{
    int size = ompi_comm_size(comm);
    char **hosts;
    bool all_local = true;
    int i, run = 1;

    *nodes = 0;
    *ppn = 0;
    for (i = 0; i < size && all_local; ++i) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, i);
        all_local = (proc == ompi_proc_local()) ||
                    OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags);
    }
    if (all_local) {
        *nodes = 1;
        *ppn = size;
        return;
    }
    hosts = genx_host_names(comm, size);
    if (NULL == hosts) {
        return;
    }
    for (i = 0; i < size; ++i) {
        if (NULL == hosts[i]) {
            genx_free_host_names(hosts, size);
            return;
        }
    }
    qsort(hosts, (size_t) size, sizeof(*hosts), genx_strcmp_ptr);
    *nodes = 1;
    *ppn = 1;
    for (i = 1; i < size; ++i) {
        if (0 == strcmp(hosts[i - 1], hosts[i])) {
            ++run;
        } else {
            ++*nodes;
            run = 1;
        }
        if (run > *ppn) {
            *ppn = run;
        }
    }
    genx_free_host_names(hosts, size);
}

/* Whether coll_tuned_use_dynamic_rules is set: tuned then follows its rules
 * file or a forced algorithm where one applies, not only its fixed table. */
static int genx_tuned_dynamic_rules(void)
{
    const bool *value = NULL;
    int idx = mca_base_var_find("ompi", "coll", "tuned", "use_dynamic_rules");

    return (0 <= idx && OPAL_SUCCESS == mca_base_var_get_value(idx, &value, NULL, NULL) &&
            NULL != value && *value) ? 1 : 0;
}

/* A priority above coll/self's (read from its MCA variable, 75 if absent). */
static int genx_above_self(int mine)
{
    const int *value = NULL;
    int self = 75;
    int idx = mca_base_var_find("ompi", "coll", "self", "priority");

    if (0 <= idx && OPAL_SUCCESS == mca_base_var_get_value(idx, &value, NULL, NULL) &&
        NULL != value) {
        self = *value;
    }
    return (mine > self) ? mine : self + 1;
}

mca_coll_base_module_t *mca_coll_genx_comm_query(ompi_communicator_t *comm, int *priority)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_module_t *module;
    genx_config cfg;
    char err[1024];
    char mpi_version[32];
    int size = ompi_comm_size(comm);
    int nodes, ppn;

    if (0 > cs->priority) {
        opal_output_verbose(1, cs->output,
                            "genx: comm %u (%d ranks): not used: coll_genx_priority is %d (negative disables genx)",
                            mca_coll_genx_comm_id(comm), size, cs->priority);
        return NULL;
    }
    if (OMPI_COMM_IS_INTER(comm)) {
        opal_output_verbose(1, cs->output,
                            "genx: comm %u: not used: intercommunicators are left to the other components",
                            mca_coll_genx_comm_id(comm));
        return NULL;
    }
    /* A single rank has nothing to reduce, but with device memory in play
     * its allreduce (a copy) must not be left to a component that would
     * memcpy a device pointer. */
    if (2 > size && !genx_device_probe(cs->cuda ? 0 : 1, cs->cuda_library, NULL, 0)) {
        opal_output_verbose(1, cs->output,
                            "genx: comm %u (%d rank): not used: nothing to reduce across a single rank",
                            mca_coll_genx_comm_id(comm), size);
        return NULL;
    }

    module = OBJ_NEW(mca_coll_genx_module_t);
    if (NULL == module) {
        return NULL;
    }
    module->comm = comm;

    memset(&cfg, 0, sizeof(cfg));
    cfg.algorithm = (NULL != cs->allreduce_algorithm) ? cs->allreduce_algorithm : "auto";
    cfg.params = (NULL != cs->allreduce_params) ? cs->allreduce_params : "";
    cfg.verbose = cs->verbose;
    cfg.log = genx_core_log;
    cfg.log_ctx = NULL;
    cfg.rules_path = (NULL != cs->rules) ? cs->rules : "";
    cfg.rules_strict = cs->rules_strict ? 1 : 0;
    cfg.trial_rounds = (0 < cs->trial_rounds) ? cs->trial_rounds : 0;
    genx_placement(comm, &nodes, &ppn);
    opal_output_verbose(2, cs->output, "genx: comm %u (%d ranks): placement %d node(s), "
                        "up to %d ranks per node (0: unknown)",
                        mca_coll_genx_comm_id(comm), size, nodes, ppn);
    cfg.topology_file = (NULL != cs->topology_file) ? cs->topology_file : "";
    cfg.topology_overlay = (NULL != cs->topology_overlay) ? cs->topology_overlay : "";
    cfg.device_off = cs->cuda ? 0 : 1;
    cfg.transport_device_aware = mca_coll_genx_mpi_cuda_aware();
    cfg.device_library = (NULL != cs->cuda_library) ? cs->cuda_library : "";
    cfg.device_reduce = (NULL != cs->cuda_reduce) ? cs->cuda_reduce : "";
    cfg.device_rates = (NULL != cs->cuda_rates) ? cs->cuda_rates : "";
    cfg.site_dir = (NULL != cs->site) ? cs->site : "";
    snprintf(mpi_version, sizeof(mpi_version), "%d.%d.%d", OMPI_MAJOR_VERSION,
             OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
    cfg.mpi_version = mpi_version;
    if (cs->discover) {
        mca_coll_genx_locality_probe();
    }
    err[0] = '\0';
    /* Host names place the ranks on a topology file, the explicit one or
     * the site's, and tell the site which hosts it never measured. */
    if ('\0' != cfg.topology_file[0] || '\0' != cfg.site_dir[0]) {
        /* NULL where a host name is unknown (genx_host_names). */
        char **hosts = genx_host_names(comm, size);

        module->core = genx_comm_create(ompi_comm_rank(comm), size, nodes, ppn,
                                        (const char *const *) hosts, &cfg, err, sizeof(err));
        genx_free_host_names(hosts, size);
    } else {
        module->core = genx_comm_create(ompi_comm_rank(comm), size, nodes, ppn, NULL, &cfg, err,
                                        sizeof(err));
    }
    if (NULL == module->core && cs->rules_strict) {
        /* The core's rules errors already say that they abort. */
        opal_output(0, "genx: %s%s", ('\0' != err[0]) ? err : "the genx core could not be set up",
                    (NULL != strstr(err, "rules_strict")) ? ""
                        : "; aborting because coll_genx_rules_strict is set");
        ompi_mpi_abort(comm, 1);
    }
    if (NULL == module->core) {
        if (!cs->config_error_reported) {
            cs->config_error_reported = true;
            /* Said once per process; the configuration may suit other
             * communicators (ring2d's dims fit one size only). */
            opal_output(0, "genx: %s (coll_genx_allreduce_algorithm=\"%s\", "
                        "coll_genx_allreduce_params=\"%s\"); genx is disabled on comm %u "
                        "(%d ranks) and on every communicator this configuration rejects, "
                        "whose MPI_Allreduce is left to Open MPI's other coll components",
                        ('\0' != err[0]) ? err : "the genx core could not be set up",
                        cfg.algorithm, cfg.params, mca_coll_genx_comm_id(comm), size);
        }
        opal_output_verbose(1, cs->output,
                            "genx: comm %u (%d ranks): not used: configuration rejected",
                            mca_coll_genx_comm_id(comm), size);
        OBJ_RELEASE(module);
        return NULL;
    }
    module->device = 0 != genx_device_active(module->core);

    module->super.coll_module_enable = genx_module_enable;
    *priority = cs->priority;
    if (1 == size) {
        /* coll/self (priority 75 by default) takes one-rank communicators
         * and memcpy()s a non-in-place allreduce: with device memory
         * possible, genx must sit above it. */
        *priority = genx_above_self(cs->priority);
    }
    return &module->super;
}

static int genx_module_enable(mca_coll_base_module_t *base_module, ompi_communicator_t *comm)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_module_t *module = (mca_coll_genx_module_t *) base_module;
    const char *name;
    const char *note = "";

    if (NULL == comm->c_coll->coll_allreduce || NULL == comm->c_coll->coll_allreduce_module) {
        opal_output_verbose(1, cs->output,
                            "genx: comm %u (%d ranks): not used: no lower-priority component "
                            "provides MPI_Allreduce to fall back to (keep tuned or basic in --mca coll, "
                            "and coll_genx_priority above theirs)",
                            mca_coll_genx_comm_id(comm), ompi_comm_size(comm));
        return OMPI_ERROR;
    }

    module->fallback_allreduce = comm->c_coll->coll_allreduce;
    module->fallback_allreduce_module = comm->c_coll->coll_allreduce_module;
    OBJ_RETAIN(module->fallback_allreduce_module);
    name = genx_component_name_of(comm, module->fallback_allreduce_module);
    if (NULL != name) {
        module->fallback_name = name;
    }
    module->pml.comm = comm;
    module->pml.tag = MCA_COLL_BASE_TAG_ALLREDUCE;
    mca_coll_genx_pml_transport(&module->pml, &module->transport);
    /* The core prices a "fallback" incumbent as what this component runs. */
    genx_comm_set_displaced(module->core, name, genx_tuned_dynamic_rules(), &note);

    opal_output_verbose(2, cs->output,
                        "genx: comm %u (%d ranks): enabled (priority %d), fallback is %s; %s",
                        mca_coll_genx_comm_id(comm), ompi_comm_size(comm), cs->priority,
                        module->fallback_name, note);

    /* MPI_Iallreduce too, where a component below genx provides one to
     * fall back to (libnbc normally). */
    if (NULL != comm->c_coll->coll_iallreduce && NULL != comm->c_coll->coll_iallreduce_module) {
        module->fallback_iallreduce = comm->c_coll->coll_iallreduce;
        module->fallback_iallreduce_module = comm->c_coll->coll_iallreduce_module;
        OBJ_RETAIN(module->fallback_iallreduce_module);
        name = genx_component_name_of(comm, module->fallback_iallreduce_module);
        if (NULL != name) {
            module->fallback_iallreduce_name = name;
        }
    }

    /* Persistent allreduce (coll_allreduce_init: MPIX_Allreduce_init in
     * 4.1, MPI_Allreduce_init in 5.0), likewise. */
    if (NULL != comm->c_coll->coll_allreduce_init &&
        NULL != comm->c_coll->coll_allreduce_init_module) {
        module->fallback_allreduce_init = comm->c_coll->coll_allreduce_init;
        module->fallback_allreduce_init_module = comm->c_coll->coll_allreduce_init_module;
        OBJ_RETAIN(module->fallback_allreduce_init_module);
    }

    /* Offered last: only a module that holds its fallback serves calls. */
    module->super.coll_allreduce = mca_coll_genx_allreduce;
    if (NULL != module->fallback_iallreduce) {
        module->super.coll_iallreduce = mca_coll_genx_iallreduce;
    }
    if (NULL != module->fallback_allreduce_init) {
        module->super.coll_allreduce_init = mca_coll_genx_allreduce_init;
    }
    return OMPI_SUCCESS;
}
