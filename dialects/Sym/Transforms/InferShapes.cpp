//===- InferShapes.cpp - MXNet's InferShape as a pass ---------------------===//
#include "dialects/Sym/IR/SymOps.h"
#include "dialects/Sym/Transforms/Passes.h"
#include "symc/ArtifactABI.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::sym {
#define GEN_PASS_DEF_SYMINFERSHAPES
#include "dialects/Sym/Transforms/Passes.h.inc"
} // namespace mlir::sym

using namespace mlir;
using namespace mlir::sym;

namespace {

/// MXNet gives up after this many sweeps; a fixpoint is normally reached in 2-3.
constexpr int kMaxSweeps = 64;

struct ShapeOption {
  std::string name;
  PartialShape shape;
  /// Whether a dim is `?`: dynamic, left to the bound arrays.
  bool dynamic = false;
};

/// Parses `name:2x0x?`: a `?` dim stays dynamic; a 0 dim is unknown and must
/// be inferred, as MXNet reads a 0 in a simple_bind shape.
FailureOr<ShapeOption> parseShapeOption(llvm::StringRef text, func::FuncOp func) {
  auto [name, dimsText] = text.rsplit(':');
  if (name.empty() || dimsText.empty() || !text.contains(':')) {
    func.emitError() << "invalid shape '" << text << "': expected name:d0xd1x...";
    return failure();
  }
  llvm::SmallVector<llvm::StringRef> parts;
  dimsText.split(parts, 'x');
  llvm::SmallVector<int64_t> dims;
  bool dynamic = false;
  for (llvm::StringRef part : parts) {
    int64_t d;
    if (part == "?") {
      dims.push_back(kUnknownDim);
      dynamic = true;
    } else if (!part.getAsInteger(10, d) && d >= 0) {
      dims.push_back(d == 0 ? kUnknownDim : d);
    } else {
      func.emitError() << "invalid dim '" << part << "' in shape of '" << name << "'";
      return failure();
    }
  }
  return ShapeOption{name.str(), PartialShape(dims), dynamic};
}

/// The shapes of one function's values while the op rules refine them.
class ShapeSolver {
public:
  PartialShape &shapeOf(Value v) {
    auto [it, inserted] = valueShapes.try_emplace(v);
    if (inserted)
      it->second = PartialShape::fromType(v.getType());
    return it->second;
  }

  LogicalResult seedArguments(func::FuncOp func, llvm::ArrayRef<ShapeOption> options) {
    llvm::StringMap<unsigned> argByName;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr))
        argByName.try_emplace(name.getValue(), i);
    for (const auto &[name, shape, dynamicDims] : options) {
      auto it = argByName.find(name);
      if (it == argByName.end())
        return func.emitError() << "shape given for '" << name
                                << "', which is not an argument or auxiliary state";
      PartialShape &slot = shapeOf(func.getArgument(it->second));
      if (!slot.merge(shape))
        return func.emitError() << "shape " << shape.str() << " given for '" << name
                                << "' conflicts with its declared shape " << slot.str();
    }
    return success();
  }

  LogicalResult runFixpoint(func::FuncOp func) {
    llvm::SmallVector<ShapeInferenceOpInterface> ops;
    func.walk([&](ShapeInferenceOpInterface op) { ops.push_back(op); });
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      bool changed = false;
      // Forwards, then backwards, as MXNet's InferAttr alternates.
      for (bool backward : {false, true}) {
        for (size_t k = 0; k < ops.size(); ++k) {
          auto op = ops[backward ? ops.size() - 1 - k : k];
          FailureOr<bool> result = applyRule(op);
          if (failed(result))
            return failure();
          changed |= *result;
        }
      }
      if (!changed)
        return success();
    }
    return func.emitError("shape inference did not converge");
  }

private:
  /// One rule application; returns whether it changed anything.
  FailureOr<bool> applyRule(ShapeInferenceOpInterface op) {
    llvm::SmallVector<PartialShape> ins, outs;
    for (Value v : op->getOperands())
      ins.push_back(shapeOf(v));
    for (Value v : op->getResults())
      outs.push_back(shapeOf(v));
    ShapeInferenceContext ctx(op, std::move(ins), std::move(outs));
    if (failed(op.inferShapes(ctx)))
      return failure();
    if (!ctx.hasChanged())
      return false;
    // Merging keeps a value shared by several ops consistent.
    auto store = [&](Value v, const PartialShape &s) -> LogicalResult {
      if (shapeOf(v).merge(s))
        return success();
      return op->emitOpError() << "shape inconsistent: " << shapeOf(v).str() << " vs " << s.str();
    };
    for (auto [v, s] : llvm::zip(op->getOperands(), ctx.getInputs()))
      if (failed(store(v, s)))
        return failure();
    for (auto [v, s] : llvm::zip(op->getResults(), ctx.getOutputs()))
      if (failed(store(v, s)))
        return failure();
    return true;
  }

  llvm::DenseMap<Value, PartialShape> valueShapes;
};

/// The arguments whose leading dim stays unknown when the given shapes'
/// leading dims are: the batch, as a compile with `?` there would find it
/// (labels included, which only the loss op's rule ties to the data).
llvm::SmallVector<unsigned> findBatchArguments(func::FuncOp func, llvm::ArrayRef<ShapeOption> options) {
  llvm::SmallVector<ShapeOption> unknownBatch(options);
  for (ShapeOption &option : unknownBatch)
    if (option.shape.hasRank() && option.shape.rank() > 0)
      option.shape[0] = kUnknownDim;
  auto probe = cast<func::FuncOp>(func->clone());
  llvm::SmallVector<unsigned> batchArgs;
  {
    // A graph that cannot be inferred so is simply not chunked.
    ScopedDiagnosticHandler quiet(func.getContext(), [](Diagnostic &) { return success(); });
    ShapeSolver solver;
    if (succeeded(solver.seedArguments(probe, unknownBatch)) && succeeded(solver.runFixpoint(probe)))
      for (BlockArgument arg : probe.getArguments()) {
        const PartialShape &shape = solver.shapeOf(arg);
        if (shape.hasRank() && shape.rank() > 0 && !shape.isKnown(0))
          batchArgs.push_back(arg.getArgNumber());
      }
  }
  probe->erase();
  return batchArgs;
}

class InferShapesPass : public sym::impl::SymInferShapesBase<InferShapesPass> {
public:
  using SymInferShapesBase::SymInferShapesBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::SmallVector<ShapeOption> options;
    for (const std::string &entry : shapes) {
      auto parsed = parseShapeOption(entry, func);
      if (failed(parsed))
        return signalPassFailure();
      options.push_back(*parsed);
    }
    // Ranked arguments with dynamic dims were given '?' before (a backward
    // or monitor function re-inferred): those dims are dynamic, not unknown.
    bool dynamicShapes = llvm::any_of(options, [](const ShapeOption &o) { return o.dynamic; });
    bool dynamic = dynamicShapes || llvm::any_of(func.getArgumentTypes(), [](Type t) {
                     auto ranked = dyn_cast<RankedTensorType>(t);
                     return ranked && !ranked.hasStaticShape();
                   });
    llvm::SmallVector<unsigned> batchArgs;
    if (!options.empty() && !dynamicShapes)
      batchArgs = findBatchArguments(func, options);
    if (failed(solver.seedArguments(func, options)) || failed(solver.runFixpoint(func)))
      return signalPassFailure();
    writeBackTypes(func);
    if ((!dynamic && failed(checkArgumentsKnown(func))) || failed(checkSizes(func)))
      return signalPassFailure();
    for (unsigned arg : batchArgs)
      func.setArgAttr(arg, kBatchAttr, UnitAttr::get(&getContext()));
  }

private:
  PartialShape &shapeOf(Value v) { return solver.shapeOf(v); }

  void writeBackTypes(func::FuncOp func) {
    auto retype = [&](Value v) {
      Type element = llvm::cast<TensorType>(v.getType()).getElementType();
      v.setType(shapeOf(v).toTensorType(element));
    };
    for (BlockArgument arg : func.getArguments())
      retype(arg);
    func.walk([&](Operation *op) {
      if (isa<ShapeInferenceOpInterface>(op))
        llvm::for_each(op->getResults(), retype);
    });
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setFunctionType(FunctionType::get(&getContext(), func.getBody().getArgumentTypes(),
                                           ret.getOperandTypes()));
  }

  /// Every array fits in memory: sizes past 2^62 bytes (products that would
  /// wrap int64 included) are errors here, before any size is computed from
  /// them.
  LogicalResult checkSizes(func::FuncOp func) {
    auto check = [](Value v) -> LogicalResult {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return success();
      std::optional<int64_t> bytes = (type.getElementTypeBitWidth() + 7) / 8;
      for (int64_t d : type.getShape())
        if (!ShapedType::isDynamic(d) && bytes)
          bytes = llvm::checkedMul(*bytes, d);
      if (bytes && *bytes <= SYMC_MAX_ARRAY_BYTES)
        return success();
      return emitError(v.getLoc()) << "an array of shape " << PartialShape::fromType(type).str() << " and type "
                                   << type.getElementType() << " would exceed 2^62 bytes";
    };
    for (BlockArgument arg : func.getArguments())
      if (failed(check(arg)))
        return failure();
    WalkResult result = func.walk([&](Operation *op) {
      for (Value v : op->getResults())
        if (failed(check(v)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// HandleInferShapeError: every argument and aux state must end up known.
  LogicalResult checkArgumentsKnown(func::FuncOp func) {
    std::string list;
    unsigned count = 0;
    for (BlockArgument arg : func.getArguments()) {
      PartialShape s = shapeOf(arg);
      if (s.isFullyKnown())
        continue;
      if (count++ < 10) {
        auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttr);
        list += (name ? name.getValue().str() : "arg" + std::to_string(arg.getArgNumber())) +
                ": " + (s.hasRank() ? s.str() : "[]") + ", ";
      }
    }
    if (count == 0)
      return success();
    if (count > 10)
      list += "...";
    return func.emitError("InferShape pass cannot decide shapes for the following arguments "
                          "(-1 means unknown dimensions). Please consider providing them as "
                          "inputs:\n" + list);
  }

  ShapeSolver solver;
};

} // namespace
