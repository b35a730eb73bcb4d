/*
 * coll_genx_allreduce.c: the MPI_Allreduce entry point.
 *
 * Translates (datatype, op) into the core's element types and operators,
 * hands contiguous buffers to the core and routes the rest to the saved
 * fallback:
 *
 *   built-in C type, predefined op      -> genx kernels
 *   other contiguous type or user op    -> genx moves bytes, reduces through
 *                                          ompi_op_reduce (MPI_Reduce_local's
 *                                          contract)
 *   non-contiguous datatype             -> fallback (the PML would have to
 *                                          pack every block)
 *   core declines (e.g. a non-commutative
 *   op on a plan that reorders)         -> fallback; the core reports why
 *
 * Every input to these decisions (datatype, count, op, communicator) is the
 * same on all ranks, so all ranks take the same path.  The glue's own
 * fallbacks are printed at coll_genx_verbose >= 1, once per communicator,
 * size class and reason.
 */
#include "ompi_config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "ompi/constants.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "ompi/runtime/mpiruntime.h"

#include "coll_genx.h"
#include "coll_genx_base.h"

typedef enum {
    GENX_KIND_SIGNED,
    GENX_KIND_UNSIGNED,
    GENX_KIND_FLOAT,
    GENX_KIND_BOOL,
    GENX_KIND_BYTE
} genx_kind;

typedef struct {
    ompi_datatype_t *dtype;
    genx_kind kind;
} genx_type_entry;

/* The C types genx has kernels for; integers map by size and signedness,
 * so MPI_LONG and MPI_INT64_T meet the same kernel. */
static const genx_type_entry genx_types[] = {
    { MPI_CHAR, (CHAR_MIN < 0) ? GENX_KIND_SIGNED : GENX_KIND_UNSIGNED },
    { MPI_SIGNED_CHAR, GENX_KIND_SIGNED },
    { MPI_UNSIGNED_CHAR, GENX_KIND_UNSIGNED },
    { MPI_SHORT, GENX_KIND_SIGNED },
    { MPI_UNSIGNED_SHORT, GENX_KIND_UNSIGNED },
    { MPI_INT, GENX_KIND_SIGNED },
    { MPI_UNSIGNED, GENX_KIND_UNSIGNED },
    { MPI_LONG, GENX_KIND_SIGNED },
    { MPI_UNSIGNED_LONG, GENX_KIND_UNSIGNED },
    { MPI_LONG_LONG_INT, GENX_KIND_SIGNED },
    { MPI_UNSIGNED_LONG_LONG, GENX_KIND_UNSIGNED },
    { MPI_INT8_T, GENX_KIND_SIGNED },
    { MPI_INT16_T, GENX_KIND_SIGNED },
    { MPI_INT32_T, GENX_KIND_SIGNED },
    { MPI_INT64_T, GENX_KIND_SIGNED },
    { MPI_UINT8_T, GENX_KIND_UNSIGNED },
    { MPI_UINT16_T, GENX_KIND_UNSIGNED },
    { MPI_UINT32_T, GENX_KIND_UNSIGNED },
    { MPI_UINT64_T, GENX_KIND_UNSIGNED },
    { MPI_AINT, GENX_KIND_SIGNED },
    { MPI_OFFSET, GENX_KIND_SIGNED },
    { MPI_COUNT, GENX_KIND_SIGNED },
    { MPI_FLOAT, GENX_KIND_FLOAT },
    { MPI_DOUBLE, GENX_KIND_FLOAT },
    { MPI_LONG_DOUBLE, GENX_KIND_FLOAT },
    { MPI_C_BOOL, GENX_KIND_BOOL },
    { MPI_BYTE, GENX_KIND_BYTE },
};

static genx_op genx_map_op(ompi_op_t *op)
{
    if (!ompi_op_is_intrinsic(op)) {
        return GENX_OP_OTHER;
    }
    switch (op->op_type) {
    case OMPI_OP_SUM:  return GENX_OP_SUM;
    case OMPI_OP_PROD: return GENX_OP_PROD;
    case OMPI_OP_MIN:  return GENX_OP_MIN;
    case OMPI_OP_MAX:  return GENX_OP_MAX;
    case OMPI_OP_LAND: return GENX_OP_LAND;
    case OMPI_OP_LOR:  return GENX_OP_LOR;
    case OMPI_OP_LXOR: return GENX_OP_LXOR;
    case OMPI_OP_BAND: return GENX_OP_BAND;
    case OMPI_OP_BOR:  return GENX_OP_BOR;
    case OMPI_OP_BXOR: return GENX_OP_BXOR;
    default:           return GENX_OP_OTHER;
    }
}

static genx_dtype genx_int_dtype(size_t size, bool is_signed)
{
    switch (size) {
    case 1: return is_signed ? GENX_DT_INT8 : GENX_DT_UINT8;
    case 2: return is_signed ? GENX_DT_INT16 : GENX_DT_UINT16;
    case 4: return is_signed ? GENX_DT_INT32 : GENX_DT_UINT32;
    case 8: return is_signed ? GENX_DT_INT64 : GENX_DT_UINT64;
    default: return GENX_DT_OTHER;
    }
}

/* GENX_DT_OTHER: genx moves the elements and reduces them through the
 * callback.  MPI_BYTE is an element type only for the bitwise operators. */
static genx_dtype genx_map_dtype(ompi_datatype_t *dtype, size_t size, genx_op op)
{
    for (size_t i = 0; i < sizeof(genx_types) / sizeof(genx_types[0]); ++i) {
        if (genx_types[i].dtype != dtype) {
            continue;
        }
        switch (genx_types[i].kind) {
        case GENX_KIND_SIGNED:
            return genx_int_dtype(size, true);
        case GENX_KIND_UNSIGNED:
            return genx_int_dtype(size, false);
        case GENX_KIND_FLOAT:
            if (MPI_FLOAT == dtype && sizeof(float) == size) {
                return GENX_DT_FLOAT;
            }
            if (MPI_DOUBLE == dtype && sizeof(double) == size) {
                return GENX_DT_DOUBLE;
            }
            if (MPI_LONG_DOUBLE == dtype && sizeof(long double) == size) {
                return GENX_DT_LONG_DOUBLE;
            }
            return GENX_DT_OTHER;
        case GENX_KIND_BOOL:
            return (sizeof(_Bool) == size) ? GENX_DT_BOOL : GENX_DT_OTHER;
        case GENX_KIND_BYTE:
            return (GENX_OP_BAND == op || GENX_OP_BOR == op || GENX_OP_BXOR == op)
                       ? GENX_DT_UINT8 : GENX_DT_OTHER;
        }
    }
    return GENX_DT_OTHER;
}

/* inout = in (op) inout, which is ompi_op_reduce's source/target order. */
void mca_coll_genx_reduce(void *ctx, const void *in, void *inout, size_t count)
{
    mca_coll_genx_reduce_ctx_t *rc = (mca_coll_genx_reduce_ctx_t *) ctx;

    ompi_op_reduce(rc->op, (void *) in, inout, count, rc->dtype);
}

/* Says once per (size class, reason) on this communicator that the call
 * goes to the fallback; at verbosity 1 only the communicator's rank 0
 * speaks, since every rank takes the same path (the core does the same). */
static void log_decline(mca_coll_genx_module_t *module, mca_coll_genx_call_t call, size_t bytes,
                        const char *to, const char *reason)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    ompi_communicator_t *comm = module->comm;
    uint64_t key;

    if (1 > cs->verbose || (1 == cs->verbose && 0 != ompi_comm_rank(comm))) {
        return;
    }
    key = genx_hash(genx_size_class(bytes) + 64u * (unsigned) call, reason) ^
          genx_hash(0, to);
    for (int i = 0; i < module->nlogged; ++i) {
        if (key == module->logged[i]) {
            return;
        }
    }
    if (MCA_COLL_GENX_LOGGED_MAX == module->nlogged) {
        if (!module->logged_full) {
            module->logged_full = true;
            opal_output_verbose(1, cs->output,
                                "genx: comm %u: more than %d distinct fallback reasons and size "
                                "classes; further ones on this communicator are not printed",
                                mca_coll_genx_comm_id(comm), MCA_COLL_GENX_LOGGED_MAX);
        }
        return;
    }
    module->logged[module->nlogged++] = key;
    opal_output_verbose(1, cs->output, "genx: %s %zu B on comm %u (%d ranks): fallback to %s: %s",
                        (MCA_COLL_GENX_NONBLOCKING == call)   ? "iallreduce"
                        : (MCA_COLL_GENX_PERSISTENT == call) ? "persistent allreduce"
                                                              : "allreduce",
                        bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm), to, reason);
}

void mca_coll_genx_log_fallback(mca_coll_genx_module_t *module, mca_coll_genx_call_t call,
                                size_t bytes, const char *reason)
{
    log_decline(module, call, bytes,
                (MCA_COLL_GENX_BLOCKING == call) ? module->fallback_name
                                                 : module->fallback_iallreduce_name,
                reason);
}

/* The core works on contiguous bytes that start at the buffer address; the
 * reduce callback hands its pointers to ompi_op_reduce, which expects the
 * data at pointer + true_lb, so only true_lb == 0 makes the two views
 * agree. */
static const char *genx_layout_problem(ompi_datatype_t *dtype, int count)
{
    ptrdiff_t true_lb, true_extent;

    if (!ompi_datatype_is_contiguous_memory_layout(dtype, count)) {
        return ompi_datatype_is_predefined(dtype)
                   ? "datatype is not contiguous (it has gaps between elements)"
                   : "datatype is not contiguous (derived datatype)";
    }
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    if (0 != true_lb) {
        return "datatype's data does not start at the buffer address (true lower bound is not 0)";
    }
    return NULL;
}

mca_coll_genx_shape_t *mca_coll_genx_call_shape(mca_coll_genx_shape_t *last,
                                                mca_coll_genx_shape_t *tmp,
                                                ompi_datatype_t *dtype, ompi_op_t *op, int count)
{
    mca_coll_genx_shape_t *s;

    if (NULL != last && dtype == last->dtype && op == last->op && count == last->count) {
        return last;
    }
    s = (NULL != last && ompi_datatype_is_predefined(dtype) && ompi_op_is_intrinsic(op)) ? last
                                                                                       : tmp;
    s->dtype = dtype;
    s->op = op;
    s->count = count;
    ompi_datatype_type_size(dtype, &s->type_size);
    s->layout = genx_layout_problem(dtype, count);
    s->gop = genx_map_op(op);
    s->gdt = genx_map_dtype(dtype, s->type_size, s->gop);
    s->commute = ompi_op_is_commute(op) ? 1 : 0;
    s->defers = -1;
    s->deferred = NULL;
    return s;
}

/* The displaced component's allreduce on host memory, for the core to call
 * on a staged copy of device memory (genx_host_fallback). */
typedef struct {
    mca_coll_genx_module_t *module;
    ompi_datatype_t *dtype;
    ompi_op_t *op;
    ompi_communicator_t *comm;
    int base; /* genx_base_algorithm's answer: 0 for the displaced component */
} genx_host_fallback_ctx_t;

/* Which of Open MPI's coll/base algorithms a deferred call runs (a
 * "fallback" rule with "base=NAME"), 0 for the displaced component's own
 * choice: the rule must name one, the algorithm must take the op, and
 * genx's module must have the base_data it needs.  The same on every rank.
 * defers: genx_comm_defers' answer, GENX_DEFERS for any other fallback. */
static int genx_base_algorithm(mca_coll_genx_module_t *module, int defers, ompi_op_t *op)
{
    const int which = defers - GENX_DEFERS;

    /* base_data is attached before the ranks agree (genx_agreement_digest),
     * so a rank that could not allocate it has already made every rank
     * fall back. */
    return (0 < which && mca_coll_genx_base_applies(which, op) &&
            NULL != module->super.base_data)
               ? which
               : 0;
}

/* Runs a call genx does not run with a plan of its own: Open MPI's coll/base
 * algorithm `base` (genx_base_algorithm), or with 0 the displaced
 * component. */
static int genx_displaced(mca_coll_genx_module_t *module, int base, const void *sbuf, void *rbuf,
                          int count, ompi_datatype_t *dtype, ompi_op_t *op,
                          ompi_communicator_t *comm)
{
    if (0 != base) {
        return mca_coll_genx_base_allreduce(base, sbuf, rbuf, count, dtype, op, comm,
                                            &module->super);
    }
    return module->fallback_allreduce(sbuf, rbuf, count, dtype, op, comm,
                                      module->fallback_allreduce_module);
}

static int genx_host_fallback_run(void *ctx, const void *sbuf, void *rbuf, size_t count)
{
    genx_host_fallback_ctx_t *f = (genx_host_fallback_ctx_t *) ctx;

    return genx_displaced(f->module, f->base, (NULL == sbuf) ? MPI_IN_PLACE : sbuf, rbuf,
                          (int) count, f->dtype, f->op, f->comm);
}

/* The result of a core call on device memory that did not succeed. */
static int genx_device_failure(ompi_communicator_t *comm, size_t bytes, int rc, const char *why)
{
    opal_output(0, "genx: allreduce %zu B on comm %u (%d ranks), rank %d: %s",
                bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm), ompi_comm_rank(comm),
                ('\0' != why[0]) ? why : "error in the genx core");
    return (GENX_ERROR_BUFFER == rc) ? MPI_ERR_BUFFER : MPI_ERR_INTERN;
}

/* defers: genx_comm_defers' answer for a deferred size, GENX_DEFERS for
 * every other reason. */
static int genx_fallback(mca_coll_genx_module_t *module, int defers, const void *sbuf,
                         void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                         ompi_communicator_t *comm, size_t bytes, const char *reason)
{
    const int base = genx_base_algorithm(module, defers, op);

    if (0 != base) {
        log_decline(module, MCA_COLL_GENX_BLOCKING, bytes, "coll/base", reason);
    } else if (GENX_DEFERS < defers && 0 < mca_coll_genx_component.verbose) {
        char why[640];
        snprintf(why, sizeof(why), "%s; the op is not commutative and Open MPI's %s takes "
                 "commutative ops only", reason, genx_base_algorithm_name(defers - GENX_DEFERS));
        mca_coll_genx_log_fallback(module, MCA_COLL_GENX_BLOCKING, bytes, why);
    } else {
        mca_coll_genx_log_fallback(module, MCA_COLL_GENX_BLOCKING, bytes, reason);
    }
    /* Debian's Open MPI is not CUDA-aware: device memory reaches the
     * displaced component only as a host copy. */
    if (module->device &&
        genx_buffers_on_device(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf)) {
        genx_host_fallback_ctx_t ctx = { module, dtype, op, comm, base };
        genx_host_fallback fb = { &ctx, genx_host_fallback_run };
        const char *layout = genx_layout_problem(dtype, count);
        size_t type_size;
        char why[512];
        int rc;

        if (NULL != layout) {
            snprintf(why, sizeof(why), "device memory with a %s: genx stages only contiguous "
                     "data, and the fallback cannot read device memory; nothing was sent",
                     layout);
            return genx_device_failure(comm, bytes, GENX_ERROR_BUFFER, why);
        }
        ompi_datatype_type_size(dtype, &type_size);
        why[0] = '\0';
        rc = genx_allreduce_staged_fallback(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf,
                                            rbuf, (size_t) count, type_size, &fb, why,
                                            sizeof(why));
        return (GENX_OK == rc) ? OMPI_SUCCESS : genx_device_failure(comm, bytes, rc, why);
    }
    return genx_displaced(module, base, sbuf, rbuf, count, dtype, op, comm);
}

/* Hands one of the communicator's slots (allreduce or iallreduce) back to
 * the module genx displaced.  Open MPI's selection (COPY in
 * coll_base_comm_select.c, alike in 4.1 and 5.0) retains a module for each slot it fills and
 * unselect releases whatever module each slot holds, so the slot's
 * reference moves with it: the fallback gains one, genx's module loses
 * one.  The module stays alive: the communicator's module list keeps the
 * reference selection started with until the communicator is freed, which
 * the count check below makes sure of (if it were the last reference genx
 * keeps its slot rather than free the module it is running in). */
#define GENX_STEP_ASIDE(module, comm, slot)                                          \
    do {                                                                             \
        if ((comm)->c_coll->coll_##slot##_module == &(module)->super &&                \
            NULL != (module)->fallback_##slot &&                                     \
            1 < (module)->super.super.obj_reference_count) {                         \
            OBJ_RETAIN((module)->fallback_##slot##_module);                          \
            (comm)->c_coll->coll_##slot = (module)->fallback_##slot;                 \
            (comm)->c_coll->coll_##slot##_module = (module)->fallback_##slot##_module; \
            mca_coll_base_module_t *genx_self_ = &(module)->super;                   \
            OBJ_RELEASE(genx_self_);                                                 \
        }                                                                            \
    } while (0)

/* Where every message size defers (the built-in defaults on one node, or
 * a rules file that says "fallback" throughout), genx takes itself out of
 * the communicator's call path once the ranks agree, so later calls cost
 * exactly what the displaced component's cost: no genx frame, no table
 * lookup.  Blocking and non-blocking calls have tables of their own, so
 * each kind steps aside by itself: MPI_Allreduce where every blocking size
 * defers (e.g. 2 hosts under the built-in defaults, which run rd for
 * MPI_Iallreduce only), MPI_Iallreduce and persistent allreduce where
 * every non-blocking size does.  Every rank takes the same step, since
 * they agreed on the decisions.
 *
 * Under MPI_THREAD_MULTIPLE the non-blocking slots stay: Open MPI's
 * progress engine may be calling this communicator's iallreduce from
 * another thread (communicator creation), and a slot is handed back in two
 * stores (function, module), which such a call could read half done.
 * Open MPI never calls MPI_Allreduce from progress, so that slot goes. */
static void genx_step_aside_if_idle(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    const char *reason = NULL, *nb_reason = NULL;
    const int blocking =
        genx_comm_defers(module->core, GENX_CALLS_BLOCKING, GENX_EVERY_SIZE, 0, &reason);
    const int nonblocking =
        genx_comm_defers(module->core, GENX_CALLS_NONBLOCKING, GENX_EVERY_SIZE, 0, &nb_reason);
    const bool nb_move = nonblocking && !ompi_mpi_thread_multiple;
    bool b_aside, nb_aside, p_aside;
    const char *nb_what;

    if (!blocking && !nonblocking) {
        return;
    }
    /* With device memory possible, every call must pass genx's check. */
    if (module->device) {
        return;
    }
    if (nb_move) {
        GENX_STEP_ASIDE(module, comm, allreduce_init);
        GENX_STEP_ASIDE(module, comm, iallreduce);
    }
    if (blocking) {
        GENX_STEP_ASIDE(module, comm, allreduce);
    }
    if (1 > cs->verbose || (1 == cs->verbose && 0 != ompi_comm_rank(comm))) {
        return;
    }
    reason = (NULL != reason) ? reason : "rules";
    nb_reason = (NULL != nb_reason) ? nb_reason : "rules";
    b_aside = blocking && comm->c_coll->coll_allreduce_module != &module->super;
    nb_aside = nb_move && comm->c_coll->coll_iallreduce_module != &module->super;
    p_aside = nb_move && comm->c_coll->coll_allreduce_init_module != &module->super;
    nb_what = p_aside ? (nb_aside ? "MPI_Iallreduce and persistent allreduce now call"
                                  : "persistent allreduce now calls")
                      : "MPI_Iallreduce now calls";
    if (blocking && nonblocking && b_aside) {
        opal_output_verbose(1, cs->output,
                            "genx: comm %u (%d ranks): every message size defers (%s); genx "
                            "steps aside: this communicator's MPI_Allreduce now calls %s "
                            "directly%s%s%s",
                            mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                            reason, module->fallback_name,
                            nb_aside ? ", MPI_Iallreduce " : "",
                            nb_aside ? module->fallback_iallreduce_name : "",
                            nb_move ? "" : " (MPI_THREAD_MULTIPLE: MPI_Iallreduce stays with "
                                           "genx, which defers each call)");
        return;
    }
    if (blocking) {
        if (b_aside) {
            opal_output_verbose(1, cs->output,
                                "genx: comm %u (%d ranks): every MPI_Allreduce size defers (%s); "
                                "genx steps aside for it: this communicator's MPI_Allreduce now "
                                "calls %s directly; MPI_Iallreduce stays with genx",
                                mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                                reason, module->fallback_name);
        } else {
            opal_output_verbose(1, cs->output,
                                "genx: comm %u (%d ranks): every MPI_Allreduce size defers (%s); "
                                "each such call goes to %s",
                                mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                                reason, module->fallback_name);
        }
    }
    if (nonblocking) { /* (both with MPI_Allreduce handed back returned above) */
        if (nb_aside || p_aside) {
            opal_output_verbose(1, cs->output,
                                "genx: comm %u (%d ranks): every MPI_Iallreduce size defers (%s); "
                                "genx steps aside for it: this communicator's %s %s directly; "
                                "MPI_Allreduce stays with genx",
                                mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                                nb_reason, nb_what,
                                module->fallback_iallreduce_name);
        } else {
            opal_output_verbose(1, cs->output,
                                "genx: comm %u (%d ranks): every MPI_Iallreduce size defers (%s); "
                                "each such call goes to %s%s",
                                mca_coll_genx_comm_id(comm), ompi_comm_size(comm),
                                nb_reason,
                                module->fallback_iallreduce_name,
                                nb_move ? "" : " (MPI_THREAD_MULTIPLE: genx keeps the slot)");
        }
    }
}

void mca_coll_genx_settle(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    if (0 != module->agreed) {
        return;
    }
    opal_atomic_rmb();
    /* Whether a size defers is asked of the final table only. */
    module->shape.defers = -1;
    module->ishape.defers = -1;
    module->agreed = module->agree.result;
    module->trials = 0 < module->agreed && 0 != genx_trial_any(module->core);
    if (0 < module->agreed) {
        genx_step_aside_if_idle(module, comm);
    }
    if (0 > module->agreed && 0 == ompi_comm_rank(comm)) {
        opal_output(0, "genx: comm %u (%d ranks): the ranks' allreduce decisions differ "
                    "(is the coll_genx_rules file readable on every node, and the same?); "
                    "genx leaves this communicator's MPI_Allreduce to %s",
                    mca_coll_genx_comm_id(comm), ompi_comm_size(comm), module->fallback_name);
    }
}

/* A blocking collective may synchronise: here genx waits for the ranks'
 * agreement, which every rank has started by the time it makes this call
 * or an earlier one on the communicator (docs/design.md §6.5). */
void mca_coll_genx_check_agreement(mca_coll_genx_module_t *module, ompi_communicator_t *comm)
{
    mca_coll_genx_agreement_start(module, comm);
    while (MCA_COLL_GENX_AGREE_DONE != module->agree.state) {
        (void) opal_progress();
    }
    mca_coll_genx_settle(module, comm);
}

/* A call genx runs with its own plan (the core decides which), or hands
 * to the fallback where the core declines. */
static int genx_run(mca_coll_genx_module_t *module, mca_coll_genx_shape_t *shape,
                    const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype,
                    ompi_op_t *op, ompi_communicator_t *comm, size_t bytes)
{
    mca_coll_genx_reduce_ctx_t rctx;
    genx_reduce_cb cb;
    char why[512];
    int rc;

    rctx.op = op;
    rctx.dtype = dtype;
    cb.ctx = &rctx;
    cb.reduce = mca_coll_genx_reduce;

    why[0] = '\0';
    /* On device memory the core may stage the call around the displaced
     * component (fb); a GENX_ERROR_BUFFER then means nothing was sent. */
    genx_host_fallback_ctx_t fctx = { module, dtype, op, comm, 0 };
    genx_host_fallback fb = { &fctx, genx_host_fallback_run };
    rc = genx_allreduce(module->core, (MPI_IN_PLACE == sbuf) ? NULL : sbuf, rbuf, (size_t) count,
                        shape->gdt, shape->type_size, shape->gop, shape->commute, &cb,
                        &module->transport, module->device ? &fb : NULL, why, sizeof(why));
    if (GENX_ERROR_BUFFER == rc && module->device) {
        return genx_device_failure(comm, bytes, rc, why);
    }
    if (GENX_OK == rc) {
        return OMPI_SUCCESS;
    }
    if (GENX_DECLINE == rc) {
        /* The core has already said why (through genx_core_log). */
        return module->fallback_allreduce(sbuf, rbuf, count, dtype, op, comm,
                                          module->fallback_allreduce_module);
    }
    opal_output(0, "genx: allreduce %zu B on comm %u (%d ranks), rank %d: failed: %s",
                bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm), ompi_comm_rank(comm),
                ('\0' != why[0]) ? why : "error in the genx core");
    return MPI_ERR_INTERN;
}

static double genx_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* One call of a first-call trial (genx_trial_next): runs candidate `pick`
 * (0: the displaced component), times it, and after the trial's last call
 * reduces each candidate's median to its maximum over the ranks with the
 * displaced component's MPI_Allreduce, which every rank makes here in the
 * same call, and settles what the size runs from now on. */
static int genx_trial_call(mca_coll_genx_module_t *module, mca_coll_genx_shape_t *shape, int pick,
                           const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype,
                           ompi_op_t *op, ompi_communicator_t *comm, size_t bytes)
{
    double medians[GENX_TRIAL_MAX];
    char why[640] = "";
    double t0;
    int rc;

    /* The displaced component's turn says, as any deferred size does, the
     * rule that left the size to it (only where it is printed). */
    if (0 == pick && 0 < mca_coll_genx_component.verbose) {
        const char *reason = NULL;
        (void) genx_comm_defers(module->core, GENX_CALLS_BLOCKING, bytes, (size_t) count, &reason);
        snprintf(why, sizeof(why), "first-call trial, the displaced component's turn: %s",
                 (NULL != reason) ? reason : "");
    }
    t0 = genx_now();
    rc = (0 == pick) ? genx_fallback(module, GENX_DEFERS, sbuf, rbuf, count, dtype, op, comm, bytes,
                                     why)
                     : genx_run(module, shape, sbuf, rbuf, count, dtype, op, comm, bytes);
    /* Recorded whatever rc says, so that every rank counts the same calls. */
    const int n = genx_trial_record(module->core, bytes, genx_now() - t0, medians, GENX_TRIAL_MAX);
    int arc;

    if (0 < n) {
        arc = module->fallback_allreduce(MPI_IN_PLACE, medians, n, MPI_DOUBLE, MPI_MAX, comm,
                                         module->fallback_allreduce_module);
        if (OMPI_SUCCESS != arc) {
            /* Every candidate's time is then unknown: the size stays with
             * the displaced component (n = 0 keeps it). */
            opal_output(0, "genx: allreduce %zu B on comm %u (%d ranks): the first-call trial's "
                        "times could not be combined (error %d); the size stays with %s",
                        bytes, mca_coll_genx_comm_id(comm), ompi_comm_size(comm), arc,
                        module->fallback_name);
        }
        genx_trial_settle(module->core, bytes, medians, (OMPI_SUCCESS == arc) ? n : 0);
        shape->defers = -1;
    }
    return rc;
}

int mca_coll_genx_allreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *base_module)
{
    mca_coll_genx_module_t *module = (mca_coll_genx_module_t *) base_module;
    mca_coll_genx_shape_t tmp;
    mca_coll_genx_shape_t *shape = mca_coll_genx_call_shape(&module->shape, &tmp, dtype, op, count);
    const size_t bytes = shape->type_size * (size_t) count;

    if (0 == module->agreed) {
        mca_coll_genx_check_agreement(module, comm);
    }
    if (0 > module->agreed) {
        return genx_fallback(module, GENX_DEFERS, sbuf, rbuf, count, dtype, op, comm, bytes,
                             "the ranks' genx decisions differ (reported at the first call)");
    }
    /* A size under a first-call trial runs the trial's candidate; every
     * rank sees the same shape, so all take the same turn. */
    if (module->trials && NULL == shape->layout) {
        const int pick = genx_trial_next(module->core, bytes);
        if (0 <= pick) {
            return genx_trial_call(module, shape, pick, sbuf, rbuf, count, dtype, op, comm, bytes);
        }
    }
    /* Sizes genx's rules leave to the displaced component go there before
     * any other work: deferring costs a table lookup. */
    if (0 > shape->defers) {
        shape->defers =
            genx_comm_defers(module->core, GENX_CALLS_BLOCKING, bytes, (size_t) count,
                             &shape->deferred);
    }
    if (shape->defers) {
        return genx_fallback(module, shape->defers, sbuf, rbuf, count, dtype, op, comm, bytes,
                             shape->deferred);
    }

    if (NULL != shape->layout) {
        return genx_fallback(module, GENX_DEFERS, sbuf, rbuf, count, dtype, op, comm, bytes,
                             shape->layout);
    }
    return genx_run(module, shape, sbuf, rbuf, count, dtype, op, comm, bytes);
}
