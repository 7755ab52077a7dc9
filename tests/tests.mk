# Test programs and sanitizer builds of the shim (included by ../Makefile).
T := $(B)/tests
PY3 := /usr/bin/python3
TEST_CFLAGS := -O1 -g -Wall -Wextra $(if $(filter true,$(CI)),-Werror)
SAN_ASAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_TSAN := -fsanitize=thread

# The sanitizer trees of objects (../Makefile: OBJ_TREE): the shim's variants,
# and the report's and the unit tests' parts under ASan and UBSan.
CC_asan-obj = $(CC) $(TEST_CFLAGS) $(SAN_ASAN) -std=gnu11 $(INC)
CC_asan-pic = $(CC) -O1 -g $(SAN_ASAN) $(WARN) -std=gnu11 -fPIC -fvisibility=hidden $(INC)
CC_tsan-pic = $(CC) -O1 -g $(SAN_TSAN) $(WARN) -std=gnu11 -fPIC -fvisibility=hidden $(INC)
$(foreach t,asan-obj asan-pic tsan-pic,$(eval $(call OBJ_TREE,$(t))))
LINK_ASAN = $(CC_asan-obj) -o $@ $(filter %.o %.a,$^)
$(B)/asan-obj/libcltrace-model.a: $(call objs,asan-obj,$(REPORT_MODEL_SRC))
	$(archive)
$(B)/asan-obj/libcltrace-trace.a: $(call objs,asan-obj,$(TRACE_LIB_SRC))
	$(archive)
ASAN_MODEL := $(B)/asan-obj/libcltrace-model.a $(B)/asan-obj/libcltrace-trace.a

TEST_BINS := $(T)/vecadd $(T)/threads $(T)/libfakecl.so $(T)/forward_check \
             $(B)/asan/libcltrace.so $(B)/tsan/libcltrace.so $(T)/threads-tsan

$(T) $(B)/asan $(B)/tsan:
	mkdir -p $@

$(T)/vecadd: examples/vecadd/vecadd.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
$(T)/timeline: tests/apps/timeline.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS) -lOpenCL
TEST_BINS += $(T)/timeline
$(T)/long_names: tests/apps/long_names.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS) -lOpenCL
TEST_BINS += $(T)/long_names
$(T)/host_gap: tests/apps/host_gap.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS) -lOpenCL
TEST_BINS += $(T)/host_gap
$(T)/sample_stress: tests/apps/sample_stress.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS) -lOpenCL -ldl -lpthread
TEST_BINS += $(T)/sample_stress
$(T)/sample_stress-fp: tests/apps/sample_stress.c | $(T)    # frames found by their frame pointer
	$(CC) $(TEST_CFLAGS) -O2 -fno-omit-frame-pointer -o $@ $< $(LDFLAGS) -lOpenCL -ldl -lpthread
TEST_BINS += $(T)/sample_stress-fp
$(T)/sample_stress-tsan: tests/apps/sample_stress.c | $(T)
	$(CC) $(TEST_CFLAGS) $(SAN_TSAN) -o $@ $< $(LDFLAGS) -lOpenCL -ldl -lpthread
TEST_BINS += $(T)/sample_stress-tsan
$(T)/dlopen_app: tests/apps/dlopen_app.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -ldl
TEST_BINS += $(T)/dlopen_app
$(T)/dlopen_app_linked: tests/apps/dlopen_app.c | $(T)
	$(CC) $(TEST_CFLAGS) -DLINKED -o $@ $< -ldl -lOpenCL
TEST_BINS += $(T)/dlopen_app_linked
$(T)/exits: tests/apps/exits.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL -lpthread
TEST_BINS += $(T)/exits
$(T)/kerneltruth: scripts/kerneltruth.c scripts/clbench_platform.h | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/kerneltruth
$(T)/callbacks: tests/apps/callbacks.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/callbacks
$(T)/libfakempi.so: tests/apps/fakempi.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl
$(T)/libfakeprobe.so: tests/apps/fakeprobe.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -lOpenCL
$(T)/mpi_probe_app: tests/apps/mpi_probe_app.c $(T)/libfakempi.so $(T)/libfakeprobe.so | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(T) -lfakempi -Wl,-rpath,'$$ORIGIN' -lOpenCL
$(T)/old_python: tests/apps/old_python.c | $(T)
	$(CC) $(TEST_CFLAGS) -rdynamic -o $@ $< -lOpenCL
TEST_BINS += $(T)/callbacks $(T)/mpi_probe_app $(T)/old_python
$(T)/libstall.so: tests/apps/stall_write.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl
TEST_BINS += $(T)/libstall.so
$(T)/badargs: tests/apps/badargs.c | $(T)
	$(CC) $(TEST_CFLAGS) -Wno-deprecated-declarations -o $@ $< -lOpenCL
TEST_BINS += $(T)/badargs
$(T)/churn: tests/apps/churn.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/churn
$(T)/lifetimes: tests/apps/lifetimes.c | $(T)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $< -lOpenCL
TEST_BINS += $(T)/lifetimes
$(T)/memory_peak: tests/apps/memory_peak.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/memory_peak
$(T)/leak_classes: tests/apps/leak_classes.c | $(T)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $< -lOpenCL
TEST_BINS += $(T)/leak_classes
$(T)/wrong_answer: tests/apps/wrong_answer.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL -lm
TEST_BINS += $(T)/wrong_answer
$(T)/override_app: tests/apps/override_app.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/override_app
$(T)/replay_kernels: tests/apps/replay_kernels.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/replay_kernels
$(T)/windows: tests/apps/windows.c include/cltrace.h | $(T)
	$(CC) $(TEST_CFLAGS) -I. -o $@ $< -lOpenCL -ldl
TEST_BINS += $(T)/windows
$(T)/test_digest: $(call objs,asan-obj,tests/unit/test_digest.c common/digest.c common/select.c common/map.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lm
TEST_BINS += $(T)/test_digest
# A fake ICD: PoCL with device timestamps that cannot be true (first_screen.sh)
$(T)/libfaketiming.so: tests/apps/fake_timing_icd.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl
TEST_BINS += $(T)/libfaketiming.so
$(T)/threads: tests/apps/threads.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL -lpthread
$(T)/threads-tsan: tests/apps/threads.c | $(T)
	$(CC) $(TEST_CFLAGS) $(SAN_TSAN) -o $@ $< -lOpenCL -lpthread
$(T)/bench_calls-tsan: tests/bench/bench_calls.c | $(T)
	$(CC) $(TEST_CFLAGS) $(SAN_TSAN) -o $@ $< -lOpenCL -ldl
TEST_BINS += $(T)/bench_calls-tsan
# -Bsymbolic-functions: the fake's own table points at its own functions, as
# a driver's does, even with the shim preloaded (which exports the same names).
$(T)/libfakecl.so: tests/forward/generated/fake_cl.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -Wl,-Bsymbolic-functions -o $@ $<
$(T)/forward_check: tests/forward/forward_main.c tests/forward/generated/forward_check.c tests/forward/forward_check.h | $(T)
	$(CC) $(TEST_CFLAGS) -Itests/forward -o $@ tests/forward/forward_main.c tests/forward/generated/forward_check.c -ldl

define SHIM_VARIANT
$(B)/$(1)/libcltrace.so: $(call objs,$(1)-pic,$(SHIM_SRC)) capture/libcltrace.map
	@mkdir -p $$(@D)
	$(CC) -O1 -g $(2) -o $$@ $$(filter %.o,$$^) -shared -Wl,--version-script=capture/libcltrace.map \
	  -Wl,-Bsymbolic-functions -lprotobuf-c -ldeflate -ldl -lpthread
endef
$(eval $(call SHIM_VARIANT,asan,$(SAN_ASAN)))
$(eval $(call SHIM_VARIANT,tsan,$(SAN_TSAN)))


$(T)/test_fastpack: $(call objs,asan-obj,tests/unit/test_fastpack.c trace/cltrace.pb-c.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lprotobuf-c
TEST_BINS += $(T)/test_fastpack

$(T)/test_ownpack: $(call objs,asan-obj,tests/unit/test_ownpack.c writer/ownpack.c trace/cltrace.pb-c.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lprotobuf-c
TEST_BINS += $(T)/test_ownpack

$(T)/bench_calls: tests/bench/bench_calls.c | $(T)
	$(CC) -O2 -g -Wall -Wextra -o $@ $< -lOpenCL -ldl

TEST_BINS += $(T)/bench_calls
# bench_calls --last-dso: the end of the process's user space (teardown-check.py)
$(T)/test_symtab: tests/unit/test_symtab.c writer/symtab.c common/map.c common/cache.c common/probe_file.c \
                  writer/symtab.h | $(T)
	$(CC) $(TEST_CFLAGS) $(INC) -o $@ tests/unit/test_symtab.c writer/symtab.c common/map.c common/cache.c \
	    common/probe_file.c -ldw -lelf -ldl
TEST_BINS += $(T)/test_symtab
$(T)/test_symreport: tests/unit/test_symreport.c writer/symbols.c writer/symtab.c common/loaded.c common/map.c \
                     common/cache.c common/probe_file.c trace/cltrace.pb-c.c writer/symbols.h | $(T)
	$(CC) $(TEST_CFLAGS) $(INC) -o $@ $(filter %.c,$^) -lprotobuf-c -ldl
TEST_BINS += $(T)/test_symreport
$(T)/unwind_check.so: tests/unit/test_unwind.c capture/unwind.c capture/unwind.h common/loaded.c | $(T)
	$(CC) $(TEST_CFLAGS) $(INC) -O2 -shared -fPIC -Wl,--no-undefined -o $@ tests/unit/test_unwind.c capture/unwind.c \
	    common/loaded.c -ldl -lpthread
TEST_BINS += $(T)/unwind_check.so
$(T)/last_fini.so: tests/bench/last_fini.c | $(T)
	$(CC) -O2 -Wall -Wextra $(if $(filter true,$(CI)),-Werror) -shared -fPIC -o $@ $<
TEST_BINS += $(T)/last_fini.so
# t_command_without_profiling_data: a "driver" with no profiling data for a map
$(T)/noprofile.so: tests/apps/noprofile.c | $(T)
	$(CC) -O2 -Wall -Wextra $(if $(filter true,$(CI)),-Werror) -shared -fPIC -o $@ $< -Wl,--no-as-needed -lOpenCL
TEST_BINS += $(T)/noprofile.so
# t_profiling_switched_per_run_of_timed_commands: a "driver" that logs each switch
$(T)/profswitch.so: tests/apps/profswitch.c | $(T)
	$(CC) -O2 -Wall -Wextra $(if $(filter true,$(CI)),-Werror) -shared -fPIC -o $@ $< -Wl,--no-as-needed -lOpenCL
TEST_BINS += $(T)/profswitch.so
# selfcost-check.py --placebo: threads that only wake up, and nothing else
$(T)/placebo.so: tests/bench/placebo.c | $(T)
	$(CC) -O2 -Wall -Wextra $(if $(filter true,$(CI)),-Werror) -shared -fPIC -o $@ $< -lpthread
TEST_BINS += $(T)/placebo.so
# selfcost-check.py --delay: cltrace's time per call as a bare busy-wait, and nothing else
$(T)/delay.so: tests/bench/delay.c | $(T)
	$(CC) -O2 -Wall -Wextra $(if $(filter true,$(CI)),-Werror) -shared -fPIC -o $@ $< -ldl
TEST_BINS += $(T)/delay.so
$(T)/bench_fingerprint: tests/bench/bench_fingerprint.c common/digest.c common/digest.h | $(T)
	$(CC) -O2 -g -Wall -Wextra $(if $(filter true,$(CI)),-Werror) $(INC) -o $@ $< common/digest.c -lOpenCL
TEST_BINS += $(T)/bench_fingerprint

$(T)/bench_ranges: tests/bench/bench_ranges.c include/cltrace.h | $(T)
	$(CC) -O2 -g -Wall -Wextra -Iinclude -o $@ $<

bench: all $(if $(MPI_REPORT),$(T)/bench_mpi) $(T)/bench_calls $(T)/last_fini.so $(T)/placebo.so $(T)/delay.so $(T)/bench_ranges $(T)/bench_fingerprint $(T)/libfakecl.so
	bash tests/bench/run.sh

.PHONY: bench
$(T)/test_decode: $(call objs,asan-obj,tests/unit/test_decode.c trace/decode.c trace/generated/clt_tables.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_decode
$(T)/test_occupancy: $(call objs,asan-obj,tests/unit/test_occupancy.c report/model/occupancy.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_occupancy
$(T)/test_selfcost: $(call objs,asan-obj,tests/unit/test_selfcost.c report/views/selfcost.c report/model/devtiming.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_selfcost
$(T)/test_pylines: $(call objs,asan-obj,tests/unit/test_pylines.c writer/pylines.c common/map.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_pylines
$(T)/test_ownthreads: $(call objs,asan-obj,tests/unit/test_ownthreads.c writer/ownthreads.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lpthread
TEST_BINS += $(T)/test_ownthreads
$(T)/test_gzstream: $(call objs,asan-obj,tests/unit/test_gzstream.c writer/gzstream.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -ldeflate -lz
TEST_BINS += $(T)/test_gzstream

$(T)/test_clock: $(call objs,asan-obj,tests/unit/test_clock.c writer/clock.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_clock
$(T)/test_tsc: $(call objs,asan-obj,tests/unit/test_tsc.c trace/clock.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_tsc
$(T)/test_pending: $(call objs,asan-obj,tests/unit/test_pending.c capture/pending.c common/map.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_pending
$(T)/test_loaded: $(call objs,asan-obj,tests/unit/test_loaded.c common/loaded.c)
	@mkdir -p $(@D)
	$(LINK_ASAN) -ldl -lm
TEST_BINS += $(T)/test_loaded
$(T)/test_probe: $(call objs,asan-obj,tests/unit/test_probe.c common/probe_file.c)
	@mkdir -p $(@D)
	$(LINK_ASAN)
TEST_BINS += $(T)/test_probe
$(T)/test_source: $(call objs,asan-obj,tests/unit/test_source.c) $(ASAN_MODEL)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lprotobuf-c -lisal -lz
TEST_BINS += $(T)/test_source
# Each rule family on a small model the test builds (tests/unit/test_rules.c).
$(T)/test_rules: $(call objs,asan-obj,tests/unit/test_rules.c $(wildcard report/rules/*.c)) $(ASAN_MODEL)
	@mkdir -p $(@D)
	$(LINK_ASAN) -lprotobuf-c -lisal -lz -lm
TEST_BINS += $(T)/test_rules
$(T)/cltrace-report-asan: $(call objs,asan-obj,report/report.c $(REPORT_TOP_SRC)) $(ASAN_MODEL)
	@mkdir -p $(@D)
	$(LINK_ASAN) $(REPORT_LIBS)
TEST_BINS += $(T)/cltrace-report-asan
$(T)/cltrace-replay-asan: $(call objs,asan-obj,$(REPLAY_SRC))
	@mkdir -p $(@D)
	$(LINK_ASAN) -lOpenCL -lm
TEST_BINS += $(T)/cltrace-replay-asan


# A counting stand-in for libOpenCL.so.1 (tests/count): the calls a program
# makes, counted without cltrace, to compare with its trace.
$(T)/count/libOpenCL.so.1: tests/count/gen_counter.py | $(T)
	mkdir -p $(T)/count
	$(PY3) tests/count/gen_counter.py "$$(/sbin/ldconfig -p | awk '/libOpenCL\.so\.1 /{print $$NF; exit}')" $(T)/count/clcount.c
	$(CC) -shared -fPIC -Wl,--version-script=$(T)/count/clcount.map -o $@ $(T)/count/clcount.c -ldl
	ln -sf libOpenCL.so.1 $(T)/count/libOpenCL.so
TEST_BINS += $(T)/count/libOpenCL.so.1
$(T)/deep_stack: tests/apps/deep_stack.c | $(T)
	$(CC) -O1 -g -Wall -Wextra -o $@ $< -lOpenCL
TEST_BINS += $(T)/deep_stack
$(T)/libcxxlib.so: tests/apps/cxx_lib.c | $(T)
	$(CC) -O2 -fPIC -shared -s -o $@ $< -lOpenCL
$(T)/cxx_stack: tests/apps/cxx_stack.cpp $(T)/libcxxlib.so | $(T)
	$(CXX) -O0 -g -Wall -Wextra -o $@ $< -L$(T) -lcxxlib -Wl,-rpath,'$$ORIGIN' -lOpenCL
TEST_BINS += $(T)/cxx_stack
$(T)/out_room: tests/apps/out_room.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/out_room
$(T)/old_platform: tests/apps/old_platform.c | $(T)
	$(CC) $(TEST_CFLAGS) -Wno-deprecated-declarations -o $@ $< -lOpenCL
TEST_BINS += $(T)/old_platform
$(T)/cbgate: tests/apps/cbgate.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/cbgate
$(T)/kernel_facts: tests/apps/kernel_facts.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL
TEST_BINS += $(T)/kernel_facts

$(T)/trace_order: tests/unit/trace_order.c $(TRACE_LIB_SRC) | $(T)
	$(CC) $(TEST_CFLAGS) $(INC) -O2 -o $@ tests/unit/trace_order.c trace/cltrace.pb-c.c -lprotobuf-c -lz
TEST_BINS += $(T)/trace_order

# make bench: an MPI call's cost and MPI_Init/MPI_Finalize's (where mpicc exists)
$(T)/bench_mpi: tests/bench/bench_mpi.c | $(T)
	mpicc -O2 -Wall -Wextra -o $@ $<
# An MPI + OpenCL halo exchange (tests/jobs.sh), where mpicc exists.
$(T)/mpi_halo: tests/apps/mpi_halo.c | $(T)
	mpicc $(TEST_CFLAGS) -o $@ $< -lOpenCL
MPI_APPS := $(if $(MPI_REPORT),$(T)/mpi_halo)

# A stand-in ICD that reuses handles, its app, and a fork that fails (tests/reuse.sh, tests/try.sh)
$(T)/libstandin.so: tests/apps/standin_icd.c | $(T)
	$(CC) $(TEST_CFLAGS) -Wno-unused-parameter -shared -fPIC -o $@ $< -lpthread
$(T)/reuse_handles: tests/apps/reuse_handles.c | $(T)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lOpenCL -lpthread
$(T)/libfailfork.so: tests/apps/failfork.c | $(T)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl
TEST_BINS += $(T)/libstandin.so $(T)/reuse_handles $(T)/libfailfork.so

# Last: the prerequisites of a rule are read where the rule stands.
test-bins: all $(TEST_BINS) $(EXAMPLE_BINS) $(B)/examples/vecadd $(MPI_REPORT) $(MPI_APPS)

# (built on every core: the sanitizer variants each compile the whole shim)
test:
	$(MAKE) -j$(shell nproc) test-bins
	bash tests/run.sh

# The arm64 subset alone (tests/arm64.sh: cross-built, run under qemu).
test-arm64: all
	ONLY="$$(grep -o '^t_arm64[a-z0-9_]*' tests/arm64.sh | tr '\n' ' ')" bash tests/run.sh

.PHONY: test test-bins test-arm64
