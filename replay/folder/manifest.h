/* A captured kernel launch: one folder, self-contained (replay/FORMAT.md).
 *
 *   manifest         what was launched, versioned text, one fact a line
 *   program.cl|.il|.bin   the program as the app gave it
 *   argN.in          argument N before the launch (a buffer's or image's
 *                    contents, a scalar's bytes)
 *   argN.out         a buffer or image the kernel may write, after it
 *
 * The shim writes it (replay/take), `cltrace replay` reads it. */
#ifndef RF_MANIFEST_H
#define RF_MANIFEST_H
#include <stddef.h>
#include <stdint.h>

#define RF_VERSION 1
#define RF_MAX_ARGS 64

enum rf_kind { RF_UNSET, RF_BUFFER, RF_SCALAR, RF_LOCAL, RF_IMAGE, RF_SAMPLER, RF_NULL, RF_NOT_CAPTURED };
enum rf_program { RF_SOURCE, RF_IL, RF_BINARY };

struct rf_arg {
    enum rf_kind kind;
    size_t bytes;                   /* buffer, image, scalar: its bytes; local: its size */
    uint64_t flags;                 /* buffer, image: cl_mem_flags */
    int writes;                     /* the kernel may write it: argN.out holds it after */
    int sub;                        /* a sub-buffer (its own range captured), at sub_offset of its parent */
    size_t sub_offset;
    /* image */
    uint32_t image_type, order, data_type;
    size_t width, height, depth, array_size;
    /* sampler */
    uint32_t normalized, addressing, filter;
    char type[96];                  /* the argument's type name ("float*", "image2d_t"); "" unknown */
    char why[160];                  /* RF_NOT_CAPTURED: why */
};

struct rf_capture {
    unsigned version;
    char kernel[128];
    uint64_t launch_n, cmd_n;       /* its launch among the kernel's, and among all launches */
    char platform[128], device[128], device_version[96], driver_version[96];
    enum rf_program program;
    char build_options[2048];
    unsigned work_dim;
    size_t offset[3], global[3], local[3];
    int local_null;                 /* the app left the local size to the driver */
    unsigned nargs;
    struct rf_arg arg[RF_MAX_ARGS];
};

const char *rf_program_file(enum rf_program p);       /* "program.cl", ... */
const char *rf_kind_name(enum rf_kind k);
/* dir/manifest, written whole (a temporary renamed): 0, or -1 with errno. */
int rf_write(const char *dir, const struct rf_capture *c);
/* 0; -1: err says what is wrong (no manifest: a partial capture; a line not
 * understood; a file it names missing or of the wrong size). */
int rf_read(const char *dir, struct rf_capture *c, char *err, size_t cap);
/* dir/name: 0; -1 with errno. */
int rf_write_file(const char *dir, const char *name, const void *bytes, size_t n);
/* dir/name, exactly n bytes, malloc'ed; NULL with err. */
void *rf_read_file(const char *dir, const char *name, size_t n, char *err, size_t cap);
/* The element a type name holds ("float4*" -> 'f', 4 bytes): 'f' float
 * (size 2, 4, 8), 'i' integer or anything else (compared exactly). */
void rf_elem_of(const char *type, char *kind, unsigned *size);

#endif
