//===- InstrumentMonitor.cpp - the forward that materializes every node ---===//
//
// MXNet's monitor callback sees every node's outputs; the compiled forward
// fuses them away. @main_monitor is @main returning, after its outputs,
// every op's outputs in node order, hidden ones included (LRN's tmp_norm,
// BatchNorm's mean and var, Dropout's mask), named by `sym.monitor`, so
// the runtime can call back with MXNet's names while @main stays fused.
// @main_train_monitor is the same in training mode, where the artifact is
// compiled for training (@main_train) and @main has train-sensitive ops.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"
#include "dialects/Sym/Transforms/Passes.h"

namespace mlir::sym {
#define GEN_PASS_DEF_SYMINSTRUMENTMONITOR
#include "dialects/Sym/Transforms/Passes.h.inc"
} // namespace mlir::sym

using namespace mlir;
using namespace mlir::sym;

namespace {

bool hasDynamicDim(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

/// A static value computed from dynamic-batch operands (BatchNorm's mean and
/// var over a '?' batch): a reduction over the batch, which the chunked CPU
/// backend cannot return. The monitor leaves those out.
bool reducesDynamicBatch(Operation *op, Value result) {
  return !hasDynamicDim(result.getType()) && llvm::any_of(op->getOperandTypes(), hasDynamicDim);
}

/// Appends every sym op's outputs to `monitor`'s results.
void returnEveryNodeOutput(func::FuncOp monitor) {
  auto ret = cast<func::ReturnOp>(monitor.getBody().front().getTerminator());
  OpBuilder b(ret);
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < monitor.getNumResults(); ++i)
    attrs.push_back(monitor.getResultAttrDict(i));
  monitor.walk([&](Operation *op) {
    if (!isa<SymDialect>(op->getDialect()))
      return;
    OpSignature sig = getOpSignature(op);
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      if (reducesDynamicBatch(op, op->getResult(i)))
        continue;
      results.push_back(op->getResult(i));
      attrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(kMonitorAttr, b.getStringAttr(getOutputName(nodeName(op->getLoc()), sig, i)))));
    }
  });
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  monitor.setType(b.getFunctionType(monitor.getArgumentTypes(), ValueRange(results).getTypes()));
  monitor.setAllResultAttrs(attrs);
}

struct SymInstrumentMonitorPass : sym::impl::SymInstrumentMonitorBase<SymInstrumentMonitorPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("no @main function to instrument");
      return signalPassFailure();
    }
    OpBuilder b(main);
    b.setInsertionPointAfter(main);
    auto monitor = cast<func::FuncOp>(b.clone(*main));
    monitor.setName("main_monitor");
    // A training-mode monitor where the artifact trains (sym-generate-gradients
    // made @main_train): an inference artifact runs only in inference mode.
    if (module.lookupSymbol("main_train"))
      if (func::FuncOp train = cloneInTrainingMode(main, "main_train_monitor"))
        returnEveryNodeOutput(train);
    returnEveryNodeOutput(monitor);
  }
};

} // namespace
