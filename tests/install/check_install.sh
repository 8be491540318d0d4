#!/usr/bin/env bash
# `cmake --install` as a user gets it. Installs the (already built) build tree into a scratch
# prefix, then checks:
#   1. the files: headers, libjetplan.so with its soname links, libjetplan.a, the three tools,
#      the targets, the CMake package (config, version, targets) and jetplan.pc;
#   2. the version file: 0.1 is compatible, 0.2 and 1.0 are not;
#   3. examples/ configured and built out of tree against the prefix alone with
#      find_package(jetplan) (examples/CMakeLists.txt), classify and firmware run on a CPU plan;
#   4. classify.c built with pkg-config alone: shared (Libs) and static (Libs.private; the binary
#      must not need libjetplan.so), both printing what the find_package build printed;
#   5. jetplan-convert --target NAME from the prefix and from tests/gpu/pack.sh's folder layout
#      (bin/ beside targets/), each with a target file only that place holds, so the source
#      tree's targets/ (also searched) cannot answer for it; an unknown name's error lists the
#      place first.
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR MODEL.onnx PLAN.jplan
set -euo pipefail
build=$1 source=$2 work=$3 libdir=$4 model=$5 plan=$6
prefix=$work/prefix
rm -rf "$work"
cmake --install "$build" --prefix "$prefix" > /dev/null

fail() { echo "check_install: $*" >&2; exit 1; }
for f in include/jetplan/jetplan.h "$libdir"/libjetplan.a "$libdir"/libjetplan.so \
         "$libdir"/cmake/jetplan/jetplanConfig.cmake "$libdir"/cmake/jetplan/jetplanConfigVersion.cmake \
         "$libdir"/cmake/jetplan/jetplanTargets.cmake "$libdir"/pkgconfig/jetplan.pc \
         bin/jetplan-run bin/jetplan-inspect bin/jetplan-convert \
         share/jetplan/targets/h100.json share/jetplan/targets/orin-agx.json; do
  [[ -e $prefix/$f ]] || fail "cmake --install did not install $f"
done
# The soname link the loader follows.
soname=$(readelf -d "$prefix/$libdir/libjetplan.so" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[[ -n $soname && -e $prefix/$libdir/$soname ]] || fail "no $soname beside libjetplan.so"

cat > "$work/version.cmake" <<EOF
foreach(asked 0.1 0.2 1.0)
  set(PACKAGE_FIND_VERSION \${asked})
  string(REPLACE "." ";" parts \${asked})
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  unset(PACKAGE_VERSION_COMPATIBLE)
  include("$prefix/$libdir/cmake/jetplan/jetplanConfigVersion.cmake")
  message("\${asked}:\${PACKAGE_VERSION_COMPATIBLE}")
endforeach()
EOF
versions=$(cmake -P "$work/version.cmake" 2>&1 | tr '\n' ' ')
[[ $versions == "0.1:TRUE 0.2:FALSE 1.0:FALSE " ]] ||
  fail "jetplanConfigVersion.cmake: compatible with 0.1 only expected, got: $versions"

cmake -S "$source/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$work/examples" > /dev/null
LD_LIBRARY_PATH="$prefix/$libdir" "$work/examples/jetplan_firmware" "$plan" 3 > /dev/null
expected=$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/examples/jetplan_classify" "$plan")

export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cc=${CC:-cc}
# shellcheck disable=SC2046  # pkg-config's flags are words
"$cc" -o "$work/classify_pc" "$source/examples/classify/classify.c" \
  $(pkg-config --cflags --libs jetplan)
static_libs=$(pkg-config --static --libs jetplan)
# shellcheck disable=SC2086
"$cc" -o "$work/classify_pc_static" "$source/examples/classify/classify.c" \
  $(pkg-config --cflags jetplan) ${static_libs/-ljetplan/-Wl,-Bstatic -ljetplan -Wl,-Bdynamic}
readelf -d "$work/classify_pc_static" > "$work/classify_pc_static.dynamic"
if grep -q 'libjetplan\.so' "$work/classify_pc_static.dynamic"; then
  fail "the static pkg-config build still needs libjetplan.so"
fi
shared_out=$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/classify_pc" "$plan")
static_out=$("$work/classify_pc_static" "$plan")
[[ $shared_out == "$expected" ]] || fail "pkg-config (shared) classify printed: $shared_out"
[[ $static_out == "$expected" ]] || fail "pkg-config (static) classify printed: $static_out"

# The converter finds its targets where it was installed, and where pack.sh puts it.
packed=$work/packed
mkdir -p "$packed/bin" "$packed/targets"
cp "$prefix/bin/jetplan-convert" "$packed/bin/"
cp "$prefix"/share/jetplan/targets/*.json "$packed/targets/"
sed 's/"name": *"h100"/"name": "installed-only"/' "$prefix/share/jetplan/targets/h100.json" \
  > "$prefix/share/jetplan/targets/installed-only.json"
sed 's/"name": *"h100"/"name": "packed-only"/' "$prefix/share/jetplan/targets/h100.json" \
  > "$packed/targets/packed-only.json"
for run in "$prefix/bin/jetplan-convert h100" "$prefix/bin/jetplan-convert installed-only" \
           "$packed/bin/jetplan-convert h100" "$packed/bin/jetplan-convert packed-only"; do
  read -r convert target <<< "$run"
  "$convert" "$model" -o "$work/$target.jplan" --target "$target" > /dev/null ||
    fail "$convert --target $target failed"
  "$prefix/bin/jetplan-inspect" "$work/$target.jplan" > "$work/$target.txt"
  grep -q "^target: $target (CUDA" "$work/$target.txt" ||
    fail "$convert --target $target: the plan does not name the target"
done
set +e
"$packed/bin/jetplan-convert" "$model" -o "$work/none.jplan" --target installed-only 2> "$work/err"
status=$?
set -e
[[ $status -eq 2 ]] || fail "an unknown target: exit status $status, not 2"
grep -q "no installed-only.json in $packed/share/jetplan/targets, $packed/targets, " "$work/err" ||
  fail "an unknown target's error does not list the packed folder first: $(head -1 "$work/err")"

echo "install: files, version, find_package and pkg-config (shared, static) builds, targets from the prefix and a packed folder: ok"
