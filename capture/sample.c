/* CLTRACE_SAMPLE: an overhead budget for launch-heavy programs.
 *
 * On some drivers the event that times a command costs more than the launch
 * itself (NVIDIA: ~7.5 us against ~4 us; README). With sampling on, of the
 * commands for which the app asked no event, cltrace times: every launch of
 * a kernel with one launch configuration the first FIRST times, then one in
 * EVERY; every transfer of at least BYTES; other commands like launches,
 * keyed by the command (and its size). The host side of every call is still
 * recorded; an enqueue that was not timed says so in the trace ("sampled
 * out"), and the report extrapolates each kernel's device time from its
 * sample. Commands whose event the app asked for are always timed (the app
 * paid for the event already). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "hooks.h"

int clt_sampling;
static struct clt_sample params;

void clt_sample_load(void)
{
    if (clt_sample_parse(clt_cfg.SAMPLE, &params) != 0)
        clt_msg("CLTRACE_SAMPLE=%s: expected 1 or FIRST,EVERY[,BYTES]; every command is timed", clt_cfg.SAMPLE);
    if (params.on && clt_fp_on) {   /* the first NaN needs every command */
        clt_msg("CLTRACE_SAMPLE is off while fingerprinting: every command is timed and fingerprinted");
        params.on = 0;
    }
    clt_sampling = params.on;
}

/* A kernel and its launch configuration, as one key. */
uint64_t clt_launch_key(const void *kernel, uint32_t work_dim, const void *gws, const void *lws)
{
    uint64_t h = (uint64_t)(uintptr_t)kernel * 0x9E3779B97F4A7C15ull ^ work_dim;
    const size_t *g = gws, *l = lws;
    for (uint32_t i = 0; i < work_dim && i < 3; i++) {
        h = (h ^ (g ? g[i] : 0)) * 0x100000001B3ull;
        h = (h ^ (l ? l[i] : 0)) * 0x100000001B3ull;
    }
    return h;
}

/* Launch counts by key: open addressing, lock-free; a full table times. */
#define SLOTS 8192
static struct { _Atomic uint64_t key, count; } table[SLOTS];

int clt_sample_take(unsigned fn, uint64_t key, uint64_t bytes)
{
    if (bytes >= params.bytes)
        return 1;
    key = (key ^ (uint64_t)fn << 48 ^ bytes * 0xff51afd7ed558ccdull) | 1;
    for (unsigned i = 0, s = (unsigned)(key >> 17) % SLOTS; i < 64; i++, s = (s + 1) % SLOTS) {
        uint64_t cur = __atomic_load_n(&table[s].key, __ATOMIC_ACQUIRE);
        if (!cur) {
            uint64_t expect = 0;
            if (!__atomic_compare_exchange_n(&table[s].key, &expect, key, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                cur = expect;
            else
                cur = key;
        }
        if (cur != key)
            continue;
        uint64_t n = __atomic_fetch_add(&table[s].count, 1, __ATOMIC_RELAXED);
        int take = n < params.first || (n - params.first) % params.every == 0;
        if (!take)
            clt_collect_busy();  /* the app enqueues, untimed: the collector keeps out of the driver */
        return take;
    }
    return 1;
}
