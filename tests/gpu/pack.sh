#!/usr/bin/env bash
# Packs what the GPU test command needs into one folder that can be copied to a GPU machine
# without a compiler or jetplan's Debian dependencies (the lent device: see tests/gpu/run_gpu.sh):
# jetplan-convert, jetplan-run, jetplan-inspect (tests/perf/bench_models.py reads plans with
# it), the GPU kernel and CUDA runtime test binaries, the shared libraries they need
# beyond libc, the targets and the test scripts. jetplan-convert --target NAME finds the targets
# there: bin/../targets (converter/src/select/targets.h).
#   tests/gpu/pack.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, .device-carry/gpu)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/.device-carry/gpu}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
bins=("$build/converter/jetplan-convert" "$build/runtime/tools/jetplan-run"
      "$build/runtime/tools/jetplan-inspect" "$build/tests/kernels/test_kernels_gpu"
      "$build/tests/runtime/test_cuda_runtime")
for b in "${bins[@]}"; do
  [[ -x $b ]] || { echo "pack.sh: $b is missing: build first (cmake --build $build)" >&2; exit 1; }
  cp "$b" "$out/bin/"
done
# Every shared library outside the C runtime (protobuf, onnx, libstdc++ of this toolchain).
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
cp -r "$root/targets" "$out/"
du -sh "$out"
