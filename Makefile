# Thin wrapper over CMake. `make`, `make demo`, `make check`, `make bench`,
# `make gpu-check`, `make install PREFIX=/opt/gpk`, `make tsan-check`,
# `make python-check` (pip-installs ./python into $(PYTHON) and runs pytest),
# `make asan-check`, `make fuzz-check` (the last two are CI tiers: .ci/run),
# `make format-check` (changed lines against .clang-format).
BUILD ?= build
TSAN_BUILD ?= $(BUILD)-tsan-clang
ASAN_BUILD ?= $(BUILD)-asan
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PYTHON ?= python3
# e.g. PIP_FLAGS="-C cmake.define.GPK_WITH_CUDA=OFF --no-build-isolation"
PIP_FLAGS ?=

.PHONY: all demo check tsan-check python-check asan-check fuzz-check bench gpu-check install clean format-check

all: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

# The library and the demo alone: no peers (CUB, thrust), tests or
# benchmarks, which `make` and `make check` build.
demo: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target demo
	$(BUILD)/demo

# Tests run $(JOBS) at a time, each with all cores' OpenMP threads: on a
# shared or small machine spinning threads wait for descheduled ones
# (test_radix cpu under load: 2m09 spinning, 56 s passive). A test that
# measures the wait policy itself sets its own environment.
check: all
	cd $(BUILD) && OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} ctest --output-on-failure -j $(JOBS)
	$(MAKE) tsan-check

# ThreadSanitizer on a CPU-only build of the library with clang and LLVM's
# OpenMP runtime, whose Archer tool tells TSan about OpenMP's barriers and
# regions (gcc's libgomp is not instrumented: every team would report).
# Reports inside the uninstrumented runtimes (libomp, Highway) are
# ignored; every access of gpk's own code is checked. The task pools
# (test_pool: pthread workers) in its quick mode, and the CPU sorts'
# teams of two and three threads (the radix team, the vector sort's halves
# and merge) at each SIMD level forced (test_radix threads). Any race
# report fails (exit 66).
TSAN_ENV = GPK_TEST_SMALL=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1"
tsan-check:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPK_WITH_CUDA=OFF -DGPK_WITH_OPENCL=OFF \
	  -DGPK_WITH_MPI=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  "-DCMAKE_C_FLAGS=-fsanitize=thread -g -O1" "-DCMAKE_CXX_FLAGS=-fsanitize=thread -g -O1" \
	  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread"
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_pool test_radix
	$(TSAN_ENV) $(TSAN_BUILD)/tests/test_pool cpu
	$(TSAN_ENV) $(TSAN_BUILD)/tests/test_radix cpu threads

# The Python package (python/): built by pip through scikit-build-core
# and the project's CMake, then its tests and the docstrings' examples
# against the installed package (numpy, pytest and scikit-build-core must
# be there; .ci/run installs them in a virtual environment).
python-check:
	$(PYTHON) -m pip install $(PIP_FLAGS) ./python
	$(PYTHON) -m pytest -q -p no:cacheprovider python/tests --doctest-modules --pyargs gpk

# The whole ctest suite under AddressSanitizer and UBSan, on a CPU-only
# build (no CUDA, no OpenCL: their drivers are not instrumented and keep
# memory to the end). Any report fails the test that made it. Not
# install_consumer: its consumer program is built without the sanitizer
# runtime, which the instrumented libgpk.so then cannot load.
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
asan-check:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPK_WITH_CUDA=OFF -DGPK_WITH_OPENCL=OFF \
	  "-DCMAKE_C_FLAGS=$(SAN_FLAGS)" "-DCMAKE_CXX_FLAGS=$(SAN_FLAGS)" \
	  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined"
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && env -u GPK_REQUIRE_OPENCL GPK_TEST_SMALL=1 GPK_TEST_SANITIZER=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS) -E install_consumer

# Every libFuzzer target (tests/fuzz) for FUZZ_SECONDS each; needs clang.
fuzz-check:
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: all
	$(BUILD)/gpk bench sort

gpu-check:
	sh scripts/gpu-check.sh

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(TSAN_BUILD) $(ASAN_BUILD)

# Every tracked C, C++ and CUDA source against .clang-format (clang-format
# 14, as Debian 12 ships it; CI runs this): lists the files clang-format
# would change and fails if any.
CLANG_FORMAT ?= $(shell command -v clang-format-14 || command -v clang-format || echo clang-format)
format-check:
	@bad=$$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' | grep -v '^tests/consumer' | \
	  while read -r f; do $(CLANG_FORMAT) --style=file --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "format-check: not formatted (clang-format -i FILE):"; echo "$$bad"; exit 1; fi; \
	echo "format-check: every source as .clang-format says"
