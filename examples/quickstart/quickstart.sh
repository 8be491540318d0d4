#!/usr/bin/env bash
# From a fresh Debian 12 machine to a model running on jetplan (README: "Quick start"):
# installs the packages, builds, writes a small CNN as ONNX, converts it and runs it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${JETPLAN_BUILD_DIR:-$root/build}
work=${JETPLAN_WORK_DIR:-$build/quickstart}

"$root/tests/install_deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)" --target jetplan-convert jetplan-run
mkdir -p "$work"
/usr/bin/python3 "$root/examples/quickstart/make_small_cnn.py" "$work/small_cnn.onnx"
"$build/converter/jetplan-convert" "$work/small_cnn.onnx" -o "$work/small_cnn.jplan"
"$build/runtime/tools/jetplan-run" "$work/small_cnn.jplan" --warmup 10 --iterations 200
