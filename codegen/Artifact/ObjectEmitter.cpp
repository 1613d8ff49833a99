//===- ObjectEmitter.cpp - LLVM dialect -> object file -> shared library --===//
#include "codegen/Artifact/ObjectEmitter.h"

#include "codegen/Artifact/Manifest.h"
#include "codegen/CPU/Kernels/KernelLibrary.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace symc {
namespace {

/// Memory operations the machine scheduler tracks one by one in a basic
/// block before it merges their dependencies (LLVM's -dag-maps-huge-region,
/// 1000 by default). Building the dependency graph is quadratic in that
/// number, and straight-line code of thousands of loads and stores (a
/// padded tile's rows copied, an entry filling the contexts of its parallel
/// loops) spent most of the code generation there. At 200, VGG-11's
/// artifact is byte-identical and LLVM's time 40% lower; on ResNet-50's
/// training step only the entries' stack slots move.
void limitSchedulingRegions() {
  constexpr llvm::StringLiteral kOption = "dag-maps-huge-region";
  llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
  if (auto *option = options.lookup(kOption))
    option->addOccurrence(0, kOption, "200");
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetOptions &target,
                                                         std::string &error) {
  // (Target registration is not thread-safe; partitions compile in threads.)
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    limitSchedulingRegions();
  });
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return nullptr;
  std::string cpu = target.cpu;
  std::string features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SmallVector<std::string> enabled;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      enabled.push_back((feature.second ? "+" : "-") + feature.first().str());
    features = llvm::join(enabled, ",");
  }
  // Asked of a generic subtarget: LLVM warns when creating one for a bad name.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(llvmTarget->createMCSubtargetInfo(triple, "generic", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu)) {
    error = "unknown --cpu '" + cpu + "': give an LLVM CPU name (x86-64-v3, skylake-avx512, znver3, ...) or native";
    return nullptr;
  }
  llvm::TargetOptions options;
  auto *machine = llvmTarget->createTargetMachine(triple, cpu, features, options, llvm::Reloc::PIC_,
                                                  std::nullopt, llvm::CodeGenOptLevel::Aggressive);
  if (!machine)
    error = "cannot create a target machine for CPU '" + cpu + "'";
  return std::unique_ptr<llvm::TargetMachine>(machine);
}

/// Runs the module pipeline `build` makes, with `machine`'s analyses.
void runModulePasses(llvm::Module &module, llvm::TargetMachine &machine,
                     llvm::function_ref<llvm::ModulePassManager(llvm::PassBuilder &)> build) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  build(builder).run(module, mam);
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  runModulePasses(module, machine, [](llvm::PassBuilder &builder) {
    return builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  });
}

/// Inlines the functions marked alwaysinline before the module is split,
/// which could place a function and its caller in different partitions.
void inlineAlwaysInline(llvm::Module &module, llvm::TargetMachine &machine) {
  runModulePasses(module, machine, [](llvm::PassBuilder &) {
    llvm::ModulePassManager passes;
    passes.addPass(llvm::AlwaysInlinerPass());
    return passes;
  });
}

/// Translates `module` for `machine`, with the kernels it calls; null with `error` set on failure.
std::unique_ptr<llvm::Module> translate(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                                        llvm::TargetMachine &machine, std::string &error) {
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  llvmModule->setTargetTriple(machine.getTargetTriple().str());
  llvmModule->setDataLayout(machine.createDataLayout());
  if (!cpu::linkKernelLibrary(*llvmModule, error))
    return nullptr;
  return llvmModule;
}

bool writeObject(llvm::Module &module, llvm::TargetMachine &machine, const std::string &path,
                 std::string &error) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot open " + path + ": " + ec.message();
    return false;
  }
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, out.os(), nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  codegen.run(module);
  out.keep();
  return true;
}

/// Threads compiling partitions of a module: one per core, a few at most.
unsigned compileThreads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

/// Partitions per thread: a module's functions differ in size by a factor of
/// a thousand (entries against kernels), so partitions that split them
/// round-robin take unequal times, and threads that take the next partition
/// when done finish together. More cost more: each holds the declarations
/// of the whole module.
constexpr unsigned kPartitionsPerThread = 4;

/// Local symbols take the artifact's prefix: splitting the module turns them
/// into hidden globals, which must not collide with those of another shape
/// variant linked into the same library.
void prefixLocalSymbols(llvm::Module &module, llvm::StringRef prefix) {
  for (llvm::GlobalValue &value : module.global_values())
    if (value.hasLocalLinkage())
      value.setName(prefix + "." + (value.hasName() ? value.getName() : "unnamed"));
}

/// The module's partitions for parallel compilation, as bitcode: an LLVM
/// context is not thread-safe, so each is read back into its own.
std::vector<llvm::SmallString<0>> splitIntoBitcode(llvm::Module &module, unsigned count) {
  std::vector<llvm::SmallString<0>> partitions;
  llvm::SplitModule(
      module, count,
      [&](std::unique_ptr<llvm::Module> partition) {
        llvm::raw_svector_ostream os(partitions.emplace_back());
        llvm::WriteBitcodeToFile(*partition, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  return partitions;
}

/// Optimizes and compiles one partition into an object file at `path`.
bool compilePartition(llvm::StringRef bitcode, const TargetOptions &target, const std::string &path,
                      std::string &error) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, path), context);
  if (!module) {
    error = "cannot read back a partition of the module: " + llvm::toString(module.takeError());
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target, error);
  if (!machine)
    return false;
  optimize(**module, *machine);
  return writeObject(**module, *machine, path, error);
}

/// Runs ld.lld with `args`, which write `output`.
bool runLinker(std::vector<std::string> args, const std::string &output, std::string &error) {
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("ld.lld-19");
  if (!linker)
    linker = llvm::sys::findProgramByName("ld.lld");
  if (!linker) {
    error = "no linker found: install lld-19";
    return false;
  }
  args.insert(args.begin(), *linker);
  llvm::SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  if (llvm::sys::ExecuteAndWait(*linker, argRefs, std::nullopt, {}, 0, 0, &message) != 0) {
    error = "linking " + output + " failed" + (message.empty() ? "" : ": " + message);
    return false;
  }
  return true;
}

} // namespace

std::optional<TargetInfo> describeTarget(const TargetOptions &target, std::string &error) {
  TargetInfo result;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target, error);
  if (!machine)
    return std::nullopt;
  const llvm::MCSubtargetInfo *info = machine->getMCSubtargetInfo();
  // The features libsymrt can check with __builtin_cpu_supports.
  for (const char *feature : {"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                              "avx512dq", "avx512vl"})
    if (info->checkFeatures(std::string("+") + feature))
      result.checkedFeatures.push_back(feature);
  if (info->checkFeatures("+avx512f"))
    result.vectorBits = 512;
  else if (info->checkFeatures("+avx2"))
    result.vectorBits = 256;
  return result;
}

bool emitLLVMIR(mlir::ModuleOp module, const TargetOptions &target, llvm::raw_ostream &os,
                std::string &error) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target, error);
  std::unique_ptr<llvm::Module> llvmModule = machine ? translate(module, context, *machine, error) : nullptr;
  if (!llvmModule)
    return false;
  optimize(*llvmModule, *machine);
  llvmModule->print(os, nullptr);
  return true;
}

bool emitObjectFile(mlir::ModuleOp module, const TargetOptions &target, llvm::StringRef prefix,
                    const std::string &path, std::string &error) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target, error);
  std::unique_ptr<llvm::Module> llvmModule = machine ? translate(module, context, *machine, error) : nullptr;
  if (!llvmModule)
    return false;
  unsigned threadCount = compileThreads();
  if (threadCount == 1) {
    optimize(*llvmModule, *machine);
    return writeObject(*llvmModule, *machine, path, error);
  }
  inlineAlwaysInline(*llvmModule, *machine);
  prefixLocalSymbols(*llvmModule, prefix);
  std::vector<llvm::SmallString<0>> partitions =
      splitIntoBitcode(*llvmModule, threadCount * kPartitionsPerThread);
  llvmModule.reset();
  std::vector<std::string> objects, errors(partitions.size());
  for (size_t i = 0; i < partitions.size(); ++i)
    objects.push_back(path + ".part" + std::to_string(i) + ".o");
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < threadCount; ++t)
    threads.emplace_back([&] {
      for (size_t i = next++; i < partitions.size(); i = next++)
        compilePartition(partitions[i], target, objects[i], errors[i]);
    });
  for (std::thread &thread : threads)
    thread.join();
  auto failed = llvm::find_if(errors, [](const std::string &e) { return !e.empty(); });
  bool linked = failed == errors.end();
  if (!linked)
    error = *failed;
  else {
    // One relocatable object, as with a single partition.
    std::vector<std::string> args{"-r"};
    args.insert(args.end(), objects.begin(), objects.end());
    args.insert(args.end(), {"-o", path});
    linked = runLinker(args, path, error);
  }
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  return linked;
}

bool linkSharedLibrary(const std::vector<std::string> &objects, const std::string &output,
                       std::string &error) {
  std::vector<std::string> args{"-shared", "-Bsymbolic", "--as-needed", "-o", output};
  args.insert(args.end(), objects.begin(), objects.end());
  // symcParallelFor stays undefined: libsymrt, loaded before the artifact,
  // defines it.
  args.insert(args.end(), {"-L/usr/lib/x86_64-linux-gnu", "-L/lib/x86_64-linux-gnu", "-lm", "-lc"});
  return runLinker(args, output, error);
}

/// The parameters every entry point takes (symc/ArtifactABI.h).
constexpr const char *kEntryParameters =
    "(void *const *buffers, const int64_t *dims, void *workspace, SymcRunError *error);\n";

std::string artifactHeader(llvm::StringRef prefix, bool embeddedParams, bool prepare, bool trainingForward,
                           bool backward, bool monitor, bool trainingMonitor, bool backwardMonitor) {
  std::string entryPoints;
  if (prepare)
    entryPoints += "/* Computes the manifest's \"prepare\" arrays (packed weights) the forward reads:\n"
                   "   buffers: arguments, aux states, then those arrays. Run it before the first\n"
                   "   forward and after writing an argument or aux state they are computed from. */\n"
                   "int32_t " + prepareEntryName(prefix) + kEntryParameters;
  for (auto [present, isTrain] : {std::pair{monitor, false}, std::pair{trainingMonitor, true}})
    if (present)
      entryPoints += "/* The forward that also returns every node's outputs (set_monitor_callback). */\n"
                     "int32_t " + monitorEntryName(prefix, isTrain) +
                     kEntryParameters;
  if (trainingForward)
    entryPoints += "/* forward(is_train=True): same buffers as the forward. */\n"
                   "int32_t " + trainingForwardEntryName(prefix) +
                   kEntryParameters;
  if (backward)
    entryPoints += "/* buffers: arguments, aux states, head gradients, then the gradients and aux\n"
                   "   updates of the manifest's \"backward\" entry. */\n"
                   "int32_t " + backwardEntryName(prefix) +
                   kEntryParameters;
  if (backwardMonitor)
    entryPoints += "/* The backward that also returns every backward node's outputs (set_monitor_callback):\n"
                   "   buffers as the backward's without the saved values, then the monitor's. */\n"
                   "int32_t " + backwardMonitorEntryName(prefix) +
                   kEntryParameters;
  std::string paramsDeclaration = "/* The embedded .params file; its size in bytes is stored in *size. */\n"
                                  "const uint8_t *" + paramsEntryName(prefix) + "(int64_t *size);\n";
  std::string guard = (prefix.upper() + "_ARTIFACT_H");
  return llvm::formatv(R"(/* Generated by symc: entry points of artifact '{0}' (ABI version {1}). */
#ifndef {2}
#define {2}
#include <stdint.h>
/* SymcRunError: symc/ArtifactABI.h, installed with libsymrt. */
#include <symc/ArtifactABI.h>
#ifdef __cplusplus
extern "C" {{
#endif
/* buffers: arguments, then aux states, then outputs, in the manifest's orders
   (then the prepared arrays, where the manifest lists them).
   dims: dims[0] is the batch size where the manifest's shapes have -1 dims
   (may be null otherwise). Returns 0 on success, else the number of the
   manifest's failed run-time check, whose values *error holds. */
int32_t {3}(void *const *buffers, const int64_t *dims, void *workspace, SymcRunError *error);
{6}/* The manifest: JSON describing names, shapes, dtypes and entry points. */
const char *{4}(void);
{5}#ifdef __cplusplus
}
#endif
#endif
)",
                       prefix, kArtifactAbiVersion, guard, forwardEntryName(prefix),
                       manifestEntryName(prefix), embeddedParams ? paramsDeclaration : "", entryPoints);
}

} // namespace symc
