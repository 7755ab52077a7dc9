/* leaks: objects alive at exit, by type and creation site, classed as a
 * memory checker does (the writer decides each object's class from its
 * object model: writer/leaks.c): definitely lost (the app released the
 * context, program or queue it belongs to) and growing with the run (its
 * site holds two or more, made across the run) are errors; still held (the
 * latest of a site that releases the others, a cache, anything of a context
 * held to the end) is info. A trace of an older cltrace, without classes,
 * is judged by its site's counts: a site that released some of what it made
 * or made several and released none is an error, an object made once info. */
#include <stdio.h>
#include <string.h>
#include "rules.h"

static const char *release_fn(const char *type)
{
    static const struct { const char *type, *fn; } fns[] = {
        { "cl_mem", "MemObject" }, { "cl_command_queue", "CommandQueue" }, { "cl_kernel", "Kernel" },
        { "cl_program", "Program" }, { "cl_event", "Event" }, { "cl_context", "Context" },
        { "cl_sampler", "Sampler" }, { "svm_pointer", "/clSVMFree" },
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(type, fns[i].type))
            return fns[i].fn;
    return "...";
}

/* Why it is held: "; this site made 5 and released 4: ..." ("" when unknown). */
static const char *why_held(const struct rm_leak *l, char *buf, size_t cap)
{
    int once = l->once == l->count;
    if (l->site_released > 0)
        snprintf(buf, cap, "; this site made %llu and released %llu: a path that does not release",
                 (unsigned long long)l->site_made, (unsigned long long)l->site_released);
    else if (once && l->count == 1)
        snprintf(buf, cap, "; made once and held to the end (a process-lifetime object)");
    else if (once)
        snprintf(buf, cap, "; each made once at its own call stack and held to the end (a cache of "
                 "process-lifetime objects)");
    else if (l->site_made)
        snprintf(buf, cap, "; this site made %llu and released none: grows with the run",
                 (unsigned long long)l->site_made);
    else
        buf[0] = 0;
    return buf;
}

static const struct { const char *id, *what; enum sev sev; } classes[] = {
    [RM_LEAK_STILL_HELD] = { "still_held", "still held at exit (still reachable)", SEV_INFO },
    [RM_LEAK_GROWING] = { "growing", "still held at exit, growing with the run", SEV_ERROR },
    [RM_LEAK_DEFINITELY_LOST] = { "definitely_lost", "definitely lost at exit", SEV_ERROR },
};

void rules_leaks(const struct rm_model *m, const struct thresholds *th, struct findings *out)
{
    (void)th;
    for (unsigned i = 0; i < m->n_leaks; i++) {
        const struct rm_leak *l = &m->leaks[i];
        /* (objects made at stacks whose text is cut to the same site are one
         * line: each is judged at its own stack) */
        int classed = l->leak_class >= 0;
        enum sev sev = classed ? classes[l->leak_class].sev : l->once == l->count ? SEV_INFO : SEV_ERROR;
        struct finding *f = finding_add(out, "leaks", sev, -1);
        uint64_t life[2] = { l->first_made, m->mem.last_ts };     /* made, held to the end */
        if (l->first_made)
            finding_span(f, life);
        char why[sizeof l->why + 2];
        if (classed) {
            f->class_id = classes[l->leak_class].id;
            finding_set(&f->class_why, "%s", l->why);
            snprintf(why, sizeof why, ": %s", l->why);
        } else {
            why_held(l, why, sizeof why);
        }
        const char *what = classed ? classes[l->leak_class].what : "still held at exit";
        char at_exit[160];
        if (m->self.exit_by[0]) {   /* _exit: the objects were held when it was called, and no atexit ran */
            const char *rest = strstr(what, "at exit");
            snprintf(at_exit, sizeof at_exit, "%.*sat %s (no atexit ran)%s", rest ? (int)(rest - what) : 0, what,
                     m->self.exit_by, rest ? rest + 7 : "");
            what = at_exit;
        }
        finding_set(&f->where, "%s%s%s%s, created by %s at %s", l->type, l->kernel[0] ? " \"" : "", l->kernel,
                    l->kernel[0] ? "\"" : "", l->created_by, l->site[0] ? l->site : "(no call stack)");
        if (l->bytes)
            finding_set(&f->numbers, "%llu object(s) %s, %llu bytes%s", (unsigned long long)l->count, what,
                        (unsigned long long)l->bytes, why);
        else
            finding_set(&f->numbers, "%llu object(s) %s%s", (unsigned long long)l->count, what, why);
        finding_set(&f->fix, "release it (clRelease%s) once it is no longer needed, on every path",
                    release_fn(l->type));
        finding_set(&f->gain_method, "not estimated: a memory finding, not a time cost");
    }
}
