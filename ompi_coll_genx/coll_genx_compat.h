/*
 * coll_genx_compat.h: the one place where genx's glue differs between the
 * Open MPI releases it builds against.  Nothing outside ompi_coll_genx/
 * includes it; the core (genx/genx_core.h and below) never sees an Open
 * MPI type.
 *
 *   Open MPI 4.1: coll component 2.0.0, module 2.3.0 (the coll framework
 *                 of ompi/mca/coll/coll.h as Debian 12 ships it);
 *   Open MPI 5.0: coll component 2.4.0, module 2.4.0.
 *
 * What differs between them, as far as genx is concerned (read from both
 * releases' ompi/mca/coll/coll.h, coll/base/coll_base_comm_select.c and
 * coll_base_comm_unselect.c, and their tuned and han components):
 *
 *  - the component structure and its MCA version: 5.0 renamed
 *    mca_coll_base_component_2_0_0_t to _2_4_0_t and its version macro
 *    (a 4.1 build of genx is refused by 5.0's loader and vice versa, which
 *    is why there are two builds rather than one binary);
 *  - the module structure: 5.0's mca_coll_base_module_2_4_0_t drops 4.1's
 *    ft_event slot and adds the ULFM agree/iagree slots; genx names it only
 *    through the unversioned mca_coll_base_module_t and sets its slots by
 *    name, so that needs nothing here;
 *  - the enable/disable contract is the same in both 4.1 and 5.0.x: the
 *    base calls each module's coll_module_enable in ascending priority and
 *    then copies the module's non-NULL function slots into comm->c_coll,
 *    so a module that reads comm->c_coll->coll_allreduce{,_module} in its
 *    enable function finds the component it displaces and saves it with
 *    OBJ_RETAIN (what han's HAN_SAVE_PREV_COLL_API does in 5.0).  5.0's
 *    unselect calls coll_module_disable once per function slot the module
 *    holds; genx has none and releases what it saved in its destructor,
 *    which runs once, after the last slot's reference is dropped.  (The
 *    MCA_COLL_SAVE_API / MCA_COLL_INSTALL_API contract, where modules
 *    install and remove their own functions, is Open MPI's main branch,
 *    not 5.0.x; it would be a third branch of this file.)
 *  - the persistent allreduce: the same module slot (coll_allreduce_init)
 *    in both; applications reach it as MPIX_Allreduce_init (pcollreq
 *    extension) in 4.1 and as MPI_Allreduce_init (MPI-4) in 5.0, which
 *    only the messages name;
 *  - OPAL/OMPI internals the glue touches: OMPI_MODULE_DECLSPEC is gone
 *    (5.0's components export themselves with OMPI_DECLSPEC), the mutex
 *    header moved to opal/mca/threads, ompi_comm_get_cid became
 *    ompi_comm_get_local_cid (5.0's cid is an extended CID; the local
 *    index is what messages print), and opal_proc_t lost proc_hostname
 *    (5.0 asks PMIx through opal_get_proc_hostname, which returns a string
 *    its caller owns).
 *
 * configure (configure.ac) picks the glue from `ompi_info --version` and
 * passes -DGENX_OMPI_GLUE=41 or 50; the check below makes sure that the
 * headers the compiler actually sees agree with it.
 */
#ifndef MCA_COLL_GENX_COMPAT_H
#define MCA_COLL_GENX_COMPAT_H

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi.h" /* OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION */

#if OMPI_MAJOR_VERSION == 4 && OMPI_MINOR_VERSION == 1
#define MCA_COLL_GENX_OMPI 41
#elif OMPI_MAJOR_VERSION == 5 && OMPI_MINOR_VERSION == 0
#define MCA_COLL_GENX_OMPI 50
#else
#error "genx's glue supports Open MPI 4.1 and 5.0 only (see ompi_coll_genx/coll_genx_compat.h)"
#endif

#if defined(GENX_OMPI_GLUE) && GENX_OMPI_GLUE != MCA_COLL_GENX_OMPI
#error "configure chose another Open MPI glue than the Open MPI headers on the include path"
#endif

#if MCA_COLL_GENX_OMPI == 41
#include "opal/threads/mutex.h"
#include "opal/threads/thread_usage.h"
#else
#include "opal/mca/threads/mutex.h"
#include "opal/mca/threads/thread_usage.h"
#endif
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/proc/proc.h"

BEGIN_C_DECLS

/* ------------------------------------------------------ component */

/* What makes mca_coll_genx_component visible to Open MPI's loader (the
 * build hides everything else): 5.0 dropped OMPI_MODULE_DECLSPEC, and its
 * components mark themselves with OMPI_DECLSPEC. */
#if MCA_COLL_GENX_OMPI == 41
#define MCA_COLL_GENX_DECLSPEC OMPI_MODULE_DECLSPEC
#else
#define MCA_COLL_GENX_DECLSPEC OMPI_DECLSPEC
#endif

#if MCA_COLL_GENX_OMPI == 41
typedef mca_coll_base_component_2_0_0_t mca_coll_genx_base_component_t;
#define MCA_COLL_GENX_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#define MCA_COLL_GENX_COLL_ABI "coll component 2.0.0, module 2.3.0 (Open MPI 4.1)"
#else
typedef mca_coll_base_component_2_4_0_t mca_coll_genx_base_component_t;
#define MCA_COLL_GENX_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#define MCA_COLL_GENX_COLL_ABI "coll component 2.4.0, module 2.4.0 (Open MPI 5.0)"
#endif

/* ------------------------------------------------------ persistent */

/* How applications call the persistent allreduce (messages only). */
#if MCA_COLL_GENX_OMPI == 41
#define MCA_COLL_GENX_ALLREDUCE_INIT_NAME "MPIX_Allreduce_init"
#else
#define MCA_COLL_GENX_ALLREDUCE_INIT_NAME "MPI_Allreduce_init"
#endif

/* ------------------------------------------------- communicators */

/* The communicator number genx's messages print. */
static inline unsigned mca_coll_genx_comm_id(ompi_communicator_t *comm)
{
#if MCA_COLL_GENX_OMPI == 41
    return (unsigned) ompi_comm_get_cid(comm);
#else
    return (unsigned) ompi_comm_get_local_cid(comm);
#endif
}

/* The host name Open MPI's runtime knows for proc, as a string the caller
 * frees, or NULL when unknown.  No communication in either release: 4.1
 * keeps it in the proc, 5.0 reads it from the local PMIx server's job
 * data. */
static inline char *mca_coll_genx_proc_hostname(ompi_proc_t *proc)
{
#if MCA_COLL_GENX_OMPI == 41
    return (NULL == proc || NULL == proc->super.proc_hostname) ? NULL
                                                               : strdup(proc->super.proc_hostname);
#else
    char *name = (NULL == proc) ? NULL : opal_get_proc_hostname(&proc->super);

    /* 5.0.x's implementations return a new string, "unknown" when PMIx
     * does not know the proc. */
    if (NULL != name && 0 == strcmp(name, "unknown")) {
        free(name);
        name = NULL;
    }
    return name;
#endif
}

END_C_DECLS

#endif /* MCA_COLL_GENX_COMPAT_H */
