/* Which commands a per-command feature picks (CLTRACE_FINGERPRINT; the same
 * spelling serves any later one that picks launches):
 *
 *   ""  "1"  "all"   every command it can handle
 *   GLOB             each launch of a kernel whose name matches (fnmatch);
 *                    transfers match by their command's name (clEnqueueWriteBuffer)
 *   GLOB@N           the N-th launch (1-based) of such a kernel
 *   #N               the N-th command it can handle, counted from 1 across the process
 *   count=N          at most N commands in all
 *
 * Items are separated by commas; a command is taken when any item matches
 * (and the count is not used up). */
#ifndef CLT_SELECT_H
#define CLT_SELECT_H
#include <stdint.h>

#define CLT_SELECT_MAX 16
struct clt_select_item { char glob[96]; uint64_t nth; int hash_n; };   /* nth 0: every one */
struct clt_select {
    int all;
    unsigned n;
    struct clt_select_item item[CLT_SELECT_MAX];
    uint64_t limit;       /* 0: none */
    uint64_t taken;
};

/* 0 ok; -1 not readable (err says why). */
int clt_select_parse(const char *spec, struct clt_select *s, char *err, unsigned errlen);
/* name: the kernel's (or the command's); launch_n: this launch's number among
 * those of that name (from 1); cmd_n: the command's number (from 1). Counts
 * what it takes; 1 take it. Not thread-safe: the caller holds its lock. */
int clt_select_take(struct clt_select *s, const char *name, uint64_t launch_n, uint64_t cmd_n);

/* Launches counted by kernel name: GLOB@N's N. */
struct clt_name_count { char name[128]; uint64_t n; };
struct clt_name_counts { struct clt_name_count *v; unsigned n, cap; };
/* name's count, one more; 0: out of memory. Not thread-safe. */
uint64_t clt_name_counts_next(struct clt_name_counts *c, const char *name);

#endif
