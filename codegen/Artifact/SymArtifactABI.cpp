//===- SymArtifactABI.cpp - the sym-artifact-abi pass ---------------------===//
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
/// writing its results into the output memrefs. The seed argument keeps its
/// attribute, and the error (a SymcRunError as memref<4xi64>) gets one: the
/// lowering of random ops and of run-time checks finds them by that.
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
  main.setFunctionType(b.getFunctionType(body.getArgumentTypes(), {}));
  main.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
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

/// An identity-layout memref descriptor over `pointer`, cast to `type`, whose
/// dynamic dims have size `dynamicSize` (an i64).
Value buildDescriptor(OpBuilder &b, Location loc, Value pointer, MemRefType type, Value dynamicSize) {
  MLIRContext *ctx = b.getContext();
  auto i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  int64_t rank = type.getRank();
  SmallVector<Type> fields{ptr, ptr, i64};
  if (rank > 0)
    fields.append(2, LLVM::LLVMArrayType::get(i64, rank));
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  auto constant = [&](int64_t v) -> Value { return b.create<LLVM::ConstantOp>(loc, i64, v); };
  Value desc = b.create<LLVM::UndefOp>(loc, structType);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, pointer, 0);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, pointer, 1);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, constant(0), 2);
  Value stride = constant(1);
  for (int64_t i = rank - 1; i >= 0; --i) {
    Value size = type.isDynamicDim(i) ? dynamicSize : constant(type.getDimSize(i));
    desc = b.create<LLVM::InsertValueOp>(loc, desc, size, ArrayRef<int64_t>{3, i});
    desc = b.create<LLVM::InsertValueOp>(loc, desc, stride, ArrayRef<int64_t>{4, i});
    stride = b.create<LLVM::MulOp>(loc, stride, size);
  }
  return b.create<UnrealizedConversionCastOp>(loc, type, desc).getResult(0);
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

/// int32_t <name>(void *const *buffers, const int64_t *dims, void *workspace,
/// SymcRunError *error) calling `impl`; a dynamic dim is the batch size,
/// dims[0], and the seed argument (`seedArg`) reads dims[1]. The buffers
/// are the other arguments. It returns error->check, cleared before the call.
void buildEntry(ModuleOp module, func::FuncOp impl, StringRef name, std::optional<unsigned> seedArg) {
  MLIRContext *ctx = module.getContext();
  Location loc = impl.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  auto i64 = b.getI64Type();
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, name,
                                          LLVM::LLVMFunctionType::get(i32, {ptr, ptr, ptr, ptr}));
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value buffers = block->getArgument(0);
  ArrayRef<Type> bufferTypes = impl.getArgumentTypes().drop_back(2);
  bool dynamic = llvm::any_of(bufferTypes, [](Type t) { return !cast<MemRefType>(t).hasStaticShape(); });
  // The batch is read only where it exists: a static artifact accepts null dims.
  Value batch = dynamic ? b.create<LLVM::LoadOp>(loc, i64, block->getArgument(1)).getResult()
                        : b.create<LLVM::ConstantOp>(loc, i64, 0).getResult();
  SmallVector<Value> memrefs;
  int32_t slot = 0;
  for (auto [i, type] : llvm::enumerate(bufferTypes)) {
    Value pointer;
    if (i == seedArg) {
      pointer = b.create<LLVM::GEPOp>(loc, ptr, i64, block->getArgument(1), ArrayRef<LLVM::GEPArg>{1});
    } else {
      Value address = b.create<LLVM::GEPOp>(loc, ptr, ptr, buffers, ArrayRef<LLVM::GEPArg>{slot++});
      pointer = b.create<LLVM::LoadOp>(loc, ptr, address);
    }
    memrefs.push_back(buildDescriptor(b, loc, pointer, cast<MemRefType>(type), batch));
  }
  Value none = b.create<LLVM::ConstantOp>(loc, i64, 0);
  Value error = block->getArgument(3);
  memrefs.push_back(buildDescriptor(b, loc, error, cast<MemRefType>(impl.getArgumentTypes().drop_back().back()), none));
  // Nothing reads the workspace's size.
  memrefs.push_back(buildDescriptor(b, loc, block->getArgument(2),
                                    cast<MemRefType>(impl.getArgumentTypes().back()), none));
  b.create<LLVM::StoreOp>(loc, none, error);
  b.create<func::CallOp>(loc, impl, memrefs);
  Value check = b.create<LLVM::LoadOp>(loc, i64, error);
  b.create<LLVM::ReturnOp>(loc, ValueRange{b.create<LLVM::TruncOp>(loc, i32, check)});
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
    std::pair<func::FuncOp, std::string> entries[] = {
        {main, forwardEntryName(prefix)},
        {train, trainingForwardEntryName(prefix)},
        {backward, backwardEntryName(prefix)},
        {module.lookupSymbol<func::FuncOp>("main_monitor"), monitorEntryName(prefix, false)},
        {module.lookupSymbol<func::FuncOp>("main_train_monitor"), monitorEntryName(prefix, true)},
        {module.lookupSymbol<func::FuncOp>("main_backward_monitor"), backwardMonitorEntryName(prefix)}};
    for (auto &[function, name] : entries) {
      if (!function)
        continue;
      std::optional<unsigned> seedArg = addSeedArgument(function);
      if (failed(toDestinationPassing(function, name + "_impl", seedArg)))
        return signalPassFailure();
      buildEntry(module, function, name, seedArg);
    }
    // Embedded by sym-embed-manifest once the workspace size is known.
    module->setAttr(kManifestAttr, StringAttr::get(&getContext(), manifest));
  }
};

} // namespace
} // namespace symc
