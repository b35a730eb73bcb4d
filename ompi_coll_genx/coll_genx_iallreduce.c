/*
 * coll_genx_iallreduce.c: MPI_Iallreduce on genx's plans.
 *
 * The core runs a non-blocking allreduce as a resumable execution
 * (genx_iallreduce, genx_request_progress); this file wraps it in an MPI
 * request and drives it from Open MPI's progress engine, the way libnbc
 * drives its schedules:
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
 * The first call on a communicator (blocking or not) runs the ranks'
 * agreement check, one small blocking allreduce through the fallback; only
 * that first call can wait for the other ranks.  Except under
 * MPI_THREAD_MULTIPLE: there Open MPI itself calls MPI_Iallreduce from
 * inside its progress engine (ompi_comm_nextcid, at every communicator
 * creation), and a blocking wait nested in progress never returns (only the
 * thread at the head of the wait list progresses, and it is the one
 * waiting).  So under MPI_THREAD_MULTIPLE an MPI_Iallreduce on a
 * communicator whose agreement is not yet checked goes to the fallback
 * (libnbc), which needs no agreement, and the check waits for the first
 * blocking MPI_Allreduce or MPIX_Allreduce_init on it, always called from
 * the application's own context.  Every rank sees the same sequence of
 * calls, so every rank makes the same choice.
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
}

static void genx_request_destruct(mca_coll_genx_request_t *req)
{
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

/* Advances every operation in flight; completes the finished ones (outside
 * the lock: completing may run the user's request callbacks). */
static int genx_nb_progress(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_coll_genx_request_t *finished = NULL, **link, *req;
    char why[512];
    int completed = 0;

    if (0 == cs->nb_count) {
        return 0;
    }
    if (0 != opal_mutex_trylock(&cs->nb_lock)) {
        return 0;
    }
    link = &cs->nb_active;
    while (NULL != (req = *link)) {
        int done = 0;
        if (GENX_OK != genx_request_progress(req->core, &done, why, sizeof(why))) {
            opal_output(0, "genx: iallreduce %zu B on comm %u (%d ranks), rank %d: failed: %s",
                        req->bytes, mca_coll_genx_comm_id(req->pml.comm),
                        ompi_comm_size(req->pml.comm), ompi_comm_rank(req->pml.comm), why);
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

static void genx_nb_add(mca_coll_genx_request_t *req)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;

    opal_mutex_lock(&cs->nb_lock);
    if (!cs->nb_progress_registered) {
        cs->nb_progress_registered = (OPAL_SUCCESS == opal_progress_register(genx_nb_progress));
    }
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
                                  "(or " MCA_COLL_GENX_ALLREDUCE_INIT_NAME "); Open MPI calls MPI_Iallreduce "
                                  "from its progress engine, where genx must not wait");
        }
        mca_coll_genx_check_agreement(module, comm);
    }
    if (0 > module->agreed) {
        return genx_ifallback(module, sbuf, rbuf, count, dtype, op, comm, request, bytes,
                              "the ranks' genx decisions differ (reported at the first call)");
    }
    if (0 > shape->defers) {
        shape->defers = genx_comm_defers_nb(module->core, bytes, &shape->deferred);
    }
    if (shape->defers) {
        return genx_ifallback(module, sbuf, rbuf, count, dtype, op, comm, request, bytes,
                              shape->deferred);
    }
    if (NULL != shape->layout) {
        return genx_ifallback(module, sbuf, rbuf, count, dtype, op, comm, request, bytes,
                              shape->layout);
    }

    req = OBJ_NEW(mca_coll_genx_request_t);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OMPI_REQUEST_INIT(&req->super.super, false);
    req->super.super.req_state = OMPI_REQUEST_ACTIVE;
    req->super.super.req_mpi_object.comm = comm;
    req->super.super.req_status.MPI_ERROR = MPI_SUCCESS;
    req->bytes = bytes;
    /* Every rank reaches this point for the same call (same decisions), so
     * every rank draws the same tag. */
    req->pml.comm = comm;
    OBJ_RETAIN(comm);
    req->pml.tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    mca_coll_genx_pml_transport(&req->pml, &req->transport);
    req->rctx.op = op;
    req->rctx.dtype = dtype;
    req->cb.ctx = &req->rctx;
    req->cb.reduce = mca_coll_genx_reduce;

    why[0] = '\0';
    rc = genx_iallreduce(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf, (size_t) count,
                         shape->gdt, shape->type_size, shape->gop, shape->commute, &req->cb,
                         &req->transport, &req->core, why, sizeof(why));
    if (GENX_DECLINE == rc) {
        /* Nothing was posted; the core has said why. */
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
    const char *reason = NULL;
    mca_coll_genx_shape_t tmp;
    /* Once per request: nothing to cache. */
    const mca_coll_genx_shape_t *shape = mca_coll_genx_call_shape(NULL, &tmp, dtype, op, count);
    const size_t bytes = shape->type_size * (size_t) count;
    char why[512];
    int rc;

    rc = genx_device_refused(module, sbuf, rbuf, comm, bytes, MCA_COLL_GENX_ALLREDUCE_INIT_NAME);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* Like every first call on a communicator, a first call that is an
     * persistent allreduce init checks the ranks' agreement (one small blocking
     * allreduce through the fallback). */
    if (0 == module->agreed) {
        mca_coll_genx_check_agreement(module, comm);
    }
    if (0 > module->agreed) {
        return genx_pfallback(module, sbuf, rbuf, count, dtype, op, comm, info, request, bytes,
                              "the ranks' genx decisions differ (reported at the first call)");
    }
    if (genx_comm_defers_nb(module->core, bytes, &reason)) {
        return genx_pfallback(module, sbuf, rbuf, count, dtype, op, comm, info, request, bytes,
                              reason);
    }
    if (NULL != shape->layout) {
        return genx_pfallback(module, sbuf, rbuf, count, dtype, op, comm, info, request, bytes,
                              shape->layout);
    }

    req = OBJ_NEW(mca_coll_genx_request_t);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OMPI_REQUEST_INIT(&req->super.super, true); /* inactive, complete */
    req->super.super.req_start = genx_persistent_start;
    req->super.super.req_mpi_object.comm = comm;
    req->super.super.req_status.MPI_ERROR = MPI_SUCCESS;
    req->bytes = bytes;
    /* One tag for every start: one start ends before the next begins, and
     * messages between two ranks on one tag match in order.  Every rank
     * initialises its persistent collectives in the same order, so every
     * rank draws the same tag. */
    req->pml.comm = comm;
    OBJ_RETAIN(comm);
    req->pml.tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    mca_coll_genx_pml_transport(&req->pml, &req->transport);
    req->rctx.op = op;
    req->rctx.dtype = dtype;
    req->cb.ctx = &req->rctx;
    req->cb.reduce = mca_coll_genx_reduce;

    why[0] = '\0';
    rc = genx_allreduce_init(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf,
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
