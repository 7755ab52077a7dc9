#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"

struct clt_config clt_cfg;


const struct clt_option_desc clt_options[] = {
#define CLT_DESC(n, t, d, h) { CLT_ENV_PREFIX #n, #t, d, h },
    CLT_OPTIONS(CLT_DESC)
#undef CLT_DESC
};
const unsigned clt_n_options = sizeof clt_options / sizeof clt_options[0];

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

void clt_config_load(struct clt_config *c)
{
#define CLT_LOAD_str(n, d) c->n = env_or(CLT_ENV_PREFIX #n, d);
#define CLT_LOAD_bool(n, d) c->n = env_or(CLT_ENV_PREFIX #n, d)[0] == '1';
#define CLT_LOAD_int(n, d) c->n = strtol(env_or(CLT_ENV_PREFIX #n, d), NULL, 0);
#define CLT_LOAD(n, t, d, h) CLT_LOAD_##t(n, d)
    CLT_OPTIONS(CLT_LOAD)
#undef CLT_LOAD
}

void clt_msg(const char *fmt, ...)
{
    if (clt_cfg.QUIET)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(buf, sizeof buf, "cltrace: ");
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);   /* stderr only: stdout is the app's */
    (void)w;
}

int clt_sample_parse(const char *spec, const char *budget, struct clt_sample *s)
{
    *s = (struct clt_sample){ 0, 16, 256, 1u << 20, CLT_SAMPLE_ALL, 5 };   /* README: "Launch-heavy programs" */
    if (!spec || !*spec || !strcmp(spec, "budget")) {
        char *end = NULL;
        double b = budget && *budget ? strtod(budget, &end) : 5;
        if (end && (*end || !(b > 0 && b <= 100)))
            return -1;
        s->budget = b;
        s->mode = CLT_SAMPLE_BUDGET;
        s->on = 1;
        return 0;
    }
    if (!strcmp(spec, "0") || !strcmp(spec, "all"))
        return 0;
    if (strcmp(spec, "1") != 0) {
        unsigned long long f = 0, e = 0, b = s->bytes;
        char tail = 0;
        int n = sscanf(spec, "%llu,%llu,%llu%c", &f, &e, &b, &tail);
        if (n < 2 || n > 3 || e == 0)
            return -1;
        s->first = f;
        s->every = e;
        s->bytes = b;
    }
    s->mode = CLT_SAMPLE_FIXED;
    s->on = 1;
    return 0;
}

void clt_sample_describe(const struct clt_sample *s, char *buf, unsigned long cap)
{
    if (!s->on)
        snprintf(buf, cap, "off");
    else if (s->mode == CLT_SAMPLE_BUDGET)
        snprintf(buf, cap, "budget %g %%: every command timed while timing costs at most %g %% of the run since its first command (3 ms at least), "
                 "then the first %llu of each launch configuration and transfer size and as many as the budget "
                 "allows; transfers of %llu bytes and more always", s->budget, s->budget, s->first, s->bytes);
    else
        snprintf(buf, cap, "first %llu, then 1 in %llu; transfers of %llu bytes and more always", s->first,
                 s->every, s->bytes);
}
