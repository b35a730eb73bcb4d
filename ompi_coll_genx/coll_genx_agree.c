/*
 * coll_genx_agree.c: the ranks' agreement on a communicator's decisions,
 * as a non-blocking exchange.
 *
 * Before genx runs a plan of its own on a communicator, every rank must
 * know that every other rank decides alike (genx_comm_digest): a rules file
 * missing on one node or a placement one rank sees differently would make
 * ranks run different plans and hang.  The check is one exchange of a few
 * words (and, when every rank has a Slurm address, a gather of the
 * addresses; when a rank lacks a locality record of another, a gather of
 * the records, once per job (the cache below); then a second exchange of
 * digests), started at genx's first call on the
 * communicator and advanced by the component's progress callback; nothing
 * here waits.  Blocking MPI_Allreduce and persistent initialisation wait
 * for the result where they need it (mca_coll_genx_check_agreement); an
 * MPI_Iallreduce started before it is known is queued and launched by the
 * progress callback once it is (coll_genx_iallreduce.c).  docs/design.md
 * §6.5 proves that every rank reaches the same decision for every call and
 * that no initiation call waits.
 *
 * The exchange is a dissemination allreduce with MAX over 64-bit words
 * (ceil(log2 P) rounds; in round k rank r sends its running maximum to
 * r + 2^k and receives from r - 2^k), over the PML on one tag drawn from
 * the communicator's non-blocking collective tag space when the agreement
 * starts.  MAX is idempotent, so the overlapping windows of a process count
 * that is not a power of two do no harm, and a gather is a MAX over a
 * vector in which each rank fills only its own slot.  Every rank starts
 * the agreement at the same call (its first genx call on the communicator),
 * so every rank draws the same tag; messages between one pair on one tag
 * match in the order they were sent, and each rank posts its receives in
 * that same order, so rounds and phases never cross.
 */
#include "ompi_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/hwloc/base/base.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "ompi/constants.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"

#include "coll_genx.h"
#include "coll_genx_base.h"

/* Slurm's per-task switch address ("spine.leaf3.node07") and its pattern,
 * as one fixed-size record per rank; empty when unset or too long. */
#define GENX_TOPO_ADDR_BYTES 256
#define GENX_TOPO_RECORD_WORDS (2 * GENX_TOPO_ADDR_BYTES / 8)

static void genx_topology_addr_record(char *rec)
{
    const char *addr = getenv("SLURM_TOPOLOGY_ADDR");
    const char *pattern = getenv("SLURM_TOPOLOGY_ADDR_PATTERN");
    size_t a, p;

    memset(rec, 0, 2 * GENX_TOPO_ADDR_BYTES);
    if (NULL == addr || '\0' == addr[0]) {
        return;
    }
    a = strlen(addr);
    p = (NULL != pattern) ? strlen(pattern) : 0;
    if (a >= GENX_TOPO_ADDR_BYTES || p >= GENX_TOPO_ADDR_BYTES) {
        return;
    }
    memcpy(rec, addr, a);
    if (0 < p) {
        memcpy(rec + GENX_TOPO_ADDR_BYTES, pattern, p);
    }
}

/* ------------------------------------------------------------------ */
/* Locality records and the per-job cache.                             */

/* Every record this process has seen, GENX_LOCALITY_WORDS words per vpid
 * of its own job (word 0 == 0: none yet): a record is what its rank
 * probed once, so every process holds the same words for a vpid, and a
 * communicator whose ranks are all here needs no gather.  Processes of
 * another job (spawned) are never cached.  The lock: under
 * MPI_THREAD_MULTIPLE agreements of several communicators may run at once. */
static pthread_mutex_t genx_loc_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *genx_loc_cache;
static size_t genx_loc_vpids;
static int genx_loc_gathers;

/* Puts vpid's record in the cache (caller holds the lock); out of memory,
 * it is left out, and a later communicator gathers again. */
static void genx_loc_store(size_t vpid, const uint64_t *words)
{
    if (vpid >= genx_loc_vpids) {
        uint64_t *c = realloc(genx_loc_cache, (vpid + 1) * GENX_LOCALITY_WORDS * sizeof(uint64_t));
        if (NULL == c) {
            return;
        }
        memset(c + genx_loc_vpids * GENX_LOCALITY_WORDS, 0,
               (vpid + 1 - genx_loc_vpids) * GENX_LOCALITY_WORDS * sizeof(uint64_t));
        genx_loc_cache = c;
        genx_loc_vpids = vpid + 1;
    }
    memcpy(genx_loc_cache + vpid * GENX_LOCALITY_WORDS, words,
           GENX_LOCALITY_WORDS * sizeof(uint64_t));
}

/* This process's record, probed once (hwloc, sysfs, libfabric: local work,
 * nothing waits on another process), and put in the cache.  Caller holds
 * the lock. */
static void genx_loc_probe_once(void)
{
    static int probed;
    uint64_t words[GENX_LOCALITY_WORDS];
    char note[1024];
    char *host;
    struct timespec t0, t1;
    if (probed) {
        return;
    }
    probed = 1;
    /* Open MPI's topology as Open MPI loaded it; genx does not load one
     * itself (a load costs time at MPI_Init and, through hwloc's PCI
     * plugin, memory valgrind reports lost): without it the binding is
     * unknown and the host stays one level. */
    host = mca_coll_genx_proc_hostname(ompi_proc_local());
    if (NULL == host) {
        /* A host of its own: grouping it with others would be a guess. */
        char own[64];
        snprintf(own, sizeof(own), "unknown host of vpid %u", (unsigned) OPAL_PROC_MY_NAME.vpid);
        host = strdup(own);
        if (NULL == host) {
            return;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* fi_getinfo costs about 0.2 s and gives NIC rates that are only
     * reported: asked where they are (verbose 2). */
    (void) genx_locality_probe(host, opal_hwloc_topology, NULL,
                               2 <= mca_coll_genx_component.verbose, words, note, sizeof(note));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    opal_output_verbose(2, mca_coll_genx_component.output,
                        "genx: locality of this rank (%s): %s; probed in %.1f ms", host, note,
                        (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
    free(host);
    genx_loc_store(OPAL_PROC_MY_NAME.vpid, words);
}

void mca_coll_genx_locality_probe(void)
{
    pthread_mutex_lock(&genx_loc_lock);
    genx_loc_probe_once();
    pthread_mutex_unlock(&genx_loc_lock);
}

/* The cached record of communicator rank r, or NULL. */
static const uint64_t *genx_loc_cached(ompi_communicator_t *comm, int r)
{
    const opal_process_name_t *name = &ompi_comm_peer_lookup(comm, r)->super.proc_name;
    size_t vpid = name->vpid;

    if (name->jobid != OPAL_PROC_MY_NAME.jobid || vpid >= genx_loc_vpids ||
        0 == genx_loc_cache[vpid * GENX_LOCALITY_WORDS]) {
        return NULL;
    }
    return genx_loc_cache + vpid * GENX_LOCALITY_WORDS;
}

/* Whether this rank lacks the record of some rank of the communicator
 * (probing its own first). */
static int genx_loc_needs_gather(ompi_communicator_t *comm)
{
    int need = 0;

    pthread_mutex_lock(&genx_loc_lock);
    genx_loc_probe_once();
    for (int r = 0; r < ompi_comm_size(comm) && !need; ++r) {
        need = (NULL == genx_loc_cached(comm, r));
    }
    pthread_mutex_unlock(&genx_loc_lock);
    return need;
}

/* After the gather (phase 4): keeps the records of this job's ranks. */
static void genx_loc_keep(ompi_communicator_t *comm, const uint64_t *words)
{
    pthread_mutex_lock(&genx_loc_lock);
    ++genx_loc_gathers;
    for (int r = 0; r < ompi_comm_size(comm); ++r) {
        const opal_process_name_t *name = &ompi_comm_peer_lookup(comm, r)->super.proc_name;
        if (name->jobid == OPAL_PROC_MY_NAME.jobid && 0 != words[r * GENX_LOCALITY_WORDS]) {
            genx_loc_store(name->vpid, words + r * GENX_LOCALITY_WORDS);
        }
    }
    pthread_mutex_unlock(&genx_loc_lock);
}

/* ------------------------------------------------------------------ */
/* The dissemination MAX exchange.                                     */

/* Posts round `round` of the exchange: this rank's running maximum to
 * r + 2^round, a receive from r - 2^round. */
static int genx_exchange_post(mca_coll_genx_agreement_t *ag, ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm), rank = ompi_comm_rank(comm);
    const int dist = 1 << ag->round;
    const size_t bytes = ag->words * sizeof(uint64_t);
    int rc;

    rc = MCA_PML_CALL(irecv(ag->in, bytes, MPI_BYTE, (rank - dist + size) % size, ag->tag,
                            comm, &ag->reqs[0]));
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    return MCA_PML_CALL(isend(ag->acc, bytes, MPI_BYTE, (rank + dist) % size, ag->tag,
                              MCA_PML_BASE_SEND_STANDARD, comm, &ag->reqs[1]));
}

/* Starts an exchange of `words` words (already in ag->acc, ag->in sized
 * alike).  With one rank there is nothing to exchange. */
static int genx_exchange_start(mca_coll_genx_agreement_t *ag, ompi_communicator_t *comm,
                               size_t words)
{
    int size = ompi_comm_size(comm);

    ag->words = words;
    ag->round = 0;
    ag->rounds = 0;
    while ((1 << ag->rounds) < size) {
        ++ag->rounds;
    }
    ag->reqs[0] = ag->reqs[1] = MPI_REQUEST_NULL;
    return (0 == ag->rounds) ? OMPI_SUCCESS : genx_exchange_post(ag, comm);
}

/* Advances the exchange without blocking: 1 when every round is done (the
 * maximum over all ranks is in ag->acc), 0 when not yet, an MPI error
 * when a message failed. */
static int genx_exchange_advance(mca_coll_genx_agreement_t *ag, ompi_communicator_t *comm)
{
    while (ag->round < ag->rounds) {
        int rc = OMPI_SUCCESS;

        for (int i = 0; i < 2; ++i) {
            int done = 0;
            if (MPI_REQUEST_NULL == ag->reqs[i]) {
                continue;
            }
            if (!REQUEST_COMPLETE(ag->reqs[i])) {
                return 0;
            }
            rc = ompi_request_test(&ag->reqs[i], &done, MPI_STATUS_IGNORE);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
        for (size_t w = 0; w < ag->words; ++w) {
            if (ag->in[w] > ag->acc[w]) {
                ag->acc[w] = ag->in[w];
            }
        }
        if (++ag->round < ag->rounds) {
            rc = genx_exchange_post(ag, comm);
            if (OMPI_SUCCESS != rc) {
                return rc;
            }
        }
    }
    return 1;
}

/* Sizes the exchange buffers for `words` words, zeroed. */
static int genx_exchange_buffers(mca_coll_genx_agreement_t *ag, size_t words)
{
    if (words > ag->capacity) {
        uint64_t *acc = realloc(ag->acc, words * sizeof(uint64_t));
        uint64_t *in = (NULL != acc) ? realloc(ag->in, words * sizeof(uint64_t)) : NULL;
        if (NULL != acc) {
            ag->acc = acc;
        }
        if (NULL == in) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        ag->in = in;
        ag->capacity = words;
    }
    memset(ag->acc, 0, words * sizeof(uint64_t));
    memset(ag->in, 0, words * sizeof(uint64_t));
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The agreement's phases.                                             */

/* Builds the communicator's decision table; a failure is said (or aborts
 * the job under coll_genx_rules_strict). */
static void genx_prepare_or_say(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    char err[512];

    if (GENX_OK == genx_comm_prepare(module->core, err, sizeof(err))) {
        return;
    }
    if (mca_coll_genx_component.rules_strict) {
        opal_output(0, "genx: comm %u (%d ranks): %s; aborting because "
                    "coll_genx_rules_strict is set",
                    mca_coll_genx_comm_id(comm), ompi_comm_size(comm), err);
        ompi_mpi_abort(comm, 1);
    }
    opal_output(0, "genx: comm %u (%d ranks): %s; genx leaves this communicator's "
                "MPI_Allreduce to %s", mca_coll_genx_comm_id(comm), ompi_comm_size(comm), err,
                module->fallback_name);
}

/* What this rank brings to the agreement: the core's digest, or 0 (which
 * disagrees with every rank that has one) when the module could not get
 * the base_data Open MPI's coll/base algorithms need, so that no rank
 * runs one while another falls back. */
static uint64_t genx_agreement_digest(mca_coll_genx_module_t *module)
{
    return mca_coll_genx_base_attach(&module->super) ? genx_comm_digest(module->core) : 0;
}

/* Phase 3 (and phase 1 without Slurm addresses): this rank's digest as
 * (digest, ~digest); after the MAX, equal on every rank iff all agree. */
static int genx_start_digest(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_agreement_t *ag = &module->agree;
    uint64_t mine = genx_agreement_digest(module);
    int rc = genx_exchange_buffers(ag, 2);

    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    ag->acc[0] = mine;
    ag->acc[1] = ~mine;
    ag->phase = 3;
    return genx_exchange_start(ag, comm, 2);
}

/* Phase 2: every rank's Slurm address record, each rank filling its own
 * slot. */
static int genx_start_addresses(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_agreement_t *ag = &module->agree;
    const size_t size = (size_t) ompi_comm_size(comm);
    int rc = genx_exchange_buffers(ag, size * GENX_TOPO_RECORD_WORDS);

    if (OMPI_SUCCESS != rc) {
        /* The other ranks are entering the exchange: leaving it would
         * leave them waiting. */
        opal_output(0, "genx: comm %u (%d ranks): no memory for the %d ranks' "
                    "SLURM_TOPOLOGY_ADDR; aborting", mca_coll_genx_comm_id(comm), (int) size,
                    (int) size);
        ompi_mpi_abort(comm, 1);
    }
    memcpy(ag->acc + (size_t) ompi_comm_rank(comm) * GENX_TOPO_RECORD_WORDS, ag->rec,
           2 * GENX_TOPO_ADDR_BYTES);
    ag->phase = 2;
    return genx_exchange_start(ag, comm, size * GENX_TOPO_RECORD_WORDS);
}

/* Phase 2 is done: place the ranks by the gathered addresses.  Every rank
 * gets the same answer from the same records, except on a local failure,
 * which phase 3 catches. */
static void genx_place_by_addresses(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm);
    const char **addrs = malloc((size_t) size * sizeof(*addrs));
    const char **patterns = malloc((size_t) size * sizeof(*patterns));

    if (NULL != addrs && NULL != patterns) {
        for (int r = 0; r < size; ++r) {
            addrs[r] = (const char *) (module->agree.acc + (size_t) r * GENX_TOPO_RECORD_WORDS);
            patterns[r] = addrs[r] + GENX_TOPO_ADDR_BYTES;
        }
        /* NULL overlay: the communicator's (explicit, else the site's). */
        (void) genx_comm_place_topology_addrs(module->core, addrs, patterns, NULL);
    }
    free(addrs);
    free(patterns);
}

/* Phase 4: every rank's locality record, each rank filling its own slot
 * (this process's, probed at the start). */
static int genx_start_locality(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_agreement_t *ag = &module->agree;
    const size_t size = (size_t) ompi_comm_size(comm);
    const uint64_t *mine;
    int rc = genx_exchange_buffers(ag, size * GENX_LOCALITY_WORDS);

    if (OMPI_SUCCESS != rc) {
        opal_output(0, "genx: comm %u (%d ranks): no memory for the %d ranks' locality "
                    "records; aborting", mca_coll_genx_comm_id(comm), (int) size, (int) size);
        ompi_mpi_abort(comm, 1);
    }
    pthread_mutex_lock(&genx_loc_lock);
    mine = genx_loc_cached(comm, ompi_comm_rank(comm));
    if (NULL != mine) {
        memcpy(ag->acc + (size_t) ompi_comm_rank(comm) * GENX_LOCALITY_WORDS, mine,
               GENX_LOCALITY_WORDS * sizeof(uint64_t));
    }
    pthread_mutex_unlock(&genx_loc_lock);
    ag->phase = 4;
    return genx_exchange_start(ag, comm, size * GENX_LOCALITY_WORDS);
}

/* Hands the ranks' records to the core: the gathered ones after phase 4,
 * else this process's cache, which holds every rank's (phase 1 said so on
 * every rank).  Every rank passes the same words. */
static void genx_apply_locality(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm);
    const uint64_t *words = module->agree.acc;
    uint64_t *copy = NULL;

    if (4 == module->agree.phase) {
        genx_loc_keep(comm, words);
        opal_output_verbose(2, mca_coll_genx_component.output,
                            "genx: comm %u (%d ranks): gathered locality (gather %d of this "
                            "process)", mca_coll_genx_comm_id(comm), size, genx_loc_gathers);
    } else {
        copy = malloc((size_t) size * GENX_LOCALITY_WORDS * sizeof(uint64_t));
        if (NULL == copy) {
            /* Every other rank places by the records: this one cannot, and
             * the digests (phase 3) will say they disagree. */
            return;
        }
        pthread_mutex_lock(&genx_loc_lock);
        for (int r = 0; r < size; ++r) {
            const uint64_t *rec = genx_loc_cached(comm, r);
            if (NULL == rec) { /* not reached: phase 1 said every rank has every record */
                pthread_mutex_unlock(&genx_loc_lock);
                free(copy);
                return;
            }
            memcpy(copy + (size_t) r * GENX_LOCALITY_WORDS, rec,
                   GENX_LOCALITY_WORDS * sizeof(uint64_t));
        }
        pthread_mutex_unlock(&genx_loc_lock);
        words = copy;
        opal_output_verbose(2, mca_coll_genx_component.output,
                            "genx: comm %u (%d ranks): locality from this process's cache, no "
                            "gather", mca_coll_genx_comm_id(comm), size);
    }
    (void) genx_comm_place_locality(module->core, words);
    free(copy);
}

/* One phase's exchange is complete: decide what comes next.  Phase 1
 * carries (max digest, ~min digest, some rank lacks a Slurm address, some
 * rank has one, some rank lacks a locality record, some rank does not
 * discover, some rank does).  Where some rank has an address, the ranks
 * that have all of them place the communicator by them (phase 2); where
 * every rank discovers and some rank lacks a record, the records are
 * gathered (phase 4) and every rank places by them; then the ranks that
 * waited build their tables, and all compare digests again (phase 3).
 * Every rank takes the same branch, from the same words.  Returns 1 when
 * the agreement is complete. */
static int genx_phase_done(mca_coll_genx_module_t *module, ompi_communicator_t *comm, int *rc)
{
    mca_coll_genx_agreement_t *ag = &module->agree;

    *rc = OMPI_SUCCESS;
    if (1 == ag->phase) {
        ag->result = (ag->acc[0] == ~ag->acc[1]) ? 1 : -1;
        ag->locality = (0 != ag->acc[6] && 0 == ag->acc[5]);
        ag->gather = ag->locality && 0 != ag->acc[4];
        if (0 == ag->acc[3] && 0 == ag->acc[6]) {
            return 1;
        }
        if (0 == ag->acc[2] && 0 != ag->acc[3]) {
            *rc = genx_start_addresses(module, comm);
            return 0;
        }
    } else if (2 == ag->phase) {
        genx_place_by_addresses(module, comm);
    } else if (3 == ag->phase) {
        ag->result = (ag->acc[0] == ~ag->acc[1]) ? 1 : -1;
        return 1;
    }
    if (ag->gather && 4 != ag->phase) {
        *rc = genx_start_locality(module, comm);
        return 0;
    }
    if (ag->locality) {
        genx_apply_locality(module, comm);
    }
    if (ag->slurm || ag->discover) {
        genx_prepare_or_say(module, comm);
    }
    *rc = genx_start_digest(module, comm);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Entry points.                                                       */

void mca_coll_genx_agreement_fini(mca_coll_genx_agreement_t *ag)
{
    free(ag->acc);
    free(ag->in);
    ag->acc = ag->in = NULL;
    ag->capacity = 0;
}

void mca_coll_genx_agreement_start(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_agreement_t *ag = &module->agree;
    int rc;

    if (MCA_COLL_GENX_AGREE_IDLE != ag->state) {
        return;
    }
    /* Whether this rank could place the communicator by Slurm's addresses:
     * no topology file (explicit or the site's), the feature on, and an
     * address of its own. */
    ag->slurm = cs->slurm_topology && 0 == genx_comm_topology(module->core) &&
                '\0' == genx_comm_topology_file(module->core)[0];
    if (ag->slurm) {
        genx_topology_addr_record(ag->rec);
        ag->slurm = '\0' != ag->rec[0];
    }
    /* The decision table is built here, at the first call, not when the
     * communicator is created: communicators that never allreduce cost
     * nothing.  A rank that cannot build it digests to 0 and so disagrees
     * with any rank that could.  A rank with a Slurm address builds it
     * only once it knows whether every rank has one (phase 1). */
    /* Likewise a rank that discovers locality: the records may change the
     * placement, so it builds its table once they are known. */
    ag->discover = cs->discover;
    if (!ag->slurm && !ag->discover) {
        genx_prepare_or_say(module, comm);
    }
    ag->comm = comm;
    ag->result = -1;
    ag->tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    ag->phase = 1;
    rc = genx_exchange_buffers(ag, 7);
    if (OMPI_SUCCESS == rc) {
        uint64_t mine = (ag->slurm || ag->discover) ? 0 : genx_agreement_digest(module);
        ag->acc[0] = mine;
        ag->acc[1] = ~mine;
        ag->acc[2] = ag->slurm ? 0 : 1;
        ag->acc[3] = ag->slurm ? 1 : 0;
        ag->acc[4] = ag->discover ? (uint64_t) genx_loc_needs_gather(comm) : 0;
        ag->acc[5] = ag->discover ? 0 : 1;
        ag->acc[6] = ag->discover ? 1 : 0;
        rc = genx_exchange_start(ag, comm, 7);
    }
    ag->state = MCA_COLL_GENX_AGREE_RUNNING;
    if (OMPI_SUCCESS != rc) {
        ag->error = rc;
    }
    mca_coll_genx_nb_watch(module);
}

int mca_coll_genx_agreement_advance(mca_coll_genx_module_t *module)
{
    mca_coll_genx_agreement_t *ag = &module->agree;
    int rc = ag->error;

    while (OMPI_SUCCESS == rc) {
        int done = genx_exchange_advance(ag, ag->comm);
        if (0 == done) {
            return 0;
        }
        if (1 != done) {
            rc = done;
            break;
        }
        if (genx_phase_done(module, ag->comm, &rc)) {
            break;
        }
    }
    if (OMPI_SUCCESS != rc) {
        /* A message failed: this rank cannot know what the others decided,
         * so it runs nothing of genx's on this communicator. */
        opal_output(0, "genx: comm %u (%d ranks), rank %d: the ranks' agreement exchange "
                    "failed (error %d); genx leaves this communicator's allreduces to %s",
                    mca_coll_genx_comm_id(ag->comm), ompi_comm_size(ag->comm),
                    ompi_comm_rank(ag->comm), rc, module->fallback_name);
        ag->result = -1;
    }
    return 1;
}
