# Thin wrapper over CMake. `make`, `make demo`, `make check`, `make bench`,
# `make gpu-check`, `make install PREFIX=/opt/gpk`, `make tsan-check`,
# `make python-check` (pip-installs ./python into $(PYTHON) and runs pytest).
BUILD ?= build
TSAN_BUILD ?= $(BUILD)-tsan
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PYTHON ?= python3
# e.g. PIP_FLAGS="-C cmake.define.GPK_WITH_CUDA=OFF --no-build-isolation"
PIP_FLAGS ?=

.PHONY: all demo check tsan-check python-check bench gpu-check install clean

all: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

demo: all
	$(BUILD)/demo

check: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) tsan-check

# The task pools under ThreadSanitizer: a CPU-only build of the library and
# test_pool alone (its pool workers are pthreads, which TSan sees; the
# OpenMP sorts never run there), in its quick mode. Any race report fails.
tsan-check:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPK_WITH_CUDA=OFF -DGPK_WITH_OPENCL=OFF \
	  "-DCMAKE_C_FLAGS=-fsanitize=thread -g -O1" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread"
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_pool
	GPK_TEST_SMALL=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66" $(TSAN_BUILD)/tests/test_pool cpu

# The Python package (python/): built by pip through scikit-build-core
# and the project's CMake, then its tests and the docstrings' examples
# against the installed package (numpy, pytest and scikit-build-core must
# be there; .ci/run installs them in a virtual environment).
python-check:
	$(PYTHON) -m pip install $(PIP_FLAGS) ./python
	$(PYTHON) -m pytest -q -p no:cacheprovider python/tests --doctest-modules --pyargs gpk

bench: all
	$(BUILD)/gpk bench sort

gpu-check:
	sh scripts/gpu-check.sh

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(TSAN_BUILD)
