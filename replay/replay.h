/* The cltrace-replay program's commands (replay.c, tune.c, check.c, emit.c). */
#ifndef RP_REPLAY_H
#define RP_REPLAY_H
#include "session.h"

struct rp_args {
    struct rs_opts o;
    const char *dir, *format, *out;
    unsigned repeat;
    int have_local, check, emit, list, round_global;
    size_t local[3];
};

int rp_parse(int argc, char **argv, struct rp_args *a);    /* 0 ok, 1 help printed, -1 wrong */
int rp_report_outputs(struct rs_session *s, const struct rs_opts *o, FILE *f);
int rp_tune(const struct rp_args *a);
int rp_check(const struct rp_args *a, const char *self);
int rp_emit_c(const struct rp_args *a);

#endif
