#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds the examples from it the way a user would
# (find_package(jetplan)), then runs the firmware example on a plan when one is given.
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR [PLAN]
set -euo pipefail
build=$1 source=$2 work=$3 plan=${4:-}
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
test -f "$work/prefix/include/jetplan/jetplan.h"
test -f "$work/prefix/lib/cmake/jetplan/jetplanConfig.cmake"
# The converter's device descriptions (--target NAME) come with it.
if [[ -x $work/prefix/bin/jetplan-convert ]]; then
  test -f "$work/prefix/share/jetplan/targets/h100.json"
  test -f "$work/prefix/share/jetplan/targets/orin-agx.json"
fi
cmake -S "$source/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/examples" > /dev/null
if [[ -n "$plan" ]]; then
  LD_LIBRARY_PATH="$work/prefix/lib" "$work/examples/jetplan_firmware" "$plan" 3
  LD_LIBRARY_PATH="$work/prefix/lib" "$work/examples/jetplan_classify" "$plan"
fi
echo "install + find_package(jetplan) + examples: ok"
