//===- LowerReduction.cpp - reductions and the softmax family -> linalg ---===//
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

template <typename ReduceOp>
Lowered lowerReduce(OpBuilder &b, ReduceOp op, bool mean) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  SmallVector<int64_t> axes = reducedAxes(op.getAxis(), op.getExclude(), type.getRank());
  Value sum = reduce(b, loc, op.getData(), axes, /*keepDims=*/false, 0.0,
                     [](OpBuilder &b, Location loc, ValueRange args) {
                       return add(b, loc, args[0], args[1]);
                     });
  RankedTensorType resultType = tensorType(op.getOutput());
  sum = reshapeTo(b, loc, sum, resultType.getShape());
  if (!mean)
    return SmallVector<Value>{sum};
  int64_t count = 1;
  for (int64_t a : axes)
    count *= type.getDimSize(a);
  return SmallVector<Value>{mapElementwise(b, loc, resultType, sum,
                                           [&](OpBuilder &b, Location loc, ValueRange args) {
    return div(b, loc, args[0], scalarConstant(b, loc, args[0].getType(), count));
  })};
}

template <typename SoftmaxOp>
Lowered lowerSoftmax(OpBuilder &b, SoftmaxOp op, bool log) {
  Location loc = op.getLoc();
  if (op.getUseLength())
    return op.emitError("the CPU backend does not support use_length = true");
  Value data = op.getData();
  RankedTensorType type = tensorType(data);
  if (std::optional<double> temperature = op.getTemperature(); temperature && *temperature != 1.0)
    data = mapElementwise(b, loc, type, data, [&](OpBuilder &b, Location loc, ValueRange args) {
      return div(b, loc, args[0], scalarConstant(b, loc, args[0].getType(), *temperature));
    });
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
  Value result = softmax(b, loc, data, axis, log);
  Type resultElement = tensorType(op.getOutput()).getElementType();
  if (resultElement != type.getElementType())
    result = mapElementwise(b, loc, tensorType(op.getOutput()), result,
                            [&](OpBuilder &b, Location loc, ValueRange args) {
                              return convertScalar(b, loc, args[0], resultElement);
                            });
  return SmallVector<Value>{result};
}

/// Softmax over all dims after the first (as a 2-d (N, rest) view).
Value softmaxOverInstance(OpBuilder &b, Location loc, Value data) {
  RankedTensorType type = tensorType(data);
  int64_t rest = type.getNumElements() / type.getDimSize(0);
  Value flat = reshapeTo(b, loc, data, {type.getDimSize(0), rest});
  return reshapeTo(b, loc, softmax(b, loc, flat, 1, false), type.getShape());
}

Lowered lowerSoftmaxOutput(OpBuilder &b, sym::SoftmaxOutputOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  if (op.getMultiOutput() && type.getRank() > 2)
    return SmallVector<Value>{softmax(b, loc, op.getData(), 1, false)};
  if (op.getPreserveShape())
    return SmallVector<Value>{softmax(b, loc, op.getData(), type.getRank() - 1, false)};
  return SmallVector<Value>{softmaxOverInstance(b, loc, op.getData())};
}

Lowered lowerSoftmaxActivation(OpBuilder &b, sym::SoftmaxActivationOp op) {
  if (op.getMode() == "channel")
    return SmallVector<Value>{softmax(b, op.getLoc(), op.getData(), 1, false)};
  return SmallVector<Value>{softmaxOverInstance(b, op.getLoc(), op.getData())};
}

} // namespace

std::optional<Lowered> lowerReductionOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::SumOp s) { return lowerReduce(b, s, /*mean=*/false); })
      .Case([&](sym::MeanOp m) { return lowerReduce(b, m, /*mean=*/true); })
      .Case([&](sym::SoftmaxOp s) { return lowerSoftmax(b, s, /*log=*/false); })
      .Case([&](sym::LogSoftmaxOp s) { return lowerSoftmax(b, s, /*log=*/true); })
      .Case([&](sym::SoftmaxOutputOp s) { return lowerSoftmaxOutput(b, s); })
      .Case([&](sym::SoftmaxActivationOp s) { return lowerSoftmaxActivation(b, s); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
