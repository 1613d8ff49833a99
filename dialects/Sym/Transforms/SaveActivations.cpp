//===- SaveActivations.cpp - forward values kept for the backward ---------===//
//
// MXNet's executor keeps every forward value a backward node reads alive
// until backward runs (or, mirroring, recomputes the cheap ones). Here the
// training forward returns them as extra results and the backward takes them
// as extra arguments: the recomputed forward in @main_backward goes away.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/SymOps.h"
#include "dialects/Sym/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::sym {
#define GEN_PASS_DEF_SYMSAVEACTIVATIONS
#include "dialects/Sym/Transforms/Passes.h.inc"
} // namespace mlir::sym

using namespace mlir;
using namespace mlir::sym;

namespace {

/// MXNet's mirror keeps these (graph_executor.cc, need_mirror): expensive,
/// or (Dropout) not reproducible.
bool keptWhenMirroring(Operation *op) {
  return isa<ConvolutionOp, FullyConnectedOp, ConcatOp, SoftmaxOutputOp, BatchNormOp, DropoutOp>(op);
}

/// "<node>_output<k>": what a saved value is called in the manifest.
std::string savedName(OpResult value) {
  StringRef node = nodeName(value.getOwner()->getLoc());
  return (node.empty() ? "value" : node).str() + "_output" + std::to_string(value.getResultNumber());
}

struct SymSaveActivationsPass : sym::impl::SymSaveActivationsBase<SymSaveActivationsPass> {
  using SymSaveActivationsBase::SymSaveActivationsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto backward = module.lookupSymbol<func::FuncOp>("main_backward");
    if (!backward || llvm::any_of(backward.getArgumentTypes(), [](Type t) {
          auto tensor = dyn_cast<RankedTensorType>(t);
          return !tensor || !tensor.hasStaticShape();
        }))
      return;
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto train = module.lookupSymbol<func::FuncOp>("main_train");
    FailureOr<SmallVector<Operation *>> recomputed = recomputedForward(train ? train : main, backward);
    if (failed(recomputed))
      return signalPassFailure();
    llvm::SetVector<OpResult> saved = choose(*recomputed);
    if (saved.empty())
      return;
    wire(train ? train : cloneAsTraining(main), backward, *recomputed, saved);
  }

  /// @main as @main_train, when the forward has no train-sensitive op: the
  /// inference forward stays free of the extra results.
  func::FuncOp cloneAsTraining(func::FuncOp main) {
    OpBuilder b(main);
    b.setInsertionPointAfter(main);
    auto train = cast<func::FuncOp>(b.clone(*main));
    train.setName("main_train");
    return train;
  }

  /// The ops at the start of @main_backward that recompute `forward`: its
  /// clone, op for op, which sym-generate-gradients put before the gradients.
  FailureOr<SmallVector<Operation *>> recomputedForward(func::FuncOp forward, func::FuncOp backward) {
    SmallVector<Operation *> ops;
    Block::iterator it = backward.getBody().front().begin();
    for (Operation &op : forward.getBody().front().without_terminator()) {
      if (it->getName() != op.getName())
        return backward.emitError("internal error: @main_backward does not start with the training forward");
      ops.push_back(&*it++);
    }
    return ops;
  }

  /// The recomputed values that get saved, walking back from the gradient
  /// ops' reads; the ops that stay (recomputed, when mirroring) are the
  /// others still read.
  llvm::SetVector<OpResult> choose(ArrayRef<Operation *> recomputed) {
    DenseSet<Operation *> forwardOps(recomputed.begin(), recomputed.end()), kept;
    llvm::SetVector<OpResult> saved;
    auto readByBackward = [&](Value value) {
      return llvm::any_of(value.getUsers(), [&](Operation *user) {
        return !forwardOps.contains(user) || kept.contains(user);
      });
    };
    for (Operation *op : llvm::reverse(recomputed)) {
      if (!llvm::any_of(op->getResults(), readByBackward))
        continue;
      if (mirror && !keptWhenMirroring(op)) {
        kept.insert(op);
        continue;
      }
      for (OpResult result : op->getResults())
        if (readByBackward(result))
          saved.insert(result);
    }
    return saved;
  }

  /// Adds the saved values to `forward`'s results and `backward`'s
  /// arguments, reads them there, and erases the recomputation left unused.
  void wire(func::FuncOp forward, func::FuncOp backward, ArrayRef<Operation *> recomputed,
            const llvm::SetVector<OpResult> &saved) {
    DenseMap<Operation *, Operation *> original;
    for (auto [op, forwardOp] : llvm::zip(recomputed, forward.getBody().front().without_terminator()))
      original[op] = &forwardOp;
    auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    OpBuilder b(ret);
    SmallVector<Value> results(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    forward.getAllResultAttrs(resultAttrs);
    for (OpResult value : saved) {
      auto attrs = b.getDictionaryAttr(b.getNamedAttr(kSavedAttr, b.getStringAttr(savedName(value))));
      results.push_back(original[value.getOwner()]->getResult(value.getResultNumber()));
      resultAttrs.push_back(attrs);
      unsigned position = backward.getNumArguments();
      backward.insertArgument(position, value.getType(), attrs, value.getLoc());
      value.replaceAllUsesWith(backward.getArgument(position));
    }
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    forward.setType(b.getFunctionType(forward.getArgumentTypes(), ValueRange(results).getTypes()));
    forward.setAllResultAttrs(resultAttrs);
    for (Operation *op : llvm::reverse(recomputed))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
