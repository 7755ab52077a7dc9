/* Theoretical occupancy of a compute unit: how many work-groups of a kernel
 * fit at once, given its work-group size, registers per work-item and local
 * memory per group, and what limits it. Vendor models are data (occupancy.c);
 * the worked examples of the optimisation guides are its unit tests. */
#ifndef CLT_OCCUPANCY_H
#define CLT_OCCUPANCY_H

struct occ_model {             /* per compute unit (SM / CU) */
    const char *name;
    unsigned warp;             /* work-items per warp / wavefront */
    unsigned max_warps;        /* resident warps; 0: no limit */
    unsigned max_groups;       /* resident work-groups; 0: no limit */
    unsigned regs;             /* 32-bit registers; 0: not a limit (unknown) */
    unsigned reg_unit;         /* allocation unit, in registers */
    int reg_per_warp;          /* 1: registers allocated per warp, 0: per work-group */
    unsigned warp_alloc;       /* per-group allocation counts warps in multiples of this */
    unsigned local_mem;        /* bytes of local memory; 0: not a limit */
    unsigned local_unit;       /* allocation unit, bytes */
    /* AMD and Intel (0 elsewhere) */
    unsigned simds;            /* registers and resident wavefronts are split over this many SIMDs
                                * (a group's wavefronts spread over them); 0 or 1: one pool */
    unsigned sregs;            /* scalar registers per SIMD; 0: not a limit */
    unsigned sreg_unit;        /* their allocation unit, per wavefront */
    unsigned cus_per_unit;     /* compute units the driver counts per unit modelled here (Intel
                                * counts EUs; a group runs on one subslice); 0 or 1: the same */
};

struct occ_kernel {
    unsigned wg_size;          /* work-items per work-group */
    unsigned regs;             /* registers per work-item; 0: unknown */
    unsigned local_bytes;      /* local memory per work-group (static + __local arguments) */
    unsigned sregs;            /* scalar registers per wavefront (AMD); 0: unknown */
};

enum occ_limit { OCC_BY_WARPS, OCC_BY_GROUPS, OCC_BY_REGS, OCC_BY_LOCAL, OCC_BY_SREGS, OCC_BY_NOTHING };

struct occ_result {
    unsigned groups;           /* resident work-groups per compute unit */
    unsigned warps;            /* resident warps */
    unsigned work_items;       /* resident work-items */
    double occupancy;          /* warps / max_warps (0..1); 0 when max_warps is 0 */
    unsigned by_warps, by_groups, by_regs, by_local, by_sregs;   /* each limit alone (UINT_MAX: none) */
    enum occ_limit limited_by;
};

/* 0 ok; -1 when the kernel cannot run at all (a group needs more than a CU has). */
int occ_compute(const struct occ_model *m, const struct occ_kernel *k, struct occ_result *r);
/* The most work-items a compute unit can hold at `regs` registers each. */
unsigned occ_max_work_items_by_regs(const struct occ_model *m, unsigned regs);
const char *occ_limit_name(enum occ_limit l);

/* NVIDIA by compute capability (major*10 + minor); NULL if unknown. */
const struct occ_model *occ_nvidia(unsigned cc);
/* A device that names only its register file (the AMD course's example). */
struct occ_model occ_generic(unsigned warp, unsigned regs, unsigned local_mem);
/* AMD by generation: "r700", "evergreen", "gcn1", "gcn3", "cdna1", "cdna2",
 * "rdna1", "rdna3"; Intel: "gen9", "gen11", "xe-lp", "xe-hpg", "xe-hpc". NULL if unknown. */
const struct occ_model *occ_named(const char *generation);
/* The model for a device from what the trace says of it (vendor, name,
 * NVIDIA compute capability, wavefront width), into *out; the kernel's
 * preferred work-group multiple is Intel's SIMD width. NULL: no model
 * for this device (the report says so). */
const struct occ_model *occ_for_device(const char *vendor, const char *name, unsigned cc, unsigned dev_warp,
                                       unsigned pref_multiple, struct occ_model *out);

#endif
