import os

import lit.formats
from lit.llvm import llvm_config

config.name = "symc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.symc_tools_dir, "..", "test", "lit")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["symc", "symc-opt", "symc-run"], [config.symc_tools_dir])
llvm_config.add_tool_substitutions(
    ["FileCheck", "not", "split-file", "count", "llvm-nm", "llvm-readelf"], [config.llvm_tools_dir])
config.substitutions.append(("%models", config.models_dir))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Import", "Inputs")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%symc_libdir", os.path.join(config.symc_tools_dir, "..", "lib")))
# CUDA's ptxas checks the PTX of --target cuda (where the toolkit is).
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))
