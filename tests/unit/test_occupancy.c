/* The occupancy calculator against the worked examples of the seeds. */
#include <stdio.h>
#include <string.h>
#include "report/model/occupancy.h"

static int failures;
#define EXPECT(c) do { if (!(c)) { failures++; fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define NEAR(a, b) ((a) - (b) < 0.005 && (b) - (a) < 0.005)

static struct occ_result run(const struct occ_model *m, unsigned wg, unsigned regs, unsigned local)
{
    struct occ_kernel k = { wg, regs, local, 0 };
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

    /* ---- AMD ---- */
    /* seed 003: RV770, 16k x 128-bit registers per SIMD engine, 64 threads
     * per wavefront -> 256 GPRs per work-item slot; 5 used -> 51 wavefronts */
    const struct occ_model *r700 = occ_named("r700");
    EXPECT(r700 && occ_max_work_items_by_regs(r700, 5) == 51 * 64);
    r = run(r700, 64, 5, 0);
    EXPECT(r.groups == 51 && r.warps == 51 && r.limited_by == OCC_BY_REGS && r.occupancy == 0.0);
    EXPECT(run(r700, 64, 8, 0).warps == 32 && run(r700, 128, 5, 0).warps == 50);
    /* seed 002: 32 KB of LDS per Evergreen compute unit: 12 KB groups -> 2 */
    r = run(occ_named("evergreen"), 64, 4, 12288);
    EXPECT(r.groups == 2 && r.limited_by == OCC_BY_LOCAL);
    /* GCN (gfx8/9): 10 wavefronts per SIMD up to 24 VGPRs, 9 at 25..28, 3 at
     * 84 (AMD's VGPR table: 256 / VGPRs rounded up to 4) */
    const struct occ_model *gcn = occ_named("gcn3");
    EXPECT(gcn && run(gcn, 64, 24, 0).warps == 16);            /* 1-wave groups: 16 groups per CU */
    r = run(gcn, 256, 24, 0);
    EXPECT(r.groups == 10 && r.warps == 40 && NEAR(r.occupancy, 1.0));
    r = run(gcn, 256, 25, 0);
    EXPECT(r.groups == 9 && r.warps == 36 && r.limited_by == OCC_BY_REGS && NEAR(r.occupancy, 0.9));
    r = run(gcn, 256, 84, 0);
    EXPECT(r.groups == 3 && r.warps == 12 && NEAR(r.occupancy, 0.30));
    /* SGPRs, 800 per SIMD in steps of 16 (GCN3+): 80 -> 10 waves, 96 -> 8;
     * GCN1-2, 512 in steps of 8: 48 -> 10, 56 -> 9 */
    struct occ_kernel sk = { 256, 16, 0, 96 };
    occ_compute(gcn, &sk, &r);
    EXPECT(r.warps == 32 && r.limited_by == OCC_BY_SREGS);
    sk.sregs = 80;
    occ_compute(gcn, &sk, &r);
    EXPECT(r.warps == 40);
    sk.sregs = 56;
    occ_compute(occ_named("gcn1"), &sk, &r);
    EXPECT(r.warps == 36 && r.limited_by == OCC_BY_SREGS);
    /* 64 KB LDS per CU: 16 KB groups -> 4 */
    EXPECT(run(gcn, 64, 16, 16384).groups == 4);
    /* 1-wave groups, few registers: 16 work-groups per CU cap it at 40 % */
    r = run(gcn, 64, 8, 0);
    EXPECT(r.groups == 16 && r.limited_by == OCC_BY_GROUPS && NEAR(r.occupancy, 0.40));
    /* CDNA2/3: 512 unified VGPRs per lane, 8 waves per SIMD: 128 -> 4 per SIMD, 50 % */
    r = run(occ_named("cdna2"), 256, 128, 0);
    EXPECT(r.warps == 16 && NEAR(r.occupancy, 0.5));
    EXPECT(NEAR(run(occ_named("cdna2"), 256, 64, 0).occupancy, 1.0));
    /* RDNA (per WGP, wave32): 1,024 VGPRs per lane: 64 -> 16 waves per SIMD, 80 % */
    r = run(occ_named("rdna1"), 256, 64, 0);
    EXPECT(r.warps == 64 && NEAR(r.occupancy, 0.8));

    /* CDNA (gfx908) as GCN3: 32 VGPRs -> 8 waves per SIMD, 80 % */
    r = run(occ_named("cdna1"), 256, 32, 0);
    EXPECT(r.warps == 32 && NEAR(r.occupancy, 0.8));
    /* RDNA3 (per WGP, wave32): 1,536 VGPRs per lane: 96 -> 16 waves per SIMD
     * (100 %), 128 -> 12 (48 of 64: 75 %) */
    EXPECT(NEAR(run(occ_named("rdna3"), 256, 96, 0).occupancy, 1.0));
    r = run(occ_named("rdna3"), 256, 128, 0);
    EXPECT(r.warps == 48 && r.groups == 6 && NEAR(r.occupancy, 0.75) && r.limited_by == OCC_BY_REGS);

    /* ---- Intel: hardware threads per subslice at the kernel's SIMD width ---- */
    struct occ_model im;
    const struct occ_model *gen9 = occ_for_device("Intel(R) Corporation", "Intel(R) UHD Graphics 620", 0, 0, 16, &im);
    EXPECT(gen9 && !strcmp(gen9->name, "Intel Gen9 (per subslice)") && gen9->cus_per_unit == 8);
    r = run(gen9, 256, 0, 0);                                /* SIMD16: 16 threads a group, 3 of 56 */
    EXPECT(r.groups == 3 && r.warps == 48 && NEAR(r.occupancy, 48.0 / 56));
    r = run(gen9, 256, 0, 32768);                            /* 64 KB SLM: 2 groups of 32 KB */
    EXPECT(r.groups == 2 && r.limited_by == OCC_BY_LOCAL && NEAR(r.occupancy, 32.0 / 56));
    gen9 = occ_for_device("Intel(R) Corporation", "Intel(R) HD Graphics 530", 0, 0, 8, &im);   /* SIMD8 */
    EXPECT(gen9 && gen9->warp == 8 && run(gen9, 256, 0, 0).warps == 32);
    gen9 = occ_for_device("Intel(R) Corporation", "Intel(R) HD Graphics 530", 0, 0, 32, &im);  /* SIMD32 */
    EXPECT(gen9 && NEAR(run(gen9, 256, 0, 0).occupancy, 1.0));
    const struct occ_model *pvc = occ_for_device("Intel(R) Corporation", "Intel(R) Data Center GPU Max 1550", 0, 0,
                                                 32, &im);
    EXPECT(pvc && run(pvc, 1024, 0, 0).groups == 2 && run(pvc, 1024, 0, 65536).groups == 2 &&
           run(pvc, 1024, 0, 65537).groups == 1);

    /* Gen11: 56 threads per subslice: 128 work-items at SIMD16 -> 7 groups, 100 % */
    r = run(occ_named("gen11"), 128, 0, 0);
    EXPECT(r.groups == 7 && NEAR(r.occupancy, 1.0));
    /* Xe-LP: 7 threads x 16 EUs = 112: 256 work-items at SIMD8 -> 3 groups, 96 of 112 */
    const struct occ_model *xelp = occ_for_device("Intel(R) Corporation", "Intel(R) Iris(R) Xe Graphics", 0, 0, 8, &im);
    EXPECT(xelp && run(xelp, 256, 0, 0).groups == 3 && NEAR(run(xelp, 256, 0, 0).occupancy, 96.0 / 112));
    /* Xe-HPG: 8 threads x 16 vector engines = 128: 1024 at SIMD16 -> 2 groups
     * (100 %); 48 KB of SLM each -> 1 (50 %) */
    const struct occ_model *hpg = occ_for_device("Intel(R) Corporation", "Intel(R) Arc(TM) A770 Graphics", 0, 0, 16,
                                                 &im);
    EXPECT(hpg && NEAR(run(hpg, 1024, 0, 0).occupancy, 1.0));
    r = run(hpg, 1024, 0, 49152);
    EXPECT(r.groups == 1 && NEAR(r.occupancy, 0.5) && r.limited_by == OCC_BY_LOCAL);

    /* ---- which model a device gets ---- */
    struct occ_model dm;
    EXPECT(occ_for_device("NVIDIA Corporation", "NVIDIA H100 80GB HBM3", 90, 32, 32, &dm) &&
           dm.max_warps == 64 && dm.local_mem == 233472);
    EXPECT(occ_for_device("Advanced Micro Devices, Inc.", "gfx90a:sramecc+:xnack-", 0, 64, 64, &dm) &&
           !strcmp(dm.name, "AMD CDNA 2-3 (gfx90a/gfx94x)"));
    EXPECT(occ_for_device("Advanced Micro Devices, Inc.", "gfx1030", 0, 32, 32, &dm) && dm.warp == 32);
    EXPECT(occ_for_device("Advanced Micro Devices, Inc.", "gfx1030", 0, 64, 64, &dm) && dm.warp == 64 &&
           dm.reg_unit == 512);                              /* wave64: twice the register step */
    EXPECT(occ_for_device("Advanced Micro Devices, Inc.", "Tahiti", 0, 64, 64, &dm) && dm.sregs == 512);
    EXPECT(occ_for_device("Advanced Micro Devices, Inc.", "gfx906", 0, 64, 64, &dm) && dm.sregs == 800);
    EXPECT(occ_for_device("Intel(R) Corporation", "Intel(R) UHD Graphics 770", 0, 0, 16, &dm) &&
           dm.max_warps == 112);
    EXPECT(!occ_for_device("Intel(R) Corporation", "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", 0, 0, 8, &dm));
    EXPECT(!occ_for_device("The pocl project", "cpu-haswell-AMD EPYC 7B13", 0, 0, 8, &dm));
    EXPECT(!occ_for_device("Advanced Micro Devices, Inc.", "gfx1200", 0, 32, 32, &dm));
    printf("occupancy: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
