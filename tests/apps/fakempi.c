/* A stand-in MPI library whose MPI_Init probes the OpenCL devices through a
 * plugin it dlopens, as Open MPI's hwloc does (hwloc_opencl.so): the probe's
 * failing call is the library's, not the program's (tests/python.sh). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *plugin = getenv("FAKEMPI_PLUGIN");
    void *h = plugin ? dlopen(plugin, RTLD_NOW | RTLD_LOCAL) : NULL;
    void (*probe)(void) = h ? (void (*)(void))dlsym(h, "probe_devices") : NULL;
    if (probe)
        probe();
    return 0;
}

int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }
int PMPI_Finalize(void) { return 0; }
int MPI_Finalize(void) { return PMPI_Finalize(); }
