#!/usr/bin/env bash
# Installs every build and test dependency of Kiln from Debian 12's packages.
# Idempotent: when everything is present it only runs dpkg-query and returns
# in well under a second. CUDA is not installed here: Kiln finds it at
# $CUDA_HOME or /usr/local/cuda and builds without it when it is absent.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  nlohmann-json3-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19 libclang-rt-19-dev
  clang-format
  libhiredis-dev libssl-dev redis-server
  openmpi-bin libopenmpi-dev
  zlib1g-dev
  libopenblas-dev libomp-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
