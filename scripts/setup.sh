#!/usr/bin/env bash
# Installs every build and test dependency of Kiln from Debian 12's packages,
# then the Python package's build and test tools (python/requirements-dev.txt)
# into .venv/ at the repository root, made with Debian's python3.
# Idempotent: when everything is present it only runs dpkg-query and
# compares a stamp, and returns in well under a second. CUDA is not installed here: Kiln finds it at
# $CUDA_HOME or /usr/local/cuda and builds without it when it is absent.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  nlohmann-json3-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19 libclang-rt-19-dev
  liblld-19-dev  # in-process ELF linking: CPU artifacts stored as shared objects (no `ld` needed)
  clang-format
  libhiredis-dev libssl-dev redis-server
  openmpi-bin libopenmpi-dev
  zlib1g-dev libzip-dev
  libopenblas-dev libomp-dev
  libblis4-pthread  # a second BLAS that kiln bench gemm compares with (OpenBLAS stays libblas.so.3)
  python3 python3-dev python3-venv
  time  # GNU time: peak memory in bench/search_cost.sh
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python venv: Debian's interpreter (its headers are the ones installed
# above), the pinned tools; redone when the requirements change.
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
reqs="$root/python/requirements-dev.txt"
stamp="$venv/.kiln-requirements"
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$reqs" "$stamp"; then
  echo "setup: Python venv in $venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs"
  cp "$reqs" "$stamp"
fi
echo "setup: done"
