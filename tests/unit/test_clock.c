/* The clock model (writer/clock.c) on a synthetic device whose clock drifts
 * 20 ppm against the host's, in straight line, as NVIDIA's do: markers
 * where the app paused (5 us wide) before and after a 300 ms launch loop,
 * the loop's own brackets (12 us) and markers amid it (8 us). Every
 * command's true offset must lie in the interval given; the chords between
 * the quiet markers must hold the loop's middle to ~5 us (aging one of
 * them by 25 ppm would give ~12); evidence off the straight line must be
 * counted as contradicting it; the narrowest interval the evidence ever
 * left (the floor the trace states) is the quiet markers'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "writer/device_model.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

#define T0 5000000000ull                 /* host ns at the first marker */
#define LOOP_NS 300000000ull
static int64_t step_at = -1, step_ns;    /* a jump off the line (the contradiction case) */

static int64_t true_offset(uint64_t h)   /* host - device */
{
    int64_t off = 1700000000000000000ll + (int64_t)((double)(h - T0) * 20e-6);
    return step_at >= 0 && h >= (uint64_t)step_at ? off + step_ns : off;
}

/* An event the device stamped at host time h, bracketed by [h - below, h + above]. */
static void bracket(struct clt_dev *d, uint64_t h, uint64_t below, uint64_t above)
{
    clt_dm_clock_sample(d, h - below, h + above, (uint64_t)((int64_t)h - true_offset(h)));
}

static void quiet_markers(struct clt_dev *d, uint64_t t)
{
    for (int i = 0; i < 16; i++)
        bracket(d, t + 30000 * (uint64_t)i, 2500 + 50 * (uint64_t)(i % 5), 2500 + 40 * (uint64_t)(i % 3));
}

/* The run as the writer sees it with completions held back: quiet markers,
 * the markers amid the loop, the quiet markers after it, then each
 * command's bracket and its placement. Returns the largest residual. */
static int64_t run(struct clt_dev *d, int with_end, int *outside)
{
    memset(d, 0, sizeof *d);
    quiet_markers(d, T0);
    for (uint64_t t = T0 + 10000000; t < T0 + LOOP_NS; t += 10000000)
        bracket(d, t, 3000, 5000);
    if (with_end)
        quiet_markers(d, T0 + LOOP_NS + 1000000);
    int64_t worst = 0;
    *outside = 0;
    for (uint64_t t = T0 + 1000000; t < T0 + LOOP_NS; t += 15000) {
        bracket(d, t, 4000, 8000);
        uint64_t start = t + 3000;       /* the command runs 3 us after its enqueue */
        clt_dm_clock_at(d, start);
        int64_t truth = true_offset(start);
        if (truth < d->offset - d->residual / 2 - 1 || truth > d->offset + d->residual / 2 + 1)
            (*outside)++;
        if (d->residual > worst)
            worst = d->residual;
    }
    return worst;
}

int main(void)
{
    struct clt_dev *d = calloc(1, sizeof *d);
    int outside;
    int64_t r = run(d, 1, &outside);
    printf("quiet markers both sides: residual %lld ns at most, %llu commands chorded, %llu contradictions\n",
           (long long)r, (unsigned long long)d->chorded, (unsigned long long)d->contradictions);
    EXPECT(outside == 0);
    EXPECT(r <= 5100);                   /* the quiet markers' 5 us, across the whole loop */
    EXPECT(d->contradictions == 0);
    EXPECT(d->chorded > 10000);
    /* the floor: the quiet markers' tightest lower and upper bounds, 2.5 us
     * each side of the truth, 20 ppm of drift over a burst's 0.45 ms left in */
    printf("the evidence never narrower than %lld ns\n", (long long)d->floor);
    EXPECT(d->floor >= 4950 && d->floor <= 5050);
    EXPECT(r >= d->floor - 100);
    free(d->hist);

    int64_t r2 = run(d, 0, &outside);    /* nothing quiet after the loop */
    printf("quiet markers before only: residual %lld ns at most\n", (long long)r2);
    EXPECT(outside == 0);
    EXPECT(r2 > 7000);                   /* the markers amid the loop, aged: wider */
    free(d->hist);

    step_at = (int64_t)(T0 + LOOP_NS / 2);   /* the offset jumps 9 us in the middle */
    step_ns = 9000;
    run(d, 1, &outside);
    printf("a 9 us jump: %llu contradictions\n", (unsigned long long)d->contradictions);
    EXPECT(d->contradictions > 0);       /* seen, counted, not hidden */
    free(d->hist);
    free(d);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
