//===- LowerReduction.cpp - reductions and the softmax family -> linalg ---===//
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>

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

/// MXNet's LpNormCompute: sum(|x|) or sqrt(sum(x^2)) over the axes (all
/// when none), in the result's type. Integer data is summed in f64 and
/// truncated, as MXNet's integer kernels truncate. MXNet's nrm2 rescales as
/// it sums, so where x^2 overflows float (|x| > 1e19) this gives inf where
/// MXNet does not.
Lowered lowerNorm(OpBuilder &b, sym::NormOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  RankedTensorType resultType = tensorType(op.getOutput());
  Type element = isa<FloatType>(type.getElementType()) ? type.getElementType() : b.getF64Type();
  bool l1 = op.getOrd() == 1;
  Value terms = mapElementwise(b, loc, RankedTensorType::get(type.getShape(), element), op.getData(),
                               [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                                 Value x = convertScalar(b, loc, args[0], element);
                                 return l1 ? b.create<math::AbsFOp>(loc, x).getResult() : mul(b, loc, x, x);
                               });
  SmallVector<int64_t> axes = reducedAxes(op.getAxis(), /*exclude=*/false, type.getRank());
  Value sum = reduce(b, loc, terms, axes, /*keepDims=*/false, 0.0,
                     [](OpBuilder &b, Location loc, ValueRange args) { return add(b, loc, args[0], args[1]); });
  sum = reshapeTo(b, loc, sum, resultType.getShape());
  return SmallVector<Value>{
      mapElementwise(b, loc, resultType, sum, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value norm = l1 ? args[0] : b.create<math::SqrtOp>(loc, args[0]).getResult();
        return convertScalar(b, loc, norm, resultType.getElementType());
      })};
}

/// softmax with use_length: positions along `axis` at or past their length
/// (an integer tensor of data's shape without `axis`) are left out of the
/// sum and output 0.
Value softmaxWithinLength(OpBuilder &b, Location loc, Value data, Value length, int64_t axis) {
  RankedTensorType type = tensorType(data);
  SmallVector<AffineExpr> lengthExprs;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != axis)
      lengthExprs.push_back(b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank()),
                              AffineMap::get(type.getRank(), 0, lengthExprs, b.getContext())};
  auto masked = [&](Value input, double outside) {
    return mapWithMaps(b, loc, type, {input, length}, maps, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value position = b.create<arith::IndexCastOp>(loc, b.getI64Type(), b.create<linalg::IndexOp>(loc, axis));
      Value within = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, position,
                                             convertScalar(b, loc, args[1], b.getI64Type()));
      return b.create<arith::SelectOp>(loc, within, args[0], scalarConstant(b, loc, args[0].getType(), outside));
    });
  };
  Value probabilities = softmax(b, loc, masked(data, -std::numeric_limits<double>::infinity()), axis, false);
  return masked(probabilities, 0.0);
}

template <typename SoftmaxOp>
Lowered lowerSoftmax(OpBuilder &b, SoftmaxOp op, bool log) {
  Location loc = op.getLoc();
  if (op.getUseLength() && !isa<IntegerType>(tensorType(op.getLength()).getElementType()))
    return op.emitError("softmax's length must have an integer type, not ") << tensorType(op.getLength()).getElementType();
  Value data = op.getData();
  RankedTensorType type = tensorType(data);
  if (std::optional<double> temperature = op.getTemperature(); temperature && *temperature != 1.0)
    data = mapElementwise(b, loc, type, data, [&](OpBuilder &b, Location loc, ValueRange args) {
      return div(b, loc, args[0], scalarConstant(b, loc, args[0].getType(), *temperature));
    });
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
  Value result = op.getUseLength() ? softmaxWithinLength(b, loc, data, op.getLength(), axis)
                                   : softmax(b, loc, data, axis, log);
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

/// (p - target) * scale on the (outer, classes, inner) view of the output,
/// the label viewed as (outer, inner); MXNet's softmax_output-inl.h. A label
/// of the output's shape is a distribution: (p - label) * grad_scale, with
/// no normalization. Otherwise MXNet reads the label as a flat vector whose
/// first outer * inner entries are the rows' classes: all of it where the
/// shapes agree, a prefix for data of more dims without multi_output (whose
/// label has all but the last dim); 'batch' divides by that vector's length
/// (the batch size with multi_output) and 'valid' by its labels not ignored.
Lowered lowerSoftmaxOutputBackward(OpBuilder &b, sym::BackwardSoftmaxOutputOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getOutput());
  ArrayRef<int64_t> shape = type.getShape();
  Type element = type.getElementType();
  int64_t size = type.getNumElements(), batch = shape[0];
  int64_t labelCount = tensorType(op.getLabel()).getNumElements();
  bool distribution = tensorType(op.getLabel()) == type, multi = op.getMultiOutput() && type.getRank() > 2;
  int64_t outer = batch, classes = size / batch, inner = 1;
  if (multi) {
    classes = shape[1];
    inner = size / (batch * classes);
  } else if (op.getPreserveShape()) {
    classes = shape.back();
    outer = size / classes;
  }
  if (!distribution && labelCount < outer * inner)
    return op.emitError("SoftmaxOutput's label ") << tensorType(op.getLabel()) << " has fewer than the "
                                                  << outer * inner << " classes data " << type << " needs";
  double scale = op.getGradScale();
  if (!distribution && op.getNormalization() == "batch")
    scale /= multi ? batch : labelCount;
  if (!distribution && multi && op.getNormalization() != "valid")
    scale /= inner;
  Value probabilities = reshapeTo(b, loc, op.getOutput(), {outer, classes, inner});
  Value flatLabel = reshapeTo(b, loc, op.getLabel(), {labelCount});
  Value label;
  if (distribution) {
    label = reshapeTo(b, loc, op.getLabel(), {outer, classes, inner});
  } else {
    Value rows = flatLabel;
    if (labelCount > outer * inner)
      rows = b.create<tensor::ExtractSliceOp>(loc, RankedTensorType::get({outer * inner}, tensorType(flatLabel).getElementType()),
                                              flatLabel, ValueRange{}, ValueRange{}, ValueRange{},
                                              b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({outer * inner}),
                                              b.getDenseI64ArrayAttr({1}));
    label = reshapeTo(b, loc, rows, {outer, inner});
  }
  // Labels are class indices: compared after truncation to integers, as MXNet does.
  auto labelIndex = [&](OpBuilder &b, Location loc, Value l) {
    return b.create<arith::FPToSIOp>(loc, b.getI64Type(), convertScalar(b, loc, l, b.getF64Type()));
  };
  auto labelIs = [&](OpBuilder &b, Location loc, Value l, double value) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, labelIndex(b, loc, l),
                                   b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(static_cast<int64_t>(value))));
  };
  // valid: divided by the labels not ignored, at least 1.
  Value validCount;
  if (op.getNormalization() == "valid" && !distribution) {
    Value flags = mapElementwise(b, loc, RankedTensorType::get({labelCount}, element), flatLabel,
                                 [&](OpBuilder &b, Location loc, ValueRange args) {
      Value ignored = labelIs(b, loc, args[0], op.getIgnoreLabel());
      return b.create<arith::SelectOp>(loc, ignored, scalarConstant(b, loc, element, 0.0),
                                       scalarConstant(b, loc, element, 1.0));
    });
    validCount = reduce(b, loc, flags, {0}, /*keepDims=*/false, 0.0,
                        [](OpBuilder &b, Location loc, ValueRange args) { return add(b, loc, args[0], args[1]); });
  }
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(3),
                              distribution ? b.getMultiDimIdentityMap(3)
                                           : AffineMap::get(3, 0, {d(0), d(2)}, b.getContext())};
  SmallVector<Value> inputs{probabilities, label};
  if (validCount) {
    inputs.push_back(validCount);
    maps.push_back(AffineMap::get(3, 0, {}, b.getContext()));
  }
  double alpha = op.getSmoothAlpha();
  auto resultType = RankedTensorType::get({outer, classes, inner}, element);
  Value grad = mapWithMaps(b, loc, resultType, inputs, maps, [&](OpBuilder &b, Location loc, ValueRange args) {
    Value p = args[0], target;
    if (distribution) {
      target = args[1];
    } else {
      Value c = b.create<arith::IndexCastOp>(loc, b.getI64Type(), b.create<linalg::IndexOp>(loc, 1));
      Value isTarget = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, c, labelIndex(b, loc, args[1]));
      double off = classes > 1 ? alpha / (classes - 1) : 0.0;
      target = b.create<arith::SelectOp>(loc, isTarget, scalarConstant(b, loc, element, 1.0 - alpha),
                                         scalarConstant(b, loc, element, off));
    }
    Value g = mul(b, loc, sub(b, loc, p, target), scalarConstant(b, loc, element, scale));
    if (validCount)
      g = div(b, loc, g, max(b, loc, args[2], scalarConstant(b, loc, element, 1.0)));
    if (op.getUseIgnore() && !distribution)
      g = b.create<arith::SelectOp>(loc, labelIs(b, loc, args[1], op.getIgnoreLabel()),
                                    scalarConstant(b, loc, element, 0.0), g);
    return g;
  });
  return SmallVector<Value>{reshapeTo(b, loc, grad, shape)};
}

} // namespace

std::optional<Lowered> lowerReductionOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::SumOp s) { return lowerReduce(b, s, /*mean=*/false); })
      .Case([&](sym::MeanOp m) { return lowerReduce(b, m, /*mean=*/true); })
      .Case([&](sym::NormOp n) { return lowerNorm(b, n); })
      .Case([&](sym::SoftmaxOp s) { return lowerSoftmax(b, s, /*log=*/false); })
      .Case([&](sym::LogSoftmaxOp s) { return lowerSoftmax(b, s, /*log=*/true); })
      .Case([&](sym::SoftmaxOutputOp s) { return lowerSoftmaxOutput(b, s); })
      .Case([&](sym::SoftmaxActivationOp s) { return lowerSoftmaxActivation(b, s); })
      .Case([&](sym::BackwardSoftmaxOutputOp s) { return lowerSoftmaxOutputBackward(b, s); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
