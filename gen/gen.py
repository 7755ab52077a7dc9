#!/usr/bin/env python3
"""Generate cltrace's OpenCL wrappers and decode tables from the Khronos registry.

    python3 gen/gen.py path/to/cl.xml trace/generated capture/generated [tests/forward/generated]

Reads cl.xml (every <command>, typedef, enum and bitmask) and writes:
  trace/generated/clt_gen.h        function ids, table sizes (the record format's fn field)
  trace/generated/clt_tables.c     names, parameter descriptors, enum/bitfield/error decoders
  trace/generated/clt_shapes.h     the parameter kinds of the commands programs call in
                                   loops, as X-macros (the writer's decoders for them are
                                   specialised per command at compile time)
  capture/generated/clt_wrappers.c one wrapper per command: forward + record (capture/put.h),
                                   the extension-name -> wrapper table, the loader dispatch order
  capture/generated/clt_hooks.h    prototypes of the hand-written hooks (capture/hooks.c)
The output is committed: a user's clone builds without cl.xml. Generated C
never includes the CL headers, so commands newer than the installed headers
are still wrapped: every parameter is declared with an ABI-identical type
(handles and pointers as void *, typedefs resolved to their integer type).

How a parameter is recorded is decided here, once, from its C type and a
short table of OpenCL conventions (SEMANTICS / ARRAY_LEN below).
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

# --- ABI types of the few non-CL types cl.xml names (Windows/VA-API ones). ---
FOREIGN = {"UINT": "uint32_t", "D3DFORMAT": "uint32_t", "DXGI_FORMAT": "uint32_t",
           "VASurfaceID": "uint32_t", "HANDLE": "void *"}
BASE = {"char": "char", "int": "int", "unsigned int": "unsigned int", "unsigned char": "unsigned char",
        "intptr_t": "intptr_t", "size_t": "size_t", "float": "float", "double": "double",
        "int8_t": "int8_t", "int16_t": "int16_t", "int32_t": "int32_t", "int64_t": "int64_t",
        "uint8_t": "uint8_t", "uint16_t": "uint16_t", "uint32_t": "uint32_t", "uint64_t": "uint64_t",
        "void": "void"}
SIGNED = {"char", "int", "intptr_t", "int8_t", "int16_t", "int32_t", "int64_t"}

# Arrays whose length is another parameter (or a constant) by OpenCL convention.
ARRAY_LEN = {
    "global_work_offset": "work_dim", "global_work_size": "work_dim", "local_work_size": "work_dim",
    "origin": 3, "region": 3, "src_origin": 3, "dst_origin": 3, "buffer_origin": 3, "host_origin": 3,
    "buffer_offset": 3, "src_offset": 3, "dst_offset": 3,
}
MAX_ARRAY = 16       # elements copied per array argument; the count is always exact
MAX_PROPS = 32       # values copied per zero-terminated property list
MAX_STR = 256        # bytes copied per string argument

# Parameter kinds (mirrored in record.h as enum clt_kind).
KINDS = ["VAL", "SVAL", "HANDLE", "ENUM", "BITFIELD", "BOOL", "PTR", "STR", "ARR", "HARR",
         "PROPS", "OUT_VAL", "OUT_HANDLE", "OUT_HARR", "ERRCODE", "BYTES8", "FUNC", "SRCS", "WORDS"]
# Small input structs copied as 8-byte words (after success): what an image or
# a sub-buffer is, for the trace and the leak report.
WORDS = {("image_desc", 5), ("image_format", 1), ("buffer_create_info", 2)}
WORDS_CMDS = ("clCreateImage", "clCreateImage2D", "clCreateImage3D", "clCreateImageWithProperties",
              "clCreateSubBuffer")


class Reg:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.typedef = {}      # name -> underlying type name (or '*handle')
        self.handles = set()
        for t in root.find("types"):
            name = t.get("name") or (t.find("name").text if t.find("name") is not None else None)
            text = "".join(t.itertext())
            if t.get("category") == "define" and name:
                if re.search(r"struct\s+_\w+\s*\*", text):
                    self.handles.add(name)
                elif t.find("type") is not None:
                    inner = t.find("type").text
                    between = text.split(inner, 1)[1].split(name, 1)[0]
                    self.typedef[name] = "void*" if "*" in between else inner
                elif re.search(r"\bvoid\s*\*", text) or "*" in text:
                    self.typedef[name] = "void*"
        self.enum_value = {}
        self.bitmask_groups = {}   # group name -> [(name, value)]
        for es in root.findall("enums"):
            for e in es.findall("enum"):
                v = e.get("value")
                if e.get("bitpos") is not None:
                    v = str(1 << int(e.get("bitpos")))
                if v is None:
                    continue
                try:
                    self.enum_value[e.get("name")] = int(v.rstrip("ULul"), 0)
                except ValueError:
                    continue
            if es.get("type") == "bitmask":
                self.bitmask_groups[es.get("name")] = [e.get("name") for e in es.findall("enum")]
        # Values of each enum-like type, from <require comment="TYPE"> blocks.
        self.type_enums = {}
        self.core = []         # commands in a <feature>
        self.ext_cmds = []     # commands only in <extension>s
        seen = set()
        for sect in list(root.findall("feature")) + list(root.find("extensions")):
            for req in sect.findall("require"):
                c = (req.get("comment") or "").split(" - ")[0].strip()
                for e in req.findall("enum"):
                    if re.fullmatch(r"cl_\w+", c):
                        self.type_enums.setdefault(c, [])
                        if e.get("name") not in self.type_enums[c]:
                            self.type_enums[c].append(e.get("name"))
                for cmd in req.findall("command"):
                    n = cmd.get("name")
                    if n in seen:
                        continue
                    seen.add(n)
                    (self.core if sect.tag == "feature" else self.ext_cmds).append(n)
        for g, names in self.bitmask_groups.items():
            self.type_enums.setdefault(g, [])
            for n in names:
                if n not in self.type_enums[g]:
                    self.type_enums[g].append(n)
        self.bitfield_types = {g for g in self.bitmask_groups}
        self.commands = {}
        for c in root.find("commands"):
            proto = c.find("proto")
            name = proto.find("name").text
            self.commands[name] = (self.parse_decl(proto), [self.parse_decl(p) for p in c.findall("param")])
        # Error codes: the <enums name="ErrorCodes.*"> blocks, plus CL_SUCCESS.
        self.errors = ["CL_SUCCESS"] + [e.get("name") for es in root.findall("enums")
                                        if (es.get("name") or "").startswith("ErrorCodes")
                                        for e in es.findall("enum") if e.get("value")]

    @staticmethod
    def parse_decl(el):
        text = "".join(el.itertext())
        name = el.find("name").text
        t = el.find("type")
        if t is None:      # function pointer: "void (CL_CALLBACK* pfn)(...)"
            return {"name": name, "type": None, "ptr": 0, "const": False, "func": True}
        after = text.split(t.text, 1)[1].split(name, 1)[0]
        before = text.split(t.text, 1)[0]
        return {"name": name, "type": t.text, "ptr": after.count("*"), "const": "const" in before,
                "func": False, "array": "[" in text.split(name, 1)[1]}

    def resolve(self, tname):
        """Follow typedefs to a base C type name, or '*handle' / 'void*'."""
        seen = 0
        while tname in self.typedef and seen < 20:
            tname = self.typedef[tname]
            seen += 1
        if tname in self.handles:
            return "*handle"
        return tname

    def root_of(self, tname):
        """The most specific cl_* name with enum/bitfield values, walking typedefs."""
        t = tname
        for _ in range(20):
            if t in self.type_enums and t not in ("cl_bitfield", "cl_properties"):
                return t
            if t not in self.typedef:
                return None
            t = self.typedef[t]
        return None

    def abi(self, d):
        if d["name"] == "errcode_ret" and d["ptr"] == 1:
            return "cl_int_ *"
        if d["func"] or d["ptr"] or d.get("array"):
            return "void *"
        t = d["type"]
        if t in FOREIGN:
            return FOREIGN[t]
        if t in self.handles:
            return "void *"
        b = self.resolve(t)
        if b in ("*handle", "void*"):
            return "void *"
        if b not in BASE:
            raise SystemExit("gen: cannot resolve type %r" % t)
        return BASE[b]


def classify(reg, cmd, params, i):
    """-> (kind, aux): how parameter i of cmd is recorded."""
    d = params[i]
    names = [p["name"] for p in params]
    prev = names[i - 1] if i else ""
    t = d["type"]
    if d["func"]:
        return "FUNC", None
    if d["name"] == "errcode_ret" and d["ptr"] == 1:
        return "ERRCODE", None
    if cmd in WORDS_CMDS and d["ptr"] == 1:
        for name, n in WORDS:
            if d["name"] == name:
                return "WORDS", n
    if cmd == "clCreateProgramWithSource" and d["name"] == "strings":
        return "SRCS", None         # the program's source, for the reporter's kernel-source hints
    if d["ptr"] == 0 and not d.get("array"):
        if t in reg.handles or reg.resolve(t) == "*handle":
            return "HANDLE", t
        if t == "cl_bool":
            return "BOOL", None
        root = reg.root_of(t)
        if root:
            return ("BITFIELD" if root in reg.bitfield_types or t in reg.bitfield_types else "ENUM"), root
        base = reg.resolve(t)
        if base in ("void*",) or t in ("HANDLE",):
            return "PTR", None
        return ("SVAL" if base in SIGNED else "VAL"), None
    if d["ptr"] == 1:
        if cmd == "clSetKernelArg" and d["name"] == "arg_value":
            return "BYTES8", "arg_size"
        if t == "char" and d["const"]:
            return "STR", None
        is_handle = t in reg.handles
        if d["const"] and t.endswith("_properties") or (d["const"] and t and t.endswith("_properties_khr")) \
                or (d["const"] and t and t.endswith("_properties_intel")) or t == "cl_device_partition_property":
            return "PROPS", None
        if d["name"] == "svm_pointers" and prev == "num_svm_pointers":
            return "ARR", prev          # SVM pointers freed or migrated: a list of addresses
        if d["name"] in ARRAY_LEN and d["const"]:
            return "ARR", ARRAY_LEN[d["name"]]
        scalar = is_handle or (reg.resolve(t) in BASE and reg.resolve(t) not in ("void", "char"))
        if d["const"] and prev.startswith("num_") and scalar:
            return ("HARR" if is_handle else "ARR"), prev
        if not d["const"] and is_handle and prev in ("num_entries", "num_kernels", "num_devices"):
            return "OUT_HARR", prev
        if not d["const"] and is_handle and prev.startswith("num_"):
            return "HARR", prev         # an input list cl.xml does not mark const (queues, mem_objects)
        if not d["const"] and is_handle:
            return "OUT_HANDLE", t
        if not d["const"] and t not in ("void", "char") and reg.resolve(t) in BASE and reg.resolve(t) != "void":
            return "OUT_VAL", None
    return "PTR", None


def ret_kind(reg, r):
    if r["ptr"]:
        return "PTR"
    if r["type"] == "void":
        return "VOID"
    if r["type"] in reg.handles:
        return "HANDLE"
    if r["type"] == "cl_int":
        return "ERR"
    return "VAL"


# Calls that only set a kernel's argument or take a reference: bounded work
# on the host, made by the million in loops. One clock read each (their
# start); the duration only on the 1 in CLT_COST_EVERY light calls that are
# measured whole anyway (capture/put.h). A clock read costs ~12-23 ns on a
# cloud GPU host, the call itself ~8 (README: issue 13's H100 figures).
ONE_CLOCK = re.compile(r"^cl(SetKernelArg\w*|SetKernelExecInfo\w*|Retain\w+)$")
CREATES = re.compile(r"^cl(Create|Enqueue|Link|Compile|Clone|SVMAlloc|HostMemAlloc|DeviceMemAlloc|SharedMemAlloc"
                     r"|Import|GetExtensionFunctionAddress)")


# Commands a program calls in its loops (per launch, per transfer, per
# event): the writer decodes these with code specialised per command, every
# other command with the generic table walk (writer/calls.c). A short list:
# each specialised decoder is ~1-4 KiB of the shim's code.
LOOP_COMMANDS = {
    "clSetKernelArg", "clSetKernelArgSVMPointer", "clSetKernelExecInfo",
    "clEnqueueNDRangeKernel", "clEnqueueTask",
    "clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueCopyBuffer", "clEnqueueFillBuffer",
    "clEnqueueReadBufferRect", "clEnqueueWriteBufferRect", "clEnqueueReadImage", "clEnqueueWriteImage",
    "clEnqueueMapBuffer", "clEnqueueUnmapMemObject", "clEnqueueMigrateMemObjects",
    "clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList",
    "clEnqueueSVMMemcpy", "clEnqueueSVMMemFill", "clEnqueueSVMMap", "clEnqueueSVMUnmap",
    "clFinish", "clFlush", "clWaitForEvents",
    "clGetEventInfo", "clGetEventProfilingInfo", "clRetainEvent", "clReleaseEvent",
    "clCreateBuffer", "clCreateSubBuffer", "clRetainMemObject", "clReleaseMemObject",
    "clSVMAlloc", "clSVMFree",
}


# The lookups by name live beside the table they search (and the wrappers it
# holds hand out through them): capture/ has no circle (check-layers.sh).
EXT_LOOKUPS = r"""static int ext_cmp(const void *key, const void *ent)
{
    return strcmp(key, ((const struct clt_ext_entry *)ent)->name);
}

const struct clt_ext_entry *clt_ext_find(const char *name)
{
    return bsearch(name, clt_ext_table, clt_ext_table_len, sizeof *clt_ext_table, ext_cmp);
}

/* clGetExtensionFunctionAddress*: hand out our wrapper for every command
 * cl.xml knows, remembering the real one; pass anything else through. With
 * several platforms, the last real pointer handed out wins. */
void *clt_ext_wrap(const char *name, void *real)
{
    if (!name || !real || clt_is_self(real))
        return real;
    const struct clt_ext_entry *e = clt_ext_find(name);
    if (!e)
        return real;
    __atomic_store_n(&clt_real_tab[e - clt_ext_table], clt_interpose((unsigned)(e - clt_ext_table), real),
                     __ATOMIC_RELEASE);
    return e->wrapper;
}

"""

def gen(reg, out, cap_out):
    cmds = sorted(set(reg.core) | set(reg.ext_cmds) | set(reg.commands))
    cmds = [c for c in cmds if c in reg.commands]
    core = set(reg.core)
    # Enum and bitfield decode tables, one per type actually used by a parameter.
    used_types = []
    plan = {}
    for c in cmds:
        r, ps = reg.commands[c]
        kinds = [classify(reg, c, ps, i) for i in range(len(ps))]
        plan[c] = (r, ps, kinds)
        for k, aux in kinds:
            if k in ("ENUM", "BITFIELD") and aux not in used_types:
                used_types.append(aux)
    # Decoders the writer needs beyond parameter types (device command kinds).
    for t in ("cl_command_type", "cl_command_execution_status"):
        if t in reg.type_enums and t not in used_types:
            used_types.append(t)
    used_types.sort()
    W = lambda name: open(os.path.join(out, name), "w")
    WC = lambda name: open(os.path.join(cap_out, name), "w")
    banner = "/* Generated by gen/gen.py from the Khronos cl.xml. Do not edit. */\n"

    with W("clt_gen.h") as h:
        h.write(banner + "#ifndef CLT_GEN_H\n#define CLT_GEN_H\n#include <stdint.h>\n\n")
        h.write("enum clt_fn {\n")
        for i, c in enumerate(cmds):
            h.write("    CLT_FN_%s = %d,\n" % (c, i))
        h.write("    CLT_FN_COUNT = %d\n};\n\n" % len(cmds))
        h.write("enum clt_decoder {\n    CLT_DEC_NONE = 0,\n")
        for i, t in enumerate(used_types):
            h.write("    CLT_DEC_%s = %d,\n" % (t, i + 1))
        h.write("    CLT_DEC_COUNT = %d\n};\n\n" % (len(used_types) + 1))
        h.write("#define CLT_MAX_ARRAY %d\n#define CLT_MAX_PROPS %d\n#define CLT_MAX_STR %d\n\n"
                % (MAX_ARRAY, MAX_PROPS, MAX_STR))
        h.write("#endif\n")

    with W("clt_tables.c") as f:
        f.write(banner + '#include "trace/tables.h"\n#include <stddef.h>\n\n')
        # parameter descriptors
        for c in cmds:
            r, ps, kinds = plan[c]
            if not ps:
                continue
            f.write("static const struct clt_param P_%s[] = {\n" % c)
            for p, (k, aux) in zip(ps, kinds):
                dec = "CLT_DEC_%s" % aux if k in ("ENUM", "BITFIELD") else "CLT_DEC_NONE"
                f.write('    {"%s", CLT_K_%s, %s, %s},\n' % (p["name"], k, dec,
                        '"%s"' % p["type"] if k in ("HANDLE", "OUT_HANDLE", "HARR", "OUT_HARR") else "NULL"))
            f.write("};\n")
        f.write("\nconst struct clt_fn_desc clt_fns[CLT_FN_COUNT] = {\n")
        for c in cmds:
            r, ps, kinds = plan[c]
            flags = []
            if c in core:
                flags.append("CLT_F_CORE")
            if CREATES.match(c):
                flags.append("CLT_F_CREATES")
            if is_enqueue(c, ps, kinds):
                flags.append("CLT_F_ENQUEUE")
            rt = '"%s"' % r["type"] if ret_kind(reg, r) == "HANDLE" else "NULL"
            f.write('    {"%s", %s, %d, CLT_R_%s, %s, %s},\n' % (c, "P_%s" % c if ps else "NULL", len(ps),
                    ret_kind(reg, r), "|".join(flags) or "0", rt))
        f.write("};\n\n")
        # decoders
        n_vals = {}
        for t in used_types:
            vals = []
            for n in reg.type_enums.get(t, []):
                if n in reg.enum_value:
                    vals.append((reg.enum_value[n], n))
            vals = sorted(set(vals))
            n_vals[t] = len(vals)
            f.write("static const struct clt_enum_val E_%s[] = {\n" % t)
            for v, n in vals:
                f.write('    {0x%xULL, "%s"},\n' % (v & 0xFFFFFFFFFFFFFFFF, n))
            f.write('    {0, NULL}\n};\n')
        f.write("\nconst struct clt_decoder_desc clt_decoders[CLT_DEC_COUNT] = {\n    {NULL, NULL, 0, 0},\n")
        for t in used_types:
            f.write('    {"%s", E_%s, %d, %d},\n' % (t, t, n_vals[t], 1 if t in reg.bitfield_types else 0))
        f.write("};\n\n")
        errs = sorted({(reg.enum_value[n], n) for n in reg.errors if n in reg.enum_value},
                      key=lambda vn: (-vn[0], vn[1]))
        f.write("const struct clt_err clt_errors[] = {\n")
        for v, n in errs:
            f.write('    {%d, "%s"},\n' % (v, n))
        f.write("};\nconst unsigned clt_n_errors = %d;\n" % len(errs))

    with W("clt_shapes.h") as h:
        h.write(banner + "/* CLT_SHAPE_<command>(P, R): P(index, kind, decoder) for each parameter, then\n"
                " * R(return kind, creates). CLT_SHAPES(S): S(command) for each of them. */\n"
                "#ifndef CLT_SHAPES_H\n#define CLT_SHAPES_H\n\n")
        shaped = [c for c in cmds if c in LOOP_COMMANDS]
        for c in shaped:
            r, ps, kinds = plan[c]
            parts = []
            for i, (k, aux) in enumerate(kinds):
                dec = "CLT_DEC_%s" % aux if k in ("ENUM", "BITFIELD") else "CLT_DEC_NONE"
                parts.append("P(%d, CLT_K_%s, %s)" % (i, k, dec))
            parts.append("R(CLT_R_%s, %d)" % (ret_kind(reg, r), 1 if CREATES.match(c) else 0))
            h.write("#define CLT_SHAPE_%s(P, R) %s\n" % (c, " ".join(parts)))
        h.write("\n#define CLT_SHAPES(S) \\\n")
        for c in shaped:
            h.write("    S(%s) \\\n" % c)
        h.write("\n#endif\n")

    with WC("clt_hooks.h") as h:
        h.write(banner + "#ifndef CLT_HOOKS_GEN_H\n#define CLT_HOOKS_GEN_H\n#include \"capture/hooks.h\"\n\n")
        for c, hooks in HOOKED.items():
            r, ps, kinds = plan[c]
            pre, post = hook_protos(reg, c, r, ps)
            h.write("".join(proto + "\n" for proto, k in ((pre, "pre"), (post, "post")) if k in hooks))
        h.write("\n#endif\n")

    with WC("clt_wrappers.c") as f:
        f.write(banner + '#include <stdlib.h>\n#include <string.h>\n#include "capture/shim.h"\n#include "trace/tables.h"\n'
                '#include "capture/generated/clt_hooks.h"\n\n')
        f.write("/* Exported: every command of a <feature> (core 1.0-3.0), so LD_PRELOAD sees them.\n"
                " * Extension commands are static and reached via clGetExtensionFunctionAddress*. */\n\n")
        for c in cmds:
            r, ps, kinds = plan[c]
            f.write(wrapper(reg, c, r, ps, kinds, c in core))
        f.write("const struct clt_ext_entry clt_ext_table[] = {\n")
        for c in cmds:
            f.write('    {"%s", (void *)%s},\n' % (c, c if c in core else "ext_" + c))
        f.write("};\nconst unsigned clt_ext_table_len = %d;\n\n" % len(cmds))
        f.write(EXT_LOOKUPS)
        # ICD loader layers: which command each dispatch-table slot holds.
        order = [l.strip() for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "icd_dispatch.txt")) if l.strip() and l[0] != "#"]
        f.write("const int16_t clt_icd_dispatch[] = {\n")
        for n in order:
            f.write("    %s,\n" % ("CLT_FN_" + n if n in plan else "-1"))
        f.write("};\nconst unsigned clt_icd_dispatch_len = %d;\n" % len(order))


# Commands with hand-written semantics (capture/hooks.c): clt_pre_<cmd> may
# change the arguments passed to the driver (never those recorded), and
# clt_post_<cmd> sees the result; each command has the hooks listed. Their
# prototypes are generated into clt_hooks.h, so a hook that does not match
# its command does not compile. A command without a pre hook passes its
# arguments as they are (an empty one and its copies were ~45 instructions
# of a launch's recording).
HOOKED = {"clCreateCommandQueue": ("pre", "post"), "clCreateCommandQueueWithProperties": ("pre", "post"),
          "clCreateCommandQueueWithPropertiesKHR": ("pre", "post"), "clGetCommandQueueInfo": ("pre", "post"),
          "clGetEventProfilingInfo": ("post",), "clEnqueueNDRangeKernel": ("post",), "clCreateKernel": ("post",),
          "clCreateKernelsInProgram": ("post",), "clCloneKernel": ("post",),
          "clBuildProgram": ("pre", "post"), "clReleaseContext": ("pre",), "clGetContextInfo": ("pre", "post"),
          "clReleaseCommandQueue": ("pre",)}
# Hooked commands whose hooks act only on a recording thread (h->th): with
# recording off they forward as soon as they know it (a launch was ~134
# instructions of a wrapper that records nothing, now ~73). In the recording
# body, not the entry: there (30) the check cost a recording launch 14 more
# (GCC then keeps the entry's stack arguments in saved registers).
HOOKS_WHILE_RECORDING = ("clEnqueueNDRangeKernel",)


# Commands whose written buffers CLTRACE_FINGERPRINT reads back after they
# ran: capture/fingerprint.c interposes on their real entry points (nothing
# in the wrapper: no cost when off); with fingerprints on they record their
# call stack, the site the report names.
FINGERPRINTED = ("clEnqueueNDRangeKernel", "clEnqueueTask", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
                 "clEnqueueWriteBufferRect",
                 "clEnqueueFillBuffer", "clEnqueueCopyBuffer", "clEnqueueCopyBufferRect")


# Commands recorded outside a window too (CLTRACE_WINDOW: capture/window.c):
# what makes, builds or lets go of an object, so a window's trace names every
# object it shows and the leaks at exit cover the whole run. Events aside:
# the enqueues a window records make them, and they go with the window.
KEPT = re.compile(r"^cl(Create(?!UserEvent|Event)\w+|Release(?!Event)\w+|Retain(?!Event)\w+|"
                  r"BuildProgram|CompileProgram|LinkProgram|GetPlatformIDs|GetDeviceIDs|SVMAlloc|SVMFree|"
                  r"GetExtensionFunctionAddress\w*)$")


def is_enqueue(c, ps, kinds):
    """A command that enqueues work and can hand back an event: timed on the device."""
    return c.startswith("clEnqueue") and any(p["name"] == "event" and k == "OUT_HANDLE"
                                             for p, (k, _) in zip(ps, kinds))


def hook_protos(reg, c, r, ps):
    rabi = reg.abi(r)
    pre = "void clt_pre_%s(struct clt_hook *h%s);" % (c, "".join(", %s*%s%s" % (
        reg.abi(p), "" if reg.abi(p).endswith("*") else " ", p["name"]) for p in ps))
    post = "void clt_post_%s(struct clt_hook *h%s%s);" % (c, "" if rabi == "void" else ", %s *ret" % rabi,
                                                       "".join(", %s %s" % (reg.abi(p), p["name"]) for p in ps))
    return pre, post


def out_count_at(ps, kinds):
    """The array a call fills whose count it returns beside it (clGetPlatformIDs'
    platforms, num_platforms): the array's index, or None."""
    for i, (k, _) in enumerate(kinds):
        if k == "OUT_HARR" and i + 1 < len(ps) and kinds[i + 1][0] == "OUT_VAL" and \
                ps[i + 1]["name"].startswith("num_"):
            return i
    return None


def wrapper(reg, c, r, ps, kinds, exported):
    rabi = reg.abi(r)
    args = ", ".join("%s %s" % (reg.abi(p), p["name"]) for p in ps) or "void"
    argnames = [p["name"] for p in ps]
    rk = ret_kind(reg, r)
    fname = c if exported else "ext_" + c
    vis = "CLT_EXPORT " if exported else "static "
    hooked = c in HOOKED
    pre_hook, post_hook = hooked and "pre" in HOOKED[c], hooked and "post" in HOOKED[c]
    enq = is_enqueue(c, ps, kinds)
    lookup = c in ("clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform")
    has_err = any(k == "ERRCODE" for k, _ in kinds)
    ret_ = "" if rk == "VOID" else "return "
    L = []
    # The entry point is tiny: when recording is off it is a load, a branch
    # and a tail call; the recording body is a function of its own.
    L.append("typedef %s (CLT_CALL *%s_t)(%s);" % (rabi, c, ", ".join(reg.abi(p) for p in ps) or "void"))
    recsig = "%s_t real%s%s" % (c, ", void *clt_ra" if enq else "",
                                "".join(", %s %s" % (reg.abi(p), p["name"]) for p in ps))
    L.append("static CLT_NOINLINE %s %s_rec(%s);\n" % (rabi, c, recsig))
    L.append("%s%s CLT_CALL %s(%s)\n{" % (vis, rabi, fname, args))
    L.append("    %s_t real = (%s_t)clt_real(CLT_FN_%s);" % (c, c, c))
    ret_fail = {"VOID": "return;", "ERR": "return CL_INVALID_OPERATION_;",
                "HANDLE": "return NULL;", "PTR": "return NULL;", "VAL": "return 0;"}[rk]
    if rk in ("HANDLE", "PTR") and has_err:
        ret_fail = "{ if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION_; return NULL; }"
    L.append("    if (CLT_UNLIKELY(!real)) %s" % ret_fail)
    plain = "real(%s)" % ", ".join(argnames)
    if lookup:   # hand out our wrapper for every extension command cl.xml knows
        plain = "clt_ext_wrap(func_name, real(%s))" % ", ".join(argnames)
    kept = bool(KEPT.match(c))
    # a launch names its kernel to a window that starts at one
    wkernel = "kernel" if c.startswith("clEnqueue") and "kernel" in argnames else "NULL"
    fast = not hooked or c in HOOKS_WHILE_RECORDING
    if not hooked:   # hooked commands keep their semantics even when not recording
        L.append("    if (CLT_LIKELY(!%s()))" % ("clt_is_active" if kept else "clt_is_recording"))
        L.append("        %s%s;" % (ret_, plain))
    # An enqueue passes its caller's address: the call site, even without a stack.
    L.append("    %s%s_rec(real%s%s);" % (ret_, c, ", __builtin_return_address(0)" if enq else "",
                                          "".join(", " + n for n in argnames)))
    L.append("}\n")

    L.append("static %s %s_rec(%s)\n{" % (rabi, c, recsig))
    # (a command that is not hooked came here only while recording is on)
    if kept:
        L.append("    struct clt_thread *th = %s;" % ("clt_enter()" if hooked else "clt_enter_active()"))
        L.append("    int clt_outside = th && clt_outside_window(CLT_FN_%s, NULL);" % c)
    else:
        L.append("    struct clt_thread *th = clt_enter_rec(CLT_FN_%s, %s);" % (c, wkernel))
    plain_stmt = "{ %s; return; }" % plain if rk == "VOID" else "return %s;" % plain
    if fast:
        L.append("    if (!th) %s" % plain_stmt)
    # The same command re-entered on this thread: the call came back through
    # the ICD loader's layer (preload and OPENCL_LAYERS both active) and is
    # already being recorded by the outer frame.
    # Re-entered more than once: the loader routes the command back into us
    # by name (ocl-icd does this for a 2.x command a 1.2 vendor lacks), so
    # the "next step" leads here again: fail it instead of spinning. The
    # check costs nothing on the path of a call that is not re-entered.
    L.append("    if (th && th->in_fn == CLT_FN_%s + 1u) {" % c)
    L.append("        if (th->reentered >= 4) { clt_loop_detected(CLT_FN_%s); %s }" % (c, ret_fail))
    L.append("        th->reentered++;")
    if rk == "VOID":
        L.append("        %s;" % plain)
        L.append("        th->reentered--;")
        L.append("        return;")
    else:
        L.append("        %s clt_r = %s;" % (rabi, plain))
        L.append("        th->reentered--;")
        L.append("        return clt_r;")
    L.append("    }")
    # cltrace's own time on this thread (the trace states it): measured on
    # every call that does more than record (hooks, events, stacks), on a
    # sample of the others (capture/put.h).
    exact = "1" if hooked or enq or (CREATES.match(c) and not lookup) else "0"
    gated_args = None     # the real call's arguments for a command held by a user event (cbtime.c)
    if enq:
        # CLTRACE_SAMPLE: only a sample of the commands the app asks no
        # event for is timed (sample.c); the others say they were not. An
        # enqueue left untimed only records: a light call, measured 1 in 64.
        launch = "kernel" in argnames and "global_work_size" in argnames
        if launch:
            key, nbytes = None, None
        elif "kernel" in argnames:
            key, nbytes = "(uint64_t)(uintptr_t)kernel", "0"
        else:
            size = "size" if "size" in argnames else "cb" if "cb" in argnames else None
            key, nbytes = "(uint64_t)CLT_FN_%s" % c, "(uint64_t)%s" % size if size else "0"
        L.append("    int clt_out = th && !event && CLT_UNLIKELY(clt_sampling) &&")
        if launch:
            L.append("                  (clt_launch_untimed_fast(th, kernel, work_dim, global_work_size, "
                     "local_work_size) ||")
            L.append("                   !clt_sample_launch(th, kernel, work_dim, global_work_size, "
                     "local_work_size));")
        else:
            L.append("                  !clt_sample_take(CLT_FN_%s, %s, %s);" % (c, key, nbytes))
        exact = "!clt_out"
    L.append("    uint64_t clt_te = th ? clt_cost_begin(th, %s) : 0;" % exact)
    call_args = []
    for p, (k, aux) in zip(ps, kinds):
        if k == "ERRCODE":
            call_args.append("errcode_ret ? errcode_ret : &clt_err_local")
        elif pre_hook or (enq and p["name"] == "event"):
            call_args.append(p["name"] + "__c")
        else:
            call_args.append(p["name"])
    if has_err:
        L.append("    cl_int_ clt_err_local = 0;")
    if hooked:
        # scratch left as it is: zeroing its 512 bytes was ~74 instructions a
        # launch, a tenth of its recording; changed and scratch are what a pre
        # hook tells its post, so only a command with a pre hook sets them
        L.append("    struct clt_hook h;")
        L.append("    h.th = th; h.real = (void *)real;%s" % (" h.changed = 0; h.scratch[0] = 0;" if pre_hook else ""))
    if pre_hook:
        for p in ps:
            L.append("    %s %s__c = %s;" % (reg.abi(p), p["name"], p["name"]))
        L.append("    clt_pre_%s(&h%s);" % (c, "".join(", &%s__c" % n for n in argnames)))
    if enq:
        # No event from the app: use our own (released on completion), so
        # every command is timed. The flow id links the call to its command.
        if not pre_hook:
            L.append("    void *event__c = event;")
        L.append("    void *clt_own_event = NULL;")
        L.append("    uint64_t flow = th ? clt_flow_next(th, event == NULL) : 0;")
        L.append("    if (th && !event) {")
        L.append("        if (clt_out)")
        L.append("            flow = CLT_FLOW_SAMPLED_OUT;")
        L.append("        else")
        L.append("            event__c = &clt_own_event;")
        L.append("    }")
        # A queue whose profiling cltrace switches: on for a timed command,
        # off again for the next untimed one (where the driver can:
        # capture/queues.c). (A command buffer's queues are left as they are.)
        # A timed command of a queue timed by callbacks (capture/cbtime.c):
        # held by a user event of cltrace's own until its callbacks are set;
        # a blocking one enqueued non-blocking, then waited for before the
        # call returns. One flag tested where neither is used.
        if "command_queue" in argnames:
            gate = "event_wait_list" in argnames
            L.append("    int clt_switched = 0;")
            if gate:
                L.append("    struct clt_gate *clt_g = NULL;")
            L.append("    if (CLT_UNLIKELY(clt_queue_modes) && th) {")
            L.append("        if (clt_queue_modes & CLT_MODE_SWITCHED) {")
            L.append("            if (event__c)")
            L.append("                clt_switched = clt_profiling_on(command_queue);")
            L.append("            else")
            L.append("                clt_profiling_plain(command_queue);")
            L.append("        }")
            if gate:
                L.append("        if ((clt_queue_modes & CLT_MODE_CALLBACKS) && event__c && clt_queue_by_callbacks(command_queue))")
                L.append("            clt_g = clt_cb_gate(command_queue, %s, %s);" %
                         (call_args[argnames.index("num_events_in_wait_list")], call_args[argnames.index("event_wait_list")]))
            L.append("    }")
        blk = [i for i, n in enumerate(argnames) if n.startswith("blocking")]
        if "command_queue" in argnames and "event_wait_list" in argnames:
            wn, wl = argnames.index("num_events_in_wait_list"), argnames.index("event_wait_list")
            gated_args = list(call_args)
            gated_args[wn], gated_args[wl] = "clt_g->n", "(void *)clt_g->list"
            if blk:     # held: always enqueued non-blocking; a blocking one waited for below
                L.append("    int clt_blk = CLT_UNLIKELY(clt_g != NULL) && %s;" % call_args[blk[0]])
                gated_args[blk[0]] = "0u"
    oc = out_count_at(ps, kinds)
    if oc is not None:
        # The app's count NULL: ours in its place, so that the record holds
        # the handles the call wrote, not the whole room (the rest is the
        # app's memory as it was). Not where the array is NULL too: the call
        # must fail there as it would untraced.
        num_t = reg.abi(ps[oc + 1])
        L.append("    uint32_t clt_nout = 0;")
        L.append("    %s clt_count = %s ? %s : %s ? (%s)&clt_nout : NULL;" %
                 (num_t, call_args[oc + 1], call_args[oc + 1], call_args[oc], num_t))
        call_args[oc + 1] = "clt_count"
    L.append("    uint32_t clt_outer = th ? th->in_fn : 0;")
    L.append("    if (th)")
    L.append("        th->in_fn = CLT_FN_%s + 1u;" % c)
    if enq:
        # the collector reads it from its own thread, to keep out of the
        # driver while an enqueue runs (collect.c); an enqueue's own field,
        # so that the light calls' in_fn stays a plain store; not nested (a
        # command re-entering itself returns above, before it)
        L.append("    if (th)")
        L.append("        __atomic_store_n(&th->in_enqueue, 1u, __ATOMIC_RELAXED);")
    L.append("    int clt_tsc = clt_use_tsc;")
    L.append("    uint64_t t0 = clt_now_tsc(clt_tsc);")
    if rk == "VOID":
        L.append("    real(%s);" % ", ".join(call_args))
    elif gated_args:
        # two calls, not a choice per argument: an ungated enqueue tests one flag
        L.append("    %s ret = CLT_UNLIKELY(clt_g != NULL) ? real(%s)" % (rabi, ", ".join(gated_args)))
        L.append("                               : real(%s);" % ", ".join(call_args))
    else:
        L.append("    %s ret = real(%s);" % (rabi, ", ".join(call_args)))
    if gated_args:
        L.append("    if (CLT_UNLIKELY(clt_g != NULL))")
        L.append("        clt_cb_open(clt_g, %s ? *(void **)event__c : NULL);" % ("ret == 0" if rk == "ERR" else "ret"))
    if gated_args and any(n.startswith("blocking") for n in argnames):
        if rk == "ERR":
            L.append("    if (CLT_UNLIKELY(clt_blk) && ret == 0)")
            L.append("        ret = clt_cb_block(*(void **)event__c);")
        else:
            err = call_args[[k for k, _ in kinds].index("ERRCODE")]
            L.append("    if (CLT_UNLIKELY(clt_blk) && ret) {")
            L.append("        int32_t clt_w = clt_cb_block(*(void **)event__c);")
            L.append("        if (clt_w)")
            L.append("            *(%s) = clt_w;" % err)
            L.append("    }")
    one_clock = exact == "0" and ONE_CLOCK.match(c)
    if one_clock:
        L.append("    uint64_t t1 = CLT_UNLIKELY(clt_te) ? clt_now_tsc(clt_tsc) : t0;   /* timed 1 in CLT_COST_EVERY */")
    else:
        L.append("    uint64_t t1 = clt_now_tsc(clt_tsc);")
    L.append("    if (th)")
    L.append("        th->in_fn = clt_outer;")
    if enq:
        L.append("    if (th)")
        L.append("        __atomic_store_n(&th->in_enqueue, 0u, __ATOMIC_RELAXED);")
    if enq and "command_queue" in argnames:
        L.append("    if (CLT_UNLIKELY(clt_switched))")
        L.append("        clt_profiling_done(command_queue);")
    if lookup:
        L.append("    ret = clt_ext_wrap(func_name, ret);")
    if post_hook:
        # a launch of a kernel on a queue this thread launched it on already:
        # its facts were asked then (capture/hooks.c), the call is skipped
        # (th is set here: a launch without it returned at the top)
        guard = ("    if (!clt_launch_seen(th, kernel, command_queue))\n    "
                 if c == "clEnqueueNDRangeKernel" else "")
        L.append("%s    clt_post_%s(&h%s%s);" % (guard, c, "" if rk == "VOID" else ", &ret",
                                              "".join(", " + n for n in argnames)))
    ok = {"VOID": "1", "ERR": "ret == 0", "HANDLE": "ret != NULL", "PTR": "ret != NULL", "VAL": "1"}[rk]
    if enq:
        L.append("    if (th && %s && event__c)" % ok)
        L.append("        clt_track_command(flow, *(void **)event__c, %s);" %
                 ("command_queue" if "command_queue" in argnames else "NULL"))
        # untimed: the app enqueues all the same (the collector keeps out of
        # the driver meanwhile), at the call's own end: no clock read of its own
        L.append("    else if (clt_out)")
        L.append("        clt_collect_busy(t1);")
    L.append("    if (!th)")
    L.append("        return%s;" % ("" if rk == "VOID" else " ret"))
    retv = {"VOID": "0", "ERR": "(uint64_t)(int64_t)ret", "HANDLE": "(uint64_t)(uintptr_t)ret",
            "PTR": "(uint64_t)(uintptr_t)ret", "VAL": "(uint64_t)ret"}[rk]
    # worst-case record size
    extra = []
    for p, (k, aux) in zip(ps, kinds):
        if k == "STR":
            extra.append("CLT_MAX_STR")
        elif k == "SRCS":
            extra.append("CLT_MAX_SRC")
        elif k == "WORDS":
            extra.append("8 * %d" % aux)
        elif k in ("ARR", "HARR", "OUT_HARR"):
            extra.append("8 * CLT_MAX_ARRAY")
        elif k == "PROPS":
            extra.append("8 * CLT_MAX_PROPS")
    nslots = len(ps) + (2 if enq else 0)     # an enqueue: + flow id, call site
    size = "sizeof(struct clt_rec) + 8 * %d%s" % (nslots, "".join(" + " + e for e in extra))
    # Call stacks: always for a call that makes an object the app owns (an
    # enqueue only when the app asked for the event), and for a call that
    # failed. Every other call pays one compare.
    fails = {"ERR": "!ok", "HANDLE": "!ok" if has_err else None, "PTR": "!ok" if has_err else None}.get(rk)
    # A Python program's enqueues name their Python frames (the call site
    # alone is pyopencl's): without unwinding, where nothing else wants one.
    py_site = None
    if enq:
        want = "event != NULL || !ok" + (" || CLT_UNLIKELY(clt_fp_on)" if c in FINGERPRINTED else "") + \
            " || CLT_UNLIKELY(clt_py_on)"
        py_site = "event != NULL || !ok%s ? NULL : clt_ra" % (" || clt_fp_on" if c in FINGERPRINTED else "")
    elif CREATES.match(c) and not lookup:
        want = "1"
    else:
        want = fails
    L.append("    int ok = %s;" % ok)
    L.append("    (void)ok;")
    if want:
        L.append("    int clt_want_stack = %s;" % want)
        size += " + (clt_want_stack ? CLT_STACK_RESERVE : 0)"
    L.append("    struct clt_rec *rec = clt_rec_begin(th, %s);" % size)
    L.append("    if (rec) {")
    L.append("        struct clt_extra x = clt_extra_init(rec, %d);" % nslots)
    if kept:
        L.append("        if (CLT_UNLIKELY(clt_outside))")
        L.append("            x.raw |= CLT_RAW_OUTSIDE;")
    for i, (p, (k, aux)) in enumerate(zip(ps, kinds)):
        n = p["name"]
        s = "rec->arg[%d]" % i
        if k in ("VAL", "ENUM", "BITFIELD", "BOOL"):
            L.append("        %s = (uint64_t)%s;" % (s, n))
        elif k == "SVAL":
            L.append("        %s = (uint64_t)(int64_t)%s;" % (s, n))
        elif k in ("HANDLE", "PTR", "FUNC"):
            L.append("        %s = (uint64_t)(uintptr_t)%s;" % (s, n))
        elif k == "ERRCODE":
            L.append("        %s = (uint64_t)(int64_t)(errcode_ret ? *errcode_ret : clt_err_local);" % s)
        elif k == "STR":
            # Strings are also read after errors that prove the driver read them.
            err = "ret" if rk == "ERR" else ("(errcode_ret ? *errcode_ret : clt_err_local)" if has_err else None)
            okx = "ok || clt_str_was_read(%s)" % err if err else ("1" if lookup else "ok")
            L.append("        %s = clt_put_str(&x, %d, %s, %s);" % (s, i, okx, n))
        elif k in ("ARR", "HARR", "OUT_HARR"):
            ln = aux if isinstance(aux, int) else "(uint64_t)%s" % aux
            if k == "OUT_HARR" and i == oc:
                # the count the call returned beside it (num_platforms, ours
                # where the app's was NULL): the handles it wrote
                ln = "clt_out_count(%s, clt_count)" % ln
            if k == "OUT_HARR":
                L.append("        %s = clt_put_out_harr(&x, %d, ok, %s, %s);" % (s, i, n, ln))
            else:
                esz = "sizeof(size_t)" if p["type"] in ("size_t", "void") or p["type"] in reg.handles else \
                    "sizeof(%s)" % reg.abi(dict(p, ptr=0))
                L.append("        %s = clt_put_arr(&x, %d, ok, %s, %s, %s);" % (s, i, n, ln, esz))
        elif k == "PROPS":
            esz = "sizeof(%s)" % reg.abi(dict(p, ptr=0))
            L.append("        %s = clt_put_props(&x, %d, ok, %s, %s);" % (s, i, n, esz))
        elif k in ("OUT_HANDLE",):
            L.append("        %s = clt_put_out_ptr(&x, %d, ok, %s);" % (s, i, n))
        elif k == "OUT_VAL":
            esz = "sizeof(%s)" % reg.abi(dict(p, ptr=0))
            L.append("        %s = clt_put_out_val(&x, %d, ok, %s, %s);" % (s, i, n, esz))
        elif k == "BYTES8":
            L.append("        %s = clt_put_bytes8(&x, %d, ok, %s, %s);" % (s, i, n, aux))
        elif k == "SRCS":
            L.append("        %s = clt_put_srcs(&x, %d, ok, %s, count, lengths);" % (s, i, n))
        elif k == "WORDS":
            L.append("        %s = clt_put_words(&x, %d, ok, %s, %d);" % (s, i, n, aux))
    if enq:
        L.append("        rec->arg[%d] = ok ? flow : 0;" % len(ps))
        L.append("        rec->arg[%d] = (uint64_t)(uintptr_t)clt_ra;" % (len(ps) + 1))
    if want:
        L.append("        if (clt_want_stack)")
        L.append("            x.p = clt_put_stack(th, x.p, !ok, %s), x.raw |= CLT_RAW_STACK;" % (py_site or "NULL"))
    if one_clock:
        L.append("        if (!clt_te)")
        L.append("            x.raw |= CLT_RAW_UNTIMED;")
    L.append("        clt_rec_commit(th, rec, &x, CLT_FN_%s, t0, t1, %s);" % (c, retv))
    if enq:      # its record spans two or three lines (trace/record.h)
        L.append("        clt_rec_ask_ahead(rec);")
    L.append("    }")
    # a measured one-clock call read the clock once more than the others
    inner = "t1 - t0 + clt_clock_read_ticks" if one_clock else "t1 - t0"
    L.append("    clt_cost_end(th, clt_te, %s, %s);" % (inner, exact))
    L.append("    return%s;" % ("" if rk == "VOID" else " ret"))
    L.append("}\n")
    return "\n".join(L) + "\n"


if __name__ == "__main__" and len(sys.argv) not in (4, 5):
    raise SystemExit(__doc__)
if __name__ == "__main__":
    gen(Reg(sys.argv[1]), sys.argv[2], sys.argv[3])


from forward import gen_forward   # noqa: E402  (tests/forward/, same plan as the wrappers)

if __name__ == "__main__" and len(sys.argv) == 5:
    _reg = Reg(sys.argv[1])
    _cmds = [c for c in sorted(_reg.commands)]
    _plan = {}
    for _c in _cmds:
        _r, _ps = _reg.commands[_c]
        _plan[_c] = (_r, _ps, [classify(_reg, _c, _ps, i) for i in range(len(_ps))])
    gen_forward(_reg, _plan, _cmds, sys.argv[4], is_enqueue)
