//===- SymArtifactABI.cpp - the sym-artifact-abi pass ---------------------===//
#include "codegen/Artifact/EntryPoints.h"
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace symc {
#define GEN_PASS_DEF_SYMARTIFACTABI
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// Turns `main` into `implName(inputs..., outputs..., error, workspace)`
/// writing its results into the output memrefs. The seed and batch
/// arguments keep their attributes, and the error (a SymcRunError as
/// memref<4xi64>) gets one: the lowering of random ops and of run-time
/// checks, and sym-chunk-batch, find them by that.
LogicalResult toDestinationPassing(func::FuncOp main, StringRef implName, std::optional<unsigned> seedArg) {
  OpBuilder b(main.getContext());
  Block &body = main.getBody().front();
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments()) {
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    if (!tensor)
      return main.emitError("argument ") << arg.getArgNumber() << " has no ranked shape";
    arg.setType(MemRefType::get(tensor.getShape(), tensor.getElementType()));
    auto toTensor = b.create<bufferization::ToTensorOp>(main.getLoc(), tensor, arg,
                                                        /*restrict=*/true, /*writable=*/false);
    arg.replaceAllUsesExcept(toTensor, toTensor);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  for (Value result : ret.getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(result.getType());
    if (!tensor)
      return main.emitError("a result has no ranked shape");
    Value out = body.addArgument(MemRefType::get(tensor.getShape(), tensor.getElementType()),
                                 main.getLoc());
    auto materialize = b.create<bufferization::MaterializeInDestinationOp>(main.getLoc(), result, out);
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  b.create<func::ReturnOp>(ret.getLoc());
  ret.erase();
  body.addArgument(MemRefType::get({4}, b.getI64Type()), main.getLoc());
  // The workspace arena, last: planned intermediate buffers are views into it.
  body.addArgument(MemRefType::get({ShapedType::kDynamic}, b.getI8Type()), main.getLoc());
  llvm::SmallVector<unsigned> batchArgs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (main.getArgAttr(i, sym::kBatchAttr))
      batchArgs.push_back(i);
  main.setFunctionType(b.getFunctionType(body.getArgumentTypes(), {}));
  main.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  for (unsigned i : batchArgs)
    main.setArgAttr(i, sym::kBatchAttr, b.getUnitAttr());
  if (seedArg)
    main.setArgAttr(*seedArg, sym::kRngSeedAttr, b.getUnitAttr());
  main.setArgAttr(body.getNumArguments() - 2, sym::kRunErrorAttr, b.getUnitAttr());
  main.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  main.setName(implName);
  main.setPrivate();
  main->setAttr("llvm.linkage", LLVM::LinkageAttr::get(main.getContext(), LLVM::Linkage::Internal));
  // Inlined into its entry point, which only unpacks `buffers`: a call
  // passing every buffer (a thousand for a training step's monitor) is one
  // basic block of stack stores that LLVM's instruction selection handles
  // in time quadratic in its length.
  main->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("alwaysinline")}));
  main->setAttr(kImplAttr, b.getUnitAttr());
  return success();
}

/// The seed argument of a function with ops that draw random numbers.
std::optional<unsigned> addSeedArgument(func::FuncOp function) {
  bool random = function.walk([](Operation *op) {
                            return sym::drawsRandomNumbers(op) ? WalkResult::interrupt() : WalkResult::advance();
                          }).wasInterrupted();
  if (!random)
    return std::nullopt;
  return sym::seedArgument(function).getArgNumber();
}

/// Numbers the ops with a run-time check (kCheckAttr, from 1) and lists
/// them as the manifest's "checks": each node and its message.
llvm::json::Array numberRunTimeChecks(ModuleOp module) {
  llvm::json::Array checks;
  module.walk([&](Operation *op) {
    StringRef message = sym::runTimeCheckMessage(op);
    if (message.empty())
      return;
    checks.push_back(llvm::json::Object{{"node", sym::nodeName(op->getLoc())}, {"message", message}});
    op->setAttr(sym::kCheckAttr, IntegerAttr::get(IntegerType::get(module.getContext(), 64), checks.size()));
  });
  return checks;
}

struct SymArtifactABIPass : impl::SymArtifactABIBase<SymArtifactABIPass> {
  using SymArtifactABIBase::SymArtifactABIBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("no @main function to compile");
      return signalPassFailure();
    }
    auto train = module.lookupSymbol<func::FuncOp>("main_train");
    auto backward = module.lookupSymbol<func::FuncOp>("main_backward");
    llvm::json::Object description = buildManifest(main, train, backward, prefix);
    description["checks"] = numberRunTimeChecks(module);
    std::string manifest;
    llvm::raw_string_ostream(manifest) << llvm::json::Value(std::move(description));
    struct Entry {
      func::FuncOp function;
      std::string name;
      bool monitor;
    } entries[] = {
        {main, forwardEntryName(prefix), false},
        {train, trainingForwardEntryName(prefix), false},
        {backward, backwardEntryName(prefix), false},
        {module.lookupSymbol<func::FuncOp>("main_monitor"), monitorEntryName(prefix, false), true},
        {module.lookupSymbol<func::FuncOp>("main_train_monitor"), monitorEntryName(prefix, true), true},
        {module.lookupSymbol<func::FuncOp>("main_backward_monitor"), backwardMonitorEntryName(prefix), true}};
    for (auto &[function, name, monitor] : entries) {
      if (!function)
        continue;
      std::optional<unsigned> seedArg = addSeedArgument(function);
      if (failed(toDestinationPassing(function, name + "_impl", seedArg)))
        return signalPassFailure();
      if (monitor)
        function->setAttr(kMonitorImplAttr, UnitAttr::get(&getContext()));
      buildEntry(module, function, name);
    }
    // Embedded by sym-embed-manifest once the workspace size is known.
    module->setAttr(kManifestAttr, StringAttr::get(&getContext(), manifest));
  }
};

} // namespace
} // namespace symc
