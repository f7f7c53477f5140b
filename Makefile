# gdrcheck - GPUDirect RDMA readiness checker
#
# Build needs only Debian packages: libibverbs-dev and libpci-dev (headers
# only: both are dlopen'd), zlib1g-dev, libjansson-dev (the JSON report and
# the capture's vendor facts are encoded with jansson), pkg-config. No CUDA
# toolkit: libcuda is dlopen'd. The unit tests also need libcmocka-dev.

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/gdrcheck
PKG_CONFIG ?= pkg-config
VERSION    := 0.1.0

CC      ?= cc
WARNFLAGS = -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow \
	    -Wformat=2 -Wformat-security -Wpointer-arith -Wcast-align \
	    -Wwrite-strings -Wundef -Wmissing-declarations -Wvla \
	    -Wnull-dereference -Wno-unused-parameter
OPTFLAGS ?= -O2 -g
# User CFLAGS/LDFLAGS are appended, never replace what the build needs.
BASE_CFLAGS = -std=gnu11 $(OPTFLAGS) $(WARNFLAGS) -D_GNU_SOURCE \
	      -DGDRCHECK_VERSION='"$(VERSION)"' -I. \
	      $(shell $(PKG_CONFIG) --cflags zlib jansson)
ALL_CFLAGS  = $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LIBS        = $(shell $(PKG_CONFIG) --libs zlib jansson) -ldl -lm -pthread
ALL_LDFLAGS = $(LDFLAGS)

# One folder per layer, listed bottom-up; every #include points down this
# list (tests/check-layers.sh, run by make check).
CORE_SRCS = core/names.c core/utf8.c core/result.c core/fold.c core/xalloc.c core/clock.c core/sha256.c \
	    decode/parse.c decode/pcie.c \
	    access/sysroot.c access/symtab.c access/cuda.c access/verbs.c access/mlx5.c access/nvml.c access/par.c access/worker.c \
	    access/pci.c access/ibsysfs.c access/reg.c access/capture.c access/outfile.c access/vendor_json.c access/vfacts.c \
	    access/peer_msg.c access/peer.c access/peer_run.c \
	    nccl/rules.c nccl/settings.c nccl/cumem.c nccl/model.c nccl/pciview.c nccl/netdev.c nccl/conf.c nccl/libfind.c \
	    gate/catalog.c gate/context.c gate/inventory.c gate/pcitree.c \
	    probes/common.c probes/host.c probes/gpu.c probes/nic.c \
	    probes/mechanism.c probes/topology.c probes/platform.c probes/platform_rules.c probes/platform_class.c probes/providers.c probes/registration.c probes/peer.c probes/peer_session.c \
	    probes/nccl_facts.c probes/nccl_state.c probes/nccl.c probes/nvlink.c probes/versions.c \
	    engine/gates.c engine/verdict.c engine/policy.c engine/fixes.c \
	    report/remedy.c report/text_util.c report/text_list.c report/text.c report/text_summary.c \
	    report/text_table.c report/text_problems.c \
	    report/json.c report/json_out.c \
	    report/junit.c report/prometheus.c report/redact.c report/failing.c report/codes.c
CORE_OBJS = $(CORE_SRCS:.c=.o)
OBJS      = gdrcheck.o $(CORE_OBJS)

DOUBLES = tests/doubles/libcuda-fake.so tests/doubles/libcuda-fake-old.so \
	  tests/doubles/libibverbs-fake.so \
	  tests/doubles/libibverbs-fake-old.so tests/doubles/libnvidia-ml-fake.so \
	  tests/doubles/libnvidia-ml-fake-old.so tests/doubles/libmlx5-fake.so \
	  tests/doubles/libmlx5-fake-old.so
UNIT_TESTS = tests/unit/test_parse tests/unit/test_verdict tests/unit/test_report tests/unit/test_sysroot tests/unit/test_pcie tests/unit/test_redact \
	     tests/unit/test_json tests/unit/test_nccl tests/unit/test_catalog \
	     tests/unit/test_vendor_json tests/unit/test_context tests/unit/test_deps \
	     tests/unit/test_nccl_libfind tests/unit/test_peer

.PHONY: all clean check check-quick test unit scenarios doubles install uninstall sanitize fuzz fuzz-smoke bench catalog-docs bench-parallel

all: gdrcheck

gdrcheck: $(OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $(OBJS) $(ALL_LDFLAGS) $(LIBS)

%.o: %.c
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(OBJS:.o=.d)

# --- test doubles: shared objects loaded through the same dlopen path -------
DOUBLE_CFLAGS = -std=gnu11 -O1 -g -fPIC -shared $(WARNFLAGS) -D_GNU_SOURCE -I.

doubles: $(DOUBLES)

tests/doubles/libcuda-fake.so: tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h decode/cuda_api.h
	$(CC) $(DOUBLE_CFLAGS) -Wl,-soname,libcuda.so.1 -o $@ tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c -pthread

# A driver before CUDA 11.7 (R470): no cuMemGetHandleForAddressRange.
tests/doubles/libcuda-fake-old.so: tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h decode/cuda_api.h
	$(CC) $(DOUBLE_CFLAGS) -DFAKE_CUDA_OLD -Wl,-soname,libcuda.so.1 -o $@ tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c -pthread

tests/doubles/libnvidia-ml-fake.so: tests/doubles/fake_nvml.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h decode/nvml_api.h
	$(CC) $(DOUBLE_CFLAGS) -Wl,-soname,libnvidia-ml.so.1 -o $@ tests/doubles/fake_nvml.c tests/doubles/fake_scenario.c

# A driver before nvmlDeviceGetNvLinkRemoteDeviceType and ..C2cModeInfoV.
tests/doubles/libnvidia-ml-fake-old.so: tests/doubles/fake_nvml.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h decode/nvml_api.h
	$(CC) $(DOUBLE_CFLAGS) -DFAKE_NVML_OLD -Wl,-soname,libnvidia-ml.so.1 -o $@ tests/doubles/fake_nvml.c tests/doubles/fake_scenario.c

tests/doubles/libibverbs-fake.so: tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libibverbs.map
	$(CC) $(DOUBLE_CFLAGS) -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=tests/doubles/libibverbs.map \
		-o $@ tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c

# An rdma-core older than v34: no IBVERBS_1.12 node, so no ibv_reg_dmabuf_mr.
tests/doubles/libibverbs-fake-old.so: tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libibverbs-old.map
	$(CC) $(DOUBLE_CFLAGS) -DFAKE_VERBS_OLD -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=tests/doubles/libibverbs-old.map \
		-o $@ tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c

# libmlx5 (Data Direct): rdma-core >= v54, and one older (no MLX5_1.25).
tests/doubles/libmlx5-fake.so: tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libmlx5.map
	$(CC) $(DOUBLE_CFLAGS) -Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=tests/doubles/libmlx5.map \
		-o $@ tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c -ldl

tests/doubles/libmlx5-fake-old.so: tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libmlx5-old.map
	$(CC) $(DOUBLE_CFLAGS) -DFAKE_MLX5_OLD -Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=tests/doubles/libmlx5-old.map \
		-o $@ tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c -ldl

# --- unit tests (cmocka) ------------------------------------------------------
# jansson also reads the JSON reports back in the tests.
TEST_LIBS = $(shell $(PKG_CONFIG) --libs cmocka jansson)

tests/unit/test_%: tests/unit/test_%.c $(CORE_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(CORE_OBJS) $(ALL_LDFLAGS) $(TEST_LIBS) $(LIBS)

unit: $(UNIT_TESTS)

scenarios: gdrcheck doubles

# One command runs every test layer and ends with "N passed, N failed".
check test: gdrcheck doubles unit
	./tests/run-all.sh

# The edit-test loop: unit tests, scenarios and consistency (~4 min on 2
# cores); `make check` runs every layer (~25 min: VMs, Slurm, ASan).
check-quick: gdrcheck doubles unit
	GDRCHECK_QUICK=1 ./tests/run-all.sh

# ASan + UBSan build in build/asan/ (the main build stays as it is).
sanitize: sanitize-check

# The man page's REASON CODES section and the schema's reason_code enum,
# rewritten from the catalog (gdrcheck --list-codes --json); make check
# fails on drift (tests/check-catalog.sh).
catalog-docs: gdrcheck
	tests/check-catalog.sh --update

install: gdrcheck
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DATADIR)
	install -m 0755 gdrcheck $(DESTDIR)$(BINDIR)/gdrcheck
	install -m 0644 man/gdrcheck.8 $(DESTDIR)$(MANDIR)/man8/gdrcheck.8
	install -m 0644 report/gdrcheck-report.schema.json $(DESTDIR)$(DATADIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gdrcheck $(DESTDIR)$(MANDIR)/man8/gdrcheck.8 \
	      $(DESTDIR)$(DATADIR)/gdrcheck-report.schema.json
	-rmdir $(DESTDIR)$(DATADIR)

clean:
	rm -f gdrcheck $(OBJS) $(OBJS:.o=.d) $(DOUBLES) $(UNIT_TESTS)
	rm -rf tests/out

# --- fuzzing: libFuzzer + ASan + UBSan (Debian: clang, libclang-rt-dev) -------
# Every sysfs/procfs/config-space parser family, and the JSON output, has a
# harness in tests/fuzz/ linked against the production sources, compiled
# again into build/fuzz/obj/
# (never the normal build's .o files). Seeds come from the scenario fixtures
# (tests/fuzz/make-corpus.sh). `make fuzz` runs each harness FUZZ_SECONDS;
# `make fuzz-smoke` is the short CI pass. Crash reproducers land in
# build/fuzz/artifacts/; rerun one with build/fuzz/HARNESS FILE.
CC_FUZZ      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR      = build/fuzz
FUZZ_SAN      = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS   = -std=gnu11 -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) \
		$(WARNFLAGS) -D_GNU_SOURCE -DGDRCHECK_VERSION='"$(VERSION)"' -I.
FUZZ_HARNESSES = fuzz_parse fuzz_pcie fuzz_sysroot fuzz_json fuzz_render fuzz_vendor fuzz_peer
FUZZ_BINS     = $(addprefix $(FUZZ_DIR)/,$(FUZZ_HARNESSES))
# Production sources each harness exercises.
FUZZ_SRCS_fuzz_parse   = decode/parse.c
FUZZ_SRCS_fuzz_pcie    = decode/pcie.c core/names.c
FUZZ_SRCS_fuzz_sysroot = access/sysroot.c
FUZZ_SRCS_fuzz_json    = report/json_out.c core/utf8.c
FUZZ_SRCS_fuzz_vendor  = access/vendor_json.c access/vfacts.c access/sysroot.c
FUZZ_SRCS_fuzz_peer    = access/peer_msg.c core/sha256.c
FUZZ_SRCS_fuzz_render  = core/names.c core/utf8.c core/result.c core/fold.c report/remedy.c report/text_util.c report/text.c \
			 report/text_summary.c report/text_table.c report/text_problems.c \
			 report/text_list.c report/json.c report/json_out.c report/junit.c \
			 report/prometheus.c report/failing.c core/xalloc.c \
			 gate/catalog.c
FUZZ_OBJS = $(addprefix $(FUZZ_DIR)/obj/,$(patsubst %.c,%.o,\
	    $(foreach h,$(FUZZ_HARNESSES),tests/fuzz/$(h).c $(FUZZ_SRCS_$(h)))))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC_FUZZ) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

-include $(FUZZ_OBJS:.o=.d)

# Each harness links the production sources it names above.
$(foreach h,$(FUZZ_HARNESSES),$(eval $(FUZZ_DIR)/$(h): \
	$(addprefix $(FUZZ_DIR)/obj/,$(FUZZ_SRCS_$(h):.c=.o))))
$(FUZZ_BINS): $(FUZZ_DIR)/%: $(FUZZ_DIR)/obj/tests/fuzz/%.o
	$(CC_FUZZ) $(FUZZ_SAN) -o $@ $^ $(shell $(PKG_CONFIG) --libs zlib jansson) -lm

# Seeds are rebuilt when a fixture changes.
$(FUZZ_DIR)/seeds.stamp: tests/fuzz/make-corpus.sh $(wildcard \
		tests/scenarios/mksysroot.py tests/scenarios/*/*.spec \
		tests/scenarios/*/*.tgz tests/scenarios/*/env)
	rm -rf $(FUZZ_DIR)/seeds
	tests/fuzz/make-corpus.sh $(FUZZ_DIR)/seeds
	touch $@

fuzz: $(FUZZ_BINS) $(FUZZ_DIR)/seeds.stamp
	tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_DIR) $(FUZZ_HARNESSES)

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=10

.PHONY: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_DIR)

# --- benchmark: bench/run (not a timed test; CI only checks that it runs) ---
# make bench                      7 repetitions, 1/8/64 GPUs x NICs, vs lspci
# make bench BENCH_ARGS=--quick   what CI runs: 2 repetitions, 1 and 8
BENCH_ARGS ?=
bench-parallel: gdrcheck doubles
	./bench/parallel $(BENCH_PARALLEL_ARGS)

bench: gdrcheck doubles
	./bench/run $(BENCH_ARGS)

# --- operator examples and the Debian package (tests/examples/) -------------
# make check-examples   CI gate, Slurm sweep/summary, Kubernetes manifests
#                       (needs shellcheck, jq, python3-yaml)
# make check-deb        dpkg-buildpackage in a copy, dpkg -x, run the binary
#                       (needs dpkg-dev, debhelper; about a minute)
# NCCL oracle (tools/nccl-oracle): NCCL's own topology code compiled from
# NCCL's git at each tag, recorded on the nccl-*/node-* scenarios into
# tests/nccl-oracle/.  Needs NCCL's sources and root; not part of `check`.
NCCL_GIT ?= /work/.mirror/NVIDIA+nccl/repo
.PHONY: nccl-oracle-record
nccl-oracle-record: doubles
	NCCL_GIT=$(NCCL_GIT) tools/nccl-oracle/record.sh $(NCCL_TAGS)

.PHONY: check-examples check-deb
check-examples: gdrcheck doubles
	./tests/examples/run.sh

check-deb: doubles
	./tests/examples/deb.sh

# --- sanitizers, out of tree: build/asan/ (the main build stays as it is) ---
# make sanitize-check  gdrcheck and the unit tests built again with
#                      -fsanitize=address,undefined into build/asan/, then
#                      unit + scenarios + fault matrix + options + files +
#                      fuzz-captures run on them
#                      (tests/sanitize-check.sh; ends "sanitize: N passed,
#                      N failed"). The test doubles stay uninstrumented: they
#                      are dlopen'd into the ASan binary, which loads the
#                      runtime first, so no LD_PRELOAD is needed.
# make valgrind        scenarios (a subset) and the options test under
#                      valgrind memcheck, worker included (tests/valgrind-check.sh)
ASAN_DIR   = build/asan
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	     -fno-omit-frame-pointer
ASAN_CORE  = $(addprefix $(ASAN_DIR)/obj/,$(CORE_SRCS:.c=.o))
ASAN_UNIT  = $(addprefix $(ASAN_DIR)/,$(UNIT_TESTS))

$(ASAN_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(ASAN_FLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(ASAN_CORE:.o=.d) $(ASAN_DIR)/obj/gdrcheck.d

$(ASAN_DIR)/gdrcheck: $(ASAN_DIR)/obj/gdrcheck.o $(ASAN_CORE)
	$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LIBS)

$(ASAN_DIR)/tests/unit/test_%: tests/unit/test_%.c $(ASAN_CORE)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(ASAN_FLAGS) $(CFLAGS) -o $@ $< $(ASAN_CORE) \
		$(LDFLAGS) $(TEST_LIBS) $(LIBS)

sanitize-check: gdrcheck doubles $(ASAN_DIR)/gdrcheck $(ASAN_UNIT)
	./tests/sanitize-check.sh $(ASAN_DIR)

valgrind: gdrcheck doubles
	./tests/valgrind-check.sh

.PHONY: sanitize-check valgrind

# --- ThreadSanitizer, out of tree: build/tsan/ -------------------------------
# make tsan-check  gdrcheck built again with -fsanitize=thread into
#                  build/tsan/, then every scenario with two GPUs or two RDMA
#                  devices (the worker's per-GPU set-up and per-device pair
#                  loop are threads) and a synthetic 8 GPU x 8 NIC node, with
#                  and without a data fault (tests/tsan-check.sh; any race
#                  report fails; ends "tsan: N passed, N failed").
TSAN_DIR   = build/tsan
TSAN_CORE  = $(addprefix $(TSAN_DIR)/obj/,$(CORE_SRCS:.c=.o))

$(TSAN_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g -fsanitize=thread $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(TSAN_CORE:.o=.d) $(TSAN_DIR)/obj/gdrcheck.d

$(TSAN_DIR)/gdrcheck: $(TSAN_DIR)/obj/gdrcheck.o $(TSAN_CORE)
	$(CC) -fsanitize=thread -o $@ $^ $(LDFLAGS) $(LIBS)

tsan-check: gdrcheck doubles $(TSAN_DIR)/gdrcheck
	./tests/tsan-check.sh $(TSAN_DIR)

.PHONY: tsan-check

# --- MemorySanitizer, out of tree: build/msan/ (clang only) -----------------
# make msan-check  gdrcheck, the libcuda/libibverbs doubles and the unit
#                  tests built with -fsanitize=memory into build/msan/, then
#                  the scenarios, the options test and the unit tests run on
#                  them (tests/msan-check.sh; ends "msan: N passed, N
#                  failed"). MSan needs every byte's writer instrumented:
#                  libc is intercepted and the doubles are built here, but
#                  Debian's libjansson is not, so what reads JSON back with
#                  jansson (test_json, the test_json_* cases of
#                  test_report) cannot run under it (false reports inside
#                  json_loads/json_dumps); the scenarios render every format
#                  under MSan instead. cmocka and zlib only read our bytes.
CC_MSAN    ?= clang
MSAN_DIR    = build/msan
MSAN_FLAGS  = -fsanitize=memory -fsanitize-memory-track-origins \
	      -fno-omit-frame-pointer
MSAN_CORE   = $(addprefix $(MSAN_DIR)/obj/,$(CORE_SRCS:.c=.o))
MSAN_UNIT   = $(addprefix $(MSAN_DIR)/,$(filter-out tests/unit/test_json tests/unit/test_vendor_json,\
	      $(UNIT_TESTS)))
MSAN_DOUBLES = $(MSAN_DIR)/doubles/libcuda-fake.so \
	       $(MSAN_DIR)/doubles/libibverbs-fake.so \
	       $(MSAN_DIR)/doubles/libibverbs-fake-old.so \
	       $(MSAN_DIR)/doubles/libmlx5-fake.so \
	       $(MSAN_DIR)/doubles/libmlx5-fake-old.so

$(MSAN_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(BASE_CFLAGS) -O1 -g $(MSAN_FLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(MSAN_CORE:.o=.d) $(MSAN_DIR)/obj/gdrcheck.d

$(MSAN_DIR)/gdrcheck: $(MSAN_DIR)/obj/gdrcheck.o $(MSAN_CORE)
	$(CC_MSAN) $(MSAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LIBS)

$(MSAN_DIR)/tests/unit/test_%: tests/unit/test_%.c $(MSAN_CORE)
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(BASE_CFLAGS) -O1 -g $(MSAN_FLAGS) $(CFLAGS) -o $@ $< \
		$(MSAN_CORE) $(LDFLAGS) $(TEST_LIBS) $(LIBS)

$(MSAN_DIR)/doubles/libcuda-fake.so: tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h decode/cuda_api.h
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(DOUBLE_CFLAGS) $(MSAN_FLAGS) -Wl,-soname,libcuda.so.1 \
		-o $@ tests/doubles/fake_cuda.c tests/doubles/fake_scenario.c

$(MSAN_DIR)/doubles/libibverbs-fake.so: tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libibverbs.map
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(DOUBLE_CFLAGS) $(MSAN_FLAGS) -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=tests/doubles/libibverbs.map \
		-o $@ tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c

$(MSAN_DIR)/doubles/libibverbs-fake-old.so: tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libibverbs-old.map
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(DOUBLE_CFLAGS) $(MSAN_FLAGS) -DFAKE_VERBS_OLD \
		-Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=tests/doubles/libibverbs-old.map \
		-o $@ tests/doubles/fake_verbs.c tests/doubles/fake_scenario.c

$(MSAN_DIR)/doubles/libmlx5-fake.so: tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libmlx5.map
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(DOUBLE_CFLAGS) $(MSAN_FLAGS) -Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=tests/doubles/libmlx5.map \
		-o $@ tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c -ldl

$(MSAN_DIR)/doubles/libmlx5-fake-old.so: tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c tests/doubles/fake_scenario.h tests/doubles/libmlx5-old.map
	@mkdir -p $(dir $@)
	$(CC_MSAN) $(DOUBLE_CFLAGS) $(MSAN_FLAGS) -DFAKE_MLX5_OLD \
		-Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=tests/doubles/libmlx5-old.map \
		-o $@ tests/doubles/fake_mlx5.c tests/doubles/fake_scenario.c -ldl

msan-check: $(MSAN_DIR)/gdrcheck $(MSAN_DOUBLES) $(MSAN_UNIT)
	./tests/msan-check.sh $(MSAN_DIR)

.PHONY: msan-check
