/*
 * coll_genx_alone.c: `mpirun --mca coll genx` (genx named alone).
 *
 * The `coll` MCA variable is an include list: with `--mca coll genx`, Open
 * MPI 4.1 loads genx and nothing else, genx provides only MPI_Allreduce
 * and MPI_Iallreduce, and the first communicator fails ("none of them said
 * that they could be used for allgather").  genx's open function runs
 * before any communicator exists, so when genx finds itself the only coll
 * component the user selected it completes the selection with Open MPI's
 * own coll components: the set Open MPI opens when `coll` is not set at
 * all.  genx then serves MPI_Allreduce exactly as it does with `coll`
 * unset or with `--mca coll genx,<those components>`.
 *
 * What this relies on in Open MPI 4.1 and 5.0 alike (opal/mca/base,
 * ompi/runtime):
 *
 *  - mca_base_framework_open (mca_base_framework.c) registers the framework
 *    if nobody did yet: the `coll` variable (framework_selection), then
 *    mca_base_component_find, which puts the components the include list
 *    allows on framework_components (dlopened through the component
 *    repository), and each one's register function.  (MPI_T_init_thread
 *    registers earlier and with every component, MCA_BASE_REGISTER_ALL.)
 *    It then opens the framework: mca_base_components_filter drops and
 *    unloads whatever `coll` does not name, and open_components calls each
 *    remaining component's open function, walking framework_components
 *    with OPAL_LIST_FOREACH_SAFE.  So in genx's open function the list
 *    holds exactly the components the user's list selected; genx is its
 *    last item when alone, and items appended behind it are not visited
 *    by that walk (its next pointer is already taken), which is why genx
 *    calls their register and open functions itself.
 *
 *  - The component repository (mca_base_component_repository.c) knows
 *    every coll DSO in mca_base_component_path, loaded or not
 *    (mca_base_component_repository_get_components).
 *    mca_base_component_repository_open dlopens one, checks its MCA version
 *    and names, and appends it to framework_components with its repository
 *    refcount at 1: the same list item mca_base_component_find makes.
 *    Components linked into libmpi are in framework_static_components.
 *
 *  - ompi_mpi_init opens the coll framework (and so genx) before
 *    MPI_COMM_WORLD's collectives are selected; mca_coll_base_comm_select
 *    queries every component on framework_components.
 *
 *  - At MPI_Finalize, mca_base_framework_close closes and unloads every
 *    component on framework_components once (mca_base_components_close:
 *    close function, variable group deregistered, repository refcount
 *    released, dlclose at zero).  The components genx added are ordinary
 *    items of that list, so they are closed there exactly once; genx keeps
 *    no reference to them.
 *
 * Nothing is done when `coll` is unset, names several components, or
 * excludes some (`^tuned`): the user's choice stands.  The `coll` variable
 * itself keeps the value "genx" (it is read-only once the framework is
 * open); it is not read again after the filter above.
 */
#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/base/base.h"
#include "opal/mca/base/mca_base_component_repository.h"
#include "opal/mca/base/mca_base_framework.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"
#include "ompi/constants.h"
#include "ompi/mca/coll/base/base.h"

#include "coll_genx.h"

static bool on_list(opal_list_t *list, const char *name)
{
    mca_base_component_list_item_t *cli;

    OPAL_LIST_FOREACH(cli, list, mca_base_component_list_item_t) {
        if (0 == strcmp(cli->cli_component->mca_component_name, name)) {
            return true;
        }
    }
    return false;
}

/* True when the `coll` include list is exactly "genx" and genx is the only
 * component found for it. */
static bool genx_selected_alone(mca_base_framework_t *fw)
{
    mca_base_component_list_item_t *cli;
    char **names = NULL;
    bool include = true, alone;

    if (NULL == fw->framework_selection ||
        OPAL_SUCCESS !=
            mca_base_component_parse_requested(fw->framework_selection, &include, &names)) {
        return false;
    }
    alone =
        include && NULL != names && 1 == opal_argv_count(names) && 0 == strcmp(names[0], "genx");
    opal_argv_free(names);
    if (!alone || 1 != opal_list_get_size(&fw->framework_components)) {
        return false;
    }
    cli = (mca_base_component_list_item_t *) opal_list_get_first(&fw->framework_components);
    return cli->cli_component == &mca_coll_genx_component.super.collm_version;
}

void mca_coll_genx_complete_selection(void)
{
    mca_coll_genx_component_t *cs = &mca_coll_genx_component;
    mca_base_framework_t *fw = &ompi_coll_base_framework;
    opal_list_t *found = NULL;
    opal_list_item_t *genx_item;
    mca_base_component_list_item_t *cli, *next;
    mca_base_component_repository_item_t *ri;
    char **names = NULL;
    char *list;
    int rc;

    cs->added_components[0] = '\0';
    cs->alone_problem[0] = '\0';
    if (!genx_selected_alone(fw)) {
        return;
    }
    genx_item = opal_list_get_first(&fw->framework_components);

    /* Components linked into libmpi (none in Debian's build), then every
     * coll DSO in the component path, in the repository's order; the
     * order does not matter, selection goes by priority. */
    if (NULL != fw->framework_static_components) {
        for (int i = 0; NULL != fw->framework_static_components[i]; ++i) {
            const mca_base_component_t *c = fw->framework_static_components[i];

            if (!on_list(&fw->framework_components, c->mca_component_name)) {
                cli = OBJ_NEW(mca_base_component_list_item_t);
                if (NULL == cli) {
                    break;
                }
                cli->cli_component = c;
                opal_list_append(&fw->framework_components, &cli->super);
            }
        }
    }
    if (!mca_base_component_disable_dlopen &&
        OPAL_SUCCESS == mca_base_component_repository_get_components(fw, &found) && NULL != found) {
        OPAL_LIST_FOREACH(ri, found, mca_base_component_repository_item_t) {
            if (!on_list(&fw->framework_components, ri->ri_name)) {
                /* Appends to framework_components on success; a DSO that
                 * cannot be loaded is skipped as Open MPI skips it. */
                (void) mca_base_component_repository_open(fw, ri);
            }
        }
    }

    /* Register and open what was added, as Open MPI's register_components
     * and open_components would have: a component whose register function
     * fails is dropped and unloaded, one whose open function fails is
     * closed and dropped. */
    for (cli = (mca_base_component_list_item_t *) opal_list_get_next(genx_item);
         cli != (mca_base_component_list_item_t *) opal_list_get_end(&fw->framework_components);
         cli = next) {
        const mca_base_component_t *c = cli->cli_component;

        next = (mca_base_component_list_item_t *) opal_list_get_next(&cli->super);
        rc = (NULL == c->mca_register_component_params) ? OPAL_SUCCESS
                                                        : c->mca_register_component_params();
        if (OPAL_SUCCESS != rc) {
            opal_list_remove_item(&fw->framework_components, &cli->super);
            mca_base_component_unload(c, fw->framework_output);
            OBJ_RELEASE(cli);
            continue;
        }
        rc = (NULL == c->mca_open_component) ? OPAL_SUCCESS : c->mca_open_component();
        if (OPAL_SUCCESS != rc) {
            opal_list_remove_item(&fw->framework_components, &cli->super);
            mca_base_component_close(c, fw->framework_output);
            OBJ_RELEASE(cli);
            continue;
        }
        opal_argv_append_nosize(&names, c->mca_component_name);
    }

    if (NULL == names) {
        snprintf(cs->alone_problem, sizeof(cs->alone_problem),
                 "genx: --mca coll genx: genx provides only MPI_Allreduce and MPI_Iallreduce and "
                 "no other coll component could be loaded from mca_base_component_path, so Open "
                 "MPI will find nothing for the other collectives; put Open MPI's component "
                 "directory in mca_base_component_path, or list the components: --mca coll "
                 "genx,tuned,libnbc,basic,self");
        return;
    }

    list = opal_argv_join(names, ',');
    snprintf(cs->added_components, sizeof(cs->added_components), "%s",
             (NULL != list) ? list : "");
    free(list);
    opal_argv_free(names);
}
