//===- symc.cpp - the symc compiler driver --------------------------------===//
//
//   symc compile MODEL-symbol.json --shape data=1,3,224,224 -o model.so
//   symc compile MODEL-symbol.json --shape data=?,3,224|320,224|320 -o model.so
//   symc compile MODEL-symbol.json --shape data=1,3,224,224 --emit=sym
//   symc verify model.so
//   symc ops
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Driver.h"
#include "symc/ArtifactABI.h"
#include "symc/ArtifactSeal.h"
#include "symc/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include <chrono>

namespace cl = llvm::cl;

namespace {

cl::SubCommand compileCommand("compile", "Compile an MXNet symbol");
// `--help` lists these, not LLVM's backend flags.
cl::OptionCategory symcOptions("symc compile options");

cl::opt<std::string> symbolPath(cl::Positional, cl::desc("<MODEL-symbol.json>"), cl::Required,
                                cl::sub(compileCommand), cl::cat(symcOptions));

cl::list<std::string> shapes("shape",
                             cl::desc("input shape NAME=D0,D1,... ('?' keeps the batch dim dynamic; "
                                      "'224|320' compiles each size, one artifact serving them all)"),
                             cl::value_desc("name=dims"), cl::sub(compileCommand), cl::cat(symcOptions));

using symc::EmitKind;
cl::opt<EmitKind> emit(
    "emit", cl::desc("what to produce"), cl::init(EmitKind::SharedLibrary),
    cl::values(clEnumValN(EmitKind::SharedLibrary, "so", "a shared library (default)"),
               clEnumValN(EmitKind::Object, "obj", "an object file and a C header beside it"),
               clEnumValN(EmitKind::Sym, "sym", "shape-inferred sym dialect IR"),
               clEnumValN(EmitKind::Interface, "interface",
                          "arguments, aux states and outputs as JSON (names only without --shape)"),
               clEnumValN(EmitKind::Linalg, "linalg", "linalg on tensors, after fusion"),
               clEnumValN(EmitKind::LLVMIR, "llvm", "optimized LLVM IR"),
               clEnumValN(EmitKind::PTX, "ptx", "the kernels' PTX (--target cuda)")),
    cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> outputPath("o", cl::desc("output file ('-' for stdout)"), cl::init(""),
                                cl::value_desc("path"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> paramsPath("params", cl::desc("check this .params file against the symbol"),
                                cl::value_desc("path"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> train("train", cl::desc("compile the backward too (gradients of the arguments)"),
                    cl::sub(compileCommand), cl::cat(symcOptions));

cl::list<std::string> gradReqs("grad-req",
                               cl::desc("NAME=write|add|null: which gradients exist (default write)"),
                               cl::value_desc("NAME=REQ"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> mirror("mirror",
                     cl::desc("with --train: recompute cheap forward values in the backward instead of keeping "
                              "them (MXNet's MXNET_BACKWARD_DO_MIRROR)"),
                     cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> embedParams("embed-params",
                          cl::desc("embed the --params file in the artifact (simple_bind fills the "
                                   "parameters from it)"),
                          cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> prefix("name", cl::desc("prefix of the artifact's exported symbols"),
                            cl::init("symc"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> cpu("cpu", cl::desc("target CPU (an LLVM CPU name) or 'native'"),
                         cl::init("native"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> target("target",
                            cl::desc("the device the artifact runs on: cpu (default), cuda (sm_90) or cuda:sm_NN "
                                     "(PTX kernels for that GPU architecture, launched by libsymrt_cuda)"),
                            cl::init("cpu"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<int64_t> batchChunk("batch-chunk",
                            cl::desc("batch rows per step when the batch dim is dynamic ('?')"),
                            cl::init(16), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<int64_t> batchChunkBytes("batch-chunk-bytes",
                                 cl::desc("run a static batch one chunk of rows at a time where its activations "
                                          "outgrow this many bytes and the model is memory-bound (0: never)"),
                                 cl::value_desc("N"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::list<std::string> outputs("outputs", cl::CommaSeparated,
                              cl::desc("compile these nodes' outputs (<name>_output) instead of the symbol's "
                                       "heads, as MXPredCreatePartialOut selects them"),
                              cl::value_desc("node,..."), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<std::string> predictDir("predict-dir",
                                cl::desc("write the artifact into DIR under the name MXPredCreate looks "
                                         "up (libsymc_predict; SYMC_ARTIFACT_PATH=DIR)"),
                                cl::value_desc("DIR"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> noMonitor("no-monitor",
                        cl::desc("leave out the monitor variants (set_monitor_callback, symc-run --monitor): "
                                 "a smaller artifact, compiled faster"),
                        cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> verifyEach("verify-each",
                         cl::desc("verify the IR after every lowering pass, not only at the end (slower; finds "
                                  "the pass that broke it)"),
                         cl::sub(compileCommand), cl::cat(symcOptions));

cl::opt<bool> quiet("q", cl::desc("do not print the compile phases"), cl::sub(compileCommand), cl::cat(symcOptions));

cl::SubCommand opsCommand("ops", "List the MXNet ops symc compiles, with their inputs, parameters and aliases");

cl::SubCommand verifyCommand("verify", "Check artifacts against their seal and print each one's SHA-256");
cl::list<std::string> verifyPaths(cl::Positional, cl::desc("<artifact.so>..."), cl::OneOrMore,
                                  cl::sub(verifyCommand));

/// "PATH: sha256 HEX" per sealed artifact; an error per other file.
int runVerify() {
  int status = 0;
  for (const std::string &path : verifyPaths) {
    std::string digest, error;
    if (symc::verifyArtifactSeal(path, digest, error)) {
      llvm::outs() << path << ": sha256 " << digest << "\n";
    } else {
      llvm::errs() << "symc: " << path << ": " << error << "\n";
      status = 1;
    }
  }
  return status;
}

/// model-symbol.json -> model.so (or .o)
std::string defaultOutputPath() {
  llvm::StringRef stem = llvm::sys::path::stem(symbolPath);
  stem.consume_back("-symbol");
  if (emit == EmitKind::SharedLibrary)
    return (stem + ".so").str();
  if (emit == EmitKind::Object)
    return (stem + ".o").str();
  if (emit == EmitKind::PTX)
    return (stem + ".ptx").str();
  return "-";
}

bool writeSymOutput(mlir::ModuleOp module, const std::string &path) {
  std::string error;
  auto output = mlir::openOutputFile(path, &error);
  if (!output) {
    llvm::errs() << "symc: cannot open " << path << ": " << error << "\n";
    return false;
  }
  if (emit == EmitKind::Interface) {
    symc::printInterface(module, output->os());
  } else {
    // Locations carry the MXNet node names.
    module.print(output->os(), mlir::OpPrintingFlags().enableDebugInfo());
    output->os() << "\n";
  }
  output->keep();
  return true;
}

int runCompile() {
  auto start = std::chrono::steady_clock::now();
  mlir::MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  symc::NodeDiagnosticPrinter diagnostics(ctx, llvm::errs());
  if ((!gradReqs.empty() || mirror) && !train) {
    llvm::errs() << "symc: " << (mirror ? "--mirror" : "--grad-req") << " needs --train\n";
    return 1;
  }
  std::optional<std::vector<std::vector<std::string>>> shapeSets =
      symc::expandShapeVariants(std::vector<std::string>(shapes.begin(), shapes.end()));
  if (!shapeSets)
    return 1;
  if (shapeSets->size() > 1 && emit != EmitKind::SharedLibrary) {
    llvm::errs() << "symc: sizes listed with '|' in --shape make one shared library holding each shape variant; "
                    "they need --emit=so\n";
    return 1;
  }
  symc::CompileOptions options{symbolPath,
                               shapeSets->front(),
                               train,
                               std::vector<std::string>(gradReqs.begin(), gradReqs.end()),
                               mirror,
                               std::vector<std::string>(outputs.begin(), outputs.end()),
                               // The interface of a symbol without shapes: its names and orders.
                               /*runFrontend=*/emit != EmitKind::Interface || !shapes.empty()};
  if (!predictDir.empty() && !outputPath.empty()) {
    llvm::errs() << "symc: -o and --predict-dir both name the output; give one\n";
    return 1;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = symc::compileToSym(ctx, options);
  if (!module)
    return 1;

  if (!paramsPath.empty() && !symc::checkParams(*module, paramsPath))
    return 1;
  if (embedParams && paramsPath.empty()) {
    llvm::errs() << "symc: --embed-params needs --params FILE\n";
    return 1;
  }
  std::string path = !predictDir.empty() ? symc::predictArtifactPath(options, predictDir)
                     : outputPath.empty()  ? defaultOutputPath()
                                           : outputPath.getValue();
  if (path.empty())
    return 1;
  if (emit == EmitKind::Sym || emit == EmitKind::Interface)
    return writeSymOutput(*module, path) ? 0 : 1;
  symc::ArtifactOptions artifact;
  artifact.emit = emit;
  artifact.outputPath = path;
  artifact.prefix = prefix;
  artifact.cpu = cpu;
  artifact.printPhases = !quiet;
  artifact.batchChunk = batchChunk;
  if (embedParams)
    artifact.embeddedParams = paramsPath;
  artifact.monitor = !noMonitor;
  artifact.target = target;
  artifact.verifyEachPass = verifyEach;
  if (batchChunkBytes.getNumOccurrences())
    artifact.batchChunkBytes = batchChunkBytes;
  bool emitted = shapeSets->size() > 1 ? symc::emitShapeVariants(*module, options, *shapeSets, artifact)
                                       : symc::emitArtifact(*module, artifact);
  if (emitted && !quiet)
    llvm::errs() << "[symc] total: "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                        .count()
                 << " ms\n";
  return emitted ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(symcOptions);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "symc " SYMC_VERSION " (artifact ABI version " << SYMC_ARTIFACT_ABI_VERSION << ")\n";
  });
  cl::ParseCommandLineOptions(argc, argv, "symc: ahead-of-time compiler for MXNet symbols\n");
  if (compileCommand)
    return runCompile();
  if (verifyCommand)
    return runVerify();
  if (opsCommand) {
    mlir::MLIRContext ctx;
    symc::printOpCatalogue(ctx, llvm::outs());
    return 0;
  }
  llvm::errs() << "symc: no command given; try 'symc compile --help' or 'symc verify --help'\n";
  return 1;
}
