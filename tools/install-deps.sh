#!/usr/bin/env bash
# Install what MAD-Max Explorer needs to build and test on Debian 12, from Debian's packages.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
packages=(
  cmake ninja-build g++            # build
  nlohmann-json3-dev               # scenario and preset files (JSON)
  libcli11-dev                     # the madmax command line
  catch2                           # tests (Catch2 2.13)
  libbenchmark-dev                 # benchmarks (Google Benchmark)
  qt6-base-dev qt6-charts-dev      # the explorer: Qt Widgets + Qt Charts (6.4)
  qt6-svg-dev libgl-dev            # SVG export; OpenGL headers Qt's CMake config asks for
  fonts-dejavu-core                # the explicit figure font; real text offscreen
  python3                          # tools/check-structure.py (a ctest test) and tools/mutate.py
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "Installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
