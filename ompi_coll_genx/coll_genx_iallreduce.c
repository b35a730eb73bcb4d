/*
 * coll_genx_iallreduce.c: MPI_Iallreduce on genx's plans.
 *
 * The core runs a non-blocking allreduce as a resumable execution
 * (genx_allreduce_init, genx_request_start, genx_request_progress); this
 * file wraps it in an MPI request and drives it from Open MPI's progress
 * engine, the way libnbc drives its schedules:
 *
 *  - the call takes the same decisions as MPI_Allreduce (same rules, same
 *    plans) and hands whatever genx leaves alone to the iallreduce that was
 *    installed before genx (normally libnbc's);
 *  - each operation gets a tag of its own from the communicator's
 *    non-blocking collective tag space (ompi_coll_base_nbc_reserve_tags,
 *    which libnbc also draws from), so that concurrent operations on one
 *    communicator, blocking allreduces and the fallback never match each
 *    other's messages; MPI requires non-blocking collectives to be started
 *    in the same order everywhere, so every rank draws the same tags;
 *  - the call posts the plan's first step and returns; one progress
 *    callback, registered at the first operation, advances every operation
 *    in flight whenever Open MPI progresses (in MPI_Test, MPI_Wait, any
 *    other MPI call) and completes the MPI request when its plan ends.
 *
 * Without an asynchronous progress thread a plan advances only inside MPI
 * calls, as libnbc's do.  The active list is guarded by one lock, taken
 * with trylock in the progress callback (a thread that finds it held leaves
 * the work to the holder), so operations on different communicators from
 * different threads are safe under MPI_THREAD_MULTIPLE.
 *
 * No initiation call waits for another rank.  The first call on a
 * communicator starts the ranks' agreement on genx's decisions as a
 * non-blocking exchange (coll_genx_agree.c); an MPI_Iallreduce made before
 * its result is known draws its tag, is queued, and is launched by the
 * progress callback once it is: with genx's plan, or with the displaced
 * component's iallreduce started on that same tag (genx_fallback_on_tag).
 * Every rank launches every call with the same decision, only at another
 * time (docs/design.md §6.5).  Under MPI_THREAD_MULTIPLE an
 * MPI_Iallreduce on a communicator not yet settled goes to the fallback
 * (libnbc) at once, and the agreement waits for the first blocking
 * MPI_Allreduce or persistent initialisation on it, both calls that may
 * synchronise: starting the fallback later there would need the
 * communicator's tag counter to itself, which another thread may be
 * drawing from.  Every rank sees the same sequence of calls, so every rank
 * makes the same choice.
 */
#include "ompi_config.h"

#include <stdio.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/op/op.h"
#include "ompi/runtime/mpiruntime.h"

#include "coll_genx.h"

static int genx_request_free_cb(struct ompi_request_t **request)
{
    mca_coll_genx_request_t *req = (mca_coll_genx_request_t *) *request;

    /* As libnbc: an operation in flight cannot be freed (MPI_Request_free
     * on an active non-blocking collective is erroneous in practice: its
     * buffers must stay valid until it completes). */
    if (!REQUEST_COMPLETE(&req->super.super)) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(&req->super.super);
    OBJ_RELEASE(req);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int genx_request_cancel_cb(struct ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST;
}

static void genx_request_construct(mca_coll_genx_request_t *req)
{
    req->super.super.req_type = OMPI_REQUEST_COLL;
    req->super.super.req_status._cancelled = 0;
    req->super.super.req_free = genx_request_free_cb;
    req->super.super.req_cancel = genx_request_cancel_cb;
    req->core = NULL;
    req->pml.comm = NULL;
    req->pml.tag = 0;
    req->next = NULL;
    req->bytes = 0;
    req->pending = 0;
    req->module = NULL;
    req->sbuf = NULL;
    req->rbuf = NULL;
    req->child = NULL;
}

static void genx_request_destruct(mca_coll_genx_request_t *req)
{
    if (NULL != req->child) {
        (void) ompi_request_free(&req->child);
    }
    if (NULL != req->core) {
        genx_request_free(req->core);
        req->core = NULL;
    }
    if (NULL != req->pml.comm) {
        OBJ_RELEASE(req->pml.comm);
        req->pml.comm = NULL;
    }
}

OBJ_CLASS_INSTANCE(mca_coll_genx_request_t, ompi_coll_base_nbc_request_t, genx_request_construct,
                   genx_request_destruct);

static int genx_request_launch(mca_coll_genx_request_t *req, char *why, size_t whylen);
static int genx_persistent_start(size_t count, ompi_request_t **requests);

/* One step of one operation: launches a queued one whose agreement is
 * known, completes one that went to the displaced component when its
 * request does, and progresses genx's own plan. */
static int genx_request_step(mca_coll_genx_request_t *req, int *done, char *why, size_t whylen)
{
    *done = 0;
    if (req->pending) {
        if (MCA_COLL_GENX_AGREE_DONE != req->module->agree.state) {
            return GENX_OK;
        }
        opal_atomic_rmb();
        req->pending = 0;
        if (GENX_OK != genx_request_launch(req, why, whylen)) {
            return GENX_ERROR;
        }
    }
    if (NULL != req->child) {
        if (!REQUEST_COMPLETE(req->child)) {
            return GENX_OK;
        }
        req->super.super.req_status.MPI_ERROR = req->child->req_status.MPI_ERROR;
        (void) ompi_request_free(&req->child);
        req->child = NULL;
        *done = 1;
        return GENX_OK;
    }
    return genx_request_progress(req->core, done, why, whylen);
}

/* Advances the agreements in flight, then every operation; completes the
 * finished ones (outside the lock: completing may run the user's request
 * callbacks).  An agreement is marked done only once off the list, so
 * that a blocking call waiting for it returns after its last use here. */
static int genx_nb_progress(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_request_t *finished = NULL, **link, *req;
    mca_coll_genx_module_t **mlink, *m;
    char why[512];
    int completed = 0;

    if (0 == cs->nb_count) {
        return 0;
    }
    if (0 != opal_mutex_trylock(&cs->nb_lock)) {
        return 0;
    }
    mlink = &cs->nb_agreeing;
    while (NULL != (m = *mlink)) {
        if (mca_coll_genx_agreement_advance(m)) {
            *mlink = m->agree.next;
            m->agree.next = NULL;
            (void) OPAL_THREAD_ADD_FETCH32(&cs->nb_count, -1);
            opal_atomic_wmb();
            m->agree.state = MCA_COLL_GENX_AGREE_DONE;
        } else {
            mlink = &m->agree.next;
        }
    }
    link = &cs->nb_active;
    while (NULL != (req = *link)) {
        int done = 0;
        why[0] = '\0';
        if (GENX_OK != genx_request_step(req, &done, why, sizeof(why))) {
            opal_output(0, "genx: iallreduce %zu B on comm %u (%d ranks), rank %d: failed: %s",
                        req->bytes, mca_coll_genx_comm_id(req->pml.comm),
                        ompi_comm_size(req->pml.comm), ompi_comm_rank(req->pml.comm),
                        ('\0' != why[0]) ? why : "error in the genx core");
            req->super.super.req_status.MPI_ERROR = MPI_ERR_INTERN;
            done = 1;
        }
        if (done) {
            *link = req->next;
            req->next = finished;
            finished = req;
            (void) OPAL_THREAD_ADD_FETCH32(&cs->nb_count, -1);
        } else {
            link = &req->next;
        }
    }
    opal_mutex_unlock(&cs->nb_lock);
    while (NULL != (req = finished)) {
        finished = req->next;
        req->next = NULL;
        ompi_request_complete(&req->super.super, true);
        ++completed;
    }
    return completed;
}

/* Registers the progress callback (once). Called with nb_lock held. */
static void genx_nb_register(mca_coll_genx_component_t *cs)
{
    if (!cs->nb_progress_registered) {
        cs->nb_progress_registered = (OPAL_SUCCESS == opal_progress_register(genx_nb_progress));
    }
}

void mca_coll_genx_nb_unwatch(mca_coll_genx_module_t *module)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_module_t **mlink;

    opal_mutex_lock(&cs->nb_lock);
    for (mlink = &cs->nb_agreeing; NULL != *mlink; mlink = &(*mlink)->agree.next) {
        if (*mlink == module) {
            *mlink = module->agree.next;
            (void) OPAL_THREAD_ADD_FETCH32(&cs->nb_count, -1);
            break;
        }
    }
    opal_mutex_unlock(&cs->nb_lock);
}

void mca_coll_genx_nb_watch(mca_coll_genx_module_t *module)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    opal_mutex_lock(&cs->nb_lock);
    genx_nb_register(cs);
    module->agree.next = cs->nb_agreeing;
    cs->nb_agreeing = module;
    (void) OPAL_THREAD_ADD_FETCH32(&cs->nb_count, 1);
    opal_mutex_unlock(&cs->nb_lock);
}

static void genx_nb_add(mca_coll_genx_request_t *req)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    opal_mutex_lock(&cs->nb_lock);
    genx_nb_register(cs);
    req->next = cs->nb_active;
    cs->nb_active = req;
    (void) OPAL_THREAD_ADD_FETCH32(&cs->nb_count, 1);
    opal_mutex_unlock(&cs->nb_lock);
}

void mca_coll_genx_nb_fini(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    if (cs->nb_progress_registered) {
        (void) opal_progress_unregister(genx_nb_progress);
        cs->nb_progress_registered = false;
    }
}

static int genx_ifallback(mca_coll_genx_module_t *module, const void *sbuf, void *rbuf,
                          int count, ompi_datatype_t *dtype, ompi_op_t *op,
                          ompi_communicator_t *comm, ompi_request_t **request, size_t bytes,
                          const char *reason)
{
    mca_coll_genx_log_fallback(module, MCA_COLL_GENX_NONBLOCKING, bytes, reason);
    return module->fallback_iallreduce(sbuf, rbuf, count, dtype, op, comm, request,
                                       module->fallback_iallreduce_module);
}

/* Device memory cannot be staged under a non-blocking or persistent
 * allreduce yet (the copies would have to progress with the request), and
 * libnbc would read it as host memory: such calls fail with
 * MPI_ERR_BUFFER and say so, rather than crash. */
static int genx_device_refused(mca_coll_genx_module_t *module, const void *sbuf, void *rbuf,
                               ompi_communicator_t *comm, size_t bytes, const char *what)
{
    if (!module->device ||
        !genx_buffers_on_device(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf)) {
        return OMPI_SUCCESS;
    }
    opal_output(0, "genx: %s %zu B on comm %u (%d ranks), rank %d: device memory is staged "
                "for MPI_Allreduce only; %s on device memory is not supported by genx, and "
                "this Open MPI's other components would read it as host memory; nothing was "
                "sent", what, bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                ompi_comm_rank(comm), what);
    return MPI_ERR_BUFFER;
}

/* A request for one call on comm, its tag drawn from the communicator's
 * non-blocking tag space (every rank draws at the same call, so every rank
 * gets the same tag) and its transport and reduction set up; persistent:
 * inactive and complete until started. */
static mca_coll_genx_request_t *genx_request_new(mca_coll_genx_module_t *module,
                                                 ompi_communicator_t *comm, ompi_datatype_t *dtype,
                                                 ompi_op_t *op, size_t bytes, bool persistent)
{
    mca_coll_genx_request_t *req = OBJ_NEW(mca_coll_genx_request_t);

    if (NULL == req) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->super.super, persistent);
    if (persistent) {
        req->super.super.req_start = genx_persistent_start;
    } else {
        req->super.super.req_state = OMPI_REQUEST_ACTIVE;
    }
    req->super.super.req_mpi_object.comm = comm;
    req->super.super.req_status.MPI_ERROR = MPI_SUCCESS;
    req->bytes = bytes;
    req->module = module;
    req->pml.comm = comm;
    OBJ_RETAIN(comm);
    req->pml.tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    mca_coll_genx_pml_transport(&req->pml, &req->transport);
    req->rctx.op = op;
    req->rctx.dtype = dtype;
    req->cb.ctx = &req->rctx;
    req->cb.reduce = mca_coll_genx_reduce;
    return req;
}

/* Why a non-blocking call goes to the displaced component (NULL: genx
 * runs it), given whether the ranks agree (1) or not (-1). */
static const char *genx_nb_reason(mca_coll_genx_module_t *module, mca_coll_genx_shape_t *shape,
                                  int agreed, size_t bytes)
{
    if (0 > agreed) {
        return "the ranks' genx decisions differ (reported at the first call)";
    }
    if (0 > shape->defers) {
        shape->defers =
            genx_comm_defers(module->core, GENX_CALLS_NONBLOCKING, bytes, (size_t) shape->count,
                             &shape->deferred);
    }
    if (shape->defers) {
        return shape->deferred;
    }
    return shape->layout;
}

/* Starts the displaced component's iallreduce for req on the tag req drew
 * when the call was made.  libnbc draws exactly one tag per iallreduce from
 * the communicator's counter (NBC_Schedule_request, also for an empty
 * schedule), so pointing the counter at req's tag for the length of the
 * call gives it the tag that every other rank's libnbc drew, or genx
 * drew, for this call, whenever it starts; the counter is then put back.
 * Only without MPI_THREAD_MULTIPLE: no other thread can draw meanwhile. */
static int genx_fallback_on_tag(mca_coll_genx_request_t *req)
{
    mca_coll_genx_module_t *module = req->module;
    ompi_communicator_t *comm = req->pml.comm;
    const int32_t saved = comm->c_nbc_tag;
    int rc;

    comm->c_nbc_tag = req->pml.tag;
    rc = module->fallback_iallreduce(req->sbuf, req->rbuf, req->shape.count, req->shape.dtype,
                                     req->shape.op, comm, &req->child,
                                     module->fallback_iallreduce_module);
    if (OMPI_SUCCESS == rc && comm->c_nbc_tag != req->pml.tag - 1) {
        /* Another rank may have started this call at once, with the
         * counter where it was: the tags no longer match. */
        opal_output(0, "genx: comm %u (%d ranks), rank %d: %s's iallreduce did not draw exactly "
                    "one non-blocking collective tag (counter %d after starting on %d); genx's "
                    "queued calls assume it does, and later non-blocking collectives on this "
                    "communicator may not match", mca_coll_genx_comm_id(comm),
                    ompi_comm_size(comm), ompi_comm_rank(comm), module->fallback_iallreduce_name,
                    (int) comm->c_nbc_tag, req->pml.tag);
    }
    comm->c_nbc_tag = saved;
    if (OMPI_SUCCESS != rc) {
        req->child = NULL;
    }
    return rc;
}

/* genx's MPI_Iallreduce: the core's request for the call, started at once
 * (its first step posted).  GENX_OK with req->core set, GENX_DECLINE
 * (nothing posted), or an error (why filled; a request that failed to
 * start is freed). */
static int genx_core_iallreduce(mca_coll_genx_module_t *module, mca_coll_genx_request_t *req,
                                const void *sbuf, void *rbuf, const mca_coll_genx_shape_t *shape,
                                size_t count, char *why, size_t whylen)
{
    int rc = genx_allreduce_init(module->core, 0, sbuf, rbuf, count, shape->gdt,
                                 shape->type_size, shape->gop, shape->commute, &req->cb,
                                 &req->transport, &req->core, why, whylen);

    if (GENX_OK != rc) {
        return rc;
    }
    rc = genx_request_start(req->core, why, whylen);
    if (GENX_OK != rc) {
        genx_request_free(req->core);
        req->core = NULL;
    }
    return rc;
}

/* Launches a call whose agreement is known: genx's plan on req's tag, or
 * the displaced component's iallreduce on the same tag.  GENX_OK or
 * GENX_ERROR (why filled). */
static int genx_request_launch(mca_coll_genx_request_t *req, char *why, size_t whylen)
{
    mca_coll_genx_module_t *module = req->module;
    mca_coll_genx_shape_t *shape = &req->shape;
    const char *reason = genx_nb_reason(module, shape, module->agree.result, req->bytes);
    int rc;

    if (NULL == reason) {
        rc = genx_core_iallreduce(module, req, req->sbuf, req->rbuf, shape,
                                  (size_t) shape->count, why, whylen);
        if (GENX_DECLINE != rc) {
            return rc;
        }
    } else {
        mca_coll_genx_log_fallback(module, MCA_COLL_GENX_NONBLOCKING, req->bytes, reason);
    }
    if (NULL == req->sbuf) {
        req->sbuf = MPI_IN_PLACE;
    }
    rc = genx_fallback_on_tag(req);
    if (OMPI_SUCCESS != rc) {
        snprintf(why, whylen, "%s's iallreduce failed to start (error %d)",
                 module->fallback_iallreduce_name, rc);
        return GENX_ERROR;
    }
    return GENX_OK;
}

/* A call made before the ranks' agreement is known: its tag drawn now, it
 * waits on the active list and genx_request_step launches it. */
static int genx_iqueue(mca_coll_genx_module_t *module, const void *sbuf, void *rbuf,
                       ompi_communicator_t *comm, const mca_coll_genx_shape_t *shape,
                       size_t bytes, ompi_request_t **request)
{
    mca_coll_genx_request_t *req =
        genx_request_new(module, comm, shape->dtype, shape->op, bytes, false);

    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->pending = 1;
    req->sbuf = (MPI_IN_PLACE == sbuf) ? NULL : sbuf;
    req->rbuf = rbuf;
    req->shape = *shape;
    req->shape.defers = -1;
    *request = &req->super.super;
    genx_nb_add(req);
    return OMPI_SUCCESS;
}

int mca_coll_genx_iallreduce(const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, ompi_request_t **request,
                             mca_coll_base_module_t *base_module)
{
    mca_coll_genx_module_t *module = (mca_coll_genx_module_t *) base_module;
    mca_coll_genx_request_t *req;
    mca_coll_genx_shape_t tmp;
    /* Under MPI_THREAD_MULTIPLE two threads may be in here for one
     * communicator (a user's call and one Open MPI's progress engine starts
     * for a communicator being created): no shared cache then. */
    mca_coll_genx_shape_t *shape = mca_coll_genx_call_shape(
        ompi_mpi_thread_multiple ? NULL : &module->ishape, &tmp, dtype, op, count);
    const size_t bytes = shape->type_size * (size_t) count;
    const char *reason;
    char why[512];
    int rc;

    rc = genx_device_refused(module, sbuf, rbuf, comm, bytes, "MPI_Iallreduce");
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (0 == module->agreed) {
        if (ompi_mpi_thread_multiple) {
            return genx_ifallback(module, sbuf, rbuf, count, dtype, op, comm, request, bytes,
                                  "MPI_THREAD_MULTIPLE: the ranks' agreement on this "
                                  "communicator waits for its first blocking MPI_Allreduce "
                                  "(or " MCA_COLL_GENX_ALLREDUCE_INIT_NAME ")");
        }
        mca_coll_genx_agreement_start(module, comm);
        if (MCA_COLL_GENX_AGREE_DONE != module->agree.state) {
            return genx_iqueue(module, sbuf, rbuf, comm, shape, bytes, request);
        }
        mca_coll_genx_settle(module, comm);
    }
    reason = genx_nb_reason(module, shape, module->agreed, bytes);
    if (NULL != reason) {
        return genx_ifallback(module, sbuf, rbuf, count, dtype, op, comm, request, bytes, reason);
    }

    req = genx_request_new(module, comm, dtype, op, bytes, false);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    why[0] = '\0';
    rc = genx_core_iallreduce(module, req, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf, shape,
                              (size_t) count, why, sizeof(why));
    if (GENX_DECLINE == rc && !ompi_mpi_thread_multiple) {
        /* Nothing was posted (the core has said why).  The fallback starts
         * on the tag drawn above, so that this call draws one tag as it
         * does on a rank that queued it. */
        req->sbuf = sbuf;
        req->rbuf = rbuf;
        req->shape = *shape;
        rc = genx_fallback_on_tag(req);
        *request = req->child;
        req->child = NULL;
        OMPI_REQUEST_FINI(&req->super.super);
        OBJ_RELEASE(req);
        return rc;
    }
    if (GENX_DECLINE == rc) {
        OMPI_REQUEST_FINI(&req->super.super);
        OBJ_RELEASE(req);
        return module->fallback_iallreduce(sbuf, rbuf, count, dtype, op, comm, request,
                                           module->fallback_iallreduce_module);
    }
    if (GENX_OK != rc) {
        opal_output(0, "genx: iallreduce %zu B on comm %u (%d ranks), rank %d: failed: %s",
                    bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm), ompi_comm_rank(comm),
                    ('\0' != why[0]) ? why : "error in the genx core");
        /* Messages may be posted into this request's buffers: it is left
         * allocated, as a failed collective is not recoverable. */
        return MPI_ERR_INTERN;
    }
    *request = &req->super.super;
    genx_nb_add(req);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Persistent allreduce: MPIX_Allreduce_init (Open MPI 4.1's pcollreq
 * extension), MPI_Allreduce_init (MPI 4, Open MPI 5.0); one module slot,
 * coll_allreduce_init, in both.  The decision, plan, schedule,
 * scratch area and tag are bound once here; each MPI_Start posts the
 * plan's first step with no lookup, and the progress callback above
 * completes it as it does an iallreduce.  Open MPI's MPI_Start checks that
 * the request is persistent and inactive, and MPI_Wait/MPI_Test make it
 * inactive again once complete. */

static int genx_persistent_start(size_t count, ompi_request_t **requests)
{
    char why[512];

    for (size_t i = 0; i < count; ++i) {
        mca_coll_genx_request_t *req = (mca_coll_genx_request_t *) requests[i];

        req->super.super.req_state = OMPI_REQUEST_ACTIVE;
        req->super.super.req_complete = REQUEST_PENDING;
        req->super.super.req_status.MPI_ERROR = MPI_SUCCESS;
        if (GENX_OK != genx_request_start(req->core, why, sizeof(why))) {
            opal_output(0, "genx: persistent allreduce %zu B on comm %u (%d ranks), rank %d: "
                        "cannot start: %s", req->bytes, mca_coll_genx_comm_id(req->pml.comm),
                        ompi_comm_size(req->pml.comm), ompi_comm_rank(req->pml.comm), why);
            req->super.super.req_status.MPI_ERROR = MPI_ERR_INTERN;
            ompi_request_complete(&req->super.super, true);
            return MPI_ERR_INTERN;
        }
        genx_nb_add(req);
    }
    return OMPI_SUCCESS;
}

static int genx_pfallback(mca_coll_genx_module_t *module, const void *sbuf, void *rbuf,
                          int count, ompi_datatype_t *dtype, ompi_op_t *op,
                          ompi_communicator_t *comm, ompi_info_t *info, ompi_request_t **request,
                          size_t bytes, const char *reason)
{
    if (NULL != reason) {
        mca_coll_genx_log_fallback(module, MCA_COLL_GENX_PERSISTENT, bytes, reason);
    }
    return module->fallback_allreduce_init(sbuf, rbuf, count, dtype, op, comm, info, request,
                                           module->fallback_allreduce_init_module);
}

int mca_coll_genx_allreduce_init(const void *sbuf, void *rbuf, int count,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *base_module)
{
    mca_coll_genx_module_t *module = (mca_coll_genx_module_t *) base_module;
    mca_coll_genx_request_t *req;
    const char *reason;
    mca_coll_genx_shape_t tmp;
    /* Once per request: nothing to cache. */
    mca_coll_genx_shape_t *shape = mca_coll_genx_call_shape(NULL, &tmp, dtype, op, count);
    const size_t bytes = shape->type_size * (size_t) count;
    char why[512];
    int rc;

    rc = genx_device_refused(module, sbuf, rbuf, comm, bytes, MCA_COLL_GENX_ALLREDUCE_INIT_NAME);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* MPI-4.0 makes the initialisation of a persistent collective
     * nonlocal (docs/design.md §6.5): it may wait for the ranks'
     * agreement, as a blocking allreduce does. */
    if (0 == module->agreed) {
        mca_coll_genx_check_agreement(module, comm);
    }
    reason = genx_nb_reason(module, shape, module->agreed, bytes);
    if (NULL != reason) {
        return genx_pfallback(module, sbuf, rbuf, count, dtype, op, comm, info, request, bytes,
                              reason);
    }

    /* One tag for every start: one start ends before the next begins, and
     * messages between two ranks on one tag match in order. */
    req = genx_request_new(module, comm, dtype, op, bytes, true);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }

    why[0] = '\0';
    rc = genx_allreduce_init(module->core, 1, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf,
                             (size_t) count, shape->gdt, shape->type_size, shape->gop,
                             shape->commute, &req->cb, &req->transport, &req->core, why,
                             sizeof(why));
    if (GENX_OK != rc) {
        OMPI_REQUEST_FINI(&req->super.super);
        OBJ_RELEASE(req);
        if (GENX_DECLINE == rc) {
            /* The core has said why. */
            return genx_pfallback(module, sbuf, rbuf, count, dtype, op, comm, info, request,
                                  bytes, NULL);
        }
        opal_output(0, "genx: persistent allreduce %zu B on comm %u (%d ranks), rank %d: "
                    "failed: %s", bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                    ompi_comm_rank(comm), ('\0' != why[0]) ? why : "error in the genx core");
        return MPI_ERR_INTERN;
    }
    *request = &req->super.super;
    return OMPI_SUCCESS;
}
