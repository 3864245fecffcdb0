# Shared by the per-module GPU scripts (sourced): $out, $b and PATH set up,
# gpu_build TARGET... (the machine's line, then a Release sm_90 build of the
# targets in $b, exiting on failure) and run NAME TIMEOUT CMD... (CMD with
# the CUDA tests required, its log in $out/NAME.log, its error lines and
# last ${TAILN:-3} lines shown).
out=${OUT:-/tmp/out}; mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
b=${GPK_GPU_BUILD:-build-gpu}
gpu_build() {
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
  local t0=$(date +%s)
  cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 &&
    cmake --build $b -j 16 --target "$@" >"$out/build.log" 2>&1 ||
    { tail -n 60 "$out/build.log"; exit 1; }
  echo "build ok $(( $(date +%s) - t0 )) s"
}
run() { # name timeout cmd...
  local name=$1 to=$2; shift 2; local t=$(date +%s)
  GPK_REQUIRE_CUDA=1 timeout "$to" "$@" >"$out/$name.log" 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t )) s"; grep -m 12 -E 'FAIL|rror' "$out/$name.log"; tail -n ${TAILN:-3} "$out/$name.log"
}
