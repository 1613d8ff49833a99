//===- Driver.cpp - the library behind the symc CLI -----------------------===//
#include "compiler/Driver/Driver.h"

#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/ObjectEmitter.h"
#include "symc/ArtifactKey.h"
#include "symc/ArtifactSeal.h"
#include "symc/Params.h"

#include "compiler/Import/SymbolImporter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Pipelines/Registration.h"
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <mutex>

using namespace mlir;

void symc::loadDialects(MLIRContext &ctx) {
  DialectRegistry registry;
  registerDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.getOrLoadDialect<sym::SymDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
}

namespace {

/// Finds the node name and file of a location built by the importer.
void describeLocation(Location loc, std::string &node, std::string &file) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    node = name.getName().str();
    describeLocation(name.getChildLoc(), node, file);
  } else if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
    file = fileLoc.getFilename().str();
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations())
      describeLocation(l, node, file);
  }
}

const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  llvm_unreachable("covered switch");
}

/// A dim of --shape: '?' or a size.
bool isShapeDim(llvm::StringRef dim) {
  uint64_t size;
  return dim == "?" || !dim.getAsInteger(10, size);
}

/// `name=1,3,?` -> `name:1x3x?`, the pass option syntax.
FailureOr<std::string> toPassShape(MLIRContext &ctx, llvm::StringRef text) {
  auto [name, dims] = text.split('=');
  if (name.empty() || !text.contains('=')) {
    emitError(UnknownLoc::get(&ctx)) << "invalid --shape '" << text
                                     << "': expected NAME=D0,D1,... ('?' for a dynamic dim)";
    return failure();
  }
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, ',');
  for (llvm::StringRef part : parts) {
    if (!isShapeDim(part)) {
      emitError(UnknownLoc::get(&ctx)) << "invalid dim '" << part << "' in --shape " << text;
      return failure();
    }
  }
  return (name + ":" + llvm::join(parts, "x")).str();
}

} // namespace

symc::NodeDiagnosticPrinter::NodeDiagnosticPrinter(MLIRContext &ctx, llvm::raw_ostream &os)
    : ctx(ctx) {
  id = ctx.getDiagEngine().registerHandler([&os](Diagnostic &diag) {
    std::string node, file;
    describeLocation(diag.getLocation(), node, file);
    if (!file.empty())
      os << file << ": ";
    if (!node.empty())
      os << "node '" << node << "': ";
    os << severityName(diag.getSeverity()) << ": " << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      os << "  note: " << note << "\n";
    os.flush();
    return success();
  });
}

symc::NodeDiagnosticPrinter::~NodeDiagnosticPrinter() { ctx.getDiagEngine().eraseHandler(id); }

OwningOpRef<ModuleOp> symc::compileToSym(MLIRContext &ctx, const CompileOptions &options) {
  loadDialects(ctx);
  FrontendOptions frontend;
  frontend.train = options.train;
  frontend.gradReqs = options.gradReqs;
  frontend.mirror = options.mirror;
  for (const std::string &shape : options.shapes) {
    FailureOr<std::string> converted = toPassShape(ctx, shape);
    if (failed(converted))
      return nullptr;
    frontend.shapes.push_back(*converted);
  }
  OwningOpRef<ModuleOp> module = importSymbolFile(&ctx, options.symbolPath, options.outputs);
  if (!module || failed(verify(*module)))
    return nullptr;
  if (!options.runFrontend)
    return module;
  PassManager pm(&ctx);
  buildFrontendPipeline(pm, frontend);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

void symc::printInterface(ModuleOp module, llvm::raw_ostream &os) {
  auto main = *module.getOps<func::FuncOp>().begin();
  os << llvm::formatv("{0:2}", llvm::json::Value(describeInterface(main))) << "\n";
}

namespace {

/// Prints `[symc] phase: N ms` lines when enabled.
class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled) : enabled(enabled), start(std::chrono::steady_clock::now()) {}
  void done(llvm::StringRef phase, llvm::StringRef detail = "") {
    auto now = std::chrono::steady_clock::now();
    if (enabled) {
      llvm::errs() << "[symc] " << phase << ": "
                   << std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count() << " ms";
      if (!detail.empty())
        llvm::errs() << " (" << detail << ")";
      llvm::errs() << "\n";
    }
    start = now;
  }

private:
  bool enabled;
  std::chrono::steady_clock::time_point start;
};

bool reportError(const std::string &message) {
  llvm::errs() << "symc: error: " << message << "\n";
  return false;
}

bool writeText(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string error;
  auto output = openOutputFile(path, &error);
  if (!output)
    return reportError("cannot open " + path + ": " + error);
  write(output->os());
  output->keep();
  return true;
}

/// The embedded manifest's memory plan, as a `[symc] memory plan:` line.
void printMemoryPlan(ModuleOp module, const std::string &prefix) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(symc::manifestGlobalName(prefix));
  auto text = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull()) : nullptr;
  if (!text)
    return;
  llvm::Expected<llvm::json::Value> manifest = llvm::json::parse(text.getValue().rtrim('\0'));
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return;
  }
  if (const llvm::json::Object *object = manifest->getAsObject())
    llvm::errs() << "[symc] memory plan: " << symc::describeMemoryPlan(*object) << "\n";
}

} // namespace

namespace {

/// The time spent in each pass, by its command-line name (a pass that runs
/// on several functions at once counts each), to name the slowest.
class PassTimes : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    std::lock_guard<std::mutex> lock(mutex);
    started[{pass, op}] = std::chrono::steady_clock::now();
  }
  void runAfterPass(Pass *pass, Operation *op) override { record(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override { record(pass, op); }

  /// "name N ms, ..." for the `count` passes that took longest.
  std::string slowest(size_t count) const {
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto &[name, ms] : total)
      ranked.emplace_back(ms, name.str());
    llvm::sort(ranked, std::greater<>());
    ranked.resize(std::min(count, ranked.size()));
    return llvm::join(llvm::map_range(ranked, [](const auto &entry) {
                        return llvm::formatv("{0} {1:0} ms", entry.second, entry.first).str();
                      }),
                      ", ");
  }

private:
  void record(Pass *pass, Operation *op) {
    std::lock_guard<std::mutex> lock(mutex);
    auto start = started.find({pass, op});
    // (Adaptors that run nested pipelines have no name of their own.)
    if (start == started.end() || pass->getArgument().empty())
      return;
    total[pass->getArgument()] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start->second).count();
    started.erase(start);
  }

  std::mutex mutex;
  llvm::DenseMap<std::pair<Pass *, Operation *>, std::chrono::steady_clock::time_point> started;
  llvm::StringMap<double> total;
};

/// The host CPU a CUDA artifact's launch code is compiled for: the given
/// one, or for "native" plain x86-64 (the artifact runs on the GPU
/// machine, not the compiling one).
symc::TargetOptions hostTarget(const symc::ArtifactOptions &options) {
  bool cuda = options.target != "cpu";
  return symc::TargetOptions{cuda && options.cpu == "native" ? "x86-64" : options.cpu};
}

/// Lowers `module` as `options` say; false after reporting an error. With
/// `slowestPasses`, sets it to the passes that took longest.
bool lowerModule(ModuleOp module, const symc::ArtifactOptions &options, std::string *slowestPasses = nullptr) {
  std::string error;
  std::optional<symc::TargetInfo> info = symc::describeTarget(hostTarget(options), error);
  if (!info)
    return reportError(error);
  bool invalidTarget = false;
  std::optional<std::string> arch = symc::cudaArchOf(options.target, invalidTarget);
  if (invalidTarget)
    return false;
  PassManager pm(module.getContext());
  pm.enableVerifier(options.verifyEachPass);
  if (arch) {
    symc::CUDAOptions cuda;
    cuda.prefix = options.prefix;
    cuda.arch = *arch;
    cuda.stopAtLinalg = options.emit == symc::EmitKind::Linalg;
    cuda.batchChunk = options.batchChunk;
    cuda.embeddedParams = options.embeddedParams;
    cuda.shapeVariants = options.shapeVariants;
    symc::buildCUDAPipeline(pm, cuda);
  } else {
    symc::CPUOptions cpu;
    cpu.prefix = options.prefix;
    cpu.stopAtLinalg = options.emit == symc::EmitKind::Linalg;
    cpu.vectorBits = info->vectorBits;
    cpu.cpuFeatures = info->checkedFeatures;
    cpu.batchChunk = options.batchChunk;
    cpu.batchChunkBytes = options.batchChunkBytes.value_or(cpu.batchChunkBytes);
    cpu.embeddedParams = options.embeddedParams;
    cpu.monitor = options.monitor;
    cpu.shapeVariants = options.shapeVariants;
    symc::buildCPUPipeline(pm, cpu);
  }
  PassTimes *passTimes = nullptr;
  if (slowestPasses) {
    auto times = std::make_unique<PassTimes>();
    passTimes = times.get();
    pm.addInstrumentation(std::move(times));
  }
  if (failed(pm.run(module)))
    return false;
  if (!options.verifyEachPass && failed(verify(module)))
    return reportError("the lowered module is invalid (a compiler bug): rerun with --verify-each to find the pass "
                       "that broke it");
  if (passTimes)
    *slowestPasses = passTimes->slowest(3);
  return true;
}

/// The PTX of every kernel module (gpu.binary) in a lowered CUDA module.
bool writePTX(ModuleOp module, const std::string &path) {
  return writeText(path, [&](llvm::raw_ostream &os) {
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects())
        if (auto ptx = dyn_cast<gpu::ObjectAttr>(object))
          os << ptx.getObject().getValue().rtrim('\0');
    });
  });
}

} // namespace

bool symc::emitArtifact(ModuleOp module, const ArtifactOptions &options) {
  PhaseTimer timer(options.printPhases);
  TargetOptions target = hostTarget(options);
  std::string slowestPasses;
  if (!lowerModule(module, options, options.printPhases ? &slowestPasses : nullptr))
    return false;
  timer.done(options.emit == EmitKind::Linalg ? "lower to linalg" : "lower to LLVM dialect",
             "slowest passes: " + slowestPasses);
  if (options.emit == EmitKind::Linalg)
    return writeText(options.outputPath, [&](llvm::raw_ostream &os) { module.print(os); });
  if (options.printPhases)
    printMemoryPlan(module, options.prefix);
  if (options.emit == EmitKind::PTX) {
    if (options.target == "cpu")
      return reportError("--emit=ptx needs --target cuda");
    return writePTX(module, options.outputPath);
  }

  std::string error;
  if (options.emit == EmitKind::LLVMIR) {
    bool ok = true;
    if (!writeText(options.outputPath, [&](llvm::raw_ostream &os) {
          ok = emitLLVMIR(module, target, os, error);
        }))
      return false;
    return ok || reportError(error);
  }
  std::string objectPath = options.outputPath;
  if (options.emit == EmitKind::SharedLibrary)
    objectPath = options.outputPath + ".o";
  if (!emitObjectFile(module, target, options.prefix, objectPath, error))
    return reportError(error);
  timer.done("optimize and emit object code");
  if (options.emit == EmitKind::Object) {
    std::string headerPath = llvm::StringRef(objectPath).rsplit('.').first.str() + ".h";
    bool prepare = module.lookupSymbol(prepareEntryName(options.prefix));
    bool trainingForward = module.lookupSymbol(trainingForwardEntryName(options.prefix));
    bool backward = module.lookupSymbol(backwardEntryName(options.prefix));
    bool monitor = module.lookupSymbol(monitorEntryName(options.prefix, false));
    bool trainingMonitor = module.lookupSymbol(monitorEntryName(options.prefix, true));
    bool backwardMonitor = module.lookupSymbol(backwardMonitorEntryName(options.prefix));
    return writeText(headerPath, [&](llvm::raw_ostream &os) {
      os << artifactHeader(options.prefix, !options.embeddedParams.empty(), prepare, trainingForward, backward, monitor,
                           trainingMonitor, backwardMonitor);
    });
  }
  std::vector<std::string> objects{objectPath};
  llvm::append_range(objects, options.linkedObjects);
  bool linked = linkSharedLibrary(objects, options.outputPath, error);
  llvm::sys::fs::remove(objectPath);
  if (!linked)
    return reportError(error);
  if (!sealArtifact(options.outputPath, error))
    return reportError("cannot seal " + options.outputPath + ": " + error);
  timer.done("link " + options.outputPath);
  return true;
}

std::optional<std::string> symc::cudaArchOf(const std::string &target, bool &invalid) {
  invalid = false;
  llvm::StringRef text(target);
  if (text == "cpu")
    return std::nullopt;
  if (text == "cuda")
    return std::string("sm_90");
  unsigned version = 0;
  if (text.consume_front("cuda:") && text.starts_with("sm_") && !text.drop_front(3).getAsInteger(10, version) &&
      version >= 80 && version <= 90)
    return text.str();
  invalid = true;
  reportError("unknown --target '" + target + "': expected cpu, cuda, or cuda:sm_NN with NN from 80 to 90 "
              "(LLVM 19's NVPTX backend reaches sm_90; CUDA 13's ptxas starts at sm_75)");
  return std::nullopt;
}

std::optional<std::vector<std::vector<std::string>>>
symc::expandShapeVariants(const std::vector<std::string> &shapes) {
  std::vector<std::vector<std::string>> sets{{}};
  for (const std::string &shape : shapes) {
    auto [name, dims] = llvm::StringRef(shape).split('=');
    if (name.empty() || dims.empty()) { // compileToSym says what is wrong
      for (std::vector<std::string> &set : sets)
        set.push_back(shape);
      continue;
    }
    // Each set grows by every combination of this shape's listed sizes.
    std::vector<std::string> values{(name + "=").str()};
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, ',');
    for (auto [d, part] : llvm::enumerate(parts)) {
      llvm::SmallVector<llvm::StringRef> sizes;
      part.split(sizes, '|');
      if (!llvm::all_of(sizes, isShapeDim)) {
        reportError("invalid dim '" + part.str() + "' in --shape " + shape);
        return std::nullopt;
      }
      std::vector<std::string> grown;
      for (const std::string &value : values)
        for (llvm::StringRef size : sizes)
          grown.push_back(value + (d ? "," : "") + size.str());
      values = std::move(grown);
      if (values.size() > kMaxShapeVariants)
        break;
    }
    std::vector<std::vector<std::string>> grown;
    for (const std::vector<std::string> &set : sets)
      for (const std::string &value : values) {
        grown.push_back(set);
        grown.back().push_back(value);
      }
    sets = std::move(grown);
    if (sets.size() > kMaxShapeVariants) {
      reportError("the --shape sizes listed with '|' make more than " + std::to_string(kMaxShapeVariants) +
                  " shape variants; each is a whole compile: list fewer sizes");
      return std::nullopt;
    }
  }
  return sets;
}

bool symc::emitShapeVariants(ModuleOp primary, CompileOptions compile,
                             const std::vector<std::vector<std::string>> &shapeSets, const ArtifactOptions &options) {
  ArtifactOptions withVariants = options;
  auto removeObjects = llvm::make_scope_exit([&] {
    for (const std::string &object : withVariants.linkedObjects)
      llvm::sys::fs::remove(object);
  });
  for (size_t k = 1; k < shapeSets.size(); ++k) {
    ArtifactOptions variant = options;
    variant.prefix = options.prefix + "_shape" + std::to_string(k);
    variant.embeddedParams.clear(); // the runtime reads the first variant's
    std::string shapes = llvm::join(shapeSets[k], " ");
    if (options.printPhases)
      llvm::errs() << "[symc] shape variant " << variant.prefix << ": " << shapes << "\n";
    compile.shapes = shapeSets[k];
    OwningOpRef<ModuleOp> module = compileToSym(*primary.getContext(), compile);
    if (!module || !lowerModule(*module, variant))
      return reportError("cannot compile the shape variant " + shapes);
    std::string error, objectPath = options.outputPath + "." + std::to_string(k) + ".o";
    withVariants.linkedObjects.push_back(objectPath);
    if (!emitObjectFile(*module, hostTarget(options), variant.prefix, objectPath, error))
      return reportError(error);
    withVariants.shapeVariants.push_back(variant.prefix);
  }
  return emitArtifact(primary, withVariants);
}

std::string symc::predictArtifactPath(const CompileOptions &options, const std::string &dir) {
  auto buffer = llvm::MemoryBuffer::getFile(options.symbolPath, /*IsText=*/false);
  if (!buffer) {
    reportError("cannot read " + options.symbolPath + ": " + buffer.getError().message());
    return "";
  }
  std::vector<ShapeText> shapes;
  for (const std::string &text : options.shapes) {
    ShapeText shape;
    if (!parseShapeText(text, shape)) {
      reportError("invalid --shape '" + text + "': expected NAME=D0,D1,...");
      return "";
    }
    // Written as the predict library writes the shapes it is given.
    llvm::SmallVector<llvm::StringRef> dims;
    llvm::StringRef(shape.second).split(dims, ',');
    SmallVector<std::string> canonical;
    for (llvm::StringRef dim : dims) {
      uint64_t value;
      canonical.push_back(dim.trim().getAsInteger(10, value) ? dim.trim().str() : std::to_string(value));
    }
    shapes.emplace_back(shape.first, llvm::join(canonical, ","));
  }
  return dir + "/" + artifactKey((*buffer)->getBuffer(), shapes, options.outputs) + ".so";
}

bool symc::checkParams(ModuleOp module, const std::string &paramsPath) {
  ParamsFile params;
  std::string error;
  if (!loadParams(paramsPath, params, error))
    return reportError(paramsPath + ": " + error);
  auto main = *module.getOps<func::FuncOp>().begin();
  llvm::StringMap<std::pair<RankedTensorType, bool>> expected; // name -> (type, is aux)
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (auto name = main.getArgAttrOfType<StringAttr>(i, sym::kNameAttr))
      expected[name.getValue()] = {dyn_cast<RankedTensorType>(main.getArgument(i).getType()),
                                   main.getArgAttr(i, sym::kAuxAttr) != nullptr};
  bool ok = true;
  for (const NDArrayRecord &array : params.arrays) {
    auto [kind, name] = llvm::StringRef(array.name).split(':');
    if (name.empty())
      std::swap(kind, name);
    auto it = expected.find(name);
    if (it == expected.end() || (kind == "aux") != it->second.second) {
      ok = reportError(paramsPath + ": '" + array.name + "' is not " +
                       (kind == "aux" ? "an auxiliary state" : "an argument") + " of the symbol");
      continue;
    }
    RankedTensorType type = it->second.first;
    bool shapeMatches = type && type.getRank() == static_cast<int64_t>(array.shape.size());
    for (size_t d = 0; shapeMatches && d < array.shape.size(); ++d)
      shapeMatches = type.isDynamicDim(d) || type.getDimSize(d) == array.shape[d];
    if (!shapeMatches) {
      SmallVector<std::string> dims;
      for (int64_t d : array.shape)
        dims.push_back(std::to_string(d));
      std::string inferred;
      llvm::raw_string_ostream(inferred) << type;
      ok = reportError(paramsPath + ": '" + array.name + "' has shape (" + llvm::join(dims, ",") +
                       ") but the symbol needs " + inferred);
    }
  }
  return ok;
}

/// A parameter's default as MXNet writes it: (1, 1), 0.5, true, "valid".
static void printDefault(Attribute value, llvm::raw_ostream &os) {
  if (auto array = dyn_cast<DenseI64ArrayAttr>(value)) {
    os << "(";
    llvm::interleaveComma(array.asArrayRef(), os);
    os << ")";
  } else if (auto flag = dyn_cast<BoolAttr>(value)) {
    os << (flag.getValue() ? "true" : "false");
  } else if (auto integer = dyn_cast<IntegerAttr>(value)) {
    os << integer.getInt();
  } else if (auto real = dyn_cast<FloatAttr>(value)) {
    os << llvm::format("%g", real.getValueAsDouble());
  } else if (auto str = dyn_cast<StringAttr>(value)) {
    os << '"' << str.getValue() << '"';
  } else {
    os << value;
  }
}

void symc::printOpCatalogue(MLIRContext &ctx, llvm::raw_ostream &os) {
  loadDialects(ctx);
  os << "# The MXNet ops symc compiles: name(inputs) and parameters; a parameter without '=' has no "
        "default\n# (required, or None when absent). Inputs shown are those of the default parameters.\n";
  llvm::SmallVector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == sym::SymDialect::getDialectNamespace() &&
        sym::resolveOpName(name.stripDialect()) == name.stripDialect()) // not backward ops
      ops.push_back(name);
  llvm::sort(ops, [](RegisteredOperationName a, RegisteredOperationName b) {
    return a.stripDialect().compare_insensitive(b.stripDialect()) < 0;
  });
  for (RegisteredOperationName name : ops) {
    llvm::StringRef op = name.stripDialect();
    sym::OpSignature sig = sym::getOpSignature(op, DictionaryAttr());
    os << op << "(";
    llvm::interleaveComma(sig.inputs, os);
    os << ")";
    // A bare op holds its parameters' defaults in its properties.
    Operation *bare = Operation::create(OperationState(UnknownLoc::get(&ctx), name));
    auto defaults = dyn_cast_or_null<DictionaryAttr>(bare->getPropertiesAsAttribute());
    bare->destroy();
    for (StringAttr attr : name.getAttributeNames()) {
      os << (attr == name.getAttributeNames().front() ? "  " : ", ") << attr.getValue();
      if (Attribute value = defaults ? defaults.get(attr) : Attribute()) {
        os << "=";
        printDefault(value, os);
      }
    }
    llvm::SmallVector<llvm::StringRef> aliases = sym::getOpAliases(op);
    if (!aliases.empty()) {
      os << "  [aliases: ";
      llvm::interleaveComma(aliases, os);
      os << "]";
    }
    os << "\n";
  }
}
