# cltrace.
#   make deps    install the Debian packages (scripts/deps.sh)
#   make         build/libcltrace.so (the shim) and build/cltrace (the launcher)
#   make run     trace the bundled example on PoCL, say where the trace went
#   make test    the test suite (tests/run.sh)
#   make bench   the benchmarks (tests/bench/run.sh)
#   make gen     regenerate wrappers and tables from ../shared/registry/cl.xml
#                (the output is committed: a clone builds without the registry)
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wno-unused-parameter $(if $(filter true,$(CI)),-Werror)
B       := build
# A cross build (make CROSS_COMPILE=aarch64-linux-gnu-) goes to its own folder.
ifneq ($(CROSS_COMPILE),)
CC      := $(CROSS_COMPILE)gcc
B       := build/$(CROSS_COMPILE:-=)
endif
REGISTRY ?= ../shared/registry/cl.xml

# The folders and what each may use: LAYERS (checked by scripts/check-layers.sh).
# Includes name their folder ("trace/record.h"), from the top of the tree.
INC      := -I.

# Objects: each source compiled once for each way it is built, into a tree
# of its own under $(B), with its header dependencies (-MMD -MP): `make`
# after touching one file recompiles the objects that include it and
# relinks what uses them. The trees (the sanitizer ones: tests/tests.mk):
#   obj   the tools: report, try, launcher, probe, replay, viewer
#   pic   the shim: position-independent, its symbols hidden
#   mpi   report.c with MPI, for cltrace-report-mpi
CC_obj   = $(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 $(INC)
CC_pic   = $(CC_obj) -fPIC -fvisibility=hidden
CC_mpi   = mpicc $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 $(INC) -DCLT_MPI
define OBJ_TREE
$(B)/$(1)/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(DEBUG_LINES) -MMD -MP -c -o $$@ $$<
endef
$(foreach t,obj pic mpi,$(eval $(call OBJ_TREE,$(t))))
# The generated wrappers (17,000 lines) and the writer's decoders inlined
# into each command's (calls.c): line tables only (-g1), enough for a stack
# or a sanitizer's report. Their full debug information took 40 % of their
# compile: 18 of 78 s of CPU over the shim's three builds, 2 cores (2026-12-01).
$(foreach t,pic asan-pic tsan-pic,$(B)/$(t)/capture/generated/clt_wrappers.o $(B)/$(t)/writer/calls.o): DEBUG_LINES := -g1
objs = $(addprefix $(B)/$(1)/,$(2:.c=.o))
# An archive of objects; a program linked from objects and archives, in order.
archive = rm -f $@ && $(AR) rcs $@ $^
LINK     = $(CC) $(CFLAGS) -o $@ $(filter %.o %.a,$^) $(LDFLAGS)

# The trace library: the contract's code both the shim and the report use.
TRACE_LIB_SRC := trace/cltrace.pb-c.c common/map.c common/bytes.c
SHIM_SRC := $(wildcard capture/*.c writer/*.c trace/*.c common/*.c replay/take/*.c replay/folder/*.c override/*.c) \
            capture/generated/clt_wrappers.c \
            trace/generated/clt_tables.c

all: $(B)/libcltrace.so $(B)/cltrace $(B)/cltrace-view $(B)/cltrace-report $(B)/cltrace-probe $(B)/cltrace-replay $(B)/cltrace-try \
     $(B)/cltrace-nvregs

# protobuf-c and libdeflate go inside the shim (hidden by the version script)
# where their archives are installed: every library a preloaded shim brings
# joins the process's global symbol scope, which each later symbol lookup
# walks (loading PoCL's LLVM: ~0.08 ms for each one), and is one more to map
# at start and undo at exit. Else they are linked as usual.
SHIM_DEPS := $(foreach l,protobuf-c deflate,$(or $(filter /%,$(shell $(CC) -print-file-name=lib$(l).a)),-l$(l)))
# Relative relocations packed (binutils 2.38, glibc 2.36): the tables' 4,500
# pointers relocated from 1.3 KB at load, not from 109 KB of records.
RELR := $(shell echo 'int f(void){return 0;}' | $(CC) -x c -shared -fPIC -o /dev/null - \
                -Wl,--fatal-warnings,-z,pack-relative-relocs 2>/dev/null && echo -Wl,-z,pack-relative-relocs)
SHIM_LINK = -shared -Wl,--version-script=capture/libcltrace.map -Wl,-z,now -Wl,-Bsymbolic-functions

$(B)/libcltrace.so: $(call objs,pic,$(SHIM_SRC)) capture/libcltrace.map
	$(LINK) $(SHIM_LINK) $(RELR) $(SHIM_DEPS) -ldl -lpthread

LAUNCHER_SRC := launcher/launcher.c launcher/ctl.c common/config.c common/window_spec.c common/ctl.c common/beside.c
$(B)/cltrace: $(call objs,obj,$(LAUNCHER_SRC))
	$(LINK)

# `cltrace probe` runs it (installed beside the shim): links the OpenCL loader itself.
$(B)/cltrace-probe: $(call objs,obj,probe/probe.c common/probe_file.c common/cache.c)
	$(LINK) -lOpenCL

# The shim runs it (installed beside it) for NVIDIA's register counts: a
# program's private build in a process of its own; links the OpenCL loader.
$(B)/cltrace-nvregs: $(call objs,obj,nvregs/main.c common/nvregs_cache.c common/cache.c common/probe_file.c)
	$(LINK) -lOpenCL

# `cltrace replay` and `cltrace tune` run it (installed beside the shim): a
# captured launch run again; links the OpenCL loader itself.
REPLAY_SRC := $(wildcard replay/*.c replay/folder/*.c)
$(B)/cltrace-replay: $(call objs,obj,$(REPLAY_SRC))
	$(LINK) -lOpenCL -lm

TRACE_LIB := $(B)/libcltrace-trace.a
$(TRACE_LIB): $(call objs,obj,$(TRACE_LIB_SRC))
	$(archive)

# report/: read (model/) -> judge (rules/) -> views (views/) -> present
# (formats/, over escape/); the commands at the top (LAYERS says the order).
# The model, the trace read into numbers, is a library of its own: the
# report, the MPI report, `cltrace try` and the fuzzer link it.
REPORT_MODEL_SRC := $(filter-out report/model/fuzz%,$(wildcard report/model/*.c))
MODEL_LIB := $(B)/libcltrace-model.a
$(MODEL_LIB): $(call objs,obj,$(REPORT_MODEL_SRC))
	$(archive)
REPORT_TOP_SRC := $(filter-out report/fuzz_reader.c report/report.c,$(wildcard report/*.c)) \
                  $(wildcard report/rules/*.c report/views/*.c report/formats/*.c report/escape/*.c)
REPORT_LIBS := -lprotobuf-c -lisal -lz -lm -lpthread
$(B)/cltrace-report: $(call objs,obj,report/report.c $(REPORT_TOP_SRC)) $(MODEL_LIB) $(TRACE_LIB)
	$(LINK) $(REPORT_LIBS)

# `cltrace try` runs it (installed beside the shim): runs the program under
# cltrace as it is and with a change, reads the traces (report/model).
TRY_SRC := $(wildcard try/*.c) report/escape/escape.c common/beside.c common/kernel_names.c
$(B)/cltrace-try: $(call objs,obj,$(TRY_SRC)) $(MODEL_LIB) $(TRACE_LIB)
	$(LINK) $(REPORT_LIBS)

# The report over MPI (where mpicc exists): `mpirun -n K cltrace-report-mpi job/`.
$(B)/cltrace-report-mpi: $(call objs,mpi,report/report.c) $(call objs,obj,$(REPORT_TOP_SRC)) $(MODEL_LIB) $(TRACE_LIB)
	mpicc $(CFLAGS) -o $@ $(filter %.o %.a,$^) $(LDFLAGS) $(REPORT_LIBS)
MPI_REPORT := $(if $(shell command -v mpicc 2> /dev/null),$(B)/cltrace-report-mpi)

# The reader under libFuzzer (clang, its own tree); seeds: the committed fixture.
FUZZ_SECONDS ?= 20
CC_fuzz = clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -std=gnu11 $(INC)
$(eval $(call OBJ_TREE,fuzz))
$(B)/fuzz/libcltrace-model.a: $(call objs,fuzz,$(REPORT_MODEL_SRC) $(TRACE_LIB_SRC))
	$(archive)
$(B)/fuzz_reader: $(call objs,fuzz,report/fuzz_reader.c) $(B)/fuzz/libcltrace-model.a
	clang -g -fsanitize=fuzzer,address,undefined -o $@ $^ -lprotobuf-c -lisal -lz
fuzz: $(B)/fuzz_reader
	# what the fuzzer once found, each run first (the two decoders parted on it)
	$(B)/fuzz_reader tests/fixtures/fuzz-found/*
	mkdir -p $(B)/fuzz-corpus && cp tests/fixtures/*.pftrace.gz tests/fixtures/fuzz-found/* $(B)/fuzz-corpus/
	# the raw packets too (a gzip stream hides them from mutation): a
	# trace's first 64 KiB, and its packets one by one (model/fastread.c)
	for f in tests/fixtures/*.pftrace.gz; do gzip -dc $$f | head -c 65536 > $(B)/fuzz-corpus/$$(basename $$f .gz).raw; done
	$(PY3) tests/fuzz_packets.py tests/fixtures/pocl-leaks.pftrace.gz $(B)/fuzz-corpus 200
	$(B)/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=1024 -timeout=5 -max_len=65536 $(B)/fuzz-corpus

$(B)/cltrace-view: $(call objs,obj,viewer/view.c)
	$(LINK)

$(B):
	mkdir -p $(B)

deps:
	sh scripts/deps.sh

$(B)/examples/vecadd: examples/vecadd/vecadd.c | $(B)
	mkdir -p $(B)/examples
	$(CC) $(CFLAGS) $(WARN) -o $@ $< -lOpenCL

# The problem/fix examples: one program each, --fixed runs the fix.
EXAMPLES := transfers matmul transpose copy nbody workgroup leaks sync underfill
define EXAMPLE_RULE
$(B)/examples/$(1): examples/$(1)/$(1).c examples/common/example.h | $(B)
	mkdir -p $(B)/examples
	$(CC) $(CFLAGS) $(WARN) -g -o $$@ $$< -lOpenCL -lm
endef
$(foreach x,$(EXAMPLES),$(eval $(call EXAMPLE_RULE,$(x))))
EXAMPLE_BINS := $(addprefix $(B)/examples/,$(EXAMPLES))

# Phases marked with include/cltrace.h (not a problem/fix pair: tests/run.sh).
$(B)/examples/phases: examples/phases/phases.c examples/common/example.h include/cltrace.h | $(B)
	mkdir -p $(B)/examples
	$(CC) $(CFLAGS) $(WARN) -Iinclude -g -o $@ $< -lOpenCL
EXAMPLE_BINS += $(B)/examples/phases
# A job of ranks, one slow (tests/jobs.sh runs it under mpirun).
$(B)/examples/job: examples/job/job.c examples/common/example.h | $(B)
	mkdir -p $(B)/examples
	if command -v mpicc > /dev/null && echo '#include <mpi.h>' | mpicc -x c -E - > /dev/null 2>&1; then \
	    mpicc $(CFLAGS) $(WARN) -DWITH_MPI -g -o $@ $< -lOpenCL -lm; \
	else $(CC) $(CFLAGS) $(WARN) -g -o $@ $< -lOpenCL -lm; fi
EXAMPLE_BINS += $(B)/examples/job
# The same without MPI (its rank from the environment): tests that set the
# launcher's variables by hand run this one (an MPI singleton would start
# a daemon of its own).
$(B)/examples/job-nompi: examples/job/job.c examples/common/example.h | $(B)
	mkdir -p $(B)/examples
	$(CC) $(CFLAGS) $(WARN) -g -o $@ $< -lOpenCL -lm
EXAMPLE_BINS += $(B)/examples/job-nompi

# Each example, problem and fixed, under the tracer: the report finds the
# expected rules on the problem and none of them on the fix.
examples: all $(EXAMPLE_BINS)
	bash scripts/check-examples.sh $(EXAMPLES)

run: all $(B)/examples/vecadd
	mkdir -p $(B)/traces
	$(B)/cltrace -o $(B)/traces -- $(B)/examples/vecadd
	@echo "open it at https://ui.perfetto.dev (Open trace file)"

clean:
	rm -rf $(B)

# make install PREFIX=/usr/local DESTDIR=: GNU layout; the launcher finds the
# shim in ../lib/cltrace relative to itself, so the tree can be moved.
PREFIX  ?= /usr/local
BINDIR  := $(DESTDIR)$(PREFIX)/bin
SHIMDIR := $(DESTDIR)$(PREFIX)/lib/cltrace
INCDIR  := $(DESTDIR)$(PREFIX)/include
MANDIR  := $(DESTDIR)$(PREFIX)/share/man/man1
DOCDIR  := $(DESTDIR)$(PREFIX)/share/doc/cltrace
COMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
TOOLS   := cltrace cltrace-report cltrace-view
DOCS    := README.md CHANGELOG.md docs/TRACING.md docs/PERFORMANCE.md docs/GPU.md trace/TRACE_FORMAT.md \
           examples/phases/phases.c
install: all
	install -d $(BINDIR) $(SHIMDIR) $(INCDIR) $(MANDIR) $(DOCDIR) $(COMPDIR)
	install -m 755 $(addprefix $(B)/,$(TOOLS)) $(BINDIR)/
	install -m 755 $(B)/libcltrace.so $(B)/cltrace-probe $(B)/cltrace-replay $(B)/cltrace-try $(B)/cltrace-nvregs \
	    $(SHIMDIR)/
	install -m 644 include/cltrace.h $(INCDIR)/
	install -m 644 $(addprefix man/,$(addsuffix .1,$(TOOLS))) $(MANDIR)/
	install -m 644 $(DOCS) $(DOCDIR)/
	install -m 644 report/README.md $(DOCDIR)/REPORT.md
	install -m 644 completion/cltrace.bash $(COMPDIR)/cltrace
	ln -sf cltrace $(COMPDIR)/cltrace-report
	ln -sf cltrace $(COMPDIR)/cltrace-view
uninstall:
	rm -f $(addprefix $(BINDIR)/,$(TOOLS)) $(SHIMDIR)/libcltrace.so $(SHIMDIR)/cltrace-probe $(SHIMDIR)/cltrace-replay $(SHIMDIR)/cltrace-try $(SHIMDIR)/cltrace-nvregs \
	      $(INCDIR)/cltrace.h
	rm -f $(addprefix $(MANDIR)/,$(addsuffix .1,$(TOOLS))) $(addprefix $(DOCDIR)/,$(notdir $(DOCS)) REPORT.md)
	rm -f $(addprefix $(COMPDIR)/,$(TOOLS))
	@# the folders install made, innermost first, where nothing else lives in them
	for d in $(SHIMDIR) $(DOCDIR) $(COMPDIR) $(dir $(COMPDIR)) $(MANDIR) $(dir $(MANDIR)) $(dir $(DOCDIR)) \
	         $(DESTDIR)$(PREFIX)/share $(BINDIR) $(DESTDIR)$(PREFIX)/lib $(INCDIR) $(DESTDIR)$(PREFIX); do \
	    [ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d; done

gen:
	python3 gen/gen.py $(REGISTRY) trace/generated capture/generated tests/forward/generated
	cd trace && protoc-c --c_out=. cltrace.proto

include tests/tests.mk
# Each object's header dependencies, as its compile found them.
-include $(shell find $(B) -name '*.d' 2> /dev/null)

.PHONY: all gen deps run clean fuzz examples install uninstall
