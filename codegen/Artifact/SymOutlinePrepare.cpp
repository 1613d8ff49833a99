//===- SymOutlinePrepare.cpp - the sym-outline-prepare pass ---------------===//
//
// Ops marked kPrepareAttr compute from arguments alone (a weight packed into
// its kernel's layout). Those of the inference forward and its monitor
// variant move into `<prefix>_prepare`, which writes their results into
// prepared buffers that the forward then reads: the runtime runs it when
// such an argument changed, not at every forward. The training variants
// keep them inline: their weights change at every step.
//
//===----------------------------------------------------------------------===//
#include "codegen/Artifact/EntryPoints.h"
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "dialects/Sym/IR/DTypes.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace symc {
#define GEN_PASS_DEF_SYMOUTLINEPREPARE
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// A prepared array: what computes it (`op`, marked, in the forward, with
/// the ops it reads from the inputs), what it is (the mark, its type and the
/// inputs it reads), and the forward's argument number it now comes in by.
struct PreparedArray {
  Operation *op;
  SetVector<Operation *> slice;
  std::string what;
  RankedTensorType type;
  SmallVector<unsigned> inputs;

  bool computesAsIn(Operation *other, ArrayRef<unsigned> otherInputs) const {
    auto mark = other->getAttrOfType<StringAttr>(kPrepareAttr);
    return mark && mark.getValue() == what && other->getResult(0).getType() == type &&
           ArrayRef<unsigned>(inputs) == otherInputs;
  }
};

/// Whether `op` can move out of `impl`: one static result computed from
/// the first `inputs` arguments alone by pure ops, wherever they are (a
/// loop over the chunks of a dynamic batch computes the same packed weight
/// at every step). Sets `slice` to those ops (in order) and `read` to the
/// arguments.
bool computesFromInputs(Operation *op, func::FuncOp impl, unsigned inputs, SetVector<Operation *> &slice,
                        SmallVector<unsigned> &read) {
  auto type = op->getNumResults() == 1 ? dyn_cast<RankedTensorType>(op->getResult(0).getType()) : nullptr;
  if (!type || !type.hasStaticShape())
    return false;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  getBackwardSlice(op, &slice, options);
  for (Operation *producer : slice) {
    bool reads = isa<bufferization::ToTensorOp>(producer);
    if (!(reads || isMemoryEffectFree(producer)))
      return false;
    for (Value operand : producer->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg)
        continue;
      if (arg.getOwner() != &impl.getBody().front() || arg.getArgNumber() >= inputs || !reads)
        return false;
      read.push_back(arg.getArgNumber());
    }
  }
  for (Value operand : op->getOperands())
    if (isa<BlockArgument>(operand))
      return false;
  llvm::sort(read);
  read.erase(std::unique(read.begin(), read.end()), read.end());
  return !read.empty();
}

/// The tensor of each prepared buffer of `impl` (arguments from `first`
/// on), read once at its start.
SmallVector<Value> readPreparedBuffers(func::FuncOp impl, unsigned first, unsigned count) {
  OpBuilder b = OpBuilder::atBlockBegin(&impl.getBody().front());
  SmallVector<Value> tensors;
  for (unsigned i = 0; i < count; ++i) {
    Value buffer = impl.getArgument(first + i);
    auto type = cast<MemRefType>(buffer.getType());
    tensors.push_back(b.create<bufferization::ToTensorOp>(
        impl.getLoc(), RankedTensorType::get(type.getShape(), type.getElementType()), buffer,
        /*restrict=*/true, /*writable=*/false));
  }
  return tensors;
}

/// Adds one memref argument per prepared array to `impl`, before its error
/// and workspace; returns the first one's number.
unsigned addPreparedArguments(func::FuncOp impl, ArrayRef<PreparedArray> prepared) {
  unsigned first = impl.getNumArguments() - 2;
  for (auto [i, array] : llvm::enumerate(prepared))
    impl.insertArgument(first + i, MemRefType::get(array.type.getShape(), array.type.getElementType()), {},
                        impl.getLoc());
  return first;
}

/// `<prefix>_prepare_impl(inputs..., prepared..., error, workspace)`: the
/// prepared arrays computed as in the forward `impl`, written into their
/// buffers.
func::FuncOp buildPrepareImpl(ModuleOp module, func::FuncOp impl, unsigned inputs,
                              ArrayRef<PreparedArray> prepared, StringRef name) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = impl.getLoc();
  SmallVector<Type> types(impl.getArgumentTypes().take_front(inputs));
  for (const PreparedArray &array : prepared)
    types.push_back(MemRefType::get(array.type.getShape(), array.type.getElementType()));
  llvm::append_range(types, impl.getArgumentTypes().take_back(2));
  auto prepare = b.create<func::FuncOp>(loc, name, b.getFunctionType(types, {}));
  for (StringRef attr : {kImplAttr.data(), "llvm.linkage", "passthrough"})
    prepare->setAttr(attr, impl->getAttr(attr));
  prepare.setPrivate();
  prepare.setArgAttr(types.size() - 2, sym::kRunErrorAttr, b.getUnitAttr());
  Block *body = prepare.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  for (unsigned i = 0; i < inputs; ++i)
    mapping.map(impl.getArgument(i), body->getArgument(i));
  for (auto [i, array] : llvm::enumerate(prepared)) {
    for (Operation *producer : array.slice)
      if (!mapping.contains(producer->getResult(0)))
        b.clone(*producer, mapping);
    Value result = b.clone(*array.op, mapping)->getResult(0);
    result.getDefiningOp()->removeAttr(kPrepareAttr);
    auto write = b.create<bufferization::MaterializeInDestinationOp>(loc, result, body->getArgument(inputs + i));
    write.setRestrict(true);
    write.setWritable(true);
  }
  b.create<func::ReturnOp>(loc);
  return prepare;
}

/// The marked ops of `impl` computed from its first `inputs` arguments.
SmallVector<PreparedArray> preparedArraysOf(func::FuncOp impl, unsigned inputs) {
  SmallVector<PreparedArray> arrays;
  impl.walk([&](Operation *op) {
    auto mark = op->getAttrOfType<StringAttr>(kPrepareAttr);
    PreparedArray array{op, {}, mark ? mark.str() : "", {}, {}};
    if (mark && computesFromInputs(op, impl, inputs, array.slice, array.inputs)) {
      array.type = cast<RankedTensorType>(op->getResult(0).getType());
      arrays.push_back(std::move(array));
    }
  });
  return arrays;
}

/// The manifest's description of the prepare entry: its arrays, each with
/// the inputs (arguments, then aux states, by position) it is computed from.
llvm::json::Object describePrepare(ArrayRef<PreparedArray> prepared, StringRef entry) {
  llvm::json::Array arrays;
  for (const PreparedArray &array : prepared) {
    llvm::json::Array shape, inputs;
    for (int64_t d : array.type.getShape())
      shape.push_back(d);
    for (unsigned input : array.inputs)
      inputs.push_back(input);
    arrays.push_back(llvm::json::Object{{"shape", std::move(shape)},
                                        {"dtype", sym::dtypeName(array.type.getElementType())},
                                        {"inputs", std::move(inputs)},
                                        {"what", array.what}});
  }
  return llvm::json::Object{{"entry", entry}, {"arrays", std::move(arrays)}};
}

struct SymOutlinePreparePass : impl::SymOutlinePrepareBase<SymOutlinePreparePass> {
  using SymOutlinePrepareBase::SymOutlinePrepareBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(forwardEntryName(prefix) + "_impl");
    auto manifestText = module->getAttrOfType<StringAttr>(kManifestAttr);
    if (forward && manifestText && failed(outline(module, forward, manifestText.getValue())))
      return signalPassFailure();
    module.walk([](Operation *op) { op->removeAttr(kPrepareAttr); });
  }

  LogicalResult outline(ModuleOp module, func::FuncOp forward, StringRef manifestText) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(manifestText);
    if (!parsed)
      return module.emitError("internal error: the manifest does not parse: ") << toString(parsed.takeError());
    llvm::json::Object &manifest = *parsed->getAsObject();
    unsigned inputs = manifest.getArray("arguments")->size() + manifest.getArray("aux_states")->size();
    SmallVector<PreparedArray> prepared = dedupe(preparedArraysOf(forward, inputs));
    if (prepared.empty())
      return success();
    std::string name = prepareEntryName(prefix);
    buildEntry(module, buildPrepareImpl(module, forward, inputs, prepared, name + "_impl"), name);
    readPreparedArrays(module, forward, forwardEntryName(prefix), inputs, prepared);
    if (auto monitor = module.lookupSymbol<func::FuncOp>(monitorEntryName(prefix, false) + "_impl"))
      readPreparedArrays(module, monitor, monitorEntryName(prefix, false), inputs, prepared);
    manifest["prepare"] = describePrepare(prepared, name);
    std::string text;
    llvm::raw_string_ostream(text) << llvm::json::Value(std::move(manifest));
    module->setAttr(kManifestAttr, StringAttr::get(&getContext(), text));
    return success();
  }

  /// One array per computation: two convolutions of one weight share it.
  static SmallVector<PreparedArray> dedupe(SmallVector<PreparedArray> arrays) {
    SmallVector<PreparedArray> unique;
    for (PreparedArray &array : arrays) {
      auto twin = llvm::find_if(unique, [&](const PreparedArray &u) { return u.computesAsIn(array.op, array.inputs); });
      if (twin == unique.end())
        unique.push_back(std::move(array));
    }
    return unique;
  }

  /// Gives the variant `impl` (entry `entry`) the prepared arrays as
  /// arguments, read where it computed them (the same computation), and
  /// rebuilds its entry point.
  void readPreparedArrays(ModuleOp module, func::FuncOp impl, StringRef entry, unsigned inputs,
                          ArrayRef<PreparedArray> prepared) {
    SmallVector<PreparedArray> own = preparedArraysOf(impl, inputs);
    SmallVector<Value> buffers = readPreparedBuffers(impl, addPreparedArguments(impl, prepared), prepared.size());
    for (PreparedArray &array : own) {
      auto match = llvm::find_if(prepared, [&](const PreparedArray &p) { return p.computesAsIn(array.op, array.inputs); });
      if (match == prepared.end())
        continue;
      array.op->getResult(0).replaceAllUsesWith(buffers[match - prepared.begin()]);
      array.op->erase();
      for (Operation *producer : llvm::reverse(array.slice))
        if (producer->use_empty())
          producer->erase();
    }
    module.lookupSymbol<LLVM::LLVMFuncOp>(entry).erase();
    buildEntry(module, impl, entry);
  }
};

} // namespace
} // namespace symc
