#!/usr/bin/env bash
# On a GPU machine (the device tool): the CUDA e2e tests, LeNet against
# MXNet's output, then symc's CUDA artifacts against PyTorch on the same GPU.
# What it runs comes from bench/cuda/make_artifacts.py (run where symc is
# built) in $CARRY: the artifacts, the runtime, symc-run and the e2e tests.
#   bench/cuda/gpu_bench.sh [--profile] [--no-torch]
# --profile prints where the GPU time of ResNet-50's forward (batch 32) and
# training step goes (SYMC_CUDA_PROFILE: time by kernel, named after its
# MXNet node, and by GEMM shape).
set -uo pipefail
PROFILE=0 TORCH=1
for arg in "$@"; do
  case $arg in
    --profile) PROFILE=1 ;;
    --no-torch) TORCH=0 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
CARRY=${CARRY:-.devcarry}
# The binaries and the tests find the runtime and the e2e artifacts where
# they were built.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/test && cp -r "$CARRY/bin" "$CARRY/lib" build/ && cp -r "$CARRY/e2e" build/test/
export LD_LIBRARY_PATH=$PWD/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NCCL (kvstore 'nccl'): PyTorch's wheel brings libnccl.so.2.
NCCL_LIB=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null) &&
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$NCCL_LIB
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
grep -m1 'model name' /proc/cpuinfo; grep -o -m1 avx512f /proc/cpuinfo || echo "no avx512f"
echo "== e2e"
timeout 180 build/bin/symc-e2e-tests --gtest_filter="Cuda.*" > "${OUT:-/tmp}/e2e.log" 2>&1
echo "e2e exit $?"
grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |Failure|gpu .*cpu|tests ran" "${OUT:-/tmp}/e2e.log" | head -40
if [ -f "$CARRY/pairs.tar.xz" ]; then
  echo "== oracle pairs (test/oracle/make_cuda_pairs.py): CUDA against the CPU path"
  mkdir -p /tmp/pairs && tar -xJf "$CARRY/pairs.tar.xz" -C /tmp/pairs
  SYMC_CUDA_PAIRS=/tmp/pairs timeout 600 build/bin/symc-e2e-tests --gtest_filter=Cuda.OraclePairs \
    > "${OUT:-/tmp}/pairs.log" 2>&1
  echo "pairs exit $?"
  grep -E "^checked|^\[  (PASSED|FAILED) " "${OUT:-/tmp}/pairs.log"
  # Each failing pair once, with its first message.
  grep -E "^[^ ]+: (gpu|.*(error|failed|Error))| output [0-9]+\[|gradient of .*\[|aux .*\[" "${OUT:-/tmp}/pairs.log" |
    awk '{ name = $1; sub(/[-:].*/, "", name); if (!(name in seen)) { seen[name] = 1; print } }' | head -60
  cat /tmp/pairs/refused.txt | wc -l | xargs echo "refused by the cuda target at compile time:"
fi
echo "== python package on gpu(0)"
PYTHONPATH=$PWD/python SYMC_LIBRARY=$PWD/build/lib/libsymrt.so python3 bench/cuda/python_gpu_check.py build/test/e2e
echo "== lenet vs MXNet"
build/bin/symc-run "$CARRY/lenet1-cuda.so" --params examples/lenet-0000.params --input data=examples/digit.npy \
  --compare examples/lenet-expected.npy --bench 200
echo "== symc"
run() {
  local name=$1
  shift
  printf 'symc  %-22s ' "$name"
  timeout 180 build/bin/symc-run "$CARRY/$name-cuda.so" --allow-missing "$@" 2>&1 | tail -1
}
# The first load of an artifact has the driver compile its PTX (cached
# for the later runs).
run r50-b1 --bench 20
run r50-b32 --bench 10
run gemm --bench 10
run ew --bench 50
run mlp-train --backward --bench 200
run r50-train-b32 --backward --bench 5
if [ "$PROFILE" = 1 ]; then
  for name in r50-b32 r50-train-b32; do
    echo "== profile $name (whole table: profile-$name.txt)"
    flags=$([ "$name" = r50-train-b32 ] && echo --backward)
    SYMC_CUDA_PROFILE=1 timeout 180 build/bin/symc-run "$CARRY/$name-cuda.so" --allow-missing $flags --bench 3 \
      2>&1 | grep -A100000 SYMC_CUDA_PROFILE > "${OUT:-/tmp}/profile-$name.txt"
    head -16 "${OUT:-/tmp}/profile-$name.txt"
    # By kind: cuBLAS, or the kernels of each kind of MXNet node.
    awk 'NR > 2 { kind = $4 == "cuBLAS" ? "cuBLAS GEMMs" : $4; sub(/.*__/, "", kind); gsub(/[0-9]+/, "", kind);
                  ms[kind] += $1; n[kind] += $2 }
         END { for (k in ms) printf "%10.3f ms %7d calls  %s\n", ms[k], n[k], k }' \
      "${OUT:-/tmp}/profile-$name.txt" | sort -rn | head -12
  done
fi
if [ "$TORCH" = 1 ]; then
  echo "== torch"
  timeout 180 python3 bench/cuda/torch_peers.py
fi
