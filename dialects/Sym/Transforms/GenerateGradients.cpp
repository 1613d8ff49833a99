//===- GenerateGradients.cpp - reverse-mode differentiation of @main -------===//
//
// MXNet builds the backward graph by walking the forward graph in reverse and
// asking each node's FGradient for the gradients of its inputs; several
// contributions to one input are summed, an input with none gets zeros, and
// outputs whose FGradient ignores the head gradient (loss heads) need no
// head-gradient input. This pass does the same on the sym dialect.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/SymOps.h"
#include "dialects/Sym/Transforms/Differentiate.h"
#include "dialects/Sym/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::sym {
#define GEN_PASS_DEF_SYMGENERATEGRADIENTS
#include "dialects/Sym/Transforms/Passes.h.inc"
} // namespace mlir::sym

using namespace mlir;
using namespace mlir::sym;

namespace {

/// The gradient requirement of each argument of @main: write, add or null.
/// Aux states never get gradients.
FailureOr<SmallVector<std::string>> gradReqs(func::FuncOp main, ArrayRef<std::string> given) {
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (!main.getArgAttrOfType<StringAttr>(i, kNameAttr)) {
      main.emitError("argument ") << i << " has no " << kNameAttr << ": gradients are named by it";
      return failure();
    }
  SmallVector<std::string> reqs(main.getNumArguments(), "write");
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (main.getArgAttr(i, kAuxAttr))
      reqs[i] = "null";
  for (StringRef entry : given) {
    auto [name, req] = entry.split('=');
    if (req != "write" && req != "add" && req != "null") {
      main.emitError("invalid grad_req '") << entry << "': expected NAME=write|add|null";
      return failure();
    }
    bool found = false;
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (main.getArgAttrOfType<StringAttr>(i, kNameAttr).getValue() == name && !main.getArgAttr(i, kAuxAttr)) {
        reqs[i] = req.str();
        found = true;
      }
    if (!found) {
      main.emitError("grad_req for '") << name << "', which is not an argument of the symbol";
      return failure();
    }
  }
  return reqs;
}

struct SymGenerateGradientsPass : sym::impl::SymGenerateGradientsBase<SymGenerateGradientsPass> {
  using SymGenerateGradientsBase::SymGenerateGradientsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("no @main function to differentiate");
      return signalPassFailure();
    }
    FailureOr<SmallVector<std::string>> reqs = gradReqs(main, gradReq);
    if (failed(reqs))
      return signalPassFailure();
    func::FuncOp train = buildTrainingForward(main);
    if (failed(buildBackward(main, train ? train : main, *reqs)))
      return signalPassFailure();
  }

  /// @main_train: @main with its train-sensitive ops in training mode, or
  /// null when @main has none (its inference forward serves training too).
  func::FuncOp buildTrainingForward(func::FuncOp main) { return cloneInTrainingMode(main, "main_train"); }

  /// @main_backward(arguments, aux states, head gradients) -> gradients of
  /// the arguments whose grad_req is not null, in argument order, then the
  /// updated aux states. It differentiates `forward`, the training forward.
  LogicalResult buildBackward(func::FuncOp main, func::FuncOp forward, ArrayRef<std::string> reqs) {
    OpBuilder b(main);
    b.setInsertionPointAfter(forward);
    auto backward = cast<func::FuncOp>(b.clone(*forward));
    backward.setName("main_backward");
    Block &body = backward.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    GradientBuilder builder(backward);
    for (auto [i, output] : llvm::enumerate(ret.getOperands())) {
      auto rule = dyn_cast_or_null<GradientOpInterface>(output.getDefiningOp());
      if (rule && !rule.readsResultGradient(cast<OpResult>(output).getResultNumber()))
        continue; // a loss head: its rule ignores the head gradient
      auto name = main.getResultAttrOfType<StringAttr>(i, kNameAttr);
      unsigned position = backward.getNumArguments();
      backward.insertArgument(position, output.getType(),
                              b.getDictionaryAttr(b.getNamedAttr(kHeadGradAttr, name)), output.getLoc());
      builder.seedHead(output, body.getArgument(position), i);
    }
    if (failed(builder.sweep()))
      return failure();
    size_t numForwardOps = llvm::range_size(forward.getBody().front().without_terminator());
    return finishResults(main, backward, reqs, builder, numForwardOps);
  }

  LogicalResult finishResults(func::FuncOp main, func::FuncOp backward, ArrayRef<std::string> reqs,
                              const GradientBuilder &builder, size_t numForwardOps) {
    Block &body = backward.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      if (reqs[i] == "null")
        continue;
      Value arg = body.getArgument(i), grad = builder.gradientOf(arg);
      auto name = main.getArgAttrOfType<StringAttr>(i, kNameAttr);
      // MXNet refuses such gradients under write only; add adds nothing.
      if (reqs[i] == "write" && failed(builder.checkNotRefused(arg, name.getValue())))
        return failure();
      if (!grad) {
        FailureOr<Value> zeros = zerosLike(b, arg, ret.getLoc());
        if (failed(zeros))
          return backward.emitError("the gradient of '")
                 << name.getValue() << "' is zeros of a shape that is not static";
        grad = *zeros;
      }
      results.push_back(grad);
      resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kGradOfAttr, name)));
    }
    if (failed(appendAuxUpdates(backward, b, results, resultAttrs)))
      return failure();
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    pruneUnused(backward, numForwardOps);
    backward.setType(b.getFunctionType(body.getArgumentTypes(), ValueRange(results).getTypes()));
    backward.setAllResultAttrs(resultAttrs);
    return inferShapes(backward);
  }

  /// Drops what no computed gradient needs: the gradient ops of null
  /// gradients and the head gradients only they read. The forward clone at
  /// the start stays whole (sym-save-activations matches it op for op and
  /// saves only the values the remaining gradient ops read), so the memory
  /// plan keeps what the asked-for gradients need, as MXNet plans grad_req null.
  static void pruneUnused(func::FuncOp backward, size_t numForwardOps) {
    Block &body = backward.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : llvm::drop_begin(body.without_terminator(), numForwardOps))
      ops.push_back(&op);
    // Users before producers: an op whose users went is dead in turn.
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
    llvm::BitVector unusedHeads(backward.getNumArguments());
    for (BlockArgument arg : body.getArguments())
      if (arg.use_empty() && backward.getArgAttr(arg.getArgNumber(), kHeadGradAttr))
        unusedHeads.set(arg.getArgNumber());
    backward.eraseArguments(unusedHeads);
  }

  /// Rules leave some types unranked: MXNet's shape rules fill them in.
  LogicalResult inferShapes(func::FuncOp backward) {
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(createSymInferShapes());
    if (failed(runPipeline(pm, backward)))
      return failure();
    TypeRange results = backward.getBody().front().getTerminator()->getOperandTypes();
    if (!llvm::all_of(results, [](Type t) { return isa<RankedTensorType>(t); }))
      return backward.emitError("shape inference left a gradient unranked");
    backward.setType(FunctionType::get(backward.getContext(), backward.getArgumentTypes(), results));
    return success();
  }
};

} // namespace
