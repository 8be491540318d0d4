#!/usr/bin/env bash
# Installs the Debian packages jetplan's build and tests need, where any is missing, then the
# Python venv (JETPLAN_VENV, default .venv in the repository, gitignored) with the newest PyPI
# onnx, onnxruntime and onnxscript: ONNX's current node tests and ONNX Runtime as an independent
# reference (tests/conformance, tests/e2e). Debian's /usr/bin/python3 keeps its own packages
# (onnx 1.12, numpy, torch) for the other tests; CMake is told the venv's interpreter as
# JETPLAN_ONNX_PYTHON. Safe to run again: it does nothing when everything is present.
set -euo pipefail

packages=(
  cmake g++ make pkgconf
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libonnx-dev libonnx-testdata python3-onnx python3-numpy python3-torch python3-torchvision
  libstb-dev python3-venv
  googletest libgtest-dev
)
if [[ "${JETPLAN_CROSS_CHECK:-0}" == "1" ]]; then
  packages+=(g++-aarch64-linux-gnu)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "installing: ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || true
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${JETPLAN_VENV:-$root/.venv}
venv_modules="import onnx, onnxruntime, onnxruntime.quantization, onnxscript"
if "$venv/bin/python" -c "$venv_modules" 2>/dev/null; then
  exit 0
fi
# Built on Debian's interpreter, named by path: python3 on PATH may be another one.
echo "creating the Python venv $venv (newest onnx, onnxruntime, onnxscript from PyPI)"
/usr/bin/python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input \
  onnx onnxruntime onnxscript
"$venv/bin/python" -c "$venv_modules"
