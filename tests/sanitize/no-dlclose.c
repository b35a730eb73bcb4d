/*
 * no-dlclose: preloaded next to libasan into the ranks of
 * run-sanitizers.sh.  Open MPI dlcloses its components (mca_coll_genx.so
 * among them) in MPI_Finalize, before LeakSanitizer looks at the heap at
 * exit; the frames of an unloaded library print as "<unknown module>", so a
 * leak allocated by genx could not be told from one of Open MPI.  Keeping
 * every library loaded keeps every frame symbolized.  Open MPI 4.1.4 as
 * Debian 12 builds it has no parameter to disable dlclose.
 */
int dlclose(void *handle)
{
    (void) handle;
    return 0;
}
