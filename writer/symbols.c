/* Call stacks on the writer thread: return addresses captured by the app's
 * thread become Perfetto interned frames (function, file:line, binary),
 * each symbolized once per process and sent once per sequence.
 *
 * Names come from libdw (elfutils; .symtab for static functions, DWARF line
 * tables for file:line where the binary has debug info), else from dladdr
 * (exported symbols only). libdw is dlopen'ed RTLD_LOCAL for the same reason
 * as libunwind: its libelf must not stand in for one the app links. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "emit.h"
#include "symbols.h"
#include "symtab.h"
#include "trace/record.h"
#include "common/loaded.h"

#define DW(X) X(dwfl_begin) X(dwfl_end) X(dwfl_linux_proc_report) X(dwfl_report_begin) \
    X(dwfl_report_end) X(dwfl_report_begin_add) X(dwfl_addrmodule) X(dwfl_module_addrname) X(dwfl_module_getsrc) \
    X(dwfl_lineinfo) X(dwfl_module_info) X(dwfl_linux_proc_find_elf) X(dwfl_standard_find_debuginfo) \
    X(dwfl_module_addrdie) X(dwarf_getscopes) X(dwarf_tag) X(dwarf_attr_integrate) X(dwarf_formstring) \
    X(dwarf_formudata) X(dwarf_getsrcfiles) X(dwarf_filesrc) X(dwarf_getscopes_die) X(dwfl_module_build_id) \
    X(dwfl_module_getsymtab) X(dwfl_module_getsym_info) X(elf_nextscn) X(elf_getscn) X(gelf_getshdr) X(elf_getdata)
static struct {
#define DW_PTR(f) __typeof__(f) *f;
    DW(DW_PTR)
} dw;
static Dwfl_Callbacks dw_callbacks;

/* Separate debug info only from files on this machine. libdw's standard
 * lookup ends, when nothing local matches, in a debuginfod query over the
 * network (Ubuntu sets DEBUGINFOD_URLS for every login): a tracer must not
 * wait on a network, nor stall the writer while the app's threads fill
 * their rings (seen: 10 ms of waits in a GPU launch loop). */
static int exists(const char *path) { return access(path, R_OK) == 0; }

/* A library the system installed (its debug info, if any, is the distro's). */
static int is_system_path(const char *path)
{
    return path && (!strncmp(path, "/lib/", 5) || !strncmp(path, "/lib64/", 7) || !strncmp(path, "/usr/lib/", 9) ||
                    !strncmp(path, "/usr/lib64/", 11));
}

static int find_debuginfo_local(Dwfl_Module *mod, void **user, const char *modname, Dwarf_Addr base,
                                const char *file_name, const char *debuglink, GElf_Word crc, char **debuginfo)
{
    char path[4096];
    const unsigned char *id;
    GElf_Addr at;
    if (is_system_path(file_name))
        return -1;              /* names from its own symbol table (frames_of_slow) */
    int n = dw.dwfl_module_build_id(mod, &id, &at), local = 0;
    if (n > 1) {
        int k = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", id[0]);
        for (int i = 1; i < n && k < (int)sizeof path - 8; i++)
            k += snprintf(path + k, sizeof path - (size_t)k, "%02x", id[i]);
        snprintf(path + k, sizeof path - (size_t)k, ".debug");
        local = exists(path);
    }
    if (!local && debuglink && file_name) {
        const char *slash = strrchr(file_name, '/');
        int dir = slash ? (int)(slash - file_name) : 0;
        snprintf(path, sizeof path, "%.*s/%s", dir, file_name, debuglink);
        local = exists(path);
        snprintf(path, sizeof path, "%.*s/.debug/%s", dir, file_name, debuglink);
        local = local || exists(path);
        snprintf(path, sizeof path, "/usr/lib/debug%.*s/%s", dir, file_name, debuglink);
        local = local || exists(path);
    }
    if (!local)
        return -1;
    return dw.dwfl_standard_find_debuginfo(mod, user, modname, base, file_name, debuglink, crc, debuginfo);
}

/* libdw, loaded privately the first time it is needed, on the writer's
 * thread (the first frame it names) or at exit: loading it (and libelf,
 * libz, liblzma, libbz2, libzstd) in clt_sym_init cost ~0.25 ms of the
 * app's first OpenCL call. Never from a signal handler: a crash has the
 * writer thread flush (capture/life.c). */
static void dw_load(void)
{
    static int tried;
    if (tried)
        return;
    tried = 1;
    __typeof__(dw) got = { 0 };
    int raised = clt_own_raise();      /* the dynamic linker's lock, which the app's dlsym waits for */
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    int ok = h != NULL;
#define DW_SYM(f) if (ok && !(got.f = (__typeof__(f) *)dlsym(h, #f))) ok = 0;
    DW(DW_SYM)
    clt_own_lower(raised);
    if (!ok)
        return;
    dw_callbacks.find_elf = got.dwfl_linux_proc_find_elf;
    dw_callbacks.find_debuginfo = find_debuginfo_local;
    /* published whole, the entry point last: a fork child taken halfway
     * (tried set, dwfl_begin not) goes on without libdw, never with half */
    __typeof__(dw.dwfl_begin) begin = got.dwfl_begin;
    got.dwfl_begin = NULL;
    dw = got;
    __atomic_store_n(&dw.dwfl_begin, begin, __ATOMIC_RELEASE);
}

/* libdw loaded (tried once) and whole. */
static int dw_ready(void)
{
    dw_load();
    return dw.dwfl_begin != NULL;
}

static Dwfl *dwfl_open(void)
{
    if (!dw_ready())
        return NULL;
    Dwfl *d = dw.dwfl_begin(&dw_callbacks);
    if (!d)
        return NULL;
    dw.dwfl_report_begin(d);
    if (dw.dwfl_linux_proc_report(d, getpid()) != 0 || dw.dwfl_report_end(d, NULL, NULL) != 0) {
        dw.dwfl_end(d);
        return NULL;
    }
    return d;
}

int clt_sym_init(struct clt_symbols *s)
{
    memset(s, 0, sizeof *s);
    Dl_info self;
    if (dladdr((void *)&clt_sym_init, &self))
        s->self_base = (uint64_t)(uintptr_t)self.dli_fbase;
    return 0;
}

const char *clt_sym_source(const struct clt_symbols *s)
{
    (void)s;
    return dw_ready() ? "libdw" : "dladdr";
}

void clt_sym_free(struct clt_symbols *s)
{
    if (s->dwfl)
        dw.dwfl_end(s->dwfl);
    clt_symtabs_free(&s->symtabs);
    for (unsigned i = 0; i < s->n_str; i++)
        free(s->strs[i]);
    void *owned[] = { s->strs, s->frames, s->maps, s->stacks, s->stack_frames };
    for (unsigned i = 0; i < sizeof owned / sizeof owned[0]; i++)
        free(owned[i]);
    struct clt_map *maps[] = { &s->pc_frame, &s->str_idx, &s->stack_idx, &s->base_map, &s->py_code, &s->py_frame,
                               &s->py_line };
    for (unsigned i = 0; i < sizeof maps / sizeof maps[0]; i++)
        clt_map_free(maps[i]);
    memset(s, 0, sizeof *s);
}

/* String table: index + 1, 0 when out of memory. */
static uint32_t str_intern(struct clt_symbols *s, const char *str)
{
    uint64_t h = clt_hash_bytes(str, strlen(str));
    uint32_t i = (uint32_t)(uintptr_t)clt_map_get(&s->str_idx, h);
    if (i && strcmp(s->strs[i - 1], str) == 0)
        return i;
    if (clt_grow(&s->strs, s->n_str, &s->cap_str, sizeof *s->strs, 64) != 0)
        return 0;
    char *c = strdup(str);
    if (!c)
        return 0;
    s->strs[s->n_str++] = c;
    if (!i)      /* a hash collision keeps the first string in the map; the second is just stored */
        clt_map_put(&s->str_idx, h, (void *)(uintptr_t)s->n_str);
    return s->n_str;
}

static uint32_t mapping_of(struct clt_symbols *s, uint64_t base, const char *path, Dwfl_Module *mod)
{
    uint32_t m = (uint32_t)(uintptr_t)clt_map_get(&s->base_map, base);
    if (m || !base)
        return m;
    if (clt_grow(&s->maps, s->n_map, &s->cap_map, sizeof *s->maps, 16) != 0)
        return 0;
    struct clt_sym_mapping *mp = &s->maps[s->n_map];
    memset(mp, 0, sizeof *mp);
    mp->start = base;
    Dwarf_Addr lo = 0, hi = 0;
    if (mod && dw.dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) && hi > base)
        mp->end = hi;
    /* Every mapping whole (start <= end): one without an end (cltrace's own, no
     * libdw) made trace_processor abort the import. The loaded segments', else a page. */
    uint64_t olo, ohi;
    if (!mp->end)
        mp->end = clt_loaded_range(base, &olo, &ohi) && ohi > base ? ohi : base + 4096;
    char exe[512];
    if (!path || !path[0]) {      /* the main program: dladdr gives no name */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe[0] ? exe : "app";
    }
    mp->path = str_intern(s, clt_utf8_text(path) ? path : "(a path not UTF-8)");   /* a proto string must be */
    s->n_map++;
    clt_map_put(&s->base_map, base, (void *)(uintptr_t)s->n_map);
    return s->n_map;
}

static struct clt_sym_frame *frame_new(struct clt_symbols *s)
{
    if (clt_grow(&s->frames, s->n_frame, &s->cap_frame, sizeof *s->frames, 64) != 0)
        return NULL;
    struct clt_sym_frame *fr = &s->frames[s->n_frame++];
    memset(fr, 0, sizeof *fr);
    return fr;
}

static const char *die_name(Dwarf_Die *d)
{
    Dwarf_Attribute a;
    return dw.dwarf_attr_integrate(d, DW_AT_name, &a) ? dw.dwarf_formstring(&a) : NULL;
}

/* Code inlined at this address: the chain of inlined calls, innermost first,
 * each with the place it was called from (one more frame each). Returns how
 * many frames it added after `fr` (the innermost, already filled). */
static unsigned inline_frames(struct clt_symbols *s, Dwfl_Module *mod, uint64_t at, uint32_t first)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dw.dwfl_module_addrdie(mod, at, &bias);
    Dwarf_Die *found = NULL, *scopes = NULL;
    int nf = cu ? dw.dwarf_getscopes(cu, at - bias, &found) : 0, n = 0;
    /* dwarf_getscopes continues into the inlined function's abstract
     * definition; the concrete chain (instance, the functions it was inlined
     * into, up to the real one) is the parents of the innermost instance. */
    for (int i = 0; i < nf; i++)
        if (dw.dwarf_tag(&found[i]) == DW_TAG_inlined_subroutine) {
            n = dw.dwarf_getscopes_die(&found[i], &scopes);
            break;
        }
    free(found);
    unsigned added = 0;
    Dwarf_Files *files = NULL;
    size_t n_files = 0;
    if (n > 0 && dw.dwarf_getsrcfiles(cu, &files, &n_files) != 0)
        files = NULL;
    for (int i = 0; i < n && added < 8; i++) {
        if (dw.dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        /* scopes[i] was inlined into the next enclosing function scope */
        const char *callee = die_name(&scopes[i]);
        Dwarf_Attribute a;
        Dwarf_Word file = 0, line = 0;
        if (dw.dwarf_attr_integrate(&scopes[i], DW_AT_call_file, &a))
            dw.dwarf_formudata(&a, &file);
        if (dw.dwarf_attr_integrate(&scopes[i], DW_AT_call_line, &a))
            dw.dwarf_formudata(&a, &line);
        const char *caller = NULL;
        for (int j = i + 1; j < n && !caller; j++)
            if (dw.dwarf_tag(&scopes[j]) == DW_TAG_inlined_subroutine || dw.dwarf_tag(&scopes[j]) == DW_TAG_subprogram)
                caller = die_name(&scopes[j]);
        struct clt_sym_frame *fr = frame_new(s);
        if (!fr)
            break;
        struct clt_sym_frame *inner = &s->frames[first + added];   /* (frame_new may move the array) */
        *fr = *inner;
        if (callee)          /* the inner frame is the inlined function itself */
            inner->fn = str_intern(s, callee);
        fr->fn = caller ? str_intern(s, caller) : inner->fn;
        const char *src = files && file < n_files ? dw.dwarf_filesrc(files, file, NULL, NULL) : NULL;
        fr->file = src ? str_intern(s, src) : 0;
        fr->line = (uint32_t)line;
        added++;
    }
    free(scopes);
    return added;
}

/* The frames of a return address, symbolized on first sight: index + 1 of
 * the innermost and, above bit 32, how many (inlined calls add frames). */
int clt_symbolizer_busy;

static uint64_t frames_of_slow(struct clt_symbols *s, uint64_t pc);

static uint64_t frames_of(struct clt_symbols *s, uint64_t pc)
{
    uint64_t cached = (uint64_t)(uintptr_t)clt_map_get(&s->pc_frame, pc);
    if (cached)
        return cached;
    /* The first address in a binary loads its symbols and line tables (tens
     * of ms): calling threads wait for that instead of dropping calls. */
    __atomic_store_n(&clt_symbolizer_busy, 1, __ATOMIC_RELAXED);
    uint64_t v = frames_of_slow(s, pc);
    __atomic_store_n(&clt_symbolizer_busy, 0, __ATOMIC_RELAXED);
    return v;
}

/* The module that holds `at` in the process's debug info, reported again
 * where it was loaded since (NULL: no libdw, or none holds it). */
static Dwfl_Module *module_of(struct clt_symbols *s, uint64_t at)
{
    if (!dw_ready())      /* loaded on the first frame named */
        return NULL;
    int ours = s->dwfl && s->dwfl_pid == getpid();
    Dwfl_Module *mod = ours ? dw.dwfl_addrmodule(s->dwfl, at) : NULL;
    /* Loaded since (PoCL's kernel, a plugin): the new modules added, the others kept with their
     * symbol tables; only after the dynamic linker loaded or unloaded one (an address in none, a
     * JIT's, read PoCL's 1,100 mappings again each time: 1.4 M instructions, tests/unit) */
    uint64_t gen = mod ? 0 : clt_loaded_generation();
    if (!mod && ours && gen != s->dwfl_gen) {
        dw.dwfl_report_begin_add(s->dwfl), s->dwfl_reports++, s->dwfl_gen = gen;
        if (dw.dwfl_linux_proc_report(s->dwfl, s->dwfl_pid) == 0 && dw.dwfl_report_end(s->dwfl, NULL, NULL) == 0)
            mod = dw.dwfl_addrmodule(s->dwfl, at);
        else
            ours = 0;             /* half reported: begin again */
    }
    if (!mod && !ours) {  /* the first frame, or a fork child's: report the process */
        if (s->dwfl)
            dw.dwfl_end(s->dwfl);
        clt_symtabs_free(&s->symtabs);        /* their names were the modules' */
        s->dwfl = dwfl_open();
        s->dwfl_pid = getpid(), s->dwfl_reports++, s->dwfl_gen = gen;
        mod = s->dwfl ? dw.dwfl_addrmodule(s->dwfl, at) : NULL;
    }
    return mod;
}

/* A symbol's name: a large module's sorted table first (symtab.c), libdw's
 * walk of every symbol where it does not say. */
static const char *symbol_at(struct clt_symbols *s, Dwfl_Module *mod, uint64_t at)
{
    struct clt_symtab_fns fns = { dw.dwfl_module_getsymtab, dw.dwfl_module_getsym_info, dw.elf_nextscn, dw.elf_getscn,
                                  dw.gelf_getshdr, dw.elf_getdata, dw.dwfl_module_build_id, 1 };
    const char *name;
    return clt_symtab_lookup(clt_symtab_of(&s->symtabs, mod, &fns), at, &name) ? name
                                                                                : dw.dwfl_module_addrname(mod, at);
}

/* The object that holds `at`: where it is mapped and its file (the main
 * program's: the command, as dladdr says). From the dynamic linker's list,
 * the name copied under its lock: a pointer into the object's link map
 * (glibc's _dl_find_object, dladdr) dangled when the app unloaded it while
 * the writer read symbols (a rank's trace held "\x83\x99\x02\x99NV" as a
 * path); dladdr also walks every exported symbol for a name (13 ms of the
 * writer's time for a program on PoCL: clang's library has 30,000). */
static void object_of(uint64_t at, Dl_info *di, char *name, size_t cap)
{
    uint64_t start;
    memset(di, 0, sizeof *di);
    if (!clt_loaded_object(at, &start, name, cap))
        return;
    di->dli_fbase = (void *)(uintptr_t)start;
    di->dli_fname = name[0] ? name : program_invocation_name;
}

static uint64_t frames_of_slow(struct clt_symbols *s, uint64_t pc)
{
    uint64_t at = pc - 1;         /* a return address: the call is the instruction before */
    Dl_info di;
    char path[PATH_MAX];
    object_of(at, &di, path, sizeof path);
    uint64_t base = (uint64_t)(uintptr_t)di.dli_fbase;
    uint32_t first = s->n_frame;
    struct clt_sym_frame *fr = frame_new(s);
    if (!fr)
        return 0;
    fr->pc = pc;
    const char *slash = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
    const char *file = slash ? slash + 1 : di.dli_fname ? di.dli_fname : "";
    int self = base && base == s->self_base;       /* the shim's own library */
    fr->ours = self || strncmp(file, "libOpenCL.so", 12) == 0;

    /* A system library (the C library, a GPU driver) gets its symbol
     * table's names, not its debug info: reading libc's separate DWARF took
     * 43 ms, our own wrappers' inline scopes 4 ms an address, stalling the
     * writer while a launch loop filled its ring. The program's own code
     * gets everything. cltrace's own frames: a call's stack cuts them, a CPU
     * sample keeps them, named from the shim's symbol table (its hidden
     * functions: "libcltrace.so+0x73d45" in a flame graph said nothing), no
     * lines; the loader's get what it exports. */
    int system = is_system_path(di.dli_fname) || fr->ours;
    Dwfl_Module *mod = fr->ours && !self ? NULL : module_of(s, at);
    const char *fn = mod ? symbol_at(s, mod, at) : NULL;
    char name[300];
    Dl_info exported;
    /* without libdw: an exported symbol's name (with it, libdw has said: dladdr
     * would only walk the same exported symbols again, 40 % of the writer's
     * time for a program's CPU samples on PoCL) */
    if (!fn && !mod) {       /* dladdr holds the dynamic linker's lock, which the app's dlsym waits for */
        int raised = clt_own_raise();
        fn = dladdr((void *)(uintptr_t)at, &exported) ? exported.dli_sname : NULL;
        clt_own_lower(raised);
    }
    fn = clt_symtab_readable(fn, file, base, pc, name, sizeof name);
    char *readable = clt_symtab_demangle(fn);
    uint32_t fn_str = str_intern(s, readable ? readable : fn), file_str = 0, line_no = 0, map = 0;
    free(readable);
    Dwfl_Line *line = mod && !system ? dw.dwfl_module_getsrc(mod, at) : NULL;
    int lineno = 0;
    const char *src = line ? dw.dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src && src[0]) {
        file_str = str_intern(s, src);
        line_no = lineno > 0 ? (uint32_t)lineno : 0;
    }
    if (base)
        map = mapping_of(s, base, di.dli_fname, mod);
    fr = &s->frames[first];       /* (the tables may have moved it) */
    fr->fn = fn_str;
    fr->file = file_str;
    fr->line = line_no;
    fr->map = map;
    fr->rel_pc = base ? pc - base : 0;
    unsigned n = 1 + (mod && !system ? inline_frames(s, mod, at, first) : 0);
    uint64_t v = (uint64_t)n << 32 | (first + 1);
    clt_map_put(&s->pc_frame, pc, (void *)(uintptr_t)v);
    return v;
}

/* A Python frame of a stack block (trace/record.h CLT_PY_TAG): its code
 * object's names, as this record brings them or as kept from an earlier one,
 * and its line. Returns the frame's index + 1 and steps *w past it. */
static uint32_t py_frame(struct clt_symbols *s, const uint64_t **w, const uint64_t *end)
{
    const uint64_t *p = *w;
    uint64_t code = p[0] & CLT_PY_CODE_MASK, names = p[0] & CLT_PY_NAMES;
    uint32_t line = (uint32_t)p[1];
    size_t fl = names ? (p[1] >> 32) & 0xffff : 0, nl = names ? p[1] >> 48 : 0;
    *w = p + 2 + (fl + nl + 7) / 8;
    if (*w > end)
        return 0;
    uint64_t kept = (uint64_t)(uintptr_t)clt_map_get(&s->py_code, code);
    if (names) {
        char file[CLT_PY_FILE_MAX + 1], fn[CLT_PY_NAME_MAX + 1];
        memcpy(file, p + 2, fl < CLT_PY_FILE_MAX ? fl : CLT_PY_FILE_MAX);
        file[fl < CLT_PY_FILE_MAX ? fl : CLT_PY_FILE_MAX] = 0;
        memcpy(fn, (const char *)(p + 2) + fl, nl < CLT_PY_NAME_MAX ? nl : CLT_PY_NAME_MAX);
        fn[nl < CLT_PY_NAME_MAX ? nl : CLT_PY_NAME_MAX] = 0;
        kept = (uint64_t)str_intern(s, fn) << 32 | str_intern(s, file);
        clt_map_put(&s->py_code, code, (void *)(uintptr_t)kept);
    }
    if (!kept)     /* names never seen (a record lost): the code object's address */
        kept = (uint64_t)str_intern(s, "<python code>") << 32;
    if (line & CLT_PY_AT)       /* a sample's: the instruction's offset */
        line = clt_py_sample_line(&s->py_line, code, kept, line & ~CLT_PY_AT);
    uint32_t fn_str = (uint32_t)(kept >> 32), file_str = (uint32_t)kept;
    uint64_t key = clt_hash_bytes((uint32_t[]){ fn_str, file_str, line }, 12) | 1;
    uint32_t f = (uint32_t)(uintptr_t)clt_map_get(&s->py_frame, key);
    if (f && s->frames[f - 1].fn == fn_str && s->frames[f - 1].file == file_str && s->frames[f - 1].line == line)
        return f;
    struct clt_sym_frame *fr = frame_new(s);
    if (!fr)
        return 0;
    fr->fn = fn_str;
    fr->file = file_str;
    fr->line = line;
    if (!f)
        clt_map_put(&s->py_frame, key, (void *)(uintptr_t)s->n_frame);
    return s->n_frame;
}

static uint32_t stack_of(struct clt_symbols *s, const uint64_t *pcs, unsigned n, int leading);

uint32_t clt_sym_stack(struct clt_symbols *s, const uint64_t *pcs, unsigned n)
{
    return stack_of(s, pcs, n, 1);
}

uint32_t clt_sym_stack_sampled(struct clt_symbols *s, const uint64_t *pcs, unsigned n)
{
    return stack_of(s, pcs, n, 0);
}

/* leading: cltrace's own first frames cut (a call's); a sample keeps them */
static uint32_t stack_of(struct clt_symbols *s, const uint64_t *pcs, unsigned n, int leading)
{
    uint32_t ids[CLT_SYM_MAX_DEPTH];
    unsigned k = 0;
    const uint64_t *w = pcs, *end = pcs + n;
    while (w < end && k < CLT_SYM_MAX_DEPTH) {
        if (*w & CLT_PY_TAG) {
            if (w + 2 > end)
                break;
            uint32_t f = py_frame(s, &w, end);
            if (f)
                ids[k++] = f;
            leading = 0;
            continue;
        }
        uint64_t v = frames_of(s, *w++);
        uint32_t f = (uint32_t)v, count = (uint32_t)(v >> 32);
        if (!f)
            continue;
        if (leading && s->frames[f - 1].ours)
            continue;     /* cltrace's wrapper and the ICD loader: not the app's code */
        leading = 0;
        for (uint32_t c = 0; c < count && k < CLT_SYM_MAX_DEPTH; c++)
            ids[k++] = f + c;
    }
    if (!k)
        return 0;
    for (unsigned i = 0; i < k / 2; i++) {     /* outermost caller first */
        uint32_t t = ids[i];
        ids[i] = ids[k - 1 - i];
        ids[k - 1 - i] = t;
    }
    uint64_t h = clt_hash_bytes(ids, k * sizeof ids[0]);
    uint32_t st = (uint32_t)(uintptr_t)clt_map_get(&s->stack_idx, h);
    if (st && s->stacks[st - 1].n == k && memcmp(&s->stack_frames[s->stacks[st - 1].off], ids, k * 4) == 0)
        return st;
    if (clt_grow(&s->stacks, s->n_stack, &s->cap_stack, sizeof *s->stacks, 64) != 0)
        return 0;
    while (s->n_sf + k > s->cap_sf)
        if (clt_grow(&s->stack_frames, s->cap_sf, &s->cap_sf, sizeof *s->stack_frames, 1024) != 0)
            return 0;
    memcpy(&s->stack_frames[s->n_sf], ids, k * 4);
    s->stacks[s->n_stack].n = k;
    s->stacks[s->n_stack].off = s->n_sf;
    s->n_sf += k;
    s->n_stack++;
    if (!st)
        clt_map_put(&s->stack_idx, h, (void *)(uintptr_t)s->n_stack);
    return s->n_stack;
}

/* ---- per sequence --------------------------------------------------------- */

static int mark(struct clt_bits *b, uint32_t i)
{
    if (i >= b->cap) {
        unsigned ncap = b->cap ? b->cap : 256;
        while (ncap <= i)
            ncap *= 2;
        uint8_t *g = realloc(b->b, ncap);
        if (!g)
            return 1;     /* send again rather than never */
        memset(g + b->cap, 0, ncap - b->cap);
        b->b = g;
        b->cap = ncap;
    }
    if (b->b[i])
        return 0;
    b->b[i] = 1;
    return 1;
}

void clt_sym_sent_reset(struct clt_sym_sent *t)
{
    struct clt_bits *all[] = { &t->fn, &t->file, &t->mpath, &t->map, &t->frame, &t->stack };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->b)
            memset(all[i]->b, 0, all[i]->cap);
}

void clt_sym_sent_free(struct clt_sym_sent *t)
{
    struct clt_bits *all[] = { &t->fn, &t->file, &t->mpath, &t->map, &t->frame, &t->stack };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]->b);
    memset(t, 0, sizeof *t);
}

static Perfetto__Protos__InternedString *istr(struct clt_sym_scratch *x, const struct clt_symbols *s, uint32_t i)
{
    Perfetto__Protos__InternedString *is = &x->strs[x->n_strs++];
    perfetto__protos__interned_string__init(is);
    is->has_iid = is->has_str = 1;
    is->iid = i;
    is->str.data = (uint8_t *)s->strs[i - 1];
    const char *str = s->strs[i - 1];
    size_t len = strlen(str), n = len > CLT_SYM_STR_MAX ? CLT_SYM_STR_MAX : len;
    while (n < len && n && ((unsigned char)str[n] & 0xC0) == 0x80)    /* cut where a UTF-8 character starts */
        n--;
    is->str.len = n;
    return is;
}

void clt_sym_add_interned(const struct clt_symbols *s, struct clt_sym_sent *sent, uint32_t stack,
                          struct clt_sym_scratch *x, Perfetto__Protos__InternedData *in)
{
    x->n_strs = x->n_fn = x->n_file = x->n_mpath = x->n_map = x->n_frame = 0;
    if (!stack || !mark(&sent->stack, stack))
        return;
    const uint32_t *ids = &s->stack_frames[s->stacks[stack - 1].off];
    unsigned n = s->stacks[stack - 1].n;
    for (unsigned i = 0; i < n; i++) {
        const struct clt_sym_frame *fr = &s->frames[ids[i] - 1];
        x->frame_ids[i] = ids[i];
        if (!mark(&sent->frame, ids[i]))
            continue;
        Perfetto__Protos__Frame *f = &x->frame[x->n_frame];
        perfetto__protos__frame__init(f);
        f->has_iid = f->has_function_name_id = 1;
        f->iid = ids[i];
        f->function_name_id = fr->fn;
        if (mark(&sent->fn, fr->fn))
            x->fnp[x->n_fn++] = istr(x, s, fr->fn);
        if (fr->file) {
            f->has_source_path_iid = f->has_line_number = 1;
            f->source_path_iid = fr->file;
            f->line_number = fr->line;
            if (mark(&sent->file, fr->file))
                x->filep[x->n_file++] = istr(x, s, fr->file);
        }
        if (fr->map) {
            f->has_mapping_id = f->has_rel_pc = 1;
            f->mapping_id = fr->map;
            f->rel_pc = fr->rel_pc;
            const struct clt_sym_mapping *mp = &s->maps[fr->map - 1];
            if (mark(&sent->map, fr->map)) {
                Perfetto__Protos__Mapping *m = &x->map[x->n_map];
                perfetto__protos__mapping__init(m);
                m->has_iid = m->has_start = 1;
                m->iid = fr->map;
                m->start = mp->start;
                m->has_end = 1;
                m->end = mp->end;
                x->map_path_ids[x->n_map] = mp->path;
                m->n_path_string_ids = 1;
                m->path_string_ids = &x->map_path_ids[x->n_map];
                x->mapp[x->n_map++] = m;
                if (mark(&sent->mpath, mp->path))
                    x->mpathp[x->n_mpath++] = istr(x, s, mp->path);
            }
        }
        x->framep[x->n_frame++] = f;
    }
    perfetto__protos__callstack__init(&x->cs);
    x->cs.has_iid = 1;
    x->cs.iid = stack;
    x->cs.n_frame_ids = n;
    x->cs.frame_ids = x->frame_ids;
    x->csp[0] = &x->cs;
    in->n_callstacks = 1;
    in->callstacks = x->csp;
    in->n_frames = x->n_frame;
    in->frames = x->framep;
    in->n_function_names = x->n_fn;
    in->function_names = x->fnp;
    in->n_source_paths = x->n_file;
    in->source_paths = x->filep;
    in->n_mappings = x->n_map;
    in->mappings = x->mapp;
    in->n_mapping_paths = x->n_mpath;
    in->mapping_paths = x->mpathp;
}

/* Is this frame the program's own: a script's line (not a library's under
 * site-packages or the interpreter's), or a compiled frame with a source
 * line outside the system's folders? */
static int program_frame(const struct clt_symbols *s, const struct clt_sym_frame *fr)
{
    if (!fr->file || !fr->fn)
        return 0;
    const char *f = s->strs[fr->file - 1];
    size_t n = strlen(f);
    if (n > 3 && !strcmp(f + n - 3, ".py"))
        return !strstr(f, "-packages/") && !strstr(f, "/lib/python") && f[0] != '<';
    return strncmp(f, "/usr/", 5) != 0 && f[0] != '<';
}

/* "function (file:line)" of the program's innermost frame in a stack of two
 * frames or more ("" none): what the UI shows first, as the argument
 * called_from, where the stack itself starts at _start. */
const char *clt_sym_program_frame(const struct clt_symbols *s, uint32_t stack, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!stack || s->stacks[stack - 1].n < 2)
        return buf;
    const uint32_t *ids = &s->stack_frames[s->stacks[stack - 1].off];
    for (unsigned i = s->stacks[stack - 1].n; i-- > 0;) {
        const struct clt_sym_frame *fr = &s->frames[ids[i] - 1];
        if (program_frame(s, fr)) {
            snprintf(buf, cap, "%s (%s:%u)", s->strs[fr->fn - 1], s->strs[fr->file - 1], fr->line);
            break;
        }
    }
    return buf;
}

/* "function (file:line)" of the innermost frame of a stack, for messages. */
const char *clt_sym_top(const struct clt_symbols *s, uint32_t stack, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!stack)
        return buf;
    const uint32_t *ids = &s->stack_frames[s->stacks[stack - 1].off];
    const struct clt_sym_frame *fr = &s->frames[ids[s->stacks[stack - 1].n - 1] - 1];
    if (fr->file)
        snprintf(buf, cap, "%s (%s:%u)", s->strs[fr->fn - 1], s->strs[fr->file - 1], fr->line);
    else
        snprintf(buf, cap, "%s", s->strs[fr->fn - 1]);
    return buf;
}
