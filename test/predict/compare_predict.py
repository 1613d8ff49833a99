#!/usr/bin/env python3
"""predict_lenet.c on symc against the same source on MXNet 1.9.1.

The program was built once against libsymc_predict (CMake); here the same
source is built against PyPI MXNet's libmxnet.so and header, both run, and
every number and name they print must agree (rtol 1e-5); MXNet runs the
user's graph unfused (MXNET_SUBGRAPH_BACKEND=NONE), the graph symc's
partial forward steps through. Without the artifacts, the
symc build must fail with the `symc compile` command that makes them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    return result.returncode, result.stdout, result.stderr


def numbers(text):
    return [float(x) for x in re.findall(r"-?[0-9]+(?:\.[0-9]+)?", text)]


def build_against_mxnet(args, work):
    try:
        import mxnet
    except ImportError:
        return None
    root = os.path.dirname(mxnet.__file__)
    library, include = os.path.join(root, "libmxnet.so"), os.path.join(root, "include")
    if not os.path.exists(os.path.join(include, "mxnet", "c_predict_api.h")):
        return None
    program = os.path.join(work, "predict_lenet_mxnet")
    rc, _, err = run([args.cc, "-O1", "-I" + include, args.source, "-o", program, library, "-lpthread",
                      "-Wl,-rpath," + root])
    if rc != 0:
        raise RuntimeError("building against libmxnet failed: " + err)
    return program


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    for flag in ("--program", "--artifacts", "--cc", "--source", "--symbol", "--params"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    failures = 0

    rc, symc_out, err = run([args.program, args.symbol, args.params], {"SYMC_ARTIFACT_PATH": args.artifacts})
    if rc != 0:
        print("FAIL symc run: " + err)
        return 1
    print("symc:\n" + symc_out)

    with tempfile.TemporaryDirectory() as empty:
        rc, _, err = run([args.program, args.symbol, args.params], {"SYMC_ARTIFACT_PATH": empty})
        expected = "symc compile MODEL-symbol.json --shape data=1,1,28,28 --shape softmax_label=1 --predict-dir " + empty
        if rc == 0 or expected not in err:
            print("FAIL missing artifact: expected an error with %r, got rc %d: %s" % (expected, rc, err))
            failures += 1

        mxnet_program = build_against_mxnet(args, empty)
        if mxnet_program is None:
            print("MXNet's libmxnet.so with c_predict_api.h is not installed: symc's output not compared")
        else:
            rc, mxnet_out, err = run([mxnet_program, args.symbol, args.params], {"MXNET_ENGINE_TYPE": "NaiveEngine",
                                                                   "MXNET_SUBGRAPH_BACKEND": "NONE"})
            if rc != 0:
                print("FAIL mxnet run: " + err)
                return 1
            # MXNet's oneDNN max pooling has a second output, its workspace of
            # opaque indices, which its monitor reports; symc has no such output.
            mxnet_out = "\n".join(line for line in mxnet_out.splitlines() if not line.endswith("_workspace"))
            for line_symc, line_mxnet in zip(symc_out.splitlines(), mxnet_out.splitlines()):
                a, b = numbers(line_symc), numbers(line_mxnet)
                close = len(a) == len(b) and all(abs(x - y) <= 1e-5 + 1e-5 * abs(y) for x, y in zip(a, b))
                if not close or re.sub(r"[-0-9.]+", "#", line_symc) != re.sub(r"[-0-9.]+", "#", line_mxnet):
                    print("FAIL differs from MXNet:\n  symc:  %s\n  mxnet: %s" % (line_symc, line_mxnet))
                    failures += 1
            if len(symc_out.splitlines()) != len(mxnet_out.splitlines()):
                print("FAIL: %d lines vs MXNet's %d" % (len(symc_out.splitlines()), len(mxnet_out.splitlines())))
                failures += 1
    print("%d passed, %d failed" % (2 - min(failures, 2), min(failures, 2)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
