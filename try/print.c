/* The verdict first, then the numbers (text, Markdown for a pull request,
 * JSON for a script). */
#include <stdio.h>
#include <string.h>
#include "report/escape/escape.h"
#include "report/model/compare.h"
#include "try.h"

static void ms3(char *out, size_t cap, const uint64_t *v, unsigned n)
{
    struct rm_spread s;
    try_stats(v, n, &s);
    snprintf(out, cap, "%.3f (%.3f .. %.3f)", s.median / 1e6, s.min / 1e6, s.max / 1e6);
}

/* after / before, of the medians (0: no time before) */
static double ratio(const uint64_t *a, const uint64_t *b, unsigned n)
{
    struct rm_spread x, y;
    try_stats(a, n, &x);
    try_stats(b, n, &y);
    return x.median > 0 ? y.median / x.median : 0;
}

static const char *const results_word[] = { "identical", "within the tolerance", "diverge", "not compared" };

static void verdict(const struct try_result *r, char *out, size_t cap)
{
    if (r->exit == 2) {
        snprintf(out, cap, "could not try: %s", r->could_not);
        return;
    }
    double after = ratio(r->device_ns[AS_IS], r->device_ns[CHANGED], r->runs);
    double x = after > 0 ? 1 / after : 0;     /* before / after */
    char time[96];
    if (r->time == FASTER)
        snprintf(time, sizeof time, "%.2fx faster on the device", x);
    else if (r->time == SLOWER)
        snprintf(time, sizeof time, "%.2fx slower on the device", x ? 1 / x : 0);
    else
        snprintf(time, sizeof time, "no clear change on the device (%.2fx)", x ? 1 / x : 0);
    const char *answer = r->run[CHANGED][0].status != r->run[AS_IS][0].status ? "another exit status"
                         : r->results == SAME ? "the same answer"
                         : r->results == WITHIN ? "the same answer, within tolerance" : "a different answer";
    snprintf(out, cap, "%s, %s (%u run%s each)", time, answer, r->runs, r->runs == 1 ? "" : "s");
}


static void walls(const struct try_result *r, int w, uint64_t *v)
{
    for (unsigned i = 0; i < r->runs; i++)
        v[i] = r->run[w][i].wall_ns;
}

static void text(const struct try_opts *o, const struct try_result *r, int md)
{
    char line[4096];
    verdict(r, line, sizeof line);
    printf(md ? "### cltrace try: %s\n\n" : "cltrace try: %s\n", line);
    printf(md ? "Change: `%s`\n\n" : "change:  %s\n", o->change);
    for (unsigned i = 0; i < r->n_overrides; i++)
        printf(md ? "- %s\n" : "         %s\n", r->overrides[i]);
    if (r->exit == 2) {
        if (md)
            putchar('\n');
        return;
    }
    if (md)
        printf("\n| device ms | as it is, median (min .. max) | with the change | after / before |\n"
               "|---|---:|---:|---:|\n");
    else
        printf("\n%-30s %-28s %-28s %s\n", "device ms, median (min .. max)", "as it is", "with the change",
               "after/before");
    char a[64], b[64], name[160];
    for (unsigned k = 0; k < r->n_kernels; k++) {
        const struct try_kernel *t = &r->kernel[k];
        ms3(a, sizeof a, t->ns[AS_IS], r->runs);
        ms3(b, sizeof b, t->ns[CHANGED], r->runs);
        snprintf(name, sizeof name, "%s (%llu)", t->name, (unsigned long long)t->launches[AS_IS]);
        printf(md ? "| `%s` | %s | %s | %.2fx |\n" : "  %-28s %-28s %-28s %.2fx\n", name, a, b,
               ratio(t->ns[AS_IS], t->ns[CHANGED], r->runs));
    }
    ms3(a, sizeof a, r->device_ns[AS_IS], r->runs);
    ms3(b, sizeof b, r->device_ns[CHANGED], r->runs);
    printf(md ? "| %s | %s | %s | %.2fx |\n" : "  %-28s %-28s %-28s %.2fx\n",
           "the run (kernels, transfers)", a, b, ratio(r->device_ns[AS_IS], r->device_ns[CHANGED], r->runs));
    uint64_t wa[TRY_MAX_RUNS], wb[TRY_MAX_RUNS];
    walls(r, AS_IS, wa);
    walls(r, CHANGED, wb);
    ms3(a, sizeof a, wa, r->runs);
    ms3(b, sizeof b, wb, r->runs);
    printf(md ? "| %s | %s | %s | %.2fx |\n\n" : "%-30s %-28s %-28s %.2fx\n\n", md ? "wall ms, the run" : "wall ms",
           a, b, ratio(wa, wb, r->runs));
    printf(md ? "Results: **%s**" : "results: %s", results_word[r->results]);
    if (r->results == SAME)
        printf(" (the fingerprints of the kernels it touches and of what the program reads back)");
    putchar('\n');
    if (r->results != SAME && r->results_why[0])
        printf(md ? "\n```\n%s\n```\n" : "%s\n", r->results_why);
    printf(md ? "\nOutput: %s. Exit status: %d as it is, %d with the change.\n"
              : "output:  %s\nexit:    %d as it is, %d with the change\n",
           r->stdout_same ? "the same on stdout" : "stdout differs (first runs)", r->run[AS_IS][0].status,
           r->run[CHANGED][0].status);
}

static void json_stats(const uint64_t *v, unsigned n)
{
    struct rm_spread s;
    try_stats(v, n, &s);
    printf("{\"median_ns\":%.0f,\"min_ns\":%.0f,\"max_ns\":%.0f}", s.median, s.min, s.max);
}

static void json(const struct try_opts *o, const struct try_result *r)
{
    char line[4096];
    verdict(r, line, sizeof line);
    static const char *const time_word[] = { "faster", "slower", "no clear difference" };
    printf("{\"schema\":\"cltrace-try/1\",\"verdict\":{\"exit\":%d,\"text\":", r->exit);
    json_str(stdout, line);
    printf(",\"time\":");
    json_str(stdout, r->exit == 2 ? "" : time_word[r->time]);
    printf(",\"results\":");
    json_str(stdout, r->exit == 2 ? "" : results_word[r->results]);
    printf("},\"change\":");
    json_str(stdout, o->change);
    printf(",\"overrides\":[");
    for (unsigned i = 0; i < r->n_overrides; i++) {
        printf(i ? "," : "");
        json_str(stdout, r->overrides[i]);
    }
    printf("],\"kernels\":[");
    for (unsigned k = 0; r->exit != 2 && k < r->n_kernels; k++) {
        const struct try_kernel *t = &r->kernel[k];
        printf("%s{\"name\":", k ? "," : "");
        json_str(stdout, t->name);
        printf(",\"launches\":%llu,\"before\":", (unsigned long long)t->launches[AS_IS]);
        json_stats(t->ns[AS_IS], r->runs);
        printf(",\"after\":");
        json_stats(t->ns[CHANGED], r->runs);
        printf("}");
    }
    uint64_t wa[TRY_MAX_RUNS], wb[TRY_MAX_RUNS];
    walls(r, AS_IS, wa);
    walls(r, CHANGED, wb);
    printf("],\"device\":{\"before\":");
    json_stats(r->device_ns[AS_IS], r->runs);
    printf(",\"after\":");
    json_stats(r->device_ns[CHANGED], r->runs);
    printf("},\"wall\":{\"before\":");
    json_stats(wa, r->runs);
    printf(",\"after\":");
    json_stats(wb, r->runs);
    printf("},\"results\":{\"status\":");
    json_str(stdout, r->exit == 2 ? "" : results_word[r->results]);
    printf(",\"detail\":");
    json_str(stdout, r->results_why);
    printf(",\"stdout_same\":%s},\"could_not\":", r->stdout_same ? "true" : "false");
    json_str(stdout, r->could_not);
    printf(",\"runs\":[");
    for (unsigned i = 0; i < r->runs; i++)
        for (int w = AS_IS; w <= CHANGED; w++)
            printf("%s{\"which\":\"%s\",\"n\":%u,\"exit\":%d,\"wall_ns\":%llu,\"device_ns\":%llu}",
                   i || w ? "," : "", w == AS_IS ? "before" : "after", i + 1, r->run[w][i].status,
                   (unsigned long long)r->run[w][i].wall_ns, (unsigned long long)r->device_ns[w][i]);
    printf("]}\n");
}

void try_print(const struct try_opts *o, const struct try_result *r)
{
    if (!strcmp(o->format, "json"))
        json(o, r);
    else
        text(o, r, !strcmp(o->format, "markdown"));
}
