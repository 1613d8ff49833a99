#!/usr/bin/env bash
# On a GPU machine (the device tool): the CUDA e2e tests, LeNet against
# MXNet's output, then symc's CUDA artifacts against PyTorch on the same GPU.
# Artifacts are compiled elsewhere (bench/cuda/README.md) into $CARRY.
set -uo pipefail
# The tests find their artifacts where they were built.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
CARRY=${CARRY:-.devcarry}
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NCCL (kvstore 'nccl'): PyTorch's wheel brings libnccl.so.2.
NCCL_LIB=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null) &&
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$NCCL_LIB
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
grep -m1 'model name' /proc/cpuinfo; grep -o -m1 avx512f /proc/cpuinfo || echo "no avx512f"
echo "== e2e"
timeout 120 build/bin/symc-e2e-tests --gtest_filter="Cuda.*" > ${OUT:-/tmp}/e2e.log 2>&1; echo "e2e exit $?"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |Failure|gpu .*cpu" ${OUT:-/tmp}/e2e.log | head -40
echo "== lenet vs MXNet"
build/bin/symc-run $CARRY/lenet1-cuda.so --params examples/lenet-0000.params --input data=examples/digit.npy \
  --compare examples/lenet-expected.npy --bench 200
echo "== symc"
run() { local name=$1; shift; printf 'symc  %-22s ' "$name"; timeout 120 build/bin/symc-run $CARRY/$name-cuda.so --allow-missing "$@" 2>&1 | tail -1; }
run r50-b1 --bench 20
run r50-b32 --bench 10
run gemm --bench 10
run ew --bench 50
run mlp-train --backward --bench 200
run r50-train-b32 --backward --bench 2
echo "== torch"
timeout 180 python3 bench/cuda/torch_peers.py
