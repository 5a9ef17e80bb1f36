#!/usr/bin/env bash
# Installs the Debian 12 packages rateopt needs to build and test, skipping those already present.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libfmt-dev nlohmann-json3-dev libcli11-dev zlib1g-dev liblbfgspp-dev
  coinor-libclp-dev libtomlplusplus-dev libboost-dev libfast-float-dev pybind11-dev python3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-scipy python3-sklearn python3-pandas python3-pytest python3-matplotlib
  python3-pip python3-setuptools python3-wheel python3-venv
  clang libclang-rt-14-dev clang-tidy
  libopenmpi-dev openmpi-bin
  libxgboost-dev python3-xgboost
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} Debian packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
