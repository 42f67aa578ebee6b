# PrimeKit — top-level entry points.
#   make demo    factor real numbers with the primekit tool (installs libgmp-dev if missing)
#   make test    every test suite: C (plain, every SIMD path, sanitized), Swift (engine, engine core, tool,
#                bridge), Node and Python bindings (against the release build of primekit)
#   make test-tsan  the threaded C tests and the Swift tests under ThreadSanitizer
#   make bench   the kernel benchmark table (same-run ratios against plain C peers)
#   make bench-quick  the same, fewer runs and without the million-digit workload
#   make stress  huge numbers, load, storms, SIGKILL at random moments, full disks (make test runs a short part),
#                then the fuzzers, Swift under ASan, C under valgrind
#   make fuzz    the libFuzzer harnesses (kernel parser and checkpoints, JSON, bridge), FUZZ_SECONDS each
#   make bench-engine  the job engine against OperationQueue, latencies, split jobs (ARGS=--quick: a short run)
#   make bench-engine-core  the engine core with 0, 1 and 8 plugins, and the checkpoint store
#   make bench-bridge  jobs per second and round trips through `primekit serve`, and from Node and Python
#   make bench-range  `primekit factor --range A B` against `seq A B | factor` (coreutils)

SHELL := /bin/bash
DEMO_NUMBERS ?= 600851475143 18446744073709551617 18446744073709551557 \
	340282366920938463463374607431768211455 12354962

.PHONY: all deps demo test test-c test-swift test-node test-python test-stress-quick stress release-tool test-tsan bench bench-quick \
	bench-engine bench-engine-core bench-bridge bench-range fuzz clean

# The bindings run the release build of the tool (what users run). It carries the Swift runtime and Foundation
# inside it: it runs where Swift is not installed (the Python wheel ships it) and starts in about 3 ms, not 10.
RELEASE := -c release --static-swift-stdlib
PRIMEKIT_BIN ?= $(CURDIR)/.build/release/primekit

all: deps
	$(MAKE) -C bindings/c

# GMP and GMP-ECM are the external C libraries. Install them when missing (as root),
# or say the one command that does.
deps:
	@if ! printf '#include <gmp.h>\n#include <ecm.h>\nint main(void){return 0;}\n' | cc -x c - -o /dev/null -lecm -lgmp 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "libgmp-dev or libecm1-dev is missing: installing them"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgmp-dev libecm1-dev >/dev/null; \
	  else \
	    echo "libgmp-dev or libecm1-dev is missing. Install them with: sudo apt-get update && sudo apt-get install -y libgmp-dev libecm1-dev"; \
	    exit 1; \
	  fi; \
	fi

demo: deps release-tool
	$(PRIMEKIT_BIN) factor $(DEMO_NUMBERS)

test: deps test-c test-swift test-node test-python test-stress-quick

test-c:
	$(MAKE) -C bindings/c test

# The CLI tests run the tool as child processes from synchronous tests, each holding one of the test runner's
# cooperative threads (two on a 2-core machine) while it waits: run beside the other suites, they held back the
# engine tests' awaits for a minute and more. They run on their own, after the rest.
# The crash-recovery tests start Tests/PrimeKitCrashChild, a target without a product: `swift build` builds it.
# Last, the Swift benchmarks' own package (Tests/Benchmarks) is built, so that a change of the API they use shows.
test-swift:
	swift build --build-tests
	swift test --skip-build --skip PrimeKitCLITests
	swift test --skip-build --filter PrimeKitCLITests
	swift build --package-path $(BENCHMARKS)

release-tool:
	swift build $(RELEASE) --product primekit

test-node: release-tool
	cd bindings/node && PRIMEKIT_BIN="$(PRIMEKIT_BIN)" node --test test/

# Creates bindings/python/.venv when missing (pytest and mypy come from PyPI).
test-python: release-tool
	PRIMEKIT_BIN="$(PRIMEKIT_BIN)" bash bindings/python/test.sh

# The short, always-on part of the stress suite (after test-python, which creates the virtualenv).
test-stress-quick: test-python
	PRIMEKIT_BIN="$(PRIMEKIT_BIN)" bash Tests/Stress/run.sh

# The whole stress, load and fault suite, the fuzzers for a fixed budget each, the Swift tests under
# AddressSanitizer (memory errors; leak reports off: Foundation itself leaks a read buffer) and the C tests under
# valgrind (about an hour on a shared 2-core machine).
# The fuzz budget: the three fast harnesses run a fixed number of inputs (3,700 to 5,300 a second each over a
# whole run on a shared 2-core machine, more while the corpus is small), fuzz_bridge (200 to 450 a second) a fixed
# time; together at least 10 million inputs, which the run checks (41 minutes on that machine).
STRESS_FUZZ_RUNS ?= fuzz_candidate=2000000 fuzz_restore=5000000 fuzz_json=4000000
STRESS_FUZZ_SECONDS ?= 150
STRESS_FUZZ_MIN_TOTAL ?= 10000000
stress: deps release-tool test-python
	PRIMEKIT_BIN="$(PRIMEKIT_BIN)" bash Tests/Stress/run.sh --all
	$(MAKE) -C Tests/Fuzz run FUZZ_RUNS="$(STRESS_FUZZ_RUNS)" FUZZ_SECONDS=$(STRESS_FUZZ_SECONDS) \
	    FUZZ_MAX_SECONDS=1800 FUZZ_MIN_TOTAL=$(STRESS_FUZZ_MIN_TOTAL)
	@# SwiftPM 6.3 fails a sanitized rebuild with "unknown build description" while debug.yaml exists.
	rm -f .build-asan/debug.yaml
	ASAN_OPTIONS=detect_leaks=0 swift test --sanitize=address --scratch-path .build-asan
	$(MAKE) -C bindings/c test-valgrind

# A separate scratch path: sanitized objects never mix with the normal build. The Swift tests run one at a time
# under TSan: run in parallel (hundreds of threads on two cores), the Swift runtime's one-time metadata set-up has
# twice left every thread waiting in swift_getCanonicalPrespecializedGenericMetadata; one at a time the suite also
# finishes sooner (about 3.5 minutes). SwiftPM 6.3 fails a sanitized rebuild while debug.yaml exists.
# TSAN_SKIP: tests to leave out there (--skip NAME), none by default.
TSAN_SKIP ?=
test-tsan: deps
	$(MAKE) -C bindings/c test-tsan
	rm -f .build-tsan/debug.yaml
	swift test --sanitize=thread --scratch-path .build-tsan --no-parallel $(TSAN_SKIP)

bench: deps
	$(MAKE) -C Tests/Benchmarks/kernel bench

bench-quick: deps
	$(MAKE) -C Tests/Benchmarks/kernel bench-quick

# The Swift benchmarks are a package of their own, which depends on this one (Tests/Benchmarks/Package.swift);
# ARGS passes options (make bench-engine ARGS="--quick").
BENCHMARKS := Tests/Benchmarks
ARGS ?=

bench-engine: deps
	swift run --package-path $(BENCHMARKS) -c release primekit-engine-bench $(ARGS)

bench-engine-core: deps
	swift run --package-path $(BENCHMARKS) -c release primekit-engine-core-bench $(ARGS)

bench-bridge: deps release-tool
	swift build --package-path $(BENCHMARKS) $(RELEASE) --product primekit-bridge-bench
	$(BENCHMARKS)/.build/release/primekit-bridge-bench --tool "$(PRIMEKIT_BIN)" $(ARGS)
	cd bindings/node && PRIMEKIT_BIN="$(PRIMEKIT_BIN)" node bench/roundtrip.mjs
	PRIMEKIT_BIN="$(PRIMEKIT_BIN)" bindings/python/.venv/bin/python bindings/python/bench/roundtrip.py

bench-range: deps
	swift build $(RELEASE) --product primekit
	Tests/Benchmarks/cli/range.sh $(RUNS)

fuzz: deps
	$(MAKE) -C Tests/Fuzz run

clean:
	$(MAKE) -C Tests/Fuzz clean
	$(MAKE) -C bindings/c clean
	rm -rf .build .build-tsan .build-asan $(BENCHMARKS)/.build bindings/python/.venv
