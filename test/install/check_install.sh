#!/usr/bin/env bash
# Installs this build into a fresh prefix and uses it as a user would:
# find_package(symc) with symc_compile_model(), pkg-config for C (symc and
# symc-predict), and the installed tools.
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER
set -euo pipefail
build=$1 source=$2 work=$3 cc=$4 cxx=$5
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
models=$source/examples
passed=0
check() { echo "ok: $1"; passed=$((passed + 1)); }

"$prefix/bin/symc" --version | grep -q "^symc [0-9.]* (artifact ABI version [0-9]*)$" && check "installed symc --version"
readelf -d "$prefix/lib/libsymrt.so" | grep -q 'SONAME.*libsymrt\.so\.[0-9]*\.[0-9]*' && check "libsymrt has a versioned soname"

# find_package(symc): a model compiled at build time, run through the C++ API.
cmake -S "$source/test/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DMODEL_DIR="$models" > "$work/configure.log"
cmake --build "$work/consumer" > "$work/build.log"
[ "$("$work/consumer/classify" "$models/digit.npy")" = "class $(python3 -c "import numpy as np; print(np.load('$models/lenet-expected.npy').argmax())")" ] \
  && check "find_package consumer classifies the digit"

# pkg-config: the C API and MXNet's predict API.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
libdir=$(pkg-config --variable=libdir symc)
"$cc" "$source/test/install/consumer/list_arguments.c" -o "$work/list_arguments" \
  $(pkg-config --cflags --libs symc) -Wl,-rpath,"$libdir"
"$work/list_arguments" "$work/consumer/lenet_model.so" | head -1 | grep -qx data && check "pkg-config symc consumer"
"$cc" "$source/test/predict/predict_lenet.c" -o "$work/predict_lenet" \
  $(pkg-config --cflags --libs symc-predict) -lpthread -Wl,-rpath,"$libdir"
mkdir -p "$work/artifacts"
for shapes in "--shape data=1,1,28,28 --shape softmax_label=1" "--shape data=?,1,28,28 --shape softmax_label=?" \
              "--shape data=1,1,28,28 --outputs fc1"; do
  "$prefix/bin/symc" compile "$models/lenet-symbol.json" -q $shapes --predict-dir "$work/artifacts"
done
SYMC_ARTIFACT_PATH=$work/artifacts "$work/predict_lenet" "$models/lenet-symbol.json" "$models/lenet-0000.params" \
  | grep -q '^forward shape 1 10' && check "pkg-config symc-predict consumer"

# The installed symc-run finds the installed runtime.
"$prefix/bin/symc-run" "$work/consumer/lenet_model.so" --input "data=$models/digit.npy" \
  --compare "$models/lenet-expected.npy" | grep -q ': ok' && check "installed symc-run"
# pip install ./python: the package finds the runtime beside the installed symc on PATH.
python3 -m pip install -q --no-build-isolation --no-deps --target "$work/site" "$source/python" > "$work/pip.log" 2>&1
(cd "$work" && env -u SYMC_LIBRARY -u SYMC_COMPILER PATH="$prefix/bin:$PATH" PYTHONPATH="$work/site" \
  SYMC_CACHE_DIR="$work/cache" python3 -c "
import numpy as np, symc
exe = symc.sym.load('$models/lenet-symbol.json').simple_bind(symc.cpu(), grad_req='null', data=(1, 1, 28, 28))
exe.copy_params_from({k[4:]: v for k, v in symc.nd.load('$models/lenet-0000.params').items()}, allow_extra_params=True)
out = exe.forward(data=np.load('$models/digit.npy'))[0].asnumpy()
assert np.allclose(out, np.load('$models/lenet-expected.npy'), atol=1e-5), out
assert symc.base.lib._name.startswith('$prefix'), symc.base.lib._name
") && check "pip-installed Python package"
echo "$passed passed, $((7 - passed)) failed"
[ "$passed" -eq 7 ]
