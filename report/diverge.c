/* cltrace-report diverge A B: where two runs of the same program first
 * differ, from their fingerprints (cltrace --fingerprint); the alignment
 * and the comparison are the model's (report/model/compare.h). Exit 1 when
 * the runs diverge, 0 when not, 2 when a trace cannot be read or has no
 * fingerprints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "report/escape/escape.h"
#include "report/model/compare.h"
#include "report/model/describe.h"

struct run {
    const char *path;
    struct rm_model m;
    struct rm_fp_run fp;
};

static int load(struct run *r, const char *path)
{
    char err[512];
    r->path = path;
    rm_model_init(&r->m);
    if (rm_read(&r->m, path, err, sizeof err) != 0) {
        fprintf(stderr, "cltrace-report diverge: %s\n", err);
        return -1;
    }
    if (!r->m.n_fpcmds) {
        fprintf(stderr, "cltrace-report diverge: %s has no fingerprints%s: trace both runs with "
                "`cltrace --fingerprint -- PROGRAM`\n", path, r->m.fingerprint[0] ? " (none of its commands was chosen)" : "");
        return -1;
    }
    return rm_fp_run_init(&r->fp, &r->m);
}

static void unload(struct run *r)
{
    rm_fp_run_free(&r->fp);
    rm_free(&r->m);
}

static void side(FILE *out, const char *label, const struct run *r, const struct rm_fpcmd *c, const struct rm_fp *f,
                 int json)
{
    char buf[RM_MAX_SITE + 128], cmd[256], args[RM_FP_ARGS * 24] = "";
    rm_fpcmd_describe(c, cmd, sizeof cmd);
    for (unsigned i = 0, n = 0; i < c->n_args && n < sizeof args; i++)
        n += (size_t)snprintf(args + n, sizeof args - n, "%s%llu", i ? ", " : "", (unsigned long long)c->args[i]);
    const char *site = rm_fpcmd_site(&r->m, c);
    if (f)
        rm_fp_buffer_describe(&r->m, f, buf, sizeof buf);
    if (json) {
        fprintf(out, "  \"%s\": {\"trace\": ", label);
        json_str(out, r->path);
        fprintf(out, ", \"command\": ");
        json_str(out, cmd);
        fprintf(out, ", \"number\": %llu, \"kernel_args\": [%s], \"enqueued_at\": ", (unsigned long long)c->cmd_n, args);
        json_str(out, site);
        if (f) {
            fprintf(out, ", \"buffer\": ");
            json_str(out, buf);
            fprintf(out, ", \"hash\": \"%016llx\", \"nan\": %llu, \"pos_inf\": %llu, \"neg_inf\": %llu, "
                    "\"min\": %.17g, \"max\": %.17g, \"sum\": %.17g", (unsigned long long)f->hash,
                    (unsigned long long)f->nan, (unsigned long long)f->pos_inf, (unsigned long long)f->neg_inf,
                    f->min, f->max, f->sum);
        }
        fprintf(out, "}");
        return;
    }
    fprintf(out, "  %s (%s): %s\n", label, r->path, cmd);
    if (c->n_args)
        fprintf(out, "      arguments: %s (buffers as object ids)\n", args);
    if (site[0])
        fprintf(out, "      enqueued at %s\n", site);
    if (f) {
        fprintf(out, "      %s: hash %016llx", buf, (unsigned long long)f->hash);
        if (strcmp(f->type, "bytes"))
            fprintf(out, ", NaN %llu, +Inf %llu, -Inf %llu, min %.9g, max %.9g, sum %.9g", (unsigned long long)f->nan,
                    (unsigned long long)f->pos_inf, (unsigned long long)f->neg_inf, f->min, f->max, f->sum);
        fprintf(out, "\n");
    }
}

int report_diverge(int argc, char **argv)
{
    struct rm_tolerance t = { 0, 0, 0 };
    const char *paths[2] = { NULL, NULL }, *format = "text";
    unsigned np = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--tolerance") && i + 1 < argc) {
            if (rm_tolerance_parse(argv[++i], &t) != 0) {
                fprintf(stderr, "cltrace-report diverge: --tolerance REL[,ABS] (e.g. 1e-5 or 1e-5,1e-12)\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc &&
                   (!strcmp(argv[i + 1], "text") || !strcmp(argv[i + 1], "json"))) {
            format = argv[++i];
        } else if (argv[i][0] != '-' && np < 2) {
            paths[np++] = argv[i];
        } else {
            np = 3;
            break;
        }
    }
    if (np != 2) {
        fprintf(stderr, "usage: cltrace-report diverge [--tolerance REL[,ABS]] [--format text|json] A B\n");
        return 2;
    }
    struct run a = { 0 }, b = { 0 };
    if (load(&a, paths[0]) != 0 || load(&b, paths[1]) != 0) {
        unload(&a);
        unload(&b);
        return 2;
    }
    struct rm_divergence v;
    rm_diverge(&a.fp, &b.fp, &t, &v);
    int json = !strcmp(format, "json");
    const struct run *first = v.first == &b.fp ? &b : &a, *other = first == &a ? &b : &a;
    if (json) {
        printf("{\n  \"diverged\": %s,\n  \"compared\": %u,\n  \"identical\": %u,\n  \"within_tolerance\": %u,\n",
               v.found ? "true" : "false", v.same + v.near, v.same, v.near);
        if (t.on)
            printf("  \"tolerance\": {\"relative\": %g, \"absolute\": %g},\n", t.rel, t.abs);
        if (v.found) {
            printf("  \"why\": ");
            json_str(stdout, v.why);
            printf(",\n");
            const struct rm_fpcmd *c = first->fp.v[v.i];
            side(stdout, first == &a ? "a" : "b", first, c, &c->fp[v.fp < c->n ? v.fp : 0], 1);
            if (v.j >= 0) {
                printf(",\n");
                const struct rm_fpcmd *d = other->fp.v[v.j];
                side(stdout, "b", other, d, &d->fp[v.fp < d->n ? v.fp : 0], 1);
            }
            printf("\n");
        } else {
            printf("  \"commands_a\": %u, \"commands_b\": %u\n", a.m.n_fpcmds, b.m.n_fpcmds);
        }
        printf("}\n");
    } else {
        char line[600];
        rm_divergence_line(&v, line, sizeof line);
        printf("%s\n", line);
    }
    if (!json && v.found) {
        printf("  the %u commands before it: %u identical, %u within the tolerance\n", v.same + v.near, v.same, v.near);
        const struct rm_fpcmd *c = first->fp.v[v.i];
        side(stdout, first == &a ? "A" : "B", first, c, c->n ? &c->fp[v.fp < c->n ? v.fp : 0] : NULL, 0);
        if (v.j >= 0) {
            const struct rm_fpcmd *d = other->fp.v[v.j];
            side(stdout, "B", other, d, d->n ? &d->fp[v.fp < d->n ? v.fp : 0] : NULL, 0);
        }
    }
    unload(&a);
    unload(&b);
    return v.found ? 1 : 0;
}
