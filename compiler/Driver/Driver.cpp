//===- Driver.cpp - the library behind the symc CLI -----------------------===//
#include "compiler/Driver/Driver.h"

#include "compiler/Import/SymbolImporter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Sym/IR/SymDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

void symc::loadDialects(MLIRContext &ctx) {
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
    uint64_t dim;
    if (part != "?" && part.getAsInteger(10, dim)) {
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
  for (const std::string &shape : options.shapes) {
    FailureOr<std::string> converted = toPassShape(ctx, shape);
    if (failed(converted))
      return nullptr;
    frontend.shapes.push_back(*converted);
  }
  OwningOpRef<ModuleOp> module = importSymbolFile(&ctx, options.symbolPath);
  if (!module || failed(verify(*module)))
    return nullptr;
  PassManager pm(&ctx);
  buildFrontendPipeline(pm, frontend);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

void symc::printInterface(ModuleOp module, llvm::raw_ostream &os) {
  auto func = *module.getOps<func::FuncOp>().begin();
  auto describe = [](Type type, StringAttr name) {
    auto tensor = cast<TensorType>(type);
    llvm::json::Array shape;
    if (tensor.hasRank())
      for (int64_t d : tensor.getShape())
        shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    std::string dtype;
    llvm::raw_string_ostream(dtype) << tensor.getElementType();
    return llvm::json::Object{{"name", name ? name.getValue() : ""},
                              {"shape", tensor.hasRank() ? llvm::json::Value(std::move(shape))
                                                         : llvm::json::Value(nullptr)},
                              {"dtype", dtype}};
  };
  llvm::json::Array args, aux, outputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto entry = describe(func.getArgument(i).getType(),
                          func.getArgAttrOfType<StringAttr>(i, sym::kNameAttr));
    (func.getArgAttr(i, sym::kAuxAttr) ? aux : args).push_back(std::move(entry));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    outputs.push_back(describe(func.getResultTypes()[i],
                               func.getResultAttrOfType<StringAttr>(i, sym::kNameAttr)));
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"arguments", std::move(args)},
                                   {"aux_states", std::move(aux)},
                                   {"outputs", std::move(outputs)}}))
     << "\n";
}
