/* A kernel's facts on the writer thread: its work-group facts per device,
 * and, for a kernel made by clCreateKernelsInProgram or clCloneKernel (no
 * name in its call), its name and program, as capture/hooks.c asked them
 * when it was made (CLT_REC_KERNEL, at its first launch on a queue);
 * NVIDIA's register counts (CLT_REC_KREGS). The model is device.c's. */
#include <stdint.h>
#include "common/bytes.h"
#include "device_model.h"
#include "emit.h"
#include "trace/ring.h"

void clt_dm_kernel_record(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_kern *k = clt_dm_kern_get(w, clt_dm_id_of(w, rec->arg[KI_KERNEL]), 1);
    if (k && !k->name[0] && rec->arg[KI_NAME]) {
        clt_dm_copy_str(k->name, rec, KI_NAME);
        k->program = clt_dm_id_of(w, rec->arg[KI_PROGRAM]);
        k->regs = clt_dm_kern_regs(w->dev, k);
    }
    if (k && k->n_wg < 4) {
        struct clt_kernel_wg *g = &k->wg[k->n_wg++];
        g->dev = rec->arg[KI_DEVICE];
        g->wg_size = rec->arg[KI_WG_SIZE];
        g->pref_multiple = rec->arg[KI_PREF_MULTIPLE];
        g->local_mem = rec->arg[KI_LOCAL_MEM];
        g->private_mem = rec->arg[KI_PRIVATE_MEM];
    }
}

/* NVIDIA register counts (capture/nvbuild.c), from cltrace-nvregs beside the app:
 * a program's are coming (its kernels' commands are held for them, as a
 * command whose enqueue is not drained yet), a kernel's count (kernels
 * made already get it), all in: 1 (what was held may be drawn now). */
int clt_dm_kregs_record(struct clt_writer *w, const struct clt_rec *rec)
{
    struct clt_devmodel *m = w->dev;
    uint64_t program = clt_dm_id_of(w, rec->arg[KR_PROGRAM]);
    uint32_t regs = (uint32_t)rec->arg[KR_REGS];
    if (regs == CLT_KREGS_DONE) {
        for (unsigned i = 0; i < m->n_regs; i++)
            if (m->regs[i].program == program && m->regs[i].regs == CLT_KREGS_COMING)
                m->regs[i].regs = CLT_KREGS_DONE;
    } else if (clt_grow(&m->regs, m->n_regs, &m->cap_regs, sizeof *m->regs, 32) == 0) {
        m->regs[m->n_regs] = (struct clt_regs){ program, regs, "" };
        clt_dm_copy_str(m->regs[m->n_regs].name, rec, KR_NAME);
        m->n_regs++;
    }
    for (uint64_t i = 0; i < m->kernels.cap; i++) {
        struct clt_kern *k = m->kernels.keys[i] ? m->kernels.vals[i] : NULL;
        if (k && k->program == program)
            k->regs = clt_dm_kern_regs(m, k);
    }
    return regs == CLT_KREGS_DONE;
}
