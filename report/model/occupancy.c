/* Occupancy calculator. NVIDIA limits per compute capability follow the
 * CUDA Occupancy Calculator's data (registers and shared memory per SM,
 * allocation units, resident warps and blocks); registers per work-item come
 * from the build log (cltrace's registers_per_work_item). AMD and Intel
 * limits are in amd_intel[] below, with where each number comes from. */
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include "occupancy.h"

static const struct {
    unsigned cc;
    struct occ_model m;
} nvidia[] = {
    /* name                    warp warps grps  regs unit perwarp walloc local  unit simds sregs su cpu */
    { 10, { "NVIDIA G80 (CC 1.0)",    32, 24,  8,  8192, 256, 0, 2,  16384, 512, 1, 0, 0, 1 } },
    { 11, { "NVIDIA CC 1.1",          32, 24,  8,  8192, 256, 0, 2,  16384, 512, 1, 0, 0, 1 } },
    { 12, { "NVIDIA CC 1.2",          32, 32,  8, 16384, 512, 0, 2,  16384, 512, 1, 0, 0, 1 } },
    { 13, { "NVIDIA GT200 (CC 1.3)",  32, 32,  8, 16384, 512, 0, 2,  16384, 512, 1, 0, 0, 1 } },
    { 20, { "NVIDIA Fermi (CC 2.0)",  32, 48,  8, 32768,  64, 1, 1,  49152, 128, 1, 0, 0, 1 } },
    { 21, { "NVIDIA Fermi (CC 2.1)",  32, 48,  8, 32768,  64, 1, 1,  49152, 128, 1, 0, 0, 1 } },
    { 30, { "NVIDIA Kepler (CC 3.0)", 32, 64, 16, 65536, 256, 1, 1,  49152, 256, 1, 0, 0, 1 } },
    { 35, { "NVIDIA Kepler (CC 3.5)", 32, 64, 16, 65536, 256, 1, 1,  49152, 256, 1, 0, 0, 1 } },
    { 50, { "NVIDIA Maxwell (CC 5.0)",32, 64, 32, 65536, 256, 1, 1,  65536, 256, 1, 0, 0, 1 } },
    { 52, { "NVIDIA Maxwell (CC 5.2)",32, 64, 32, 65536, 256, 1, 1,  98304, 256, 1, 0, 0, 1 } },
    { 60, { "NVIDIA Pascal (CC 6.0)", 32, 64, 32, 65536, 256, 1, 1,  65536, 256, 1, 0, 0, 1 } },
    { 61, { "NVIDIA Pascal (CC 6.1)", 32, 64, 32, 65536, 256, 1, 1,  98304, 256, 1, 0, 0, 1 } },
    { 70, { "NVIDIA Volta (CC 7.0)",  32, 64, 32, 65536, 256, 1, 1,  98304, 256, 1, 0, 0, 1 } },
    { 75, { "NVIDIA Turing (CC 7.5)", 32, 32, 16, 65536, 256, 1, 1,  65536, 256, 1, 0, 0, 1 } },
    { 80, { "NVIDIA Ampere (CC 8.0)", 32, 64, 32, 65536, 256, 1, 1, 167936, 128, 1, 0, 0, 1 } },
    { 86, { "NVIDIA Ampere (CC 8.6)", 32, 48, 16, 65536, 256, 1, 1, 102400, 128, 1, 0, 0, 1 } },
    { 89, { "NVIDIA Ada (CC 8.9)",    32, 48, 24, 65536, 256, 1, 1, 102400, 128, 1, 0, 0, 1 } },
    { 90, { "NVIDIA Hopper (CC 9.0)", 32, 64, 32, 65536, 256, 1, 1, 233472, 128, 1, 0, 0, 1 } },
};

/* AMD, per compute unit as OpenCL counts it (a WGP on RDNA in ROCm), and
 * Intel, per subslice (OpenCL counts EUs; a work-group runs on one
 * subslice). Registers are 32-bit registers per compute unit; reg_unit is
 * the allocation step of one wavefront (granule x lanes).
 *  - r700: seed 003 — 16k x 128-bit GPRs per SIMD engine, 64 threads per
 *    wavefront: 256 GPRs per work-item slot, 5 used -> 51 wavefronts. No
 *    documented resident maximum; no LDS in OpenCL on R700 (seed 002).
 *  - evergreen: the same register file (seed 003, RV870) and 32 KB of LDS
 *    per compute unit (seed 002).
 *  - gcn1 (gfx6/7), gcn3 (gfx8/9), cdna1 (gfx908): AMD's GCN ISA manuals —
 *    4 SIMD16 per CU, 10 wavefronts per SIMD, 256 VGPRs per lane in steps of
 *    4, SGPRs 512 (steps of 8) / 800 (steps of 16) per SIMD, 64 KB LDS,
 *    16 work-groups per CU.
 *  - cdna2 (gfx90a, gfx94x): 8 wavefronts per SIMD, 512 unified VGPRs per
 *    lane in steps of 8 (CDNA2/3 ISA).
 *  - rdna1 (gfx10), rdna3 (gfx11): per WGP, 4 SIMD32; 20 (RDNA1/2) / 16
 *    (RDNA3) waves per SIMD; 1,024 / 1,536 VGPRs per lane in wave32, steps
 *    of 8; 128 KB LDS per WGP (RDNA whitepapers, ISA guides).
 *  - Intel gen9 and gen11: 7 threads per EU, 8 EUs and 64 KB SLM per
 *    subslice (Intel's Gen9/Gen11 compute architecture papers); xe-lp:
 *    7 threads, 16 EUs; xe-hpg: 8 threads, 16 vector engines per Xe-core;
 *    xe-hpc: 8 threads, 8 vector engines and 128 KB SLM per Xe-core. A thread
 *    runs SIMD8/16/32 (the kernel's preferred multiple); registers are fixed
 *    per thread, not a limit. */
static const struct {
    const char *gen;
    struct occ_model m;
} amd_intel[] = {
    /* name                       warp warps grps  regs   unit pw wa  local  unit simds sregs su cpu */
    { "r700",      { "AMD R700 (TeraScale)",     64,  0,  0,  16384,  64, 1, 1,      0,   1, 1,    0,  0, 1 } },
    { "evergreen", { "AMD Evergreen (TeraScale 2)", 64, 0, 0, 16384,  64, 1, 1,  32768,   1, 1,    0,  0, 1 } },
    { "gcn1",      { "AMD GCN 1-2 (gfx6/7)",     64, 40, 16,  65536, 256, 1, 1,  65536, 256, 4,  512,  8, 1 } },
    { "gcn3",      { "AMD GCN 3-5 (gfx8/9)",     64, 40, 16,  65536, 256, 1, 1,  65536, 256, 4,  800, 16, 1 } },
    { "cdna1",     { "AMD CDNA (gfx908)",        64, 40, 16,  65536, 256, 1, 1,  65536, 256, 4,  800, 16, 1 } },
    { "cdna2",     { "AMD CDNA 2-3 (gfx90a/gfx94x)", 64, 32, 0, 131072, 512, 1, 1, 65536, 256, 4, 800, 16, 1 } },
    { "rdna1",     { "AMD RDNA 1-2 (gfx10, per WGP)", 32, 80, 0, 131072, 256, 1, 1, 131072, 256, 4, 0, 0, 1 } },
    { "rdna3",     { "AMD RDNA 3 (gfx11, per WGP)", 32, 64, 0, 196608, 256, 1, 1, 131072, 256, 4, 0, 0, 1 } },
    { "gen9",      { "Intel Gen9 (per subslice)", 16, 56,  0,      0,   1, 1, 1,  65536,   1, 1,    0,  0, 8 } },
    { "gen11",     { "Intel Gen11 (per subslice)", 16, 56, 0,      0,   1, 1, 1,  65536,   1, 1,    0,  0, 8 } },
    { "xe-lp",     { "Intel Xe-LP (per subslice)", 16, 112, 0,     0,   1, 1, 1,  65536,   1, 1,    0,  0, 16 } },
    { "xe-hpg",    { "Intel Xe-HPG (per Xe-core)", 16, 128, 0,     0,   1, 1, 1,  65536,   1, 1,    0,  0, 16 } },
    { "xe-hpc",    { "Intel Xe-HPC (per Xe-core)", 16, 64,  0,     0,   1, 1, 1, 131072,   1, 1,    0,  0, 8 } },
};

const struct occ_model *occ_named(const char *generation)
{
    for (size_t i = 0; i < sizeof amd_intel / sizeof amd_intel[0]; i++)
        if (!strcmp(amd_intel[i].gen, generation))
            return &amd_intel[i].m;
    return NULL;
}

static int has(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

static const char *amd_generation(const char *name)
{
    static const struct { const char *prefix, *gen; } gfx[] = {
        { "gfx6", "gcn1" }, { "gfx7", "gcn1" }, { "gfx8", "gcn3" }, { "gfx908", "cdna1" }, { "gfx90a", "cdna2" },
        { "gfx94", "cdna2" }, { "gfx9", "gcn3" }, { "gfx10", "rdna1" }, { "gfx11", "rdna3" },
    };
    for (size_t i = 0; i < sizeof gfx / sizeof gfx[0]; i++)
        if (!strncmp(name, gfx[i].prefix, strlen(gfx[i].prefix)))
            return gfx[i].gen;
    static const struct { const char *code, *gen; } codes[] = {
        { "RV7", "r700" }, { "Cypress", "evergreen" }, { "Juniper", "evergreen" }, { "Redwood", "evergreen" },
        { "Cedar", "evergreen" }, { "Cayman", "evergreen" }, { "Barts", "evergreen" }, { "Turks", "evergreen" },
        { "Caicos", "evergreen" }, { "Tahiti", "gcn1" }, { "Pitcairn", "gcn1" }, { "Capeverde", "gcn1" },
        { "Oland", "gcn1" }, { "Hainan", "gcn1" }, { "Bonaire", "gcn1" }, { "Hawaii", "gcn1" },
        { "Tonga", "gcn3" }, { "Fiji", "gcn3" }, { "Iceland", "gcn3" }, { "Carrizo", "gcn3" },
        { "Ellesmere", "gcn3" }, { "Baffin", "gcn3" }, { "Polaris", "gcn3" },
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (has(name, codes[i].code))
            return codes[i].gen;
    return NULL;
}

static const char *intel_generation(const char *name)
{
    if (has(name, "Data Center GPU Max"))
        return "xe-hpc";
    if (has(name, "Arc"))
        return "xe-hpg";
    if (has(name, "Iris(R) Xe") || has(name, "UHD Graphics 7"))
        return "xe-lp";
    if (has(name, "Iris(R) Plus Graphics G") || has(name, "Gen11"))
        return "gen11";
    if (has(name, "HD Graphics") || has(name, "Iris"))
        return "gen9";
    return NULL;
}

const struct occ_model *occ_for_device(const char *vendor, const char *name, unsigned cc, unsigned dev_warp,
                                       unsigned pref_multiple, struct occ_model *out)
{
    const struct occ_model *m = NULL;
    if (cc)
        m = occ_nvidia(cc);
    else if (has(vendor, "Advanced Micro Devices") || has(vendor, "AMD") || has(vendor, "ATI"))
        m = name ? occ_named(amd_generation(name) ? amd_generation(name) : "") : NULL;
    else if (has(vendor, "Intel") && name)
        m = intel_generation(name) ? occ_named(intel_generation(name)) : NULL;
    if (!m)
        return NULL;
    *out = *m;
    /* the width this device runs: RDNA's wave64 mode doubles a wave's
     * register step; an Intel kernel runs at its compiled SIMD width */
    unsigned w = m->cus_per_unit > 1 ? (pref_multiple == 8 || pref_multiple == 16 || pref_multiple == 32
                                        ? pref_multiple : m->warp)
                                     : dev_warp && !cc ? dev_warp : m->warp;
    if (w != m->warp) {
        out->reg_unit = m->reg_unit / m->warp * w;
        out->warp = w;
    }
    return out;
}

const struct occ_model *occ_nvidia(unsigned cc)
{
    for (size_t i = 0; i < sizeof nvidia / sizeof nvidia[0]; i++)
        if (nvidia[i].cc == cc)
            return &nvidia[i].m;
    return NULL;
}

struct occ_model occ_generic(unsigned warp, unsigned regs, unsigned local_mem)
{
    struct occ_model m = { "generic", warp ? warp : 1, 0, 0, regs, 1, 0, 1, local_mem, 1, 1, 0, 0, 1 };
    return m;
}

static unsigned round_up(unsigned v, unsigned unit)
{
    return unit > 1 ? (v + unit - 1) / unit * unit : v;
}

const char *occ_limit_name(enum occ_limit l)
{
    static const char *const names[] = { "resident warps", "resident work-groups", "registers",
                                         "local memory", "scalar registers", "nothing" };
    return names[l];
}

unsigned occ_max_work_items_by_regs(const struct occ_model *m, unsigned regs)
{
    if (!m->regs || !regs)
        return UINT_MAX;
    if (m->reg_per_warp) {
        unsigned per_warp = round_up(regs * m->warp, m->reg_unit);
        return m->regs / per_warp * m->warp;
    }
    return m->regs / regs;
}

int occ_compute(const struct occ_model *m, const struct occ_kernel *k, struct occ_result *r)
{
    unsigned warps_per_group = (k->wg_size + m->warp - 1) / m->warp;
    unsigned simds = m->simds > 1 ? m->simds : 1;
    r->by_warps = m->max_warps ? m->max_warps / warps_per_group : UINT_MAX;
    r->by_groups = m->max_groups ? m->max_groups : UINT_MAX;
    r->by_regs = r->by_sregs = UINT_MAX;
    if (m->regs && k->regs) {
        if (m->reg_per_warp) {
            /* per wavefront, on each SIMD's own share of the file (AMD: a
             * group's wavefronts spread over the CU's SIMDs) */
            unsigned per_warp = round_up(k->regs * m->warp, m->reg_unit);
            r->by_regs = simds * (m->regs / simds / per_warp) / warps_per_group;
        } else {
            /* per work-group (CC 1.x): warps rounded to the warp allocation
             * granularity, then to the register unit; a generic model with
             * both at 1 is plain work-items x registers */
            unsigned alloc_items = m->warp_alloc > 1 ? round_up(warps_per_group, m->warp_alloc) * m->warp : k->wg_size;
            r->by_regs = m->regs / round_up(k->regs * alloc_items, m->reg_unit);
        }
    }
    if (m->sregs && k->sregs)
        r->by_sregs = simds * (m->sregs / round_up(k->sregs, m->sreg_unit)) / warps_per_group;
    r->by_local = m->local_mem && k->local_bytes ? m->local_mem / round_up(k->local_bytes, m->local_unit)
                                                 : UINT_MAX;
    /* the smallest limit wins; ties name the first in this order */
    unsigned lim[5] = { r->by_warps, r->by_groups, r->by_regs, r->by_local, r->by_sregs };
    r->groups = UINT_MAX;
    r->limited_by = OCC_BY_NOTHING;
    for (int i = 0; i < 5; i++)
        if (lim[i] < r->groups) {
            r->groups = lim[i];
            r->limited_by = (enum occ_limit)i;
        }
    if (r->groups == UINT_MAX)
        r->groups = 1;      /* nothing limits: one group at least, occupancy unknown */
    r->warps = r->groups * warps_per_group;
    r->work_items = r->groups * k->wg_size;
    r->occupancy = m->max_warps ? (double)r->warps / m->max_warps : 0.0;
    return r->groups ? 0 : -1;
}
