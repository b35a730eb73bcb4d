// What the unit tests call beside the C API: MPI_Iallreduce as the glue
// makes it, and a communicator's costs (genx/comm_stats.hpp).
#pragma once

#include <cstddef>

#include "genx/comm_stats.hpp"
#include "genx/genx_core.h"

// genx_allreduce_init (an MPI_Iallreduce, not persistent) and
// genx_request_start, as coll_genx_iallreduce.c runs them: *req is the
// request in flight, or NULL where the call declined or failed (a request
// that failed to start is freed).
inline int iallreduce(genx_comm* comm, const void* sendbuf, void* recvbuf, size_t count,
                      genx_dtype dtype, size_t elem_size, genx_op op, int commutative,
                      const genx_reduce_cb* cb, const genx_transport_ops* transport,
                      genx_request** req, char* why, size_t whylen) {
    int rc = genx_allreduce_init(comm, 0, sendbuf, recvbuf, count, dtype, elem_size, op,
                                 commutative, cb, transport, req, why, whylen);
    if (rc != GENX_OK) return rc;
    rc = genx_request_start(*req, why, whylen);
    if (rc != GENX_OK) {
        genx_request_free(*req);
        *req = nullptr;
    }
    return rc;
}

// The communicator's counters so far into *out.
inline void get_stats(const genx_comm* comm, genx::CommStats* out) {
    *out = genx::comm_stats(comm);
}
