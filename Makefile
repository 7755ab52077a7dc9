# cltrace. `make` builds build/libcltrace.so and build/cltrace; `make test`
# runs the suite; `make bench` the benchmarks; `make gen` regenerates the
# wrappers from ../shared/registry/cl.xml (the output is committed).
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wno-unused-parameter $(if $(filter true,$(CI)),-Werror)
B       := build
REGISTRY ?= ../shared/registry/cl.xml

SHIM_SRC := $(wildcard intercept/*.c) intercept/generated/clt_wrappers.c \
            intercept/generated/clt_tables.c intercept/proto/cltrace.pb-c.c
SHIM_SRC := $(filter-out intercept/launcher.c,$(SHIM_SRC))
HDRS     := $(wildcard intercept/*.h intercept/generated/*.h intercept/proto/*.h)

all: $(B)/libcltrace.so $(B)/cltrace

$(B)/libcltrace.so: $(SHIM_SRC) $(HDRS) intercept/libcltrace.map | $(B)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -fPIC -shared -fvisibility=hidden -Iintercept \
	  -Wl,--version-script=intercept/libcltrace.map -Wl,-z,now -o $@ $(SHIM_SRC) \
	  -lprotobuf-c -lz -ldl -lpthread

$(B)/cltrace: intercept/launcher.c intercept/config.c intercept/config.h | $(B)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -Iintercept -o $@ intercept/launcher.c intercept/config.c

$(B):
	mkdir -p $(B)

gen:
	python3 intercept/gen/gen.py $(REGISTRY) intercept/generated
	cd intercept/proto && cp ../../$(dir $(REGISTRY))../perfetto/cltrace.proto . 2>/dev/null; protoc-c --c_out=. cltrace.proto

include tests/tests.mk

.PHONY: all gen
