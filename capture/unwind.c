/* A CPU sample's C frames on x86-64, read from the call frame information
 * the compiler leaves in every object (.eh_frame), found through the
 * object's index (.eh_frame_hdr) by glibc's _dl_find_object: lock-free and
 * safe in a signal handler. No lock, no system call, no allocation: where
 * libunwind, on each place it has not seen, blocks signals and walks every
 * loaded object (~7,000 instructions a place; a Python program's samples
 * stop at a new place of the interpreter's loop one time in three).
 *
 * Each place's rule (where its caller's frame, return address and frame
 * pointer are) is kept in the thread's sample buffer, so a place seen
 * before costs a lookup. Reads of the stack stay between the interrupted
 * stack pointer and the thread's stack top (what lies between is mapped).
 * A place this does not read (a DWARF expression, a signal frame, code
 * without an index, a stack not the thread's own) gives 0, and the handler
 * asks libunwind for the whole sample, as before. Like libunwind's own
 * cache, a rule is kept by address: code unloaded and other code loaded at
 * the same place within one thread's life could give that sample wrong
 * frames, never a read outside the stack. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "unwind.h"
#include "common/loaded.h"

extern void *__libc_stack_end;      /* ld.so's: the first thread's stack pointer at its start */

/* The first thread's top as glibc has it: the end of the page that holds
 * __libc_stack_end (every frame lies below that). Its bottom: the stack's
 * limit (1 GiB at most) below, a room the kernel keeps free of other
 * mappings (mmap_base). Used only while this frame lies in it: a fork
 * child of another thread runs on that thread's stack. */
int clt_stack_bounds(uint64_t *lo, uint64_t *hi)
{
    uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    if ((pid_t)syscall(SYS_gettid) == getpid()) {
        struct rlimit rl;
        uint64_t top = ((uint64_t)(uintptr_t)__libc_stack_end & ~(uint64_t)4095) + 4096;
        uint64_t most = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
                        rl.rlim_cur < (1ull << 30) ? (uint64_t)rl.rlim_cur : 1ull << 30;
        uint64_t bottom = top > most ? top - most : 0;
        if (here >= bottom && here < top) {
            *lo = bottom, *hi = top;
            return 0;
        }
    }
    pthread_attr_t attr;
    void *base;
    size_t size;
    int rc = -1;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &base, &size) == 0 && base && size) {
            *lo = (uint64_t)(uintptr_t)base, *hi = *lo + size;
            rc = 0;
        }
        pthread_attr_destroy(&attr);
    }
    return rc;
}

#if defined(__x86_64__) && defined(DLFO_STRUCT_HAS_EH_DBASE)

enum { REG_BP = 6, REG_SP = 7, REG_RA = 16 };
enum { RULE_SAME, RULE_AT, RULE_UNKNOWN };

struct row {                 /* one row of the frame's table: what this reads of it */
    int cfa_reg;             /* REG_SP or REG_BP; else not read */
    int64_t cfa_off;
    int bp_rule, ra_rule;
    int64_t bp_off, ra_off;  /* from the CFA, where RULE_AT */
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    int augmented;           /* 'z': an FDE's augmentation data comes first */
    const uint8_t *ops, *end;
};

static int (*find_object)(void *, struct dl_find_object *);

void clt_unwind_load(void)
{
    __atomic_store_n(&find_object, clt_loaded_find_object(), __ATOMIC_RELEASE);
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    while (*p < end && shift < 64) {
        b = *(*p)++;
        v |= (int64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= -((int64_t)1 << shift);
    return v;
}

/* A pointer in the encoding `enc` (DW_EH_PE_*): absolute or relative to its
 * own place (pcrel) or to `data` (datarel); 0 with *ok cleared for any
 * other (indirect, aligned, text- or function-relative). */
static uint64_t encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t data, int *ok)
{
    const uint8_t *at = *p;
    uint64_t v;
    size_t size;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: size = 8; break;
    case 0x02: case 0x0a: size = 2; break;
    case 0x03: case 0x0b: size = 4; break;
    case 0x01: v = uleb(p, end); size = 0; break;
    case 0x09: v = (uint64_t)sleb(p, end); size = 0; break;
    default: *ok = 0; return 0;
    }
    if (size) {
        if ((size_t)(end - at) < size) {
            *ok = 0;
            return 0;
        }
        uint64_t u = 0;
        memcpy(&u, at, size);
        if ((enc & 0x08) && size < 8 && (u >> (8 * size - 1)))   /* signed, negative */
            u |= ~(uint64_t)0 << (8 * size);
        v = u;
        *p += size;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += (uint64_t)(uintptr_t)at; break;
    case 0x30: v += data; break;
    default: *ok = 0;
    }
    if (enc & 0x80)
        *ok = 0;
    return v;
}

/* The CIE at c: its alignments, the FDEs' pointer encoding, its opening
 * instructions. 0: not one this reads (a signal frame's, another return
 * register, 64-bit lengths). */
static int read_cie(const uint8_t *c, struct cie *out)
{
    uint32_t len;
    memcpy(&len, c, 4);
    if (len == 0 || len == 0xffffffffu || c[4] || c[5] || c[6] || c[7])
        return 0;
    const uint8_t *end = c + 4 + len, *p = c + 8;
    uint8_t version = *p++;
    const char *aug = (const char *)p;
    size_t aug_n = strnlen(aug, 8);
    if (aug_n == 8 || (version != 1 && version != 3))
        return 0;
    p += aug_n + 1;
    out->code_align = uleb(&p, end);
    out->data_align = sleb(&p, end);
    uint64_t ra = version == 1 ? *p++ : uleb(&p, end);
    out->fde_enc = 0;
    out->augmented = aug[0] == 'z';
    const uint8_t *ops = p;
    if (aug[0] == 'z') {
        uint64_t n = uleb(&p, end);
        ops = p + n;
        int ok = 1;
        for (size_t i = 1; i < aug_n && ok; i++) {
            if (aug[i] == 'R')
                out->fde_enc = *p++;
            else if (aug[i] == 'L')
                p++;
            else if (aug[i] == 'P') {
                uint8_t enc = *p++;
                encoded(&p, end, enc & 0x0f, 0, &ok);   /* its size only */
            } else
                return 0;      /* 'S' (a signal frame) and anything else: libunwind's */
        }
        if (!ok || p > ops)
            return 0;
    } else if (aug_n) {
        return 0;
    }
    out->ops = ops;
    out->end = end;
    return ra == REG_RA && ops <= end;
}

static int set_rule(struct row *r, uint64_t reg, int rule, int64_t off)
{
    if (reg == REG_BP) {
        r->bp_rule = rule;
        r->bp_off = off;
    } else if (reg == REG_RA) {
        r->ra_rule = rule;
        r->ra_off = off;
    }
    return 1;
}

/* Runs the instructions p..end from `loc` on until the row that holds
 * `target`; 0 where one is not read here. `init`: the CIE's row, for
 * DW_CFA_restore. */
static int run_ops(const uint8_t *p, const uint8_t *end, const struct cie *c, uint64_t loc, uint64_t target,
                   struct row *r, const struct row *init)
{
    struct row saved[4];
    unsigned depth = 0;
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg, adv = 0;
        int64_t off;
        switch (op >> 6) {
        case 1: adv = op & 0x3f; goto advance;
        case 2: reg = op & 0x3f; set_rule(r, reg, RULE_AT, (int64_t)uleb(&p, end) * c->data_align); continue;
        case 3: reg = op & 0x3f; goto restore;
        }
        switch (op) {
        case 0x00: continue;
        case 0x02: adv = p < end ? *p : 0; p += 1; goto advance;
        case 0x03: adv = (uint64_t)p[0] | (uint64_t)p[1] << 8; p += 2; goto advance;
        case 0x04: adv = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
                   p += 4; goto advance;
        case 0x05: reg = uleb(&p, end); set_rule(r, reg, RULE_AT, (int64_t)uleb(&p, end) * c->data_align); continue;
        case 0x06: reg = uleb(&p, end); goto restore;
        case 0x07: set_rule(r, uleb(&p, end), RULE_UNKNOWN, 0); continue;
        case 0x08: set_rule(r, uleb(&p, end), RULE_SAME, 0); continue;
        case 0x09: reg = uleb(&p, end); uleb(&p, end); if (reg == REG_BP || reg == REG_RA) return 0; continue;
        case 0x0a: if (depth == 4) return 0; saved[depth++] = *r; continue;
        case 0x0b: if (!depth) return 0; *r = saved[--depth]; continue;
        case 0x0c: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = (int64_t)uleb(&p, end); continue;
        case 0x0d: r->cfa_reg = (int)uleb(&p, end); continue;
        case 0x0e: r->cfa_off = (int64_t)uleb(&p, end); continue;
        case 0x10: case 0x16:
            reg = uleb(&p, end);
            off = (int64_t)uleb(&p, end);
            if (reg == REG_BP || reg == REG_RA || off < 0 || off > end - p)
                return 0;
            p += off;
            continue;
        case 0x11: reg = uleb(&p, end); set_rule(r, reg, RULE_AT, sleb(&p, end) * c->data_align); continue;
        case 0x12: r->cfa_reg = (int)uleb(&p, end); r->cfa_off = sleb(&p, end) * c->data_align; continue;
        case 0x13: r->cfa_off = sleb(&p, end) * c->data_align; continue;
        case 0x14: case 0x15:
            reg = uleb(&p, end);
            if (op == 0x14) uleb(&p, end); else sleb(&p, end);
            if (reg == REG_BP || reg == REG_RA)
                return 0;
            continue;
        case 0x2e: uleb(&p, end); continue;
        case 0x2f: reg = uleb(&p, end); set_rule(r, reg, RULE_AT, -(int64_t)uleb(&p, end) * c->data_align); continue;
        default: return 0;     /* set_loc, a CFA by expression, a vendor's: libunwind's */
        }
    advance:
        loc += adv * c->code_align;
        if (loc > target)
            return 1;
        continue;
    restore:
        if (init && reg == REG_BP)
            set_rule(r, reg, init->bp_rule, init->bp_off);
        else if (init)
            set_rule(r, reg, init->ra_rule, init->ra_off);
        continue;
    }
    return 1;
}

/* The FDE for pc in the object's index: a binary search of its table (the
 * linkers write it sorted, as 4-byte offsets from the index: encoding 0x3b) */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
    if (hdr[0] != 1 || hdr[3] != 0x3b)
        return NULL;
    const uint8_t *p = hdr + 4, *end = hdr + 4 + 16;
    int ok = 1;
    encoded(&p, end, hdr[1], (uint64_t)(uintptr_t)hdr, &ok);
    uint64_t count = encoded(&p, end, hdr[2], (uint64_t)(uintptr_t)hdr, &ok);
    if (!ok || !count || count > (1u << 26))
        return NULL;
    const int32_t *table = (const int32_t *)p;
    uint64_t lo = 0, hi = count;
    int64_t rel = (int64_t)(pc - (uint64_t)(uintptr_t)hdr);
    if (rel < table[0])
        return NULL;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (table[2 * mid] <= rel)
            lo = mid;
        else
            hi = mid;
    }
    return hdr + table[2 * lo + 1];
}

/* The row of the frame at pc, as its FDE says; 0 where not read here. */
static int row_at(uint64_t pc, struct row *r)
{
    struct dl_find_object fo;
    int (*find)(void *, struct dl_find_object *) = __atomic_load_n(&find_object, __ATOMIC_ACQUIRE);
    if (!find || find((void *)(uintptr_t)pc, &fo) != 0 || !fo.dlfo_eh_frame)
        return 0;
    const uint8_t *fde = find_fde(fo.dlfo_eh_frame, pc);
    if (!fde)
        return 0;
    uint32_t len, cie_off;
    memcpy(&len, fde, 4);
    memcpy(&cie_off, fde + 4, 4);
    if (len == 0 || len == 0xffffffffu || cie_off == 0)
        return 0;
    struct cie c;
    if (!read_cie(fde + 4 - cie_off, &c))
        return 0;
    const uint8_t *p = fde + 8, *end = fde + 4 + len;
    int ok = 1;
    uint64_t begin = encoded(&p, end, c.fde_enc, 0, &ok);
    uint64_t range = encoded(&p, end, c.fde_enc & 0x0f, 0, &ok);
    if (!ok || pc < begin || pc - begin >= range)
        return 0;
    if (c.augmented)
        p += uleb(&p, end);
    *r = (struct row){ .cfa_reg = -1, .bp_rule = RULE_SAME, .ra_rule = RULE_UNKNOWN };
    if (!run_ops(c.ops, c.end, &c, begin, ~(uint64_t)0, r, NULL))
        return 0;
    struct row init = *r;
    return p <= end && run_ops(p, end, &c, begin, pc, r, &init);
}

/* The rule kept for pc, made where there is none; NULL: libunwind's. */
static const struct clt_unw_rule *rule_for(struct clt_unw_rule *rules, uint64_t pc)
{
    struct clt_unw_rule *e = &rules[(pc ^ pc >> 10) & (CLT_UNW_RULES - 1)];
    if (e->pc == pc && e->kind)
        return e;
    struct row r;
    if (!row_at(pc, &r))
        return NULL;
    struct clt_unw_rule made = { .pc = pc, .kind = CLT_UNW_END };
    if (r.ra_rule != RULE_UNKNOWN) {      /* the outermost frame's return address is undefined */
        if (r.ra_rule != RULE_AT || (r.cfa_reg != REG_SP && r.cfa_reg != REG_BP) || r.cfa_off <= 0 ||
            r.cfa_off > (1 << 30) || r.ra_off % 8 || r.ra_off < -1024 || r.ra_off >= 0 ||
            (r.bp_rule == RULE_AT && (r.bp_off % 8 || r.bp_off < -1024 || r.bp_off >= 0)))
            return NULL;
        made.kind = CLT_UNW_FRAME;
        made.cfa_bp = r.cfa_reg == REG_BP;
        made.cfa_off = (int32_t)r.cfa_off;
        made.ra_at = (int8_t)(r.ra_off / 8);
        made.bp_at = r.bp_rule == RULE_AT ? (int8_t)(r.bp_off / 8) : 0;
        made.bp_lost = r.bp_rule == RULE_UNKNOWN;
    }
    *e = made;
    return e;
}

/* From a place (pc, its stack and frame pointers); not a sanitizer's to
 * check: it reads other frames' slots of the stack */
__attribute__((no_sanitize_address)) static unsigned unwind_from(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *out,
                                                                 unsigned max, struct clt_unw_rule *rules,
                                                                 uint64_t stack_lo, uint64_t stack_hi)
{
    unsigned n = 0;
    if (sp < stack_lo || sp >= stack_hi || (sp & 7))
        return 0;
    /* the lowest a slot may be: the red zone below the interrupted stack
     * pointer, which the kernel kept (the signal's frame lies below it, on
     * this stack: the handler does not ask for another), where a function's
     * epilogue has popped what its rule still finds there */
    uint64_t lowest = sp - 128;
    for (int first = 1; n < max; first = 0) {
        const struct clt_unw_rule *r = rule_for(rules, first ? pc : pc - 1);
        if (!r)
            return 0;
        if (r->kind == CLT_UNW_END)
            return n ? n : CLT_UNW_NONE;
        uint64_t cfa = (r->cfa_bp ? bp : sp) + (uint64_t)(int64_t)r->cfa_off;
        uint64_t ra_at = cfa + (uint64_t)(int64_t)(8 * r->ra_at), bp_at = cfa + (uint64_t)(int64_t)(8 * r->bp_at);
        if (cfa <= sp || cfa > stack_hi || ra_at < lowest || ra_at + 8 > stack_hi ||
            (r->bp_at && (bp_at < lowest || bp_at + 8 > stack_hi)))
            return 0;         /* a frame pointer that is not one, or a stack not this thread's */
        pc = *(const uint64_t *)(uintptr_t)ra_at;
        if (r->bp_at)
            bp = *(const uint64_t *)(uintptr_t)bp_at;
        else if (r->bp_lost)
            bp = 0;
        sp = cfa;
        if (!pc)
            break;
        out[n++] = pc;
    }
    return n ? n : CLT_UNW_NONE;
}

int clt_unwind_ready(void)
{
    return __atomic_load_n(&find_object, __ATOMIC_ACQUIRE) != NULL;
}

unsigned clt_unwind(const ucontext_t *uc, uint64_t *out, unsigned max, struct clt_unw_rule *rules,
                    uint64_t stack_lo, uint64_t stack_hi)
{
    return unwind_from((uint64_t)uc->uc_mcontext.gregs[REG_RIP], (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
                       (uint64_t)uc->uc_mcontext.gregs[REG_RBP], out, max, rules, stack_lo, stack_hi);
}

/* Its caller's place just after the call: the return address, the stack
 * pointer there, the frame pointer (which a callee keeps). */
__attribute__((visibility("hidden"))) void clt_unw_place(uint64_t place[3]);
__asm__(".text\n"
        ".type clt_unw_place, @function\n"
        "clt_unw_place:\n"
        "    .cfi_startproc\n"
        "    mov (%rsp), %rax\n"
        "    mov %rax, (%rdi)\n"
        "    lea 8(%rsp), %rax\n"
        "    mov %rax, 8(%rdi)\n"
        "    mov %rbp, 16(%rdi)\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size clt_unw_place, .-clt_unw_place\n");

__attribute__((noinline)) unsigned clt_unwind_here(uint64_t *out, unsigned max, struct clt_unw_rule *rules,
                                                   uint64_t stack_lo, uint64_t stack_hi)
{
    uint64_t place[3];
    clt_unw_place(place);
    return unwind_from(place[0], place[1], place[2], out, max, rules, stack_lo, stack_hi);
}

#else   /* another architecture, or a C library without _dl_find_object: libunwind's */

void clt_unwind_load(void)
{
}

int clt_unwind_ready(void)
{
    return 0;
}

unsigned clt_unwind(const ucontext_t *uc, uint64_t *out, unsigned max, struct clt_unw_rule *rules,
                    uint64_t stack_lo, uint64_t stack_hi)
{
    (void)uc, (void)out, (void)max, (void)rules, (void)stack_lo, (void)stack_hi;
    return 0;
}

unsigned clt_unwind_here(uint64_t *out, unsigned max, struct clt_unw_rule *rules, uint64_t stack_lo,
                         uint64_t stack_hi)
{
    (void)out, (void)max, (void)rules, (void)stack_lo, (void)stack_hi;
    return 0;
}
#endif
