//===- LowerElementwise.cpp - elementwise sym ops -> linalg.generic -------===//
//
// Formulas follow MXNet's mshadow_op functors (src/operator/mshadow_op.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

using BinaryFn = Value (*)(OpBuilder &, Location, Value, Value);

Value resultMap(OpBuilder &b, Operation *op, ValueRange inputs, ScalarFn fn) {
  return mapElementwise(b, op->getLoc(), tensorType(op->getResult(0)), inputs, fn);
}

Lowered single(Value v) { return SmallVector<Value>{v}; }

Lowered unary(OpBuilder &b, Operation *op, llvm::function_ref<Value(OpBuilder &, Location, Value)> fn) {
  if (!isa<FloatType>(tensorType(op->getOperand(0)).getElementType()) &&
      !isa<sym::AbsOp, sym::NegativeOp, sym::SquareOp, sym::ReluOp>(op))
    return op->emitError("the CPU backend supports '") << op->getName().stripDialect()
                                                       << "' on floating-point tensors only";
  return single(resultMap(b, op, op->getOperand(0),
                          [&](OpBuilder &b, Location loc, ValueRange args) { return fn(b, loc, args[0]); }));
}

Lowered binary(OpBuilder &b, Operation *op, BinaryFn fn) {
  return single(resultMap(b, op, op->getOperands(), [&](OpBuilder &b, Location loc, ValueRange args) {
    return fn(b, loc, args[0], args[1]);
  }));
}

/// `data (op) scalar`, or `scalar (op) data` when `reversed`.
Lowered scalarOp(OpBuilder &b, Operation *op, double scalar, BinaryFn fn, bool reversed = false) {
  return single(resultMap(b, op, op->getOperand(0), [&](OpBuilder &b, Location loc, ValueRange args) {
    Value s = scalarConstant(b, loc, args[0].getType(), scalar);
    return reversed ? fn(b, loc, s, args[0]) : fn(b, loc, args[0], s);
  }));
}

Value relu(OpBuilder &b, Location loc, Value x) {
  return max(b, loc, x, scalarConstant(b, loc, x.getType(), 0.0));
}

/// MXNet's softrelu: log(1 + exp(x)), and x itself above 20.
Value softrelu(OpBuilder &b, Location loc, Value x) {
  Value threshold = scalarConstant(b, loc, x.getType(), 20.0);
  Value large = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, threshold);
  Value soft = b.create<math::Log1pOp>(loc, b.create<math::ExpOp>(loc, x));
  return b.create<arith::SelectOp>(loc, large, x, soft);
}

Value expm1Scaled(OpBuilder &b, Location loc, Value x, double scale) {
  return mul(b, loc, scalarConstant(b, loc, x.getType(), scale), b.create<math::ExpM1Op>(loc, x));
}

Lowered lowerActivation(OpBuilder &b, sym::ActivationOp op) {
  StringRef kind = op.getActType();
  return unary(b, op, [&](OpBuilder &b, Location loc, Value x) -> Value {
    if (kind == "relu")
      return relu(b, loc, x);
    if (kind == "sigmoid")
      return sigmoid(b, loc, x);
    if (kind == "tanh")
      return b.create<math::TanhOp>(loc, x);
    if (kind == "softrelu")
      return softrelu(b, loc, x);
    Value one = scalarConstant(b, loc, x.getType(), 1.0);
    return div(b, loc, x, add(b, loc, one, b.create<math::AbsFOp>(loc, x)));
  });
}

/// Elementwise over the same-shaped `tensors` and prelu's gamma, which has
/// one slope per channel (axis 1) or one for all; `fn` gets gamma last.
Value mapWithGamma(OpBuilder &b, Location loc, SmallVector<Value> tensors, Value gamma, ScalarFn fn) {
  RankedTensorType type = tensorType(tensors.front());
  if (tensorType(gamma).getDimSize(0) == 1 || type.getRank() < 2) {
    tensors.push_back(reshapeTo(b, loc, gamma, {}));
    return mapElementwise(b, loc, type, tensors, fn);
  }
  return mapAlongAxis(b, loc, tensors, 1, gamma, fn);
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluLambda = 1.0507009873554804934193349852946;

Lowered lowerLeakyReLU(OpBuilder &b, sym::LeakyReLUOp op) {
  Location loc = op.getLoc();
  StringRef kind = op.getActType();
  Value data = op.getData();
  if (!isa<FloatType>(tensorType(data).getElementType()))
    return op.emitError("the CPU backend supports 'LeakyReLU' on floating-point tensors only");
  Value output;
  if (kind == "prelu") {
    output = mapWithGamma(b, loc, {data}, op.getGamma(), [](OpBuilder &b, Location loc, ValueRange args) {
      return selectPositive(b, loc, args[0], args[0], mul(b, loc, args[1], args[0]));
    });
  } else {
    double slope = kind == "rrelu" ? (op.getLowerBound() + op.getUpperBound()) / 2 : op.getSlope();
    output = mapElementwise(b, loc, tensorType(data), data,
                            [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value x = args[0];
      if (kind == "gelu") {
        Value half = scalarConstant(b, loc, x.getType(), 0.5);
        Value scaled = mul(b, loc, x, scalarConstant(b, loc, x.getType(), M_SQRT1_2));
        Value one = scalarConstant(b, loc, x.getType(), 1.0);
        return mul(b, loc, mul(b, loc, half, x), add(b, loc, one, b.create<math::ErfOp>(loc, scaled)));
      }
      if (kind == "elu")
        return selectPositive(b, loc, x, x, expm1Scaled(b, loc, x, slope));
      if (kind == "selu") {
        Value inner = selectPositive(b, loc, x, x, expm1Scaled(b, loc, x, kSeluAlpha));
        return mul(b, loc, scalarConstant(b, loc, x.getType(), kSeluLambda), inner);
      }
      return selectPositive(b, loc, x, x, mul(b, loc, scalarConstant(b, loc, x.getType(), slope), x));
    });
  }
  SmallVector<Value> results{output};
  if (op.getMask())
    results.push_back(emptyLike(b, loc, tensorType(op.getMask())));
  return results;
}

/// The derivative of each act_type times g, from (g, x, out[, slope]) as
/// MXNet's kernels compute it: leaky, elu, selu and rrelu test the output,
/// prelu and gelu the data.
Value leakyReLUGrad(OpBuilder &b, Location loc, sym::BackwardLeakyReLUOp op, ValueRange a) {
  StringRef kind = op.getActType();
  Value g = a[0], x = a[1], out = a[2];
  auto c = [&](double v) { return scalarConstant(b, loc, g.getType(), v); };
  if (kind == "gelu") { // (x Phi(x))' = Phi(x) + x phi(x)
    Value cdf = mul(b, loc, c(0.5), add(b, loc, c(1.0), b.create<math::ErfOp>(loc, mul(b, loc, x, c(M_SQRT1_2)))));
    Value pdf = mul(b, loc, c(0.5 * M_2_SQRTPI * M_SQRT1_2), b.create<math::ExpOp>(loc, mul(b, loc, c(-0.5), mul(b, loc, x, x))));
    return mul(b, loc, g, add(b, loc, cdf, mul(b, loc, x, pdf)));
  }
  if (kind == "elu") // slope (e^x - 1) has derivative out + slope
    return selectPositive(b, loc, out, g, mul(b, loc, g, add(b, loc, out, c(op.getSlope()))));
  if (kind == "selu") // MXNet's selu_grad: lambda (alpha + out), not lambda alpha e^x
    return selectPositive(b, loc, out, mul(b, loc, g, c(kSeluLambda)),
                          mul(b, loc, g, mul(b, loc, c(kSeluLambda), add(b, loc, out, c(kSeluAlpha)))));
  if (kind == "prelu")
    return selectPositive(b, loc, x, g, mul(b, loc, g, a[3]));
  // leaky's slope, or rrelu's: drawn in training, the mean at inference.
  Value slope = c(op.getSlope());
  if (a.size() > 3)
    slope = a[3];
  else if (kind == "rrelu")
    slope = c((op.getLowerBound() + op.getUpperBound()) / 2);
  return selectPositive(b, loc, out, g, mul(b, loc, g, slope));
}

Lowered lowerLeakyReLUBackward(OpBuilder &b, sym::BackwardLeakyReLUOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getDataGrad());
  if (!isa<FloatType>(type.getElementType()))
    return op.emitError("the CPU backend supports 'LeakyReLU' on floating-point tensors only");
  SmallVector<Value> tensors{op.getOutGrad(), op.getData(), op.getOutput()};
  auto fn = [&](OpBuilder &b, Location loc, ValueRange args) { return leakyReLUGrad(b, loc, op, args); };
  if (op.getActType() == "prelu")
    return single(mapWithGamma(b, loc, tensors, op.getSlopes(), fn));
  if (op.getSlopes())
    tensors.push_back(op.getSlopes());
  return single(mapElementwise(b, loc, type, tensors, fn));
}

Lowered lowerCast(OpBuilder &b, sym::CastOp op) {
  Type to = tensorType(op.getOutput()).getElementType();
  return single(resultMap(b, op, op.getData(), [&](OpBuilder &b, Location loc, ValueRange args) {
    return convertScalar(b, loc, args[0], to);
  }));
}

Lowered lowerAddN(OpBuilder &b, sym::AddNOp op) {
  return single(resultMap(b, op, op.getInputs(), [](OpBuilder &b, Location loc, ValueRange args) {
    Value sum = args[0];
    for (Value v : args.drop_front())
      sum = add(b, loc, sum, v);
    return sum;
  }));
}

Lowered lowerClip(OpBuilder &b, sym::ClipOp op) {
  double lo = op.getAMin(), hi = op.getAMax();
  return single(resultMap(b, op, op.getData(), [&](OpBuilder &b, Location loc, ValueRange args) {
    Type type = args[0].getType();
    return max(b, loc, min(b, loc, args[0], scalarConstant(b, loc, type, hi)),
               scalarConstant(b, loc, type, lo));
  }));
}

Value power(OpBuilder &b, Location loc, Value x, Value y) { return b.create<math::PowFOp>(loc, x, y); }

Lowered lowerFill(OpBuilder &b, Operation *op, double value) {
  return single(filledTensor(b, op->getLoc(), tensorType(op->getResult(0)), value));
}

} // namespace

std::optional<Lowered> lowerElementwiseOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case<sym::ElemwiseAddOp, sym::BroadcastAddOp>([&](auto) { return binary(b, op, add); })
      .Case<sym::ElemwiseSubOp, sym::BroadcastSubOp>([&](auto) { return binary(b, op, sub); })
      .Case<sym::ElemwiseMulOp, sym::BroadcastMulOp>([&](auto) { return binary(b, op, mul); })
      .Case<sym::ElemwiseDivOp, sym::BroadcastDivOp>([&](auto) { return binary(b, op, div); })
      .Case<sym::MaximumOp, sym::BroadcastMaximumOp>([&](auto) { return binary(b, op, max); })
      .Case<sym::MinimumOp, sym::BroadcastMinimumOp>([&](auto) { return binary(b, op, min); })
      .Case([&](sym::PlusScalarOp s) { return scalarOp(b, op, s.getScalar(), add); })
      .Case([&](sym::MinusScalarOp s) { return scalarOp(b, op, s.getScalar(), sub); })
      .Case([&](sym::RMinusScalarOp s) { return scalarOp(b, op, s.getScalar(), sub, true); })
      .Case([&](sym::MulScalarOp s) { return scalarOp(b, op, s.getScalar(), mul); })
      .Case([&](sym::DivScalarOp s) { return scalarOp(b, op, s.getScalar(), div); })
      .Case([&](sym::RDivScalarOp s) { return scalarOp(b, op, s.getScalar(), div, true); })
      .Case([&](sym::PowerScalarOp s) { return scalarOp(b, op, s.getScalar(), power); })
      .Case([&](sym::ExpOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::ExpOp>(l, x); }); })
      .Case([&](sym::LogOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::LogOp>(l, x); }); })
      .Case([&](sym::SqrtOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::SqrtOp>(l, x); }); })
      .Case([&](sym::SinOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::SinOp>(l, x); }); })
      .Case([&](sym::CosOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::CosOp>(l, x); }); })
      .Case([&](sym::TanhOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<math::TanhOp>(l, x); }); })
      .Case([&](sym::SigmoidOp) { return unary(b, op, sigmoid); })
      .Case([&](sym::ReluOp) { return unary(b, op, relu); })
      .Case([&](sym::SquareOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) { return mul(b, l, x, x); }); })
      .Case([&](sym::NegativeOp) {
        return unary(b, op, [](OpBuilder &b, Location l, Value x) {
          return sub(b, l, scalarConstant(b, l, x.getType(), 0.0), x);
        });
      })
      .Case([&](sym::AbsOp) {
        return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value {
          if (isa<FloatType>(x.getType()))
            return b.create<math::AbsFOp>(l, x);
          return b.create<math::AbsIOp>(l, x);
        });
      })
      .Case([&](sym::SignOp) {
        return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value {
          Value zero = scalarConstant(b, l, x.getType(), 0.0);
          Value negative = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, zero);
          Value minusOne = scalarConstant(b, l, x.getType(), -1.0);
          return selectPositive(b, l, x, scalarConstant(b, l, x.getType(), 1.0),
                                b.create<arith::SelectOp>(l, negative, minusOne, zero));
        });
      })
      .Case([&](sym::ActivationOp a) { return lowerActivation(b, a); })
      .Case([&](sym::BackwardReluOp r) {
        // out_grad where data > 0, else 0.
        return single(mapElementwise(b, r.getLoc(), tensorType(r.getOutput()), {r.getOutGrad(), r.getData()},
                                     [](OpBuilder &b, Location loc, ValueRange args) {
          Value zero = scalarConstant(b, loc, args[0].getType(), 0.0);
          return selectPositive(b, loc, args[1], args[0], zero);
        }));
      })
      .Case([&](sym::LeakyReLUOp a) { return lowerLeakyReLU(b, a); })
      .Case([&](sym::BackwardLeakyReLUOp a) { return lowerLeakyReLUBackward(b, a); })
      .Case([&](sym::CastOp c) { return lowerCast(b, c); })
      .Case([&](sym::AddNOp a) { return lowerAddN(b, a); })
      .Case([&](sym::ClipOp c) { return lowerClip(b, c); })
      .Case([&](sym::LogisticRegressionOutputOp) { return unary(b, op, sigmoid); })
      .Case<sym::CopyOp, sym::BlockGradOp, sym::IdentityLossOp, sym::MakeLossOp,
            sym::LinearRegressionOutputOp, sym::MAERegressionOutputOp>(
          [&](auto) { return single(op->getOperand(0)); })
      .Case([&](sym::ZerosOp) { return lowerFill(b, op, 0.0); })
      .Case([&](sym::OnesOp) { return lowerFill(b, op, 1.0); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
