//===- LowerElementwise.cpp - elementwise sym ops -> linalg.generic -------===//
//
// Formulas follow MXNet's mshadow_op functors (src/operator/mshadow_op.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
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
      !isa<sym::AbsOp, sym::NegativeOp, sym::SquareOp, sym::ReluOp, sym::FloorOp, sym::CeilOp, sym::RoundOp,
           sym::RintOp, sym::FixOp, sym::TruncOp>(op))
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

/// 1 where `x (predicate) y` holds, else 0, in x's type.
template <arith::CmpFPredicate FloatPredicate, arith::CmpIPredicate IntPredicate>
Value compare(OpBuilder &b, Location loc, Value x, Value y) {
  Value holds = isa<FloatType>(x.getType())
                    ? b.create<arith::CmpFOp>(loc, FloatPredicate, x, y).getResult()
                    : b.create<arith::CmpIOp>(loc, IntPredicate, x, y).getResult();
  return b.create<arith::SelectOp>(loc, holds, scalarConstant(b, loc, x.getType(), 1.0),
                                   scalarConstant(b, loc, x.getType(), 0.0));
}
constexpr BinaryFn greater = compare<arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt>;
constexpr BinaryFn greaterEqual = compare<arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge>;
constexpr BinaryFn lesser = compare<arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt>;
constexpr BinaryFn lesserEqual = compare<arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle>;
constexpr BinaryFn equal = compare<arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq>;
constexpr BinaryFn notEqual = compare<arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne>;

/// x where the condition is nonzero, else y; a vector condition picks rows.
Lowered lowerWhere(OpBuilder &b, sym::WhereOp op) {
  Location loc = op.getLoc();
  auto select = [](OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value cond = args[2];
    Value zero = scalarConstant(b, loc, cond.getType(), 0.0);
    Value holds = isa<FloatType>(cond.getType())
                      ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, cond, zero).getResult()
                      : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, cond, zero).getResult();
    return b.create<arith::SelectOp>(loc, holds, args[0], args[1]);
  };
  SmallVector<Value> values{op.getX(), op.getY()};
  if (tensorType(op.getCondition()).getRank() == tensorType(op.getX()).getRank()) {
    values.push_back(op.getCondition());
    return single(mapElementwise(b, loc, tensorType(op.getOutput()), values, select));
  }
  return single(mapAlongAxis(b, loc, values, 0, op.getCondition(), select));
}

/// sinh and cosh from expm1, exact near 0 as libm's are.
Value hyperbolic(OpBuilder &b, Location loc, Value x, bool isSinh) {
  Value half = scalarConstant(b, loc, x.getType(), 0.5);
  if (isSinh) {
    Value up = b.create<math::ExpM1Op>(loc, x), down = b.create<math::ExpM1Op>(loc, b.create<arith::NegFOp>(loc, x));
    return mul(b, loc, half, sub(b, loc, up, down));
  }
  Value up = b.create<math::ExpOp>(loc, x), down = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  return mul(b, loc, half, add(b, loc, up, down));
}

template <typename MathOpTy> Lowered mathUnary(OpBuilder &b, Operation *op) {
  return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value { return b.create<MathOpTy>(l, x); });
}

/// Rounding leaves integers as they are.
template <typename MathOpTy> Lowered rounding(OpBuilder &b, Operation *op) {
  return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value {
    return isa<FloatType>(x.getType()) ? b.create<MathOpTy>(l, x).getResult() : x;
  });
}

Lowered lowerFill(OpBuilder &b, Operation *op, double value) {
  return single(filledTensor(b, op->getLoc(), tensorType(op->getResult(0)), value));
}

/// start + (i / repeat) * step at flat (row-major) position i of `result`,
/// in its type as MXNet's range kernels compute it (_arange,
/// _contrib_arange_like).
Lowered lowerRange(OpBuilder &b, Value result, double start, double step, int64_t repeat) {
  RankedTensorType type = tensorType(result);
  Type element = type.getElementType();
  Value range = generateElements(b, result.getLoc(), type, [&](OpBuilder &nb, Location l, ValueRange indices) {
    IndexMath m{nb, l};
    Value flat = m.c(0);
    for (auto [index, size] : llvm::zip(indices, type.getShape()))
      flat = m.add(m.mul(flat, m.c(size)), index);
    Value steps = m.div(flat, m.c(repeat));
    Value count = convertScalar(nb, l, nb.create<arith::IndexCastOp>(l, nb.getI64Type(), steps), element);
    return add(nb, l, scalarConstant(nb, l, element, start), mul(nb, l, count, scalarConstant(nb, l, element, step)));
  });
  return single(range);
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
      .Case([&](sym::MaximumScalarOp s) { return scalarOp(b, op, s.getScalar(), max); })
      .Case([&](sym::MinimumScalarOp s) { return scalarOp(b, op, s.getScalar(), min); })
      .Case([&](sym::GreaterScalarOp s) { return scalarOp(b, op, s.getScalar(), greater); })
      .Case([&](sym::GreaterEqualScalarOp s) { return scalarOp(b, op, s.getScalar(), greaterEqual); })
      .Case([&](sym::LesserScalarOp s) { return scalarOp(b, op, s.getScalar(), lesser); })
      .Case([&](sym::LesserEqualScalarOp s) { return scalarOp(b, op, s.getScalar(), lesserEqual); })
      .Case([&](sym::EqualScalarOp s) { return scalarOp(b, op, s.getScalar(), equal); })
      .Case([&](sym::NotEqualScalarOp s) { return scalarOp(b, op, s.getScalar(), notEqual); })
      .Case<sym::GreaterOp, sym::BroadcastGreaterOp>([&](auto) { return binary(b, op, greater); })
      .Case<sym::GreaterEqualOp, sym::BroadcastGreaterEqualOp>([&](auto) { return binary(b, op, greaterEqual); })
      .Case<sym::LesserOp, sym::BroadcastLesserOp>([&](auto) { return binary(b, op, lesser); })
      .Case<sym::LesserEqualOp, sym::BroadcastLesserEqualOp>([&](auto) { return binary(b, op, lesserEqual); })
      .Case<sym::EqualOp, sym::BroadcastEqualOp>([&](auto) { return binary(b, op, equal); })
      .Case<sym::NotEqualOp, sym::BroadcastNotEqualOp>([&](auto) { return binary(b, op, notEqual); })
      .Case([&](sym::WhereOp w) { return lowerWhere(b, w); })
      .Case([&](sym::ExpOp) { return mathUnary<math::ExpOp>(b, op); })
      .Case([&](sym::LogOp) { return mathUnary<math::LogOp>(b, op); })
      .Case([&](sym::SqrtOp) { return mathUnary<math::SqrtOp>(b, op); })
      .Case([&](sym::SinOp) { return mathUnary<math::SinOp>(b, op); })
      .Case([&](sym::CosOp) { return mathUnary<math::CosOp>(b, op); })
      .Case([&](sym::TanhOp) { return mathUnary<math::TanhOp>(b, op); })
      .Case([&](sym::FloorOp) { return rounding<math::FloorOp>(b, op); })
      .Case([&](sym::CeilOp) { return rounding<math::CeilOp>(b, op); })
      .Case([&](sym::RoundOp) { return rounding<math::RoundOp>(b, op); })
      .Case([&](sym::RintOp) {
        // MXNet's rint: the nearer of floor and ceil, floor on a tie.
        return unary(b, op, [](OpBuilder &b, Location l, Value x) -> Value {
          if (!isa<FloatType>(x.getType()))
            return x;
          Value down = b.create<math::FloorOp>(l, x), up = b.create<math::CeilOp>(l, x);
          Value nearerDown = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, sub(b, l, x, down), sub(b, l, up, x));
          return b.create<arith::SelectOp>(l, nearerDown, down, up);
        });
      })
      .Case<sym::FixOp, sym::TruncOp>([&](auto) { return rounding<math::TruncOp>(b, op); })
      .Case([&](sym::RsqrtOp) { return mathUnary<math::RsqrtOp>(b, op); })
      .Case([&](sym::ErfOp) { return mathUnary<math::ErfOp>(b, op); })
      .Case([&](sym::Log1pOp) { return mathUnary<math::Log1pOp>(b, op); })
      .Case([&](sym::Expm1Op) { return mathUnary<math::ExpM1Op>(b, op); })
      .Case([&](sym::Log2Op) { return mathUnary<math::Log2Op>(b, op); })
      .Case([&](sym::Log10Op) { return mathUnary<math::Log10Op>(b, op); })
      .Case([&](sym::TanOp) { return mathUnary<math::TanOp>(b, op); })
      .Case([&](sym::ArctanOp) { return mathUnary<math::AtanOp>(b, op); })
      .Case([&](sym::SinhOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) { return hyperbolic(b, l, x, true); }); })
      .Case([&](sym::CoshOp) { return unary(b, op, [](OpBuilder &b, Location l, Value x) { return hyperbolic(b, l, x, false); }); })
      .Case([&](sym::ReciprocalOp) {
        return unary(b, op, [](OpBuilder &b, Location l, Value x) { return div(b, l, scalarConstant(b, l, x.getType(), 1.0), x); });
      })
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
      .Case([&](sym::ZerosLikeOp) { return lowerFill(b, op, 0.0); })
      .Case([&](sym::OnesLikeOp) { return lowerFill(b, op, 1.0); })
      .Case([&](sym::ArangeLikeOp a) { return lowerRange(b, a.getOutput(), a.getStart(), a.getStep(), a.getRepeat()); })
      .Case([&](sym::ArangeOp a) { return lowerRange(b, a.getOutput(), a.getFirst(), a.getStep(), a.getRepeat()); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
