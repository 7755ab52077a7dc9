/* Programs out and overrides in, in the app's process (the shim):
 *   CLTRACE_PROGRAMS=DIR           each program the app builds written to DIR
 *   CLTRACE_OVERRIDE=FILE|DIR      a program replaced by an edited one
 *   CLTRACE_OVERRIDE_OPTIONS=...   a program's build options added to or replaced
 *   CLTRACE_OVERRIDE_LOCAL=...     a kernel's local size set
 * It knows capture/ only through the host it is given, as replay/take does:
 * the driver's entry points by name, "is this the app's own call", messages,
 * and a note for the trace (what was done, where). */
#ifndef OV_OVERRIDE_H
#define OV_OVERRIDE_H
#include <stdint.h>

enum ov_what {
    OV_PROGRAM,       /* a program built: its hash and the file name --programs gives it */
    OV_SOURCE,        /* its source (IL, binary) replaced by a file's */
    OV_OPTIONS,       /* its build options changed */
    OV_LOCAL,         /* a kernel's launches given another local size */
    OV_FAILED,        /* an override not done, or not built: why */
};

struct ov_host {
    void *(*real)(const char *name);     /* the driver's entry point of that name (NULL: none) */
    int (*fn_id)(const char *name);      /* a command's number: -1 unknown */
    int (*apps_call)(int fn_id);         /* the call now running is the app's own call of it */
    int (*adds_arg_info)(void);          /* cltrace adds -cl-kernel-arg-info to builds (not the app's) */
    void (*say)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
    /* For the trace, on the calling thread: program 0 when none. */
    void (*note)(void *program, uint64_t hash, enum ov_what what, const char *file, const char *text);
};

struct ov_options { const char *programs, *override, *options, *local; };

/* At load. */
void ov_load(const struct ov_options *o, const struct ov_host *host);
/* The entry point about to be set for command fn: this folder's for the
 * commands it changes (program creation and builds always: a program's
 * hash is in every trace; launches with a local size to set). */
void *ov_interpose(const char *fn, void *real);
/* At exit, while the trace is still written: overrides that matched nothing. */
void ov_exit(void);
void ov_forget(void);   /* fork child */

#endif
