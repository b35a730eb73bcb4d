/*
 * genx_core.h: the C boundary between the Open MPI glue (C, because Open
 * MPI's internal headers are not valid C++) and genx's C++17 core.
 *
 * The glue translates MPI objects into the plain values below and supplies
 * the point-to-point transport (Open MPI's PML) as function pointers; the
 * core chooses the algorithm, caches plans/schedules/scratch per
 * communicator and size class, and runs the executor.  No exception crosses
 * this boundary: every entry point catches and returns a code with a message.
 */
#ifndef GENX_CORE_H
#define GENX_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/genx_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Logging sink for decisions (verbose output); may be NULL. */
typedef void (*genx_log_fn)(void *ctx, int level, const char *msg);

typedef struct genx_config {
    const char *algorithm; /* "auto" or a generator name */
    const char *params;    /* "key=value,..." or "" */
    int verbose;           /* 0 silent, 1 decisions, 2+ more */
    genx_log_fn log;
    void *log_ctx;
    /* Appended; a zero-initialised config means "built-in defaults". */
    const char *rules_path; /* genx rules file (docs/rules.md); NULL or "" = the built-in defaults */
    int rules_strict;       /* 0: a bad rules file is reported and the built-in defaults are used;
                               1: genx_comm_create fails with the error instead */
    /* Appended: the network's shape (docs/topology.md).  A Slurm
     * topology.conf (tree form) and an optional JSON overlay; NULL or "" =
     * none.  Used only where genx_comm_create is given each rank's host.
     * A file that cannot be read or parsed, or a rank on a host the
     * file does not name, is reported (file, line, field) and genx groups
     * hosts by name instead. */
    const char *topology_file;
    const char *topology_overlay;
    /* Appended: device memory (docs/device.md).  device_off = 1: every
     * buffer is host memory and no pointer is ever queried (for a site that
     * knows it has no device buffers); 0: where a CUDA driver with a device
     * is present, each call asks the driver where its buffers are and
     * stages device memory through page-locked host memory.
     * device_library: libgenx-cuda.so to load (NULL or "" = the build
     * tree's, then the installed one). */
    int device_off;
    const char *device_library;
    /* 1: the transport takes device pointers (a CUDA-aware MPI: the glue
     * asks MPIX_Query_cuda_support).  Calls whose buffers are all device
     * memory then run on the device, the reductions in libgenx-cuda.so's
     * kernels, and nothing is staged; 0: device memory is staged. */
    int transport_device_aware;
    /* Appended: where a staged call on device memory reduces (docs/device.md).
     * NULL, "" or "auto": the cheaper by genx's estimate (bus rate, copy
     * latency, host and device reduction rates); "host": on the
     * page-locked host copy; "device": in libgenx-cuda.so's kernels, every
     * message bounced through page-locked memory.  device_rates: the
     * estimate's device figures, "pcie=B/s,copy_latency=s,
     * device_reduce=B/s,kernel_latency=s" (any subset; NULL or "" = the
     * defaults); the host's come from the rules file's model. */
    const char *device_reduce;
    const char *device_rates;
    /* Appended: the site directory `genx-tune --site DIR` wrote (docs/site.md);
     * NULL or "" = none.  Its topology.conf, overlay.json and rules.json
     * are used where topology_file, topology_overlay and rules_path are
     * NULL or "" (those override the site's file of their kind); its
     * site.json says what it was measured on.  mpi_version: this job's Open
     * MPI ("4.1.4"), checked against the site's (a site tuned for other
     * software keeps its network but not its rules); NULL or "" = unknown,
     * not checked. */
    const char *site_dir;
    const char *mpi_version;
    /* Appended: first-call trials (docs/rules.md, "First-call trial"): the
     * rounds each candidate is timed where a site's model leaves a size to
     * the displaced component yet prices a plan ahead of it; 0 = none (the
     * decisions stand as the table made them). */
    int trial_rounds;
} genx_config;

typedef struct genx_comm genx_comm;

/* Creates per-communicator state.  Returns NULL and fills err on bad
 * configuration (unknown algorithm, bad params): the glue then disqualifies
 * genx for that communicator and says why.  The communicator's placement:
 * `nodes` it spans and `ppn`, the largest number of its ranks on one node
 * (0 = unknown), which the selector's rules and model use; and each rank's
 * host name (host_of_rank[r] for communicator rank r; NULL, or a NULL
 * entry, = unknown), which places the ranks on cfg->topology_file's switch
 * tree (cfg->topology_file's, or the site directory's topology.conf).
 * Every rank must pass the same values.  cfg NULL = the built-in defaults. */
genx_comm *genx_comm_create(int rank, int size, int nodes, int ppn,
                            const char *const *host_of_rank, const genx_config *cfg, char *err,
                            size_t errlen);
/* What the communicator knows of the network: 0 = no topology (hosts are
 * grouped by name), else the view's fingerprint (the same on every rank
 * that placed its ranks alike; it is part of genx_comm_digest). */
uint64_t genx_comm_topology(const genx_comm *comm);
/* Places the ranks on the switch tree of Slurm's per-task
 * SLURM_TOPOLOGY_ADDR, for a job without a topology file (a site running
 * topology/tree sets it for every task): addrs[r] and patterns[r] are
 * communicator rank r's SLURM_TOPOLOGY_ADDR and SLURM_TOPOLOGY_ADDR_PATTERN
 * ("" when unset), gathered from every rank; rank r's host is its address's
 * last component; `overlay` ("" for none) gives link rates as for a
 * topology file; NULL = the communicator's own (cfg->topology_overlay, else
 * the site directory's overlay.json).  Call it before the communicator's first call, before or
 * after genx_comm_prepare (the decision table and a forced plan are then
 * built again, for the next genx_comm_prepare).  Every rank must
 * pass the same lists, so every rank gets the same result: 1 placed, 0
 * nothing done (a topology file already placed the ranks, or an address is
 * empty), -1 the addresses do not form a tree (said once at verbose >= 0;
 * hosts stay grouped by name). */
int genx_comm_place_topology_addrs(genx_comm *comm, const char *const *addrs,
                                   const char *const *patterns, const char *overlay);
/* The allreduce genx displaced on this communicator, which prices a rules
 * file's "fallback" incumbent in the blocking table (docs/rules.md):
 * component, the coll component whose allreduce genx saved ("tuned",
 * "han", ...; NULL or "" unknown), and tuned_dynamic, 1 where
 * coll_tuned_use_dynamic_rules is set.  Tuned without dynamic rules on Open
 * MPI 4.1 (genx_config's mpi_version) decides by its fixed table, and the
 * incumbent is priced as its choice at each size; anything else, and a
 * communicator this is never called on, as the cheapest of Open MPI's
 * modelled algorithms.  Call it before genx_comm_prepare (after it, the
 * tables are built again at the next one).  Every rank must pass the same
 * values.  Returns 1 for tuned's fixed decision, else 0; *note (may be
 * NULL) gets one line saying which and why, valid while the communicator
 * lives. */
int genx_comm_set_displaced(genx_comm *comm, const char *component, int tuned_dynamic,
                            const char **note);
/* The topology file the communicator was configured with
 * (cfg->topology_file, else the site directory's topology.conf), "" for
 * none; valid while the communicator lives.  The glue places ranks by
 * Slurm's addresses only where there is none. */
const char *genx_comm_topology_file(const genx_comm *comm);
void genx_comm_destroy(genx_comm *comm);
/* Locality inside a node (docs/design.md §6.5, topology/locality.hpp): each
 * rank's record is GENX_LOCALITY_WORDS 64-bit words, word 0 never 0.
 * genx_locality_probe fills this process's record: its host (host_name,
 * hashed alike on every rank), the package and NUMA node of its binding
 * read from hwloc_topology (a loaded hwloc 2 hwloc_topology_t of this
 * machine, such as Open MPI's; NULL: genx loads this machine's itself,
 * without I/O devices), -1
 * where unbound or spanning several, and the host's packages, NUMA nodes
 * and NICs (sysfs under sysfs_root, NULL = "/sys"; with libfabric = 1
 * also fi_getinfo, for the rates of NICs sysfs does not rate: it costs
 * about 0.2 s, and the rates are only reported).  note gets one line
 * saying what was found.  Asks no other process.  GENX_OK, or GENX_ERROR
 * with the reason in note (words then hold a record with nothing known). */
#define GENX_LOCALITY_WORDS 4
int genx_locality_probe(const char *host_name, void *hwloc_topology, const char *sysfs_root,
                        int libfabric, uint64_t *words, char *note, size_t notelen);
/* Adds the levels inside each host (host -> package -> NUMA node -> ranks,
 * where the ranks are bound) to the communicator's topology view, from
 * words[r * GENX_LOCALITY_WORDS ...], communicator rank r's record; without
 * a topology the hosts go under one unrated root.  Unbound ranks keep
 * their host one level (said at verbose 1).  Call it before the first
 * call, like genx_comm_place_topology_addrs (tables and a forced plan are
 * built again for the next genx_comm_prepare).  Every rank must pass the
 * same records: 1 levels placed, 0 nothing done (no host has ranks on
 * several packages or NUMA nodes: the placement is left as it was), -1 an
 * error (said once). */
int genx_comm_place_locality(genx_comm *comm, const uint64_t *words);


/* Builds what the communicator decides with (the decision table of the
 * rules or the built-in defaults for its shape; shared per process by
 * shape).  Deferred from create so that communicators that never allreduce
 * cost nothing: call it at the first allreduce, before genx_comm_digest.
 * Idempotent.  GENX_ERROR with err filled when the table cannot be built
 * (with coll_genx_rules_strict, a rule that cannot run); genx_allreduce
 * then declines every call with that reason. */
int genx_comm_prepare(genx_comm *comm, char *err, size_t errlen);

/* A hash of every decision the communicator will make (0 before a
 * successful genx_comm_prepare with "auto").  Ranks that decide
 * differently (a rules file readable on some nodes only, different
 * placement) would run different plans and hang; the glue compares digests
 * across ranks (with its fallback allreduce) before genx's first call. */
uint64_t genx_comm_digest(const genx_comm *comm);

/* Non-blocking allreduce: MPI_Iallreduce (persistent = 0) and persistent
 * allreduce (persistent = 1: MPI_Allreduce_init; Open MPI 4.1's
 * MPIX_Allreduce_init), on the non-blocking decisions (docs/rules.md,
 * "call") and the same plans as genx_allreduce.  The decision is taken
 * once, with the plan, its schedule for this count and the scratch area
 * bound to the request.  GENX_DECLINE: nothing was posted, the caller uses
 * its fallback's iallreduce or allreduce_init (why filled).  Device
 * buffers (genx_buffers_on_device): GENX_ERROR_BUFFER, nothing posted.
 * GENX_OK: *req is an inactive request; each genx_request_start runs the
 * allreduce on the buffers given here (no lookup), driven by
 * genx_request_progress until done, and may be called again once it is
 * (an MPI_Iallreduce is started once, at once).  The buffers, the reduce
 * callback's ctx and the transport's ctx must live until the request is
 * freed.  The transport should keep the request's messages apart from
 * every other collective's (a tag of its own, which may be the same for
 * every start: one start ends before the next begins, and messages
 * between two ranks on one tag are matched in order).  Several requests
 * may be in flight on one communicator; they run independently of
 * genx_allreduce's state.  `persistent` also names the call in genx's
 * log. */
typedef struct genx_request genx_request;
int genx_allreduce_init(genx_comm *comm, int persistent, const void *sendbuf, void *recvbuf,
                        size_t count, genx_dtype dtype, size_t elem_size, genx_op op,
                        int commutative, const genx_reduce_cb *cb,
                        const genx_transport_ops *transport, genx_request **req, char *why,
                        size_t whylen);
/* Starts a request (posts its first step).  GENX_ERROR (why filled) when
 * it is still in flight or failed before, or the start fails: the request
 * is then failed, and the caller frees it. */
int genx_request_start(genx_request *req, char *why, size_t whylen);
/* Does what can be done without blocking; *done = 1 when the result is in
 * recvbuf.  GENX_ERROR (why filled) ends the operation: free it. */
int genx_request_progress(genx_request *req, int *done, char *why, size_t whylen);
/* Frees a request (finished or failed).  After a failure, and when freed in
 * flight, the request's posted messages are cancelled where the transport
 * can (ops->cancel) and tested to completion for at most a second; any
 * left then keep their scratch area allocated (leaked, never reused). */
void genx_request_free(genx_request *req);

/* Whether the communicator's decision for a message of `bytes` in `count`
 * elements leaves it to the displaced component (a "fallback" rule, or a
 * plan that holds from more elements than `count`: docs/rules.md, "The
 * fallback incumbent"), without looking at anything else: the glue asks
 * first, so a deferred call costs a table lookup and nothing more.
 * calls: GENX_CALLS_BLOCKING (MPI_Allreduce's table) or
 * GENX_CALLS_NONBLOCKING (MPI_Iallreduce's and persistent allreduce's,
 * which differ where a rules file names a "call",
 * docs/rules.md).  *reason (may be NULL) gets the decision's explanation,
 * valid while the communicator lives.  0 before a successful
 * genx_comm_prepare and for forced algorithms.  Otherwise GENX_DEFERS (the
 * displaced component decides), or GENX_DEFERS + k where the rule names
 * one of Open MPI's own blocking allreduce algorithms (params "base=NAME",
 * docs/rules.md), k numbered as coll_tuned_allreduce_algorithm numbers
 * them: 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
 * 6 rabenseifner; the non-blocking table never names one.
 *
 * bytes = GENX_EVERY_SIZE (count ignored) asks whether every message size
 * of the calls defers to the displaced component itself, where calls may
 * also be both kinds ORed (every size of both): GENX_DEFERS or 0, and 0
 * also where any size of those calls runs a genx plan or one of Open
 * MPI's coll/base algorithms.  Where one kind does, the glue hands that
 * kind's slots back to the displaced components for good (allreduce; iallreduce and
 * persistent allreduce); *reason then gets the explanation of the first
 * interval of the first table asked about.  (Both kinds defer throughout
 * on one node under the built-in defaults.) */
#define GENX_DEFERS 1
#define GENX_CALLS_BLOCKING 1
#define GENX_CALLS_NONBLOCKING 2
#define GENX_EVERY_SIZE SIZE_MAX
int genx_comm_defers(const genx_comm *comm, int calls, size_t bytes, size_t count,
                     const char **reason);
/* First-call trials of blocking MPI_Allreduce (docs/rules.md).  Before a
 * blocking call of `bytes` on host memory: the candidate it runs, 0 for the
 * displaced component (the caller runs it), k >= 1 for a plan of genx's
 * (genx_allreduce runs it), or -1 where no trial is under way at that
 * size.  The caller times the call and passes this rank's seconds to
 * genx_trial_record, which returns 0, or after the trial's last call the
 * number n of medians it wrote to medians (room for max): the caller
 * reduces them to their maximum over the communicator's ranks and hands
 * the result to genx_trial_settle, after which the size runs what the
 * trial kept (genx_comm_defers says which; ask it again).  Every rank
 * makes the same calls, so all take the same turns. */
#define GENX_TRIAL_MAX 4
int genx_trial_next(genx_comm *comm, size_t bytes);
int genx_trial_record(genx_comm *comm, size_t bytes, double seconds, double *medians, int max);
void genx_trial_settle(genx_comm *comm, size_t bytes, const double *agreed, int n);
/* Whether any size of the communicator's blocking calls has a trial. */
int genx_trial_any(const genx_comm *comm);

/* The name of Open MPI's allreduce algorithm k as rules files spell it
 * ("recursive_doubling"), NULL for a number genx does not offer. */
const char *genx_base_algorithm_name(int k);

/* MPI_Allreduce, for every buffer.  sendbuf == NULL means in place (recvbuf
 * holds the input).  commutative: 0 for non-commutative ops (genx declines
 * unless the chosen plan preserves rank order).  Returns GENX_OK,
 * GENX_DECLINE (why filled; nothing was sent, the caller must use its
 * fallback) or GENX_ERROR.
 * Device buffers are staged through page-locked host memory, the copies
 * pipelined with the plan's steps, or run on the device
 * (runtime/device_calls.hpp); where genx's decision leaves the size to the
 * displaced component, `fallback` (may be NULL; common/genx_types.h) runs
 * on a host copy.  Never returns GENX_DECLINE for device buffers: it
 * returns GENX_ERROR_BUFFER (why filled, nothing sent) where they cannot
 * be staged (libgenx-cuda.so missing) or the call declines and fallback is
 * NULL. */
int genx_allreduce(genx_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                   genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                   const genx_reduce_cb *cb, const genx_transport_ops *transport,
                   const genx_host_fallback *fallback, char *why, size_t whylen);

/* Device memory (docs/device.md).  Whether a CUDA driver with a device is
 * present and device memory is not turned off: only then can a buffer be
 * device memory.  Costs nothing; the glue asks once per communicator. */
int genx_device_active(const genx_comm *comm);
/* The same before any communicator exists (the first call probes, once per
 * process, with these settings: genx_config's device_off and
 * device_library).  note (may be NULL) gets one line on what was found. */
int genx_device_probe(int device_off, const char *library, char *note, size_t notelen);
/* 1 when sendbuf (NULL = in place) or recvbuf is device or managed memory.
 * 0 without an active device, at the cost of one branch. */
int genx_buffers_on_device(const genx_comm *comm, const void *sendbuf, const void *recvbuf);

/* Runs `fallback` on a host copy of a device buffer of count * elem_size
 * bytes (for the glue's own reasons to fall back: a layout genx does not
 * take, ranks that disagree).  GENX_OK, GENX_ERROR (fallback failed) or
 * GENX_ERROR_BUFFER (cannot stage). */
int genx_allreduce_staged_fallback(genx_comm *comm, const void *sendbuf, void *recvbuf,
                                   size_t count, size_t elem_size,
                                   const genx_host_fallback *fallback, char *why, size_t whylen);

/* The size class of a message, the unit of genx's once-per-class logging
 * (core and glue alike): 0 for 0 bytes, else 1 + floor(log2(bytes)). */
unsigned genx_size_class(size_t bytes);

/* FNV-1a of text, seeded: genx's one hash, for the glue's log keys. */
uint64_t genx_hash(uint64_t seed, const char *text);

/* Names of the registered algorithms, comma separated (for help texts). */
const char *genx_algorithm_names(void);

#ifdef __cplusplus
}
#endif

#endif /* GENX_CORE_H */
