/* What programs.c and launch.c share (override.h is the public side). */
#ifndef OV_OV_H
#define OV_OV_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "common/kernel_names.h"
#include "override.h"

extern struct ov_host ov_host;
extern pthread_mutex_t ov_lock;
#define OV_CL(fn) ((__typeof__(&fn))ov_host.real(#fn))

#define OV_MAX_NAMES 32
enum ov_kind { OV_K_SOURCE, OV_K_IL, OV_K_BINARY };
extern const char *const ov_ext[];     /* "cl", "spv", "bin" */
struct ov_names { char v[OV_MAX_NAMES][CLT_KERNEL_NAME_MAX]; unsigned n; };
struct ov_file;

struct ov_prog {                /* a program the app created (programs.c) */
    uint64_t hash;
    enum ov_kind kind;
    struct ov_names names;      /* lexed from its source; else from the driver after a build */
    void *text;                 /* what it was created from (the first binary), until written */
    size_t n;
    const char *from;           /* the override file it was created from, NULL: none */
    int built;
    char *own_options;          /* the app's options where the driver was given others (malloc'd) */
    int refs;                   /* the table's, and each caller's between ov_prog_find and ov_prog_put */
};

/* programs.c */
/* NULL: not the app's, or not seen; else held until ov_prog_put (a driver
 * reusing the handle for a new program does not free it under the caller) */
struct ov_prog *ov_prog_find(void *handle);
void ov_prog_put(struct ov_prog *p);
void *ov_read_all(const char *path, size_t *n);  /* NUL-terminated; NULL: errno */
int ov_write_all(const char *path, const void *p, size_t n);
void ov_file_name(const struct ov_prog *p, char *out, size_t cap);   /* NAME-HASH.EXT */
/* fn's stand-in among names[0..n) (with[i]; the driver's entry point kept in
 * next_of[i]), NULL: none of them */
void *ov_stand_in(const char *fn, void *real, unsigned n, const char *const *names, void *const *with,
                  void *_Atomic *next_of);
/* builds.c */
void ov_builds_load(const char *programs_dir);
int ov_rules_load(const char *spec, char *err, size_t cap);   /* 0 ok */
void *ov_builds_interpose(const char *fn, void *real);
void ov_rules_exit(void);
/* launch.c */
int ov_local_load(const char *spec, char *err, size_t cap);   /* 0 ok */
void *ov_local_interpose(const char *fn, void *real);
void ov_local_exit(void);
void ov_programs_exit(void);   /* programs.c */

#endif
