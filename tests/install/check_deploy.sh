#!/usr/bin/env bash
# The deploy tarball (cmake/deploy.cmake, the `deploy` target's script, run with the build's own
# settings and PLAN as JETPLAN_DEPLOY_PLANS), checked for:
#   - exactly the runtime and devel files under one folder: jetplan-run, jetplan-inspect,
#     libjetplan.so with its soname links and .a, the headers, the CMake and pkg-config files,
#     plans/<PLAN>, README.md; not the converter or its targets;
#   - README.md naming the plan in its commands and the glibc the programs need;
#   - unpacked elsewhere, bin/jetplan-run runs plans/<PLAN> and bin/jetplan-inspect reads it;
#   - a plan that does not exist: the script fails naming it and writes no tarball.
#   check_deploy.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR PLAN.jplan
set -euo pipefail
build=$1 source=$2 work=$3 libdir=$4 plan=$5
rm -rf "$work"
mkdir -p "$work"
fail() { echo "check_deploy: $*" >&2; exit 1; }

settings() {  # settings() OUTPUT PLANS: the build's settings with OUTPUT and PLANS replaced
  printf 'include("%s")\nset(OUTPUT "%s")\nset(PLANS "%s")\n' \
    "$build/deploy/settings.cmake" "$1" "$2" > "$work/settings.cmake"
}
settings "$work/deploy.tar.gz" "$plan"
cmake -DSETTINGS="$work/settings.cmake" -P "$source/cmake/deploy.cmake" > /dev/null
tar tzf "$work/deploy.tar.gz" | sort > "$work/listing"
top=$(head -1 "$work/listing")
[[ $top =~ ^jetplan-[0-9.]+-[a-z0-9_]+/$ ]] || fail "the tarball's folder is '$top'"
so=$(cd "$build/runtime" && ls libjetplan.so.*.*)  # libjetplan.so.MAJOR.MINOR.PATCH
soname=${so%.*.*}
expected=("" bin/ bin/jetplan-inspect bin/jetplan-run include/ include/jetplan/
          "$libdir/" "$libdir/cmake/" "$libdir/cmake/jetplan/"
          "$libdir/cmake/jetplan/jetplanConfig.cmake" "$libdir/cmake/jetplan/jetplanConfigVersion.cmake"
          "$libdir/cmake/jetplan/jetplanTargets-release.cmake" "$libdir/cmake/jetplan/jetplanTargets.cmake"
          "$libdir/libjetplan.a" "$libdir/libjetplan.so" "$libdir/$soname" "$libdir/$so"
          "$libdir/pkgconfig/" "$libdir/pkgconfig/jetplan.pc" README.md plans/
          "plans/$(basename "$plan")")
for h in "$source"/runtime/include/jetplan/*.h; do expected+=("include/jetplan/$(basename "$h")"); done
printf "$top%s\n" "${expected[@]}" | sort > "$work/expected"
diff -u "$work/expected" "$work/listing" || fail "the tarball holds other files than expected (diff above)"

mkdir "$work/device"
tar xzf "$work/deploy.tar.gz" -C "$work/device"
dir=$work/device/$top
grep -q "jetplan-run plans/$(basename "$plan") " "$dir/README.md" ||
  fail "README.md does not run plans/$(basename "$plan")"
grep -Eq "^The programs need glibc [0-9]+\.[0-9]+ or newer" "$dir/README.md" ||
  fail "README.md does not say which glibc the programs need"
(cd "$dir" && ./bin/jetplan-inspect "plans/$(basename "$plan")" > "$work/inspect.txt" &&
   ./bin/jetplan-run "plans/$(basename "$plan")" --warmup 1 --iterations 2 > "$work/run.txt") ||
  fail "the unpacked tools do not run the plan"
grep -q "^latency over 2 runs" "$work/run.txt" || fail "jetplan-run printed: $(cat "$work/run.txt")"

settings "$work/missing.tar.gz" "$work/no-such.jplan"
if cmake -DSETTINGS="$work/settings.cmake" -P "$source/cmake/deploy.cmake" > "$work/missing.log" 2>&1; then
  fail "a missing plan was packed"
fi
# cmake wraps messages at spaces: one line, one space between words.
tr -s ' \n' '  ' < "$work/missing.log" > "$work/missing.line"
grep -q "'$work/no-such.jplan', which is not an existing" "$work/missing.line" ||
  fail "a missing plan's error does not name it: $(cat "$work/missing.log")"
[[ ! -e $work/missing.tar.gz ]] || fail "a tarball was written for a missing plan"
echo "deploy: $(basename "$top") with $(wc -l < "$work/listing") entries, runs its plan: ok"
