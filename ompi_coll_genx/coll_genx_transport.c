/*
 * coll_genx_transport.c: Open MPI's PML as the core's transport.
 *
 * Messages go straight to the PML on the user's communicator with a
 * collective tag, as Open MPI's own collectives do: no extra communicator,
 * and the negative tag keeps them apart from user traffic.  Blocking
 * allreduce uses the allreduce tag, as tuned does; each non-blocking one a
 * tag of its own from the communicator's non-blocking collective tag space
 * (ompi_coll_base_nbc_reserve_tags, shared with libnbc), so concurrent
 * operations never match each other's messages.
 * Collectives on one communicator are issued in the same order everywhere
 * and the PML does not let messages between a pair overtake each other on
 * one tag, which is exactly the matching rule the core relies on.  Buffers
 * travel as MPI_BYTE because the core works on contiguous bytes; nothing
 * here allocates beyond the PML's own request.
 */
#include "ompi_config.h"

#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"

#include "coll_genx.h"

static int genx_pml_isend(void *ctx, const void *buf, size_t bytes, int peer, void **req)
{
    mca_coll_genx_pml_ctx_t *pml = (mca_coll_genx_pml_ctx_t *) ctx;
    ompi_request_t *request = MPI_REQUEST_NULL;
    int rc;

    rc = MCA_PML_CALL(isend(buf, bytes, MPI_BYTE, peer, pml->tag,
                            MCA_PML_BASE_SEND_STANDARD, pml->comm, &request));
    *req = request;
    return (OMPI_SUCCESS == rc) ? 0 : rc;
}

static int genx_pml_irecv(void *ctx, void *buf, size_t bytes, int peer, void **req)
{
    mca_coll_genx_pml_ctx_t *pml = (mca_coll_genx_pml_ctx_t *) ctx;
    ompi_request_t *request = MPI_REQUEST_NULL;
    int rc;

    rc = MCA_PML_CALL(irecv(buf, bytes, MPI_BYTE, peer, pml->tag,
                            pml->comm, &request));
    *req = request;
    return (OMPI_SUCCESS == rc) ? 0 : rc;
}

/* The core's executor tests all its outstanding requests and then calls
 * progress once per round, so test only looks: an incomplete request is
 * reported as such without the opal_progress that ompi_request_test would
 * run for it.  A complete one goes through ompi_request_test, which frees
 * it when it succeeded; one that failed is left by it to the caller, so it
 * is freed here and its error returned: the core never sees a request
 * again once done. */
static int genx_pml_test(void *ctx, void *req, int *done)
{
    ompi_request_t *request = (ompi_request_t *) req;
    int completed = 0;
    int rc;

    (void) ctx;
    if (!REQUEST_COMPLETE(request)) {
        *done = 0;
        return 0;
    }
    rc = ompi_request_test(&request, &completed, MPI_STATUS_IGNORE);
    *done = 1;
    if (OMPI_SUCCESS != rc) {
        if (MPI_REQUEST_NULL != request) {
            (void) ompi_request_free(&request);
        }
        return rc;
    }
    return 0;
}

static int genx_pml_progress(void *ctx)
{
    (void) ctx;
    (void) opal_progress();
    return 0;
}

/* The last send of a step whose other transfers are all posted: the PML's
 * blocking send, which for an eager message goes inline without a request
 * (what tuned's ompi_coll_base_sendrecv does). */
static int genx_pml_send(void *ctx, const void *buf, size_t bytes, int peer)
{
    mca_coll_genx_pml_ctx_t *pml = (mca_coll_genx_pml_ctx_t *) ctx;
    int rc;

    rc = MCA_PML_CALL(send(buf, bytes, MPI_BYTE, peer, pml->tag,
                           MCA_PML_BASE_SEND_STANDARD, pml->comm));
    return (OMPI_SUCCESS == rc) ? 0 : rc;
}

/* A step whose requests are all posted: block on them as tuned's exchanges
 * do (ompi_request_wait_all frees the ones that succeed).  The core treats
 * a failure as the end of the collective, so requests that failed are
 * freed here, as genx_pml_test does. */
static int genx_pml_wait_all(void *ctx, void **reqs, int n)
{
    ompi_request_t **requests = (ompi_request_t **) reqs;
    int rc;

    (void) ctx;
    if (1 == n) {
        /* One request (a step's receive after its blocking send): the
         * single-request wait tuned's sendrecv uses, without wait_all's
         * sync object.  On an error it returns the request complete but
         * not freed: released here, as wait_all's path below does. */
        rc = ompi_request_wait(&requests[0], MPI_STATUS_IGNORE);
        if (OMPI_SUCCESS != rc && MPI_REQUEST_NULL != requests[0] &&
            REQUEST_COMPLETE(requests[0])) {
            (void) ompi_request_free(&requests[0]);
        }
        if (MPI_REQUEST_NULL == requests[0]) {
            reqs[0] = NULL;
        }
        return (OMPI_SUCCESS == rc) ? 0 : rc;
    }
    rc = ompi_request_wait_all((size_t) n, requests, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        /* Completed ones are released and set to NULL; the core abandons
         * (cancels or drains) the ones still posted. */
        for (int i = 0; i < n; ++i) {
            if (MPI_REQUEST_NULL == requests[i]) {
                reqs[i] = NULL;
            } else if (REQUEST_COMPLETE(requests[i])) {
                (void) ompi_request_free(&requests[i]);
                reqs[i] = NULL;
            }
        }
        return rc;
    }
    return 0;
}

/* Abandoning a failed plan: ob1 cancels a receive not yet matched (it then
 * completes as cancelled) but not a send (ob1's send cancel does nothing),
 * so a request that does not complete right after the cancel is left for
 * the core to test until it completes or its budget ends. */
static int genx_pml_cancel(void *ctx, void *req, int *cancelled)
{
    ompi_request_t *request = (ompi_request_t *) req;

    (void) ctx;
    *cancelled = 0;
    if (!REQUEST_COMPLETE(request)) {
        (void) ompi_request_cancel(request);
        (void) opal_progress();
    }
    if (!REQUEST_COMPLETE(request)) {
        return 0;
    }
    (void) ompi_request_free(&request);
    *cancelled = 1;
    return 0;
}

void mca_coll_genx_pml_transport(mca_coll_genx_pml_ctx_t *pml, genx_transport_ops *ops)
{
    ops->ctx = pml;
    ops->isend = genx_pml_isend;
    ops->irecv = genx_pml_irecv;
    ops->test = genx_pml_test;
    ops->progress = genx_pml_progress;
    ops->wait_all = genx_pml_wait_all;
    ops->send = genx_pml_send;
    ops->cancel = genx_pml_cancel;
}
