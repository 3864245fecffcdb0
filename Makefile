# Thin wrapper over CMake. `make`, `make demo`, `make check`, `make bench`,
# `make gpu-check`, `make install PREFIX=/opt/gpk`.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all demo check bench gpu-check install clean

all: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

demo: all
	$(BUILD)/demo

check: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: all
	$(BUILD)/gpk bench sort

gpu-check:
	sh scripts/gpu-check.sh

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
