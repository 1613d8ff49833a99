#!/usr/bin/env bash
# Sets a fresh Debian bookworm machine up for symc and builds it.
#   scripts/bootstrap.sh            packages + Python oracle + build
# Idempotent: already-installed packages and an existing build are reused.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools clang-19 lld-19
              ninja-build ccache cmake libgtest-dev pkg-config python3 python3-pip
              libopenmpi-dev openmpi-bin)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# MXNet 1.9.1 is the test oracle (it breaks on numpy >= 1.24); GluonCV's
# zoo is the model-zoo oracle's (its dependencies pinned to releases that
# keep numpy < 1.24), and GluonNLP's BERT too (an sdist: pip builds its
# tokenizer extension with Cython and the C compiler); pytest runs the Python package's tests (wheel lets pip
# install ./python without build isolation).
PYTHON=${PYTHON:-python3}
PIP_PACKAGES=('mxnet==1.9.1' 'numpy<1.24' pytest wheel 'gluoncv==0.10.5.post0' 'opencv-python<4.9'
              'pandas<2.1' 'scipy<1.12' 'matplotlib<3.8' 'gluonnlp==0.10.0')
if ! "$PYTHON" -c 'import sys; sys.modules["torch"] = None; import mxnet, pytest, wheel, gluoncv, gluonnlp' >/dev/null 2>&1; then
  echo "== pip: installing ${PIP_PACKAGES[*]}"
  "$PYTHON" -m pip install -q --break-system-packages "${PIP_PACKAGES[@]}" 2>/dev/null \
    || "$PYTHON" -m pip install -q "${PIP_PACKAGES[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "== configure ($BUILD_DIR)"
  cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py \
    -DPython3_EXECUTABLE="$(command -v "$PYTHON")"
fi
echo "== build"
cmake --build "$BUILD_DIR" -j2
