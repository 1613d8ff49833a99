#!/usr/bin/env bash
# Sets up and builds if needed, then runs the whole test suite through ctest:
# lit (FileCheck), GoogleTest, and the MXNet 1.9.1 oracle.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2
