/*
 * coll_genx.h: the Open MPI side of genx, for Open MPI 4.1 (coll component
 * 2.0.0, module 2.3.0) and 5.0 (component and module 2.4.0) from one
 * source; what differs between the two is in coll_genx_compat.h and
 * nowhere else.  The glue is C because Open MPI's internal headers are not valid
 * C++; it turns MPI objects into the plain values of genx/genx_core.h,
 * supplies the PML as the core's transport, and sends everything the core
 * cannot or will not run to the component that owned MPI_Allreduce before
 * genx (normally tuned), saved when the module is enabled.
 *
 * Only mca_coll_genx_component has to be visible to Open MPI's loader; the
 * other mca_coll_genx_* symbols are shared between the glue's files and
 * hidden by the build.
 */
#ifndef MCA_COLL_GENX_EXPORT_H
#define MCA_COLL_GENX_EXPORT_H

#include "ompi_config.h"

#include <stdint.h>

#include "mpi.h"
#include "coll_genx_compat.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/op/op.h"
#include "ompi/request/request.h"

#include "genx/genx_core.h"

BEGIN_C_DECLS

typedef struct mca_coll_genx_component_t {
    mca_coll_genx_base_component_t super; /* coll_genx_compat.h */

    /* MCA parameters (coll_genx_*), read once at registration. */
    int priority;
    int verbose;
    char *allreduce_algorithm;
    char *allreduce_params;
    /* The per-cluster rules file (docs/rules.md) and whether a file genx
     * cannot use (or any other bad setting) aborts the job. */
    char *rules;
    bool rules_strict;
    /* The network's shape: a Slurm topology.conf and a JSON overlay
     * (docs/topology.md); empty = hosts grouped by name. */
    char *topology_file;
    char *topology_overlay;
    /* The site directory genx-tune --site wrote (docs/site.md): its files
     * serve where the three settings above are empty; empty = no site. */
    char *site;
    /* Without a topology file: place the ranks by Slurm's per-task
     * SLURM_TOPOLOGY_ADDR when every rank has one (gathered at the first
     * call). */
    bool slurm_topology;
    /* Gather each rank's locality inside its node (hwloc binding, packages,
     * NUMA nodes, NICs) at a communicator's first call, once per job, and
     * give the plans the levels inside each host (coll_genx_agree.c). */
    bool discover;
    /* Device memory (docs/device.md): look for device buffers where a CUDA
     * driver is present, and the libgenx-cuda.so to stage them with. */
    bool cuda;
    char *cuda_library;
    /* Where staged device calls reduce (auto, host, device) and the
     * estimate's device figures. */
    char *cuda_reduce;
    char *cuda_rates;
    /* First-call trials (docs/rules.md): rounds per candidate, 0 = none. */
    int trial_rounds;

    /* opal_output stream for decisions, verbosity = coll_genx_verbose. */
    int output;
    /* A bad coll_genx_allreduce_algorithm/params value is reported once per
     * process, whatever the verbosity, not once per communicator. */
    bool config_error_reported;

    /* Non-blocking allreduces in flight (every communicator), driven by
     * one progress callback registered with Open MPI's progress engine at
     * the first one; the lock makes them safe under MPI_THREAD_MULTIPLE. */
    opal_mutex_t nb_lock;
    struct mca_coll_genx_request_t *nb_active;
    /* Communicators whose ranks' agreement is in flight (coll_genx_agree.c),
     * advanced by the same callback; nb_count counts them too. */
    struct mca_coll_genx_module_t *nb_agreeing;
    volatile int32_t nb_count;
    bool nb_progress_registered;

    /* `--mca coll genx` alone (coll_genx_alone.c): the Open MPI coll
     * components genx added to the coll framework at open, comma separated
     * (empty when it added none), or the one line explaining why it could
     * not (printed whatever the verbosity). */
    char added_components[256];
    char alone_problem[512];
} mca_coll_genx_component_t;

MCA_COLL_GENX_DECLSPEC extern mca_coll_genx_component_t mca_coll_genx_component;

/* Fallbacks the glue already reported on one communicator: hashes of
 * (size class, reason).  Fixed capacity, so that logging never allocates;
 * once full, further ones on that communicator are not printed (said once). */
#define MCA_COLL_GENX_LOGGED_MAX 128

/* What the PML transport posts on: a communicator and a tag. */
typedef struct mca_coll_genx_pml_ctx_t {
    ompi_communicator_t *comm;
    int tag;
} mca_coll_genx_pml_ctx_t;

/* What one call's (datatype, op, count) mean to genx: the element size,
 * whether the data is contiguous bytes at the buffer address, the core's
 * element type and operator (mca_coll_genx_call_shape). */
typedef struct mca_coll_genx_shape_t {
    ompi_datatype_t *dtype;
    ompi_op_t *op;
    int count;
    size_t type_size;
    const char *layout; /* why the data is not contiguous bytes at the address, or NULL */
    genx_dtype gdt;
    genx_op gop;
    int commute;
    /* The core's answer for these bytes (genx_comm_defers for the
     * blocking or the non-blocking calls), fixed once the ranks agreed:
     * -1 not asked yet. */
    int defers;
    const char *deferred;
} mca_coll_genx_shape_t;

/* The ranks' agreement on a communicator's decisions, a non-blocking
 * exchange (coll_genx_agree.c). */
typedef enum {
    MCA_COLL_GENX_AGREE_IDLE = 0, /* not started */
    MCA_COLL_GENX_AGREE_RUNNING,  /* messages in flight */
    MCA_COLL_GENX_AGREE_DONE      /* result known */
} mca_coll_genx_agree_state_t;

typedef struct mca_coll_genx_agreement_t {
    volatile int state;        /* mca_coll_genx_agree_state_t */
    int result;                /* once DONE: 1 every rank decides alike, -1 not */
    int error;                 /* a failed post (OMPI error), OMPI_SUCCESS otherwise */
    int phase;                 /* 1 digests and flags, 2 addresses, 4 locality, 3 digests again */
    int tag;                   /* drawn from the non-blocking tag space at the start */
    int round, rounds;         /* the dissemination exchange's rounds */
    size_t words, capacity;    /* the exchange's length and its buffers' */
    uint64_t *acc, *in;        /* running maximum, a round's incoming words */
    ompi_request_t *reqs[2];   /* a round's receive and send */
    ompi_communicator_t *comm;
    int slurm;                 /* this rank has a Slurm address to place by */
    char rec[512];             /* that address and its pattern */
    int discover;              /* this rank gathers locality (coll_genx_discover) */
    int locality;              /* after phase 1: every rank does, so the core gets it */
    int gather;                /* after phase 1: some rank lacks a record in its cache */
    struct mca_coll_genx_module_t *next; /* in the component's list in flight */
} mca_coll_genx_agreement_t;

typedef struct mca_coll_genx_module_t {
    mca_coll_base_module_t super;

    ompi_communicator_t *comm;
    genx_comm *core;
    mca_coll_genx_pml_ctx_t pml; /* blocking calls: the allreduce tag */
    genx_transport_ops transport;

    /* The allreduce that was installed before genx (retained). */
    mca_coll_base_module_allreduce_fn_t fallback_allreduce;
    mca_coll_base_module_t *fallback_allreduce_module;
    const char *fallback_name;
    /* The iallreduce that was installed before genx (retained), if any. */
    mca_coll_base_module_iallreduce_fn_t fallback_iallreduce;
    mca_coll_base_module_t *fallback_iallreduce_module;
    const char *fallback_iallreduce_name;  /* its component (libnbc normally) */
    /* The persistent allreduce (MPIX_Allreduce_init in 4.1,
     * MPI_Allreduce_init in 5.0) installed before genx (retained), if
     * any: libnbc's normally. */
    mca_coll_base_module_allreduce_init_fn_t fallback_allreduce_init;
    mca_coll_base_module_t *fallback_allreduce_init_module;

    /* Whether every rank's core decides alike (genx_comm_digest), as this
     * communicator's calls see it: 0 not settled yet, 1 yes, -1 no (every
     * call then goes to the fallback).  Set from agree's result by the
     * first call that finds it known (mca_coll_genx_settle), never by the
     * progress callback. */
    int agreed;
    mca_coll_genx_agreement_t agree;
    /* A CUDA driver is present and coll_genx_cuda is on: buffers may be
     * device memory, so nothing may be handed to the fallback unstaged. */
    bool device;
    /* Some blocking size has a first-call trial (genx_trial_any), set when
     * the ranks agree (the trials and their rounds are in the digest). */
    bool trials;

    /* The last call's shape, blocking and non-blocking apart (a
     * communicator's non-blocking calls may start from the progress
     * engine); dtype NULL: none yet. */
    mca_coll_genx_shape_t shape;
    mca_coll_genx_shape_t ishape;

    uint64_t logged[MCA_COLL_GENX_LOGGED_MAX];
    int nlogged;
    bool logged_full;
} mca_coll_genx_module_t;

OBJ_CLASS_DECLARATION(mca_coll_genx_module_t);

/* The reduce callback's context: an MPI op on an MPI datatype. */
typedef struct mca_coll_genx_reduce_ctx_t {
    ompi_op_t *op;
    ompi_datatype_t *dtype;
} mca_coll_genx_reduce_ctx_t;

/* One MPI_Iallreduce genx runs, or one persistent allreduce (between and
 * during its starts): the MPI request the user holds, the core's
 * operation, and what that operation points to until it ends. */
typedef struct mca_coll_genx_request_t {
    /* Not a bare ompi_request_t: after the coll entry returns, Open MPI's
     * MPI_Iallreduce and MPI_Allreduce_init (MPIX_ in 4.1) hand the request
     * to ompi_coll_base_retain_op, which takes it for an
     * ompi_coll_base_nbc_request_t and, for a user-defined op or a derived
     * datatype, stores the objects it retains in that structure's fields
     * (both 4.1 and 5.0). */
    ompi_coll_base_nbc_request_t super;
    genx_request *core;
    /* An MPI_Iallreduce started before its communicator's agreement was
     * known waits here for it, its tag already drawn, and is then launched
     * by the progress callback: pending 1 until then, with the call's
     * arguments; child is the displaced component's request where it went
     * there (started on this request's tag). */
    int pending;
    struct mca_coll_genx_module_t *module;
    const void *sbuf;
    void *rbuf;
    mca_coll_genx_shape_t shape;
    ompi_request_t *child;
    mca_coll_genx_pml_ctx_t pml; /* its own non-blocking collective tag */
    genx_transport_ops transport;
    mca_coll_genx_reduce_ctx_t rctx;
    genx_reduce_cb cb;
    size_t bytes;
    struct mca_coll_genx_request_t *next; /* in the component's active list */
} mca_coll_genx_request_t;

OBJ_CLASS_DECLARATION(mca_coll_genx_request_t);

int mca_coll_genx_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_genx_comm_query(ompi_communicator_t *comm, int *priority);

int mca_coll_genx_allreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);

int mca_coll_genx_iallreduce(const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, ompi_request_t **request,
                             mca_coll_base_module_t *module);
int mca_coll_genx_allreduce_init(const void *sbuf, void *rbuf, int count,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *module);
/* Called from genx's open function: when the `coll` include list is
 * "genx" alone, adds Open MPI's own coll components to the coll framework
 * (coll_genx_alone.c). */
void mca_coll_genx_complete_selection(void);

/* Unregisters the non-blocking progress callback (component close). */
void mca_coll_genx_nb_fini(void);

/* Shared by the blocking, non-blocking and persistent entries
 * (coll_genx_allreduce.c): the reduce callback, and the call's shape (its
 * layout check and genx's element type and operator for (dtype, op)).
 * `last` holds the previous call's shape and is reused when (dtype, op,
 * count) are the same predefined datatype and operator (their handles mean
 * the same for the whole job, unlike a derived datatype's or user op's,
 * which a free and a create may give to another object); it is updated for
 * those, and the answer is `last` or `tmp`.  `last` NULL: no cache, the
 * shape is computed into `tmp`. */
void mca_coll_genx_reduce(void *ctx, const void *in, void *inout, size_t count);
mca_coll_genx_shape_t *mca_coll_genx_call_shape(mca_coll_genx_shape_t *last,
                                                mca_coll_genx_shape_t *tmp,
                                                ompi_datatype_t *dtype, ompi_op_t *op, int count);
/* The ranks' agreement (coll_genx_agree.c).  _start draws its tag, builds
 * the decision table and posts the first messages, once per communicator,
 * never waiting; _advance, called by the progress callback under its lock,
 * returns 1 once the result is known (the callback then takes the module
 * off its list and marks the agreement done); _fini frees its buffers. */
void mca_coll_genx_agreement_start(mca_coll_genx_module_t *module, ompi_communicator_t *comm);
int mca_coll_genx_agreement_advance(mca_coll_genx_module_t *module);
void mca_coll_genx_agreement_fini(mca_coll_genx_agreement_t *ag);
/* Probes this process's locality record once (hwloc, sysfs, fi_getinfo:
 * milliseconds), called where a communicator is created, so that the
 * agreement's start, inside an MPI_Iallreduce, does not pay for it. */
void mca_coll_genx_locality_probe(void);
/* Puts a module whose agreement is in flight on the progress callback's
 * list (coll_genx_iallreduce.c). */
void mca_coll_genx_nb_watch(mca_coll_genx_module_t *module);
/* Takes it off that list if it is there (a module destroyed with its
 * agreement in flight). */
void mca_coll_genx_nb_unwatch(mca_coll_genx_module_t *module);
/* For the calls that may wait (blocking MPI_Allreduce, persistent
 * initialisation): starts the agreement if needed, waits for its result,
 * and settles it (mca_coll_genx_settle). */
void mca_coll_genx_check_agreement(mca_coll_genx_module_t *module, ompi_communicator_t *comm);
/* The agreement's result is known: take it as the communicator's
 * (module->agreed), forget the sizes' cached answers, step aside where
 * every size defers, say when the ranks disagree.  Called from an entry
 * point, not from progress. */
void mca_coll_genx_settle(mca_coll_genx_module_t *module, ompi_communicator_t *comm);
/* Logs, once per size class and reason at verbosity >= 1, that a call goes
 * to the fallback. */
typedef enum {
    MCA_COLL_GENX_BLOCKING = 0,   /* MPI_Allreduce */
    MCA_COLL_GENX_NONBLOCKING,    /* MPI_Iallreduce */
    MCA_COLL_GENX_PERSISTENT      /* MPIX_Allreduce_init (4.1), MPI_Allreduce_init (5.0) */
} mca_coll_genx_call_t;
void mca_coll_genx_log_fallback(mca_coll_genx_module_t *module, mca_coll_genx_call_t call,
                                size_t bytes, const char *reason);

/* Fills ops with the PML transport over pml's communicator and tag. */
void mca_coll_genx_pml_transport(mca_coll_genx_pml_ctx_t *pml, genx_transport_ops *ops);

/* 1 when this Open MPI takes device pointers (MPIX_Query_cuda_support,
 * looked up at run time: builds without CUDA may lack it). */
int mca_coll_genx_mpi_cuda_aware(void);

END_C_DECLS

#endif /* MCA_COLL_GENX_EXPORT_H */
