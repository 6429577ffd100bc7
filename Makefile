# The two commands that matter: `make run` and `make test` (see README.md).
# Every target installs the Debian packages it needs first (scripts/install-deps.sh is idempotent).

JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
RELEASE_DIR ?= build/release
TEST_DIR ?= build/test
ASAN_DIR ?= build/asan
TSAN_DIR ?= build/tsan
BENCH_DIR ?= build/bench
CMAKE_FLAGS ?=

.PHONY: all deps build run cluster test test-build thread-safety unit cluster-test chaos chaos-matrix bench bench-single bench-cluster bench-move bench-meta bench-scale bench-soak asan tsan format clean

all: build

deps:
	@./scripts/install-deps.sh

# Release build: optimized, failpoints compiled out.
build: deps
	@cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release -DNARAD_FAILPOINTS=OFF \
		-DNARAD_TESTS=OFF -DNARAD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(RELEASE_DIR) --target narad -j $(JOBS)

# A single-node Narad on 127.0.0.1:7942 with its embedded defaults (auth off, data in ~/.narad/data).
run: build
	@$(RELEASE_DIR)/narad server start --dev

# A local 3-node cluster on 127.0.0.1 (APIs on 7950, 7960, 7970; data and logs in ./dev-cluster),
# in the foreground until Ctrl-C (docs/cluster.md).
cluster: build
	@$(RELEASE_DIR)/narad dev-cluster --nodes 3

# Test build: optimized with debug info and failpoints compiled in.
test-build: deps
	@cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNARAD_FAILPOINTS=ON \
		-DNARAD_TESTS=ON -DNARAD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TEST_DIR) -j $(JOBS)

# The module layering (scripts/check-layers.py), clang's thread-safety analysis over every file of
# the test build, then every unit and cluster (multi-process) test and the chaos suite's CI tier.
test: test-build
	@./scripts/check-layers.py src
	@./scripts/thread-safety.py --build $(TEST_DIR)
	@cd $(TEST_DIR) && ctest -L 'unit|cluster|chaos' --output-on-failure -j $(JOBS) --timeout 900

# clang -Wthread-safety over every file of the test build, as errors (docs/contributing.md).
thread-safety: test-build
	@./scripts/thread-safety.py --build $(TEST_DIR)

unit: test-build
	@cd $(TEST_DIR) && ctest -L unit --output-on-failure -j $(JOBS)

# The multi-process tests only (`make cluster` runs a local cluster instead).
cluster-test: test-build
	@cd $(TEST_DIR) && ctest -L cluster --output-on-failure -j $(JOBS)

# The chaos suite (docs/reliability.md): the CI tier (a few minutes), or with LONG=1 the long run
# (DURATION=30m by default). NARAD_CHAOS_SEED=<seed> repeats a run.
ifeq ($(LONG),1)
DURATION ?= 30m
endif
chaos: test-build
	@cd $(TEST_DIR) && NARAD_CHAOS_DURATION=$(DURATION) ctest -L chaos --output-on-failure \
		--timeout 7200

# One chaos run per nemesis and per move phase (90 s each, about 40 minutes in all); rewrites
# the fault matrix of docs/reliability.md.
chaos-matrix: test-build
	@python3 tests/chaos/fault_matrix.py --binary $(TEST_DIR)/tests/chaos_test --duration 90s \
		--seed 7 --write docs/reliability.md

# Every table of docs/benchmarks.md, regenerated in one run on this machine, each stamped with the
# commit measured: Narad side by side with NATS JetStream and Redis
# Streams (bench/workloads/*.yaml through narad-compare, also docs/benchmarks.csv), then Narad
# alone on one node and on three (bench/run.sh), partition moves (bench/move/run.sh), the
# metastore at scale (bench/meta/run.sh), one node with many partitions and connections
# (bench/scale/run.sh) and one node's memory over 30 minutes of load (bench/soak/run.sh), with
# the page cache's dirty data written out between parts so one part's writeback does not land in
# the next (about 50 minutes in all). Release build with failpoints compiled out.
BENCH_COMMIT = $(shell git rev-parse --short HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- . ':!docs/benchmarks.*' 2>/dev/null || echo ' (with uncommitted changes)')
bench: deps
	@cmake -S . -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release -DNARAD_FAILPOINTS=OFF \
		-DNARAD_TESTS=OFF -DNARAD_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BENCH_DIR) --target narad narad-compare narad-meta-scale -j $(JOBS)
	@$(BENCH_DIR)/narad-compare --workloads bench/workloads --narad $(BENCH_DIR)/narad \
		--markdown docs/benchmarks.md --csv docs/benchmarks.csv --command "make bench" \
		--commit "$(BENCH_COMMIT)"
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/run.sh $(BENCH_DIR) 1
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/run.sh $(BENCH_DIR) 3
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/move/run.sh $(BENCH_DIR)
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/meta/run.sh $(BENCH_DIR)
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/scale/run.sh $(BENCH_DIR)
	@sync
	@NARAD_BENCH_DOC=docs/benchmarks.md NARAD_BENCH_COMMIT="$(BENCH_COMMIT)" \
		./bench/soak/run.sh $(BENCH_DIR)

# Single-node Narad workloads through `narad bench` (bench/run.sh).
bench-single: build
	@./bench/run.sh $(RELEASE_DIR)

# The same workloads against a local 3-node cluster, every node taking a share of the connections.
bench-cluster: build
	@./bench/run.sh $(RELEASE_DIR) 3

# Partition moves: one move's copy throughput against a plain durable copy, freeze durations
# under a steady write load, and a 10 GiB partition moved while written to (bench/move/run.sh,
# docs/benchmarks.md "Partition moves").
bench-move: build
	@./bench/move/run.sh $(RELEASE_DIR)

# The etcd metastore at 1,000 topics x 100 partitions: create time, replica memory, the cost of
# one watch event, a full read, the planner (bench/meta/run.sh, docs/benchmarks.md "How the
# metastore scales").
bench-meta: deps
	@cmake -S . -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release -DNARAD_FAILPOINTS=OFF \
		-DNARAD_TESTS=OFF -DNARAD_BENCH=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BENCH_DIR) --target narad-meta-scale -j $(JOBS)
	@./bench/meta/run.sh $(BENCH_DIR)

# One node with 1,000 small partitions (open files, idle eviction, memory) and 10,000 idle
# keep-alive connections (bench/scale/run.sh, docs/benchmarks.md "One node at scale").
bench-scale: build
	@./bench/scale/run.sh $(RELEASE_DIR)

# One node under a steady flow plus a growing backlog for 30 minutes (SOAK_MINUTES), its memory
# sampled every 30 s (bench/soak/run.sh, docs/benchmarks.md "One node over half an hour").
bench-soak: build
	@./bench/soak/run.sh $(RELEASE_DIR)

# Unit tests under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DNARAD_SANITIZE=address -DNARAD_FAILPOINTS=ON \
		-DNARAD_TESTS=ON -DNARAD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)
	@cd $(ASAN_DIR) && ctest -L unit --output-on-failure -j $(JOBS)

# The unit tests and the smoke test (tests/cluster/smoke_test.cc: three nodes, produce, consume
# and ack across them, one partition moved, a clean stop) under ThreadSanitizer, the nodes built
# with it too (docs/contributing.md). A report fails the run: the process halts on it with exit
# code 66, and the harness fails a test whose node did. A race is fixed, never suppressed.
TSAN_OPTIONS ?= halt_on_error=1 exitcode=66 second_deadlock_stack=1
# Unit tests left out of the ThreadSanitizer run: each drives one thread through a large input, so
# there is nothing for it to watch, and each takes 15-25 times longer under it (minutes, not
# seconds).
#   TopicFrontendTest.SchemaHistoryBudgets: 1,000 schema versions, then 4 MiB of history.
#   EtcdGatewayFuzzTest.HostileAnswersAreRefusedOrReadByTheRules: a fuzz loop over gateway answers.
#   EtcdGatewayFuzzTest.DeepErrorObjectIsDecodedWithoutRecursion: one deeply nested answer.
#   SchemaTest.ComparisonWorkIsBounded: a schema comparison at its work limit.
TSAN_SKIP = ^(TopicFrontendTest.SchemaHistoryBudgets|EtcdGatewayFuzzTest.HostileAnswersAreRefusedOrReadByTheRules|EtcdGatewayFuzzTest.DeepErrorObjectIsDecodedWithoutRecursion|SchemaTest.ComparisonWorkIsBounded)$$
# Built at -O1 with line tables only (-g1): the sanitizer's reports keep file and line, and the
# build, which CI runs cold after the test build's, takes far less time than at -O2 -g.
tsan: deps
	@cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DNARAD_SANITIZE=thread \
		-DNARAD_FAILPOINTS=ON -DNARAD_TESTS=ON -DNARAD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_DIR) --target narad_unit_tests smoke_test -j $(JOBS)
	@cd $(TSAN_DIR) && TSAN_OPTIONS="$(TSAN_OPTIONS)" ctest -L unit -E '$(TSAN_SKIP)' \
		--output-on-failure -j $(JOBS)
	@cd $(TSAN_DIR) && TSAN_OPTIONS="$(TSAN_OPTIONS)" ctest -L smoke --output-on-failure

format:
	@find src tests bench -name '*.cc' -o -name '*.h' | xargs clang-format -i

clean:
	@rm -rf build
