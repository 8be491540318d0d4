#!/usr/bin/env bash
# Installs the Debian packages jetplan's build and tests need, where any is missing.
# Safe to run again: it does nothing when everything is present.
set -euo pipefail

packages=(
  cmake g++ make pkgconf
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libonnx-dev libonnx-testdata python3-onnx python3-numpy python3-torch python3-torchvision
  libstb-dev
  googletest libgtest-dev
)
if [[ "${JETPLAN_CROSS_CHECK:-0}" == "1" ]]; then
  packages+=(g++-aarch64-linux-gnu)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || true
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
