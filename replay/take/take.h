/* CLTRACE_CAPTURE: each chosen kernel launch written to a folder that
 * `cltrace replay` runs again (replay/FORMAT.md). In the shim; it knows
 * nothing of it but what the host below gives, so capture/ stays as it was
 * and this folder depends on nothing of capture/'s. */
#ifndef RT_TAKE_H
#define RT_TAKE_H

struct rt_host {
    void *(*real)(const char *name);     /* the driver's entry point of that name (NULL: none) */
    int (*fn_id)(const char *name);      /* a command's number, asked once: -1 unknown */
    int (*apps_call)(int fn_id);         /* the call now running is the app's own call of that command */
    void (*say)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
};

extern int rt_take_on;
/* At load: CLTRACE_CAPTURE (spec, common/select.h) into CLTRACE_CAPTURE_DIR. */
void rt_take_load(const char *spec, const char *dir, const struct rt_host *host);
/* The real entry point about to be set for the command named fn: capture's
 * own for the commands it looks at (clSetKernelArg*, clEnqueueNDRangeKernel,
 * clEnqueueTask), which call real; otherwise real. */
void *rt_take_interpose(const char *fn, void *real);
void rt_take_forget(void);           /* fork child: the parent's kernels' arguments stay known */

#endif
