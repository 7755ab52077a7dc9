/* The occupancy calculator against the worked examples of the seeds. */
#include <stdio.h>
#include "report/occupancy.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define NEAR(a, b) ((a) - (b) < 0.005 && (b) - (a) < 0.005)

static struct occ_result run(const struct occ_model *m, unsigned wg, unsigned regs, unsigned local)
{
    struct occ_kernel k = { wg, regs, local };
    struct occ_result r;
    occ_compute(m, &k, &r);
    return r;
}

int main(void)
{
    const struct occ_model *g80 = occ_nvidia(10);
    EXPECT(g80 != NULL);
    /* seed 001, CUDA occupancy calculator: G80, 192 threads, 20 registers,
     * 68 bytes of shared memory -> 2 blocks, 12 warps, 384 threads, 50 %;
     * limits: 4 by warps, 2 by registers, 32 by shared memory */
    struct occ_result r = run(g80, 192, 20, 68);
    EXPECT(r.groups == 2 && r.warps == 12 && r.work_items == 384 && NEAR(r.occupancy, 0.50));
    EXPECT(r.by_warps == 4 && r.by_regs == 2 && r.by_local == 32 && r.limited_by == OCC_BY_REGS);
    /* its "varying block size" graph: 400 and 464 threads do not fit (registers
     * go by pairs of warps on CC 1.x: 14 x 32 x 20 > 8192); 336 fits once */
    EXPECT(run(g80, 400, 20, 68).groups == 0 && run(g80, 464, 20, 68).groups == 0);
    EXPECT(run(g80, 336, 20, 68).warps == 11);
    /* registers: 24 warps up to 10 (the graph's axis labels it "12"), 12 at 20,
     * 6 at 24 and 32 (192 threads, 68 bytes) */
    EXPECT(run(g80, 192, 10, 68).warps == 24 && run(g80, 192, 24, 68).warps == 6 &&
           run(g80, 192, 32, 68).warps == 6);
    /* shared memory 8192 -> 12 warps, 8384 -> 6 */
    EXPECT(run(g80, 192, 20, 8192).warps == 12 && run(g80, 192, 20, 8384).warps == 6);
    /* seed 001: 10 registers x 256 work-items -> 3 groups, 100 %; 11 -> 2, 66 %;
     * 11 registers x 128 -> 5 groups, 83 % */
    r = run(g80, 256, 10, 0);
    EXPECT(r.groups == 3 && NEAR(r.occupancy, 1.0));
    r = run(g80, 256, 11, 0);
    EXPECT(r.groups == 2 && NEAR(r.occupancy, 2.0 / 3) && r.limited_by == OCC_BY_REGS);
    r = run(g80, 128, 11, 0);
    EXPECT(r.groups == 5 && NEAR(r.occupancy, 20.0 / 24));
    /* seed 004: 16384 registers per compute unit, 35 per work-item -> at most
     * 468 work-items: 512 does not fit, 1 group of 256, 3 of 128 */
    struct occ_model cu = occ_generic(64, 16384, 32768);
    EXPECT(occ_max_work_items_by_regs(&cu, 35) == 468);
    EXPECT(run(&cu, 512, 35, 0).groups == 0);
    EXPECT(run(&cu, 256, 35, 0).groups == 1);
    r = run(&cu, 128, 35, 0);
    EXPECT(r.groups == 3 && r.work_items == 384);
    /* seed 004: 256 work-items, 17 registers -> 4352 per group, 3 groups; 16 -> 4 */
    EXPECT(run(&cu, 256, 17, 0).groups == 3 && run(&cu, 256, 16, 0).groups == 4);
    /* local memory limits too: 32 KB per CU, 12 KB per group -> 2 groups */
    r = run(&cu, 64, 0, 12288);
    EXPECT(r.groups == 2 && r.limited_by == OCC_BY_LOCAL);
    /* Hopper: 256 work-items, 10 registers (the H200 trace's "scale") -> 64 warps, 100 % */
    r = run(occ_nvidia(90), 256, 10, 0);
    EXPECT(NEAR(r.occupancy, 1.0));
    EXPECT(occ_nvidia(12345) == NULL);
    printf("occupancy: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
