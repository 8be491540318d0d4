#!/usr/bin/env bash
# The GPU test command (README, "GPU tests"): on a machine with an NVIDIA GPU and python3 with
# torch, torchvision and onnx:
#   1. every CUDA kernel against its CPU twin (test_kernels_gpu) and the CUDA runtime
#      (test_cuda_runtime),
#   2. the real architectures converted for this GPU (FP16) and compared with PyTorch FP32,
#   3. ONNX's node tests (the onnx package's) converted for this GPU and run on it, against
#      tests/conformance/expected_gpu.txt (a test it lists as passing that fails is an error),
#   4. the model set benchmarked against its peers (tests/perf/bench_models.py).
#
#   tests/gpu/run_gpu.sh [--pack DIR] [--target NAME] [--out DIR] [--skip-bench]
#
# Without --pack it builds first (needs nvcc and the packages of tests/install_deps.sh). With
# --pack DIR it uses binaries made by tests/gpu/pack.sh (a GPU machine without a toolchain).
# The target defaults to the GPU's: h100/h200 (sm_90), rtx4090 (sm_89), orin-agx (sm_87), ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pack="" target="" out=${OUT:-/tmp/jetplan-gpu} bench=1
models=${JETPLAN_GPU_MODELS:-resnet18,resnet50,mobilenet_v2,mobilenet_v3_small,efficientnet_b0,squeezenet1_1,densenet121,vit_b_16,unet_small,lstm_gru}
python=${PYTHON:-python3}
while [[ $# -gt 0 ]]; do
  case $1 in
    --pack) pack=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --skip-bench) bench=0; shift ;;
    *) echo "run_gpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
if [[ -n $pack ]]; then
  bin=$(cd "$pack/bin" && pwd)
  export LD_LIBRARY_PATH="$(cd "$pack/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  convert=$bin/jetplan-convert run=$bin/jetplan-run kernels=$bin/test_kernels_gpu
  cuda_runtime=$bin/test_cuda_runtime
else
  build=${JETPLAN_BUILD_DIR:-$root/build-gpu}
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DJETPLAN_CUDA=ON
  cmake --build "$build" -j "$(nproc)"
  convert=$build/converter/jetplan-convert run=$build/runtime/tools/jetplan-run
  kernels=$build/tests/kernels/test_kernels_gpu cuda_runtime=$build/tests/runtime/test_cuda_runtime
fi
if [[ -z $target ]]; then
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  case $cap in
    9.0) [[ $name == *H200* ]] && target=h200 || target=h100 ;;
    8.9) target=rtx4090 ;;
    8.7) target=orin-agx ;;
    8.6) target=rtx3090 ;;
    11.0) target=thor ;;
    *) echo "run_gpu.sh: no target for compute capability $cap ($name): pass --target" >&2; exit 2 ;;
  esac
fi
[[ -f $root/targets/$target.json ]] && target=$root/targets/$target.json
echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), target $target"

echo "== CUDA kernels against their CPU twins"
"$kernels" --gtest_output="json:$out/kernels.json" | tail -n 40
echo "== the CUDA runtime: graphs, streams, device I/O, out of memory, refusals at load"
"$cuda_runtime" --gtest_output="json:$out/cuda_runtime.json" | tail -n 15

echo "== real architectures on the GPU (FP16) against PyTorch FP32"
status=0
for batch in 1 8; do
  "$python" "$root/tests/models/export_and_check.py" --convert "$convert" --run "$run" \
    --target "$target" --batch "$batch" --models "$models" --require all \
    --workdir "$out/models_b$batch" | tee "$out/models_b$batch.txt" || status=1
done

echo "== ONNX's node tests on the GPU (float outputs at float16's tolerance)"
"$python" "$root/tests/conformance/run_conformance.py" --onnx-package --target "$target" \
  --convert "$convert" --run "$run" --jobs "$(nproc)" --quiet \
  --expect "$root/tests/conformance/expected_gpu.txt" \
  --write-expect "$out/conformance_gpu.txt" | tee "$out/conformance_gpu_log.txt" || status=1

if [[ $bench == 1 ]]; then
  echo "== benchmark against the peers (tests/perf/README.md: PyTorch eager FP16, CUDA graph,"
  echo "   torch.compile max-autotune, ONNX Runtime; layer table; under 10 minutes)"
  "$python" "$root/tests/perf/bench_models.py" --convert "$convert" --run "$run" \
    --inspect "$(dirname "$run")/jetplan-inspect" --target "$target" --out "$out/bench" \
    --workdir "$out/bench/work" | tee "$out/bench.txt"
fi
exit $status
