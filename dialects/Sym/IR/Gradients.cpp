//===- Gradients.cpp - MXNet's FGradient rules as sym ops -----------------===//
//
// Each rule builds an op's vector-Jacobian product from forward sym ops, the
// way MXNet's FGradient builds `_backward_*` nodes; sym-generate-gradients
// then shape-infers the result, so rules may leave result types unranked.
// Gradients that forward ops cannot express get a `_backward_*` op of their
// own (relu's step, SoftmaxOutput's one-hot, Convolution's transposed
// convolution, Pooling's unpooling, BatchNorm's normalization, Embedding's
// row scatter, LeakyReLU's piecewise slopes, LRN's window sums).
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/SymOps.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::sym;

namespace {

/// Builds sym ops at one location; a result type left unranked is filled in
/// by shape inference.
class GradBuilder {
public:
  GradBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  template <typename OpTy>
  Value make(Type type, ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    return b.create<OpTy>(loc, TypeRange{type}, operands, attrs)->getResult(0);
  }
  /// An elementwise op whose result has `like`'s type.
  template <typename OpTy> Value same(Value like, ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    return make<OpTy>(like.getType(), operands, attrs);
  }
  Type unknown(Value v) { return UnrankedTensorType::get(getElementTypeOrSelf(v.getType())); }
  NamedAttribute attr(StringRef name, Attribute value) { return b.getNamedAttr(name, value); }

  Value add(Value x, Value y) { return same<ElemwiseAddOp>(x, {x, y}); }
  Value mul(Value x, Value y) { return same<ElemwiseMulOp>(x, {x, y}); }
  Value div(Value x, Value y) { return same<ElemwiseDivOp>(x, {x, y}); }
  Value neg(Value x) { return same<NegativeOp>(x, x); }
  template <typename ScalarOpTy> Value scalar(Value x, double s) {
    return same<ScalarOpTy>(x, x, {attr("scalar", b.getF64FloatAttr(s)), attr("is_int", b.getBoolAttr(false))});
  }

  /// `g` reshaped to `like`'s shape (at most one dynamic dim).
  FailureOr<Value> reshapeLike(Value g, Value like) {
    if (g.getType() == like.getType())
      return g;
    auto type = dyn_cast<RankedTensorType>(like.getType());
    if (!type || llvm::count_if(type.getShape(), ShapedType::isDynamic) > 1)
      return failure();
    SmallVector<int64_t> shape(type.getShape());
    std::replace(shape.begin(), shape.end(), ShapedType::kDynamic, int64_t(-1));
    return make<ReshapeOp>(like.getType(), g, {attr("shape", b.getDenseI64ArrayAttr(shape))});
  }

  /// Sums the broadcast gradient `g` down to `operand`'s shape.
  FailureOr<Value> sumToShapeOf(Value g, Value operand) {
    if (g.getType() == operand.getType())
      return g;
    auto gType = dyn_cast<RankedTensorType>(g.getType());
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!gType || !type)
      return failure();
    int64_t lead = gType.getRank() - type.getRank();
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < gType.getRank(); ++i)
      if (i < lead || (type.getDimSize(i - lead) == 1 && gType.getDimSize(i) != 1))
        axes.push_back(i);
    Value summed = make<SumOp>(unknown(g), g, {attr("axis", b.getDenseI64ArrayAttr(axes)),
                                               attr("keepdims", b.getBoolAttr(true))});
    return reshapeLike(summed, operand);
  }

  /// A constant tensor of `like`'s (static) shape.
  template <typename FillOpTy> FailureOr<Value> filledLike(Value like) {
    auto type = dyn_cast<RankedTensorType>(like.getType());
    if (!type || !type.hasStaticShape())
      return failure();
    return make<FillOpTy>(type, {}, {attr("shape", b.getDenseI64ArrayAttr(type.getShape())),
                                     attr("dtype", TypeAttr::get(type.getElementType()))});
  }

  /// Zeros of a static shape, with `like`'s element type.
  Value zeros(ArrayRef<int64_t> shape, Value like) {
    Type element = getElementTypeOrSelf(like.getType());
    return make<ZerosOp>(RankedTensorType::get(shape, element), {},
                         {attr("shape", b.getDenseI64ArrayAttr(shape)), attr("dtype", TypeAttr::get(element))});
  }
  Value concat(Type type, ValueRange parts, int64_t axis) {
    if (parts.size() == 1)
      return parts.front();
    return make<ConcatOp>(type, parts, {attr("num_args", b.getI64IntegerAttr(parts.size())),
                                        attr("dim", b.getI64IntegerAttr(axis))});
  }

  Value dot(Value lhs, Value rhs, bool transposeA, bool transposeB) {
    return make<DotOp>(unknown(lhs), {lhs, rhs}, {attr("transpose_a", b.getBoolAttr(transposeA)),
                                                  attr("transpose_b", b.getBoolAttr(transposeB))});
  }
  Value batchDot(Value lhs, Value rhs, bool transposeA, bool transposeB) {
    return make<BatchDotOp>(unknown(lhs), {lhs, rhs}, {attr("transpose_a", b.getBoolAttr(transposeA)),
                                                       attr("transpose_b", b.getBoolAttr(transposeB))});
  }
  /// g[begin:end] along `axis`.
  Value sliceAxis(Type type, Value g, int64_t axis, int64_t begin, int64_t end) {
    return make<SliceAxisOp>(type, g, {attr("axis", b.getI64IntegerAttr(axis)),
                                       attr("begin", b.getI64IntegerAttr(begin)), attr("end", b.getI64IntegerAttr(end))});
  }
  /// sum(g, axis, keepdims=true).
  Value sumKeep(Value g, int64_t axis) {
    return make<SumOp>(unknown(g), g, {attr("axis", b.getDenseI64ArrayAttr({axis})),
                                       attr("keepdims", b.getBoolAttr(true))});
  }

  OpBuilder &b;
  Location loc;
};

using Grads = SmallVectorImpl<Value>;

/// The single result's gradient (never null: ops whose results get no
/// gradient are skipped, loss heads excepted).
Value resultGrad(ValueRange resultGrads) { return resultGrads.front(); }

LogicalResult noShape(Operation *op) {
  return op->emitError("no gradient for '") << op->getName().stripDialect()
                                            << "' with these shapes (a dynamic dim it cannot follow)";
}

/// The operand gradients `dl` and `dr` of a binary op, summed down to the
/// operands' shapes where they were broadcast (an operand of the result's
/// type was not, whatever `d`'s type is yet).
LogicalResult binaryGrads(Operation *op, GradBuilder &gb, Value dl, Value dr, Grads &grads) {
  auto toOperand = [&](Value d, Value operand) -> FailureOr<Value> {
    return operand.getType() == op->getResult(0).getType() ? d : gb.sumToShapeOf(d, operand);
  };
  FailureOr<Value> l = toOperand(dl, op->getOperand(0));
  FailureOr<Value> r = toOperand(dr, op->getOperand(1));
  if (failed(l) || failed(r))
    return noShape(op);
  grads.append({*l, *r});
  return success();
}

template <typename OpTy, typename MulOpTy, typename DivOpTy, char Kind>
LogicalResult arithmeticRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads), lhs = op.getLhs(), rhs = op.getRhs();
  switch (Kind) {
  case '+':
    return binaryGrads(op, gb, g, g, grads);
  case '-':
    return binaryGrads(op, gb, g, gb.neg(g), grads);
  case '*':
    return binaryGrads(op, gb, gb.same<MulOpTy>(g, {g, rhs}),
                                         gb.same<MulOpTy>(g, {g, lhs}), grads);
  default: // d(l/r)/dr = -(l/r)/r
    return binaryGrads(
        op, gb, gb.same<DivOpTy>(g, {g, rhs}),
        gb.neg(gb.same<DivOpTy>(g, {gb.mul(g, op.getOutput()), rhs})), grads);
  }
}

/// 1 where x > 0, else 0 (x - y > 0 exactly when x > y in IEEE arithmetic,
/// so the comparisons MXNet's min/max/clip gradients make are exact).
Value isPositive(GradBuilder &gb, Value x) { return gb.same<SignOp>(x, gb.same<ReluOp>(x, x)); }

/// maximum: lhs gets g where lhs >= rhs, rhs where lhs < rhs; minimum: lhs
/// where lhs <= rhs, rhs where lhs > rhs (MXNet's ge/lt and le/gt).
template <typename OpTy, typename SubOpTy, typename MulOpTy, bool IsMax>
LogicalResult extremumRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads), lhs = op.getLhs(), rhs = op.getRhs();
  Value rhsWins = isPositive(gb, IsMax ? gb.same<SubOpTy>(g, {rhs, lhs}) : gb.same<SubOpTy>(g, {lhs, rhs}));
  Value toRhs = gb.same<MulOpTy>(g, {g, rhsWins});
  return binaryGrads(op, gb, gb.same<ElemwiseSubOp>(g, {g, toRhs}), toRhs, grads);
}

/// Rules whose one operand gradient is a function of (g, x, out).
using UnaryFn = function_ref<Value(GradBuilder &, Value g, Value x, Value out)>;

LogicalResult unary(GradBuilder &gb, Operation *op, ValueRange resultGrads, Grads &grads, UnaryFn fn) {
  grads.push_back(fn(gb, resultGrad(resultGrads), op->getOperand(0), op->getResult(0)));
  return success();
}

Value sigmoidGrad(GradBuilder &gb, Value g, Value, Value out) {
  return gb.mul(g, gb.mul(out, gb.scalar<RMinusScalarOp>(out, 1.0)));
}
Value tanhGrad(GradBuilder &gb, Value g, Value, Value out) {
  return gb.mul(g, gb.scalar<RMinusScalarOp>(gb.same<SquareOp>(out, out), 1.0));
}

/// out > 0 exactly where x > 0; reading the output (as MXNet's relu does)
/// spares the backward a saved input, which is often a BatchNorm's output.
Value reluGrad(GradBuilder &gb, Value g, Value, Value out) { return gb.same<BackwardReluOp>(g, {g, out}); }

LogicalResult activationRule(GradBuilder &gb, ActivationOp op, ValueRange resultGrads, Grads &grads) {
  StringRef act = op.getActType();
  if (act == "relu")
    return unary(gb, op, resultGrads, grads, reluGrad);
  if (act == "sigmoid")
    return unary(gb, op, resultGrads, grads, sigmoidGrad);
  if (act == "tanh")
    return unary(gb, op, resultGrads, grads, tanhGrad);
  if (act == "softrelu") // log(1 + e^x)' = sigmoid(x)
    return unary(gb, op, resultGrads, grads, [](GradBuilder &gb, Value g, Value x, Value) {
      return gb.mul(g, gb.same<SigmoidOp>(x, x));
    });
  if (act == "softsign") // (x / (1 + |x|))' = 1 / (1 + |x|)^2
    return unary(gb, op, resultGrads, grads, [](GradBuilder &gb, Value g, Value x, Value) {
      Value denominator = gb.scalar<PlusScalarOp>(gb.same<AbsOp>(x, x), 1.0);
      return gb.div(g, gb.same<SquareOp>(x, denominator));
    });
  return op.emitError("no gradient rule for Activation act_type '") << act << "' yet";
}

LogicalResult reshapeRule(GradBuilder &gb, Operation *op, ValueRange resultGrads, Grads &grads) {
  FailureOr<Value> grad = gb.reshapeLike(resultGrad(resultGrads), op->getOperand(0));
  if (failed(grad))
    return noShape(op);
  grads.push_back(*grad);
  return success();
}

LogicalResult transposeRule(GradBuilder &gb, TransposeOp op, ValueRange resultGrads, Grads &grads) {
  ArrayRef<int64_t> axes = op.getAxes();
  SmallVector<int64_t> inverse(axes.size());
  for (auto [i, a] : llvm::enumerate(axes))
    inverse[a < 0 ? a + axes.size() : a] = i;
  // No axes reverses the dims, its own inverse.
  grads.push_back(gb.make<TransposeOp>(op.getData().getType(), resultGrad(resultGrads),
                                       {gb.attr("axes", gb.b.getDenseI64ArrayAttr(inverse))}));
  return success();
}

LogicalResult swapAxisRule(GradBuilder &gb, SwapAxisOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.make<SwapAxisOp>(op.getData().getType(), resultGrad(resultGrads),
                                      op->getAttrDictionary().getValue()));
  return success();
}

/// The matrix (dot) or batch of matrices (batch_dot) the forward multiplies
/// `t` as: dot splits off the first dim (`splitFirst`) or the last, and
/// takes a vector as a column (`splitFirst`) or a row.
SmallVector<int64_t> productView(RankedTensorType t, bool batched, bool splitFirst) {
  int64_t count = t.getNumElements(), rank = t.getRank();
  if (batched) {
    int64_t rows = t.getDimSize(rank - 2), cols = t.getDimSize(rank - 1);
    return {count / (rows * cols), rows, cols};
  }
  if (rank == 1)
    return splitFirst ? SmallVector<int64_t>{count, 1} : SmallVector<int64_t>{1, count};
  int64_t rows = splitFirst ? t.getDimSize(0) : count / t.getDimSize(rank - 1);
  return {rows, count / rows};
}

/// C = op(A) op(B) on the operands' product views: dA = g op(B)^T
/// (transposed back when op(A) = A^T) and dB = op(A)^T g (likewise), then
/// reshaped to the operands' shapes.
template <typename OpTy>
LogicalResult productRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  constexpr bool batched = std::is_same_v<OpTy, BatchDotOp>;
  auto lType = dyn_cast<RankedTensorType>(op.getLhs().getType());
  auto rType = dyn_cast<RankedTensorType>(op.getRhs().getType());
  if (!lType || !rType || !lType.hasStaticShape() || !rType.hasStaticShape())
    return noShape(op);
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  SmallVector<int64_t> lView = productView(lType, batched, ta), rView = productView(rType, batched, !tb);
  SmallVector<int64_t> gView(lView.begin(), lView.end() - 2);
  gView.append({lView[lView.size() - (ta ? 1 : 2)], rView[rView.size() - (tb ? 2 : 1)]});
  auto view = [&](Value v, ArrayRef<int64_t> shape) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getShape() == shape)
      return v;
    return gb.make<ReshapeOp>(RankedTensorType::get(shape, type.getElementType()), v,
                              {gb.attr("shape", gb.b.getDenseI64ArrayAttr(shape))});
  };
  auto product = [&](Value l, Value r, bool ta, bool tb) {
    return batched ? gb.batchDot(l, r, ta, tb) : gb.dot(l, r, ta, tb);
  };
  Value g = view(resultGrad(resultGrads), gView), a = view(op.getLhs(), lView), b = view(op.getRhs(), rView);
  auto unview = [&](Value grad, Value operand, ArrayRef<int64_t> shape) -> FailureOr<Value> {
    return cast<RankedTensorType>(operand.getType()).getShape() == shape ? grad : gb.reshapeLike(grad, operand);
  };
  FailureOr<Value> da = unview(ta ? product(b, g, tb, true) : product(g, b, false, !tb), op.getLhs(), lView);
  FailureOr<Value> db = unview(tb ? product(g, a, true, ta) : product(a, g, !ta, false), op.getRhs(), rView);
  if (failed(da) || failed(db))
    return noShape(op);
  grads.append({*da, *db});
  return success();
}

/// y = x W^T + b on x flattened to (rows, K).
LogicalResult fullyConnectedRule(GradBuilder &gb, FullyConnectedOp op, ValueRange resultGrads,
                                 Grads &grads) {
  Value g = resultGrad(resultGrads), x = op.getData(), w = op.getWeight();
  auto wType = dyn_cast<RankedTensorType>(w.getType());
  if (!wType || !wType.hasStaticShape())
    return noShape(op);
  auto matrix = [&](Value v, int64_t cols) {
    return gb.make<ReshapeOp>(gb.unknown(v), v, {gb.attr("shape", gb.b.getDenseI64ArrayAttr({-1, cols}))});
  };
  Value x2 = matrix(x, wType.getDimSize(1)), g2 = matrix(g, wType.getDimSize(0));
  FailureOr<Value> dx = gb.reshapeLike(gb.dot(g2, w, false, false), x);
  if (failed(dx))
    return noShape(op);
  grads.append({*dx, gb.dot(g2, x2, true, false)});
  if (op.getBias())
    grads.push_back(gb.make<SumOp>(op.getBias().getType(), g2,
                                   {gb.attr("axis", gb.b.getDenseI64ArrayAttr({0}))}));
  return success();
}

template <typename ReduceOpTy>
LogicalResult reduceRule(GradBuilder &gb, ReduceOpTy op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  FailureOr<Value> zeros = gb.filledLike<ZerosOp>(op.getData());
  if (!type || failed(zeros))
    return noShape(op);
  SmallVector<int64_t> kept(type.getShape());
  int64_t count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    bool listed = op.getAxis() && llvm::any_of(*op.getAxis(), [&](int64_t a) {
                    return (a < 0 ? a + type.getRank() : a) == i;
                  });
    if (!op.getAxis() || op.getAxis()->empty() || listed != op.getExclude()) {
      count *= kept[i];
      kept[i] = 1;
    }
  }
  Value g = gb.make<ReshapeOp>(gb.unknown(op.getData()), resultGrad(resultGrads),
                               {gb.attr("shape", gb.b.getDenseI64ArrayAttr(kept))});
  if constexpr (std::is_same_v<ReduceOpTy, MeanOp>)
    g = gb.scalar<DivScalarOp>(g, static_cast<double>(count));
  grads.push_back(gb.make<BroadcastAddOp>(type, {*zeros, g}));
  return success();
}

template <typename SoftmaxOpTy>
LogicalResult softmaxRule(GradBuilder &gb, SoftmaxOpTy op, ValueRange resultGrads, Grads &grads) {
  constexpr bool isSoftmax = std::is_same_v<SoftmaxOpTy, SoftmaxOp>;
  Value g = resultGrad(resultGrads), out = op.getOutput();
  int64_t axis = op.getAxis();
  Value grad;
  // With use_length, out is 0 past each length, so the sum and the
  // gradient there are too; the length gets none.
  if constexpr (isSoftmax) // out * (g - sum(g * out))
    grad = gb.mul(out, gb.same<BroadcastSubOp>(g, {g, gb.sumKeep(gb.mul(g, out), axis)}));
  else // g - exp(out) * sum(g)
    grad = gb.same<BroadcastSubOp>(
        g, {g, gb.same<BroadcastMulOp>(g, {gb.same<ExpOp>(out, out), gb.sumKeep(g, axis)})});
  if (std::optional<double> t = op.getTemperature(); t && *t != 1.0)
    grad = gb.scalar<DivScalarOp>(grad, *t);
  grads.push_back(grad);
  if (op.getLength())
    grads.push_back(Value());
  return success();
}

LogicalResult concatRule(GradBuilder &gb, ConcatOp op, ValueRange resultGrads, Grads &grads) {
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    int64_t axis = op.getDim() < 0 ? op.getDim() + (type ? type.getRank() : 0) : op.getDim();
    if (!type || type.isDynamicDim(axis))
      return noShape(op);
    int64_t size = type.getDimSize(axis);
    grads.push_back(gb.sliceAxis(type, resultGrad(resultGrads), axis, offset, offset + size));
    offset += size;
  }
  return success();
}

/// The gradient of a slice is zero-padded back to the data's extent.
LogicalResult sliceAxisRule(GradBuilder &gb, SliceAxisOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type)
    return noShape(op);
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
  auto outType = dyn_cast<RankedTensorType>(op.getOutput().getType());
  if (type.isDynamicDim(axis) || !outType || !type.hasStaticShape())
    return noShape(op);
  int64_t size = type.getDimSize(axis), begin = op.getBegin() < 0 ? op.getBegin() + size : op.getBegin();
  int64_t after = size - begin - outType.getDimSize(axis);
  SmallVector<Value> parts;
  auto addZeros = [&](int64_t extent) {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = extent;
    if (extent > 0)
      parts.push_back(gb.zeros(shape, op.getData()));
  };
  addZeros(begin);
  parts.push_back(resultGrad(resultGrads));
  addZeros(after);
  grads.push_back(gb.concat(type, parts, axis));
  return success();
}

/// The outputs' gradients (zeros where none flows) concatenated back.
LogicalResult sliceChannelRule(GradBuilder &gb, SliceChannelOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type || !type.hasStaticShape())
    return noShape(op);
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
  SmallVector<int64_t> partShape(type.getShape());
  partShape[axis] /= op.getNumOutputs();
  auto partType = RankedTensorType::get(partShape, type.getElementType());
  SmallVector<Value> parts;
  for (Value g : resultGrads) {
    if (!g)
      parts.push_back(gb.zeros(partShape, op.getData()));
    else if (op.getSqueezeAxis())
      parts.push_back(gb.make<ReshapeOp>(partType, g, {gb.attr("shape", gb.b.getDenseI64ArrayAttr(partShape))}));
    else
      parts.push_back(g);
  }
  grads.push_back(gb.concat(type, parts, axis));
  return success();
}

/// The weight gradient only: indices have none (see refusedGradientMessage).
LogicalResult embeddingRule(GradBuilder &gb, EmbeddingOp op, ValueRange resultGrads, Grads &grads) {
  grads.append({Value(), gb.make<BackwardEmbeddingOp>(op.getWeight().getType(),
                                                       {resultGrad(resultGrads), op.getData()},
                                                       op->getAttrDictionary().getValue())});
  return success();
}

LogicalResult addNRule(GradBuilder &, AddNOp op, ValueRange resultGrads, Grads &grads) {
  grads.append(op.getNumOperands(), resultGrad(resultGrads));
  return success();
}

LogicalResult identityRule(GradBuilder &, Operation *, ValueRange resultGrads, Grads &grads) {
  grads.push_back(resultGrad(resultGrads));
  return success();
}

/// _zeros and _ones: constants, nothing to differentiate.
LogicalResult constantRule(GradBuilder &, Operation *, ValueRange, Grads &) { return success(); }

LogicalResult blockGradRule(GradBuilder &, Operation *, ValueRange, Grads &grads) {
  grads.push_back(Value());
  return success();
}

/// MakeZeroGradNodes: no input gets a gradient.
LogicalResult zeroGradRule(GradBuilder &, Operation *op, ValueRange, Grads &grads) {
  grads.append(op->getNumOperands(), Value());
  return success();
}

/// x gets g where the condition holds, y elsewhere; the condition none.
LogicalResult whereRule(GradBuilder &gb, WhereOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads), cond = op.getCondition();
  Value zeros = gb.same<ZerosLikeOp>(g, g);
  grads.append({Value(), gb.same<WhereOp>(g, {cond, g, zeros}), gb.same<WhereOp>(g, {cond, zeros, g})});
  return success();
}

/// make_loss: the gradient is ones, whatever the head gradient.
LogicalResult identityLossRule(GradBuilder &gb, IdentityLossOp op, ValueRange, Grads &grads) {
  FailureOr<Value> ones = gb.filledLike<OnesOp>(op.getData());
  if (failed(ones))
    return noShape(op);
  grads.push_back(*ones);
  return success();
}

/// The bias gradient of a convolution-like op: g summed over all but dim 1.
Value biasGradient(GradBuilder &gb, Value g, Type biasType) {
  auto type = cast<RankedTensorType>(g.getType());
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < type.getRank(); ++i)
    axes.push_back(i);
  return gb.make<SumOp>(biasType, g, {gb.attr("axis", gb.b.getDenseI64ArrayAttr(axes))});
}

/// Data and weight gradients by one backward op; the bias gradient sums the
/// output gradient over all but the channel dim.
LogicalResult convolutionRule(GradBuilder &gb, ConvolutionOp op, ValueRange resultGrads, Grads &grads) {
  if (op.isChannelsLast())
    return op.emitError("Convolution with layout NHWC has no gradient in symc: train the NCHW model");
  Value g = resultGrad(resultGrads);
  auto backward = gb.b.create<BackwardConvolutionOp>(
      gb.loc, TypeRange{op.getData().getType(), op.getWeight().getType()},
      ValueRange{g, op.getData(), op.getWeight()}, op->getAttrDictionary().getValue());
  grads.append({backward.getDataGrad(), backward.getWeightGrad()});
  if (op.getBias())
    grads.push_back(biasGradient(gb, g, op.getBias().getType()));
  return success();
}

/// Data and weight gradients by one backward op with the pads resolved.
LogicalResult deconvolutionRule(GradBuilder &gb, DeconvolutionOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  auto dataType = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!dataType || !dataType.hasStaticShape())
    return noShape(op);
  NamedAttrList attrs(op->getAttrDictionary());
  attrs.set("pad", gb.b.getDenseI64ArrayAttr(op.getPadAndAdj(dataType.getShape().drop_front(2)).first));
  attrs.erase("target_shape");
  auto backward = gb.b.create<BackwardDeconvolutionOp>(
      gb.loc, TypeRange{op.getData().getType(), op.getWeight().getType()},
      ValueRange{g, op.getData(), op.getWeight()}, attrs.getAttrs());
  grads.append({backward.getDataGrad(), backward.getWeightGrad()});
  if (op.getBias())
    grads.push_back(biasGradient(gb, g, op.getBias().getType()));
  return success();
}

/// Ops whose data gradient is one backward op of (g, data) with the
/// forward attributes: pooling, and slice (g scattered back into zeros).
template <typename OpTy, typename BackwardOpTy>
LogicalResult dataGradRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardOpTy>(op.getData(), {resultGrad(resultGrads), op.getData()},
                                        op->getAttrDictionary().getValue()));
  return success();
}

LogicalResult padRule(GradBuilder &gb, PadOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardPadOp>(op.getData(), resultGrad(resultGrads), op->getAttrDictionary().getValue()));
  return success();
}

/// The data gradient; `like` gets none (MXNet writes it zeros).
LogicalResult bilinearResizeRule(GradBuilder &gb, BilinearResize2DOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardBilinearResize2DOp>(
      op.getData(), {resultGrad(resultGrads), op.getData()},
      {gb.attr("align_corners", gb.b.getBoolAttr(op.getAlignCorners()))}));
  if (op.getLike())
    grads.push_back(Value());
  return success();
}

/// The head gradient is ignored (multiplied in with out_grad); the label
/// gets none.
LogicalResult softmaxOutputRule(GradBuilder &gb, SoftmaxOutputOp op, ValueRange resultGrads, Grads &grads) {
  Value grad = gb.same<BackwardSoftmaxOutputOp>(op.getData(), {op.getOutput(), op.getLabel()},
                                                op->getAttrDictionary().getValue());
  if (op.getOutGrad())
    grad = gb.mul(grad, resultGrad(resultGrads));
  grads.append({grad, Value()});
  return success();
}

/// Data, gamma and beta gradients by one backward op reading the forward's
/// statistics; the moving statistics get none (their update is not a
/// gradient: sym-generate-gradients adds it).
LogicalResult batchNormRule(GradBuilder &gb, BatchNormOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success(); // only the mean and var outputs have (ignored) gradients
  Type paramType = op.getGamma().getType();
  auto backward = gb.b.create<BackwardBatchNormOp>(
      gb.loc, TypeRange{op.getData().getType(), paramType, paramType},
      ValueRange{g, op.getData(), op.getGamma(), op.getMean(), op.getVar()},
      op->getAttrDictionary().getValue());
  grads.append({backward.getDataGrad(), backward.getGammaGrad(), backward.getBetaGrad(), Value(), Value()});
  return success();
}

/// Data, gamma and beta gradients of a normalization by one backward op
/// reading `operands` (the forward's statistics among them).
template <typename BackwardOpTy, typename OpTy>
LogicalResult normalizationGrads(GradBuilder &gb, OpTy op, ValueRange operands, Grads &grads) {
  Type paramType = op.getGamma().getType();
  auto backward = gb.b.create<BackwardOpTy>(gb.loc, TypeRange{op.getData().getType(), paramType, paramType},
                                            operands, op->getAttrDictionary().getValue());
  grads.append({backward.getDataGrad(), backward.getGammaGrad(), backward.getBetaGrad()});
  return success();
}

LogicalResult layerNormRule(GradBuilder &gb, LayerNormOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success(); // only the (hidden) mean and std have gradients
  return normalizationGrads<BackwardLayerNormOp>(gb, op, {g, op.getData(), op.getGamma(), op.getMean(), op.getStd()},
                                                 grads);
}

LogicalResult instanceNormRule(GradBuilder &gb, InstanceNormOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success(); // only the (hidden) mean and var have gradients
  return normalizationGrads<BackwardInstanceNormOp>(
      gb, op, {g, op.getMean(), op.getVar(), op.getData(), op.getGamma()}, grads);
}

/// MXNet's LpNormGradCompute: g * sign(data) for ord 1, g * data / norm for
/// ord 2 (NaN where the norm is 0, as there), g and the norm broadcast back
/// over the reduced axes.
LogicalResult normRule(GradBuilder &gb, NormOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type || !type.hasStaticShape())
    return noShape(op);
  SmallVector<int64_t> kept(type.getShape());
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!op.getAxis() || op.getAxis()->empty() ||
        llvm::any_of(*op.getAxis(), [&](int64_t a) { return (a < 0 ? a + type.getRank() : a) == i; }))
      kept[i] = 1;
  Type element = type.getElementType();
  auto keptShape = [&](Value v) {
    Value reshaped = gb.make<ReshapeOp>(RankedTensorType::get(kept, getElementTypeOrSelf(v.getType())), v,
                                        {gb.attr("shape", gb.b.getDenseI64ArrayAttr(kept))});
    if (getElementTypeOrSelf(v.getType()) == element)
      return reshaped;
    return gb.make<CastOp>(RankedTensorType::get(kept, element), reshaped,
                           {gb.attr("dtype", TypeAttr::get(element))});
  };
  Value data = op.getData(), g = keptShape(resultGrad(resultGrads));
  Value factor = op.getOrd() == 1 ? gb.same<SignOp>(data, data)
                                  : gb.make<BroadcastDivOp>(type, {data, keptShape(op.getOutput())});
  grads.push_back(gb.make<BroadcastMulOp>(type, {factor, g}));
  return success();
}

/// The window's gradient in zeros of data's shape; crop_like gets none.
LogicalResult cropRule(GradBuilder &gb, CropOp op, ValueRange resultGrads, Grads &grads) {
  auto data = dyn_cast<RankedTensorType>(op.getData().getType());
  auto out = dyn_cast<RankedTensorType>(op.getOutput().getType());
  if (!data || !out || !data.hasStaticShape() || !out.hasStaticShape())
    return noShape(op);
  auto [y, x] = op.windowOrigin(data.getShape(), out.getShape());
  ArrayRef<int64_t> size = out.getShape();
  SmallVector<int64_t> begin{0, 0, y, x}, end{size[0], size[1], y + size[2], x + size[3]};
  grads.push_back(gb.same<BackwardSliceOp>(op.getData(), {resultGrad(resultGrads), op.getData()},
                                           {gb.attr("begin", gb.b.getDenseI64ArrayAttr(begin)),
                                            gb.attr("end", gb.b.getDenseI64ArrayAttr(end))}));
  if (op.getCropLike())
    grads.push_back(Value());
  return success();
}

/// g masked with 0 (not `value`) where the forward masked; the lengths get
/// none.
LogicalResult sequenceMaskRule(GradBuilder &gb, SequenceMaskOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!op.getUseSequenceLength()) {
    grads.push_back(g);
    return success();
  }
  SmallVector<NamedAttribute> attrs(op->getAttrDictionary().getValue());
  llvm::erase_if(attrs, [](NamedAttribute a) { return a.getName() == "value"; });
  grads.append({gb.same<SequenceMaskOp>(g, {g, op.getSequenceLength()}, attrs), Value()});
  return success();
}

/// Reversing is its own inverse: g reversed the same way.
LogicalResult sequenceReverseRule(GradBuilder &gb, SequenceReverseOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  SmallVector<Value> operands{g};
  if (op.getSequenceLength())
    operands.push_back(op.getSequenceLength());
  grads.append({gb.same<SequenceReverseOp>(op.getData(), operands, op->getAttrDictionary().getValue()), Value()});
  grads.resize(op->getNumOperands());
  return success();
}

LogicalResult sequenceLastRule(GradBuilder &gb, SequenceLastOp op, ValueRange resultGrads, Grads &grads) {
  SmallVector<Value> operands{resultGrad(resultGrads)};
  if (op.getSequenceLength())
    operands.push_back(op.getSequenceLength());
  operands.push_back(op.getData());
  grads.append({gb.same<BackwardSequenceLastOp>(op.getData(), operands, op->getAttrDictionary().getValue()),
                Value()});
  grads.resize(op->getNumOperands());
  return success();
}

/// g in zeros of the data's shape, from the origin; shape_like gets none.
LogicalResult sliceLikeRule(GradBuilder &gb, SliceLikeOp op, ValueRange resultGrads, Grads &grads) {
  auto out = dyn_cast<RankedTensorType>(op.getOutput().getType());
  if (!out || !out.hasStaticShape())
    return noShape(op);
  SmallVector<int64_t> begin(out.getRank(), 0);
  grads.append({gb.same<BackwardSliceOp>(op.getData(), {resultGrad(resultGrads), op.getData()},
                                         {gb.attr("begin", gb.b.getDenseI64ArrayAttr(begin)),
                                          gb.attr("end", gb.b.getDenseI64ArrayAttr(out.getShape()))}),
                Value()});
  return success();
}

LogicalResult l2NormalizationRule(GradBuilder &gb, L2NormalizationOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success(); // only the (hidden) norm has a gradient
  grads.push_back(gb.same<BackwardL2NormalizationOp>(op.getData(), {g, op.getOutput(), op.getNorm()},
                                                     op->getAttrDictionary().getValue()));
  return success();
}

/// The data gets the bins' gradients at their samples; the rois zeros.
LogicalResult roiAlignRule(GradBuilder &gb, ROIAlignOp op, ValueRange resultGrads, Grads &grads) {
  auto backward = gb.b.create<BackwardROIAlignOp>(
      gb.loc, TypeRange{op.getData().getType(), op.getRois().getType()},
      ValueRange{resultGrad(resultGrads), op.getRois(), op.getData()}, op->getAttrDictionary().getValue());
  grads.append({backward.getDataGrad(), backward.getRoisGrad()});
  return success();
}

/// Each bin's gradient goes to its maximum (maxidx); the rois get zeros.
LogicalResult poolingRule(GradBuilder &gb, PoolingOp op, ValueRange resultGrads, Grads &grads) {
  if (op.isChannelsLast())
    return op.emitError("Pooling with layout NHWC has no gradient in symc: train the NCHW model");
  return dataGradRule<PoolingOp, BackwardPoolingOp>(gb, op, resultGrads, grads);
}

LogicalResult roiPoolingRule(GradBuilder &gb, ROIPoolingOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success(); // only the (hidden) maxidx has a gradient
  auto backward = gb.b.create<BackwardROIPoolingOp>(
      gb.loc, TypeRange{op.getData().getType(), op.getRois().getType()},
      ValueRange{g, op.getRois(), op.getMaxidx(), op.getData()}, op->getAttrDictionary().getValue());
  grads.append({backward.getDataGrad(), backward.getRoisGrad()});
  return success();
}

/// MXNet's RNNGrad: one _backward_RNN reads data, parameters, state, each
/// output and its gradient (zeros where none flows) and state_cell.
LogicalResult rnnRule(GradBuilder &gb, RNNOp op, ValueRange resultGrads, Grads &grads) {
  SmallVector<Value> inputs{op.getData(), op.getParameters(), op.getState()};
  auto withGradient = [&](unsigned k) {
    inputs.push_back(op.getOutputs()[k]);
    if (resultGrads[k]) {
      inputs.push_back(resultGrads[k]);
      return success();
    }
    FailureOr<Value> zeros = gb.filledLike<ZerosOp>(op.getOutputs()[k]);
    if (succeeded(zeros))
      inputs.push_back(*zeros);
    return failure(failed(zeros));
  };
  if (failed(withGradient(0)) || (op.getStateOutputs() && failed(withGradient(1))))
    return noShape(op);
  SmallVector<Type> types{op.getData().getType(), op.getParameters().getType(), op.getState().getType()};
  if (op.isLstm()) {
    inputs.push_back(op.getStateCell());
    types.push_back(op.getStateCell().getType());
    if (op.getStateOutputs() && failed(withGradient(2)))
      return noShape(op);
  }
  if (Value lengths = op.getSequenceLength())
    inputs.push_back(lengths);
  auto backward = gb.b.create<BackwardRNNOp>(gb.loc, types, inputs, op->getAttrDictionary().getValue());
  grads.append(backward.getResults().begin(), backward.getResults().end());
  grads.resize(op->getNumOperands()); // the lengths get none
  return success();
}

/// The selected values' gradients go back to their positions; topk's
/// indices and mask have none.
LogicalResult topkRule(GradBuilder &gb, TopkOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g || op.getNumResults() < 2) {
    grads.push_back(Value());
    return success();
  }
  grads.push_back(gb.same<BackwardTopkOp>(op.getData(), {g, op.getOutputs()[1], op.getData()},
                                          {gb.attr("axis", op.getAxisAttr())}));
  return success();
}

LogicalResult sortRule(GradBuilder &gb, SortOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardTopkOp>(op.getData(), {resultGrad(resultGrads), op.getIndices(), op.getData()},
                                          {gb.attr("axis", op.getAxisAttr())}));
  return success();
}

/// Data-shaped gradients of ops that read data at computed positions (pick,
/// take, gather_nd): `BackwardOpTy(g, positions, data)` with the forward attributes;
/// the positions get none.
template <typename OpTy, typename BackwardOpTy>
LogicalResult positionsGradRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  Value data = op->getOperand(0), positions = op->getOperand(1);
  grads.append({gb.same<BackwardOpTy>(data, {resultGrad(resultGrads), positions, data},
                                      op->getAttrDictionary().getValue()),
                Value()});
  return success();
}

LogicalResult broadcastLikeRule(GradBuilder &gb, BroadcastLikeOp op, ValueRange resultGrads, Grads &grads) {
  FailureOr<Value> grad = gb.sumToShapeOf(resultGrad(resultGrads), op.getLhs());
  if (failed(grad))
    return noShape(op);
  grads.append({*grad, Value()});
  return success();
}

/// Each output row's gradient goes back to the input row it came from.
LogicalResult boxNmsRule(GradBuilder &gb, BoxNmsOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (!g)
    return success();
  grads.push_back(gb.same<BackwardBoxNmsOp>(op.getData(), {g, op.getRecord()}));
  return success();
}

/// g viewed as `view`, summed over `axes`, in the data's shape: the
/// gradient of ops that copy elements (tile, repeat).
LogicalResult sumViewed(GradBuilder &gb, Operation *op, Value g, ArrayRef<int64_t> view, ArrayRef<int64_t> axes,
                        Grads &grads) {
  Value viewed = gb.make<ReshapeOp>(gb.unknown(g), g, {gb.attr("shape", gb.b.getDenseI64ArrayAttr(view))});
  Value summed = gb.make<SumOp>(gb.unknown(g), viewed, {gb.attr("axis", gb.b.getDenseI64ArrayAttr(axes))});
  FailureOr<Value> grad = gb.reshapeLike(summed, op->getOperand(0));
  if (failed(grad))
    return noShape(op);
  grads.push_back(*grad);
  return success();
}

/// Each output dim is (reps, size), the shorter of the data's dims and reps
/// padded with 1s at the left; the reps are summed.
LogicalResult tileRule(GradBuilder &gb, TileOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type || !type.hasStaticShape())
    return noShape(op);
  ArrayRef<int64_t> reps = op.getReps();
  int64_t rank = std::max<int64_t>(type.getRank(), reps.size());
  SmallVector<int64_t> view, copyAxes;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t inIndex = i - (rank - type.getRank()), repIndex = i - (rank - int64_t(reps.size()));
    copyAxes.push_back(view.size());
    view.append({repIndex >= 0 ? reps[repIndex] : 1, inIndex >= 0 ? type.getDimSize(inIndex) : 1});
  }
  return sumViewed(gb, op, resultGrad(resultGrads), view, copyAxes, grads);
}

/// The repeated axis is (size, repeats) of the data (flattened without
/// axis); the repeats are summed.
LogicalResult repeatRule(GradBuilder &gb, RepeatOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type || !type.hasStaticShape())
    return noShape(op);
  std::optional<int64_t> axisAttr = op.getAxis();
  SmallVector<int64_t> view = axisAttr ? SmallVector<int64_t>(type.getShape()) : SmallVector<int64_t>{type.getNumElements()};
  int64_t axis = !axisAttr ? 0 : *axisAttr < 0 ? *axisAttr + type.getRank() : *axisAttr;
  view.insert(view.begin() + axis + 1, op.getRepeats());
  return sumViewed(gb, op, resultGrad(resultGrads), view, {axis + 1}, grads);
}

LogicalResult reverseRule(GradBuilder &gb, ReverseOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  grads.push_back(gb.same<ReverseOp>(g, g, op->getAttrDictionary().getValue()));
  return success();
}

/// Each input's slice of g along the stacked axis.
LogicalResult stackRule(GradBuilder &gb, StackOp op, ValueRange resultGrads, Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getOutput().getType());
  if (!type)
    return noShape(op);
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    Value part = gb.sliceAxis(gb.unknown(input), resultGrad(resultGrads), axis, i, i + 1);
    FailureOr<Value> grad = gb.reshapeLike(part, input);
    if (failed(grad))
      return noShape(op);
    grads.push_back(*grad);
  }
  return success();
}

/// The gradient summed over the broadcast dims (MXNet's _broadcast_backward).
template <typename OpTy>
LogicalResult broadcastRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  FailureOr<Value> grad = gb.sumToShapeOf(resultGrad(resultGrads), op.getData());
  if (failed(grad))
    return noShape(op);
  grads.push_back(*grad);
  return success();
}

LogicalResult selfAttQKRule(GradBuilder &gb, InterleavedMatmulSelfAttQKOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardInterleavedMatmulSelfAttQKOp>(
      op.getQueriesKeysValues(), {resultGrad(resultGrads), op.getQueriesKeysValues()},
      {gb.attr("heads", op.getHeadsAttr())}));
  return success();
}

LogicalResult selfAttValAttRule(GradBuilder &gb, InterleavedMatmulSelfAttValAttOp op, ValueRange resultGrads,
                                Grads &grads) {
  auto backward = gb.b.create<BackwardInterleavedMatmulSelfAttValAttOp>(
      gb.loc, TypeRange{op.getQueriesKeysValues().getType(), op.getAttention().getType()},
      ValueRange{resultGrad(resultGrads), op.getQueriesKeysValues(), op.getAttention()},
      ArrayRef<NamedAttribute>{gb.attr("heads", op.getHeadsAttr())});
  grads.append({backward.getQueriesKeysValuesGrad(), backward.getAttentionGrad()});
  return success();
}

/// g times the mask the forward drew (1/(1-p) or 0, broadcast over `axes`);
/// Dropout that drew none is the identity.
LogicalResult dropoutRule(GradBuilder &gb, DropoutOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  grads.push_back(drawsRandomNumbers(op) ? gb.same<BroadcastMulOp>(g, {g, op.getMask()}) : g);
  return success();
}

/// The data gradient by one backward op; prelu's gamma gets the sum of
/// g * min(x, 0) over the elements that share a slope.
LogicalResult leakyReLURule(GradBuilder &gb, LeakyReLUOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads), x = op.getData();
  Value slopes = op.getGamma() ? op.getGamma() : drawsRandomNumbers(op) ? op.getMask() : Value();
  SmallVector<Value> operands{g, x, op.getOutput()};
  if (slopes)
    operands.push_back(slopes);
  grads.push_back(gb.same<BackwardLeakyReLUOp>(x, operands, op->getAttrDictionary().getValue()));
  if (!op.getGamma())
    return success();
  auto type = dyn_cast<RankedTensorType>(x.getType());
  auto gammaType = dyn_cast<RankedTensorType>(op.getGamma().getType());
  if (!type || !gammaType || !gammaType.hasStaticShape())
    return noShape(op);
  Value negativePart = gb.neg(gb.same<ReluOp>(x, gb.neg(x)));
  Value perElement = gb.mul(g, negativePart);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (gammaType.getRank() == type.getRank() ? gammaType.getDimSize(i) == 1 && type.getDimSize(i) != 1
                                              : gammaType.getNumElements() == 1 || i != 1)
      axes.push_back(i);
  Value summed = axes.empty() ? perElement
                              : gb.make<SumOp>(gb.unknown(g), perElement,
                                               {gb.attr("axis", gb.b.getDenseI64ArrayAttr(axes)),
                                                gb.attr("keepdims", gb.b.getBoolAttr(true))});
  FailureOr<Value> gammaGrad = gb.reshapeLike(summed, op.getGamma());
  if (failed(gammaGrad))
    return noShape(op);
  grads.push_back(*gammaGrad);
  return success();
}

LogicalResult lrnRule(GradBuilder &gb, LRNOp op, ValueRange resultGrads, Grads &grads) {
  grads.push_back(gb.same<BackwardLRNOp>(op.getData(), {resultGrad(resultGrads), op.getData(), op.getTmpNorm()},
                                         op->getAttrDictionary().getValue()));
  return success();
}

/// Bilinear upsampling is the transposed convolution y = conv^T(x, W): x's
/// gradient is the convolution of g by W, W's the weight gradient of that
/// convolution with g as its data and x as its output gradient.
LogicalResult bilinearUpSamplingRule(GradBuilder &gb, UpSamplingOp op, Value g, Grads &grads) {
  Value x = op.getInputs()[0], weight = op.getInputs()[1];
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type)
    return noShape(op);
  int64_t k = op.getBilinearKernel(), s = op.getScale(), p = op.getBilinearPad(), channels = type.getDimSize(1);
  SmallVector<NamedAttribute> attrs{gb.attr("kernel", gb.b.getDenseI64ArrayAttr({k, k})),
                                    gb.attr("stride", gb.b.getDenseI64ArrayAttr({s, s})),
                                    gb.attr("pad", gb.b.getDenseI64ArrayAttr({p, p})),
                                    gb.attr("num_filter", gb.b.getI64IntegerAttr(channels)),
                                    gb.attr("num_group", gb.b.getI64IntegerAttr(channels)),
                                    gb.attr("no_bias", gb.b.getBoolAttr(true))};
  Value dx = gb.make<ConvolutionOp>(type, {g, weight}, attrs);
  auto backward = gb.b.create<BackwardConvolutionOp>(gb.loc, TypeRange{g.getType(), weight.getType()},
                                                     ValueRange{x, g, weight}, attrs);
  grads.append({dx, backward.getWeightGrad()});
  return success();
}

/// Nearest upsampling copies each input element into a scale x scale block:
/// its gradient sums the block, viewing g's (H*s, W*s) as (H, s, W, s).
/// Inputs read their channels of g (concat) or all of it (sum).
LogicalResult upSamplingRule(GradBuilder &gb, UpSamplingOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  if (op.getSampleType() == "bilinear")
    return bilinearUpSamplingRule(gb, op, g, grads);
  auto outType = dyn_cast<RankedTensorType>(g.getType());
  if (!outType || !outType.hasStaticShape())
    return noShape(op);
  int64_t channel = 0;
  for (Value input : op.getInputs()) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || !type.hasStaticShape())
      return noShape(op);
    Value part = g;
    if (op.getMultiInputMode() == "concat" && op.getInputs().size() > 1) {
      part = gb.sliceAxis(gb.unknown(g), g, 1, channel, channel + type.getDimSize(1));
      channel += type.getDimSize(1);
    }
    SmallVector<int64_t> blocks(type.getShape().take_front(2)), axes;
    for (int64_t i = 2; i < type.getRank(); ++i) {
      blocks.append({type.getDimSize(i), outType.getDimSize(i) / type.getDimSize(i)});
      axes.push_back(blocks.size() - 1);
    }
    Value viewed = gb.make<ReshapeOp>(gb.unknown(g), part, {gb.attr("shape", gb.b.getDenseI64ArrayAttr(blocks))});
    grads.push_back(gb.make<SumOp>(type, viewed, {gb.attr("axis", gb.b.getDenseI64ArrayAttr(axes))}));
  }
  return success();
}

LogicalResult castRule(GradBuilder &gb, CastOp op, ValueRange resultGrads, Grads &grads) {
  Type from = getElementTypeOrSelf(op.getData().getType());
  grads.push_back(gb.make<CastOp>(op.getData().getType(), resultGrad(resultGrads),
                                  {gb.attr("dtype", TypeAttr::get(from))}));
  return success();
}

/// Loss heads read the head gradient only when told to (SoftmaxOutput's
/// out_grad); ops with hidden outputs read their first output's only (topk
/// its values').
template <typename OpTy> bool readsHeadGradient(OpTy op, unsigned result) {
  if constexpr (std::is_same_v<OpTy, SoftmaxOutputOp>)
    return op.getOutGrad();
  if constexpr (llvm::is_one_of<OpTy, BatchNormOp, LayerNormOp, InstanceNormOp, DropoutOp, LeakyReLUOp, LRNOp,
                                ROIPoolingOp>::value)
    return result == 0; // the others are hidden (statistics, masks, norms)
  if constexpr (std::is_same_v<OpTy, TopkOp>) // the values'; indices and masks have a zero gradient
    return result == 0 && op.getNumResults() == 2;
  return true;
}

template <typename OpTy, auto Rule, bool ReadsResultGradient = true>
struct GradientModel
    : GradientOpInterface::ExternalModel<GradientModel<OpTy, Rule, ReadsResultGradient>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder gb(b, op->getLoc());
    return Rule(gb, cast<OpTy>(op), resultGrads, operandGrads);
  }
  bool readsResultGradient(Operation *op, unsigned result) const {
    return ReadsResultGradient && readsHeadGradient(cast<OpTy>(op), result);
  }
  StringRef refusedGradientMessage(Operation *, unsigned operand) const {
    if (std::is_same_v<OpTy, EmbeddingOp> && operand == 0)
      return "Embedding layer doesn't support calculate data gradient";
    return {};
  }
};

template <typename OpTy, auto Rule, bool Reads = true> void attach(MLIRContext &ctx) {
  OpTy::template attachInterface<GradientModel<OpTy, Rule, Reads>>(ctx);
}

/// A rule taking the op as a plain Operation *.
template <typename OpTy, LogicalResult (*Rule)(GradBuilder &, Operation *, ValueRange, Grads &)>
LogicalResult generic(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  return Rule(gb, op, resultGrads, grads);
}

template <typename OpTy, Value (*Fn)(GradBuilder &, Value, Value, Value)>
LogicalResult unaryRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  return unary(gb, op, resultGrads, grads, Fn);
}

Value expGrad(GradBuilder &gb, Value g, Value, Value out) { return gb.mul(g, out); }
Value logGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.div(g, x); }
Value sqrtGrad(GradBuilder &gb, Value g, Value, Value out) {
  return gb.div(g, gb.scalar<MulScalarOp>(out, 2.0));
}
Value squareGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.scalar<MulScalarOp>(x, 2.0)); }
Value negativeGrad(GradBuilder &gb, Value g, Value, Value) { return gb.neg(g); }
Value sinGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.same<CosOp>(x, x)); }
Value cosGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.neg(gb.mul(g, gb.same<SinOp>(x, x))); }
Value sameGrad(GradBuilder &, Value g, Value, Value) { return g; }
Value rdivGrad(GradBuilder &gb, Value g, Value x, Value out) { return gb.neg(gb.div(gb.mul(g, out), x)); }

Value absGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.same<SignOp>(x, x)); }
/// -x ** -1.5 / 2 = -out / (2 x)
Value rsqrtGrad(GradBuilder &gb, Value g, Value x, Value out) {
  return gb.mul(g, gb.scalar<MulScalarOp>(gb.div(out, x), -0.5));
}
Value reciprocalGrad(GradBuilder &gb, Value g, Value x, Value) {
  return gb.neg(gb.div(g, gb.same<SquareOp>(x, x)));
}
/// 2 / sqrt(pi) e ** -x²
Value erfGrad(GradBuilder &gb, Value g, Value x, Value) {
  Value density = gb.same<ExpOp>(x, gb.neg(gb.same<SquareOp>(x, x)));
  return gb.mul(g, gb.scalar<MulScalarOp>(density, M_2_SQRTPI));
}
Value log1pGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.div(g, gb.scalar<PlusScalarOp>(x, 1.0)); }
Value expm1Grad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.same<ExpOp>(x, x)); }
template <int Base> Value logBaseGrad(GradBuilder &gb, Value g, Value x, Value) {
  return gb.div(g, gb.scalar<MulScalarOp>(x, std::log(static_cast<double>(Base))));
}
Value tanGrad(GradBuilder &gb, Value g, Value, Value out) {
  return gb.mul(g, gb.scalar<PlusScalarOp>(gb.same<SquareOp>(out, out), 1.0));
}
Value arctanGrad(GradBuilder &gb, Value g, Value x, Value) {
  return gb.div(g, gb.scalar<PlusScalarOp>(gb.same<SquareOp>(x, x), 1.0));
}
Value sinhGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.same<CoshOp>(x, x)); }
Value coshGrad(GradBuilder &gb, Value g, Value x, Value) { return gb.mul(g, gb.same<SinhOp>(x, x)); }

/// g where x >= scalar (maximum) or x <= scalar (minimum), as MXNet's ge/le.
template <typename OpTy, typename CompareOpTy>
LogicalResult extremumScalarRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  Value x = op.getData();
  grads.push_back(gb.mul(resultGrad(resultGrads), gb.scalar<CompareOpTy>(x, op.getScalar())));
  return success();
}

/// g inside [a_min, a_max], 0 outside.
LogicalResult clipRule(GradBuilder &gb, ClipOp op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads), x = op.getData();
  Value above = isPositive(gb, gb.scalar<MinusScalarOp>(x, op.getAMax()));
  Value below = isPositive(gb, gb.scalar<RMinusScalarOp>(x, op.getAMin()));
  Value inside = gb.scalar<RMinusScalarOp>(gb.add(above, below), 1.0);
  grads.push_back(gb.mul(g, inside));
  return success();
}

/// grad_scale / num_output * (out - label) (MAE: its sign), whatever the
/// head gradient; the label gets none.
template <typename OpTy>
LogicalResult regressionRule(GradBuilder &gb, OpTy op, ValueRange, Grads &grads) {
  auto labelType = dyn_cast<RankedTensorType>(op.getLabel().getType());
  FailureOr<Value> label = gb.reshapeLike(op.getLabel(), op.getData());
  if (!labelType || !labelType.hasStaticShape() || labelType.getRank() == 0 || failed(label))
    return noShape(op);
  double numOutput = static_cast<double>(labelType.getNumElements() / labelType.getDimSize(0));
  Value diff = gb.same<ElemwiseSubOp>(op.getOutput(), {op.getOutput(), *label});
  if constexpr (std::is_same_v<OpTy, MAERegressionOutputOp>)
    diff = gb.same<SignOp>(diff, diff);
  grads.append({gb.scalar<MulScalarOp>(diff, op.getGradScale() / numOutput), Value()});
  return success();
}

/// MakeLoss: grad_scale, whatever the head gradient, divided by the batch
/// size with normalization 'batch' and with 'valid' by the number of
/// outputs above valid_thresh (at least 1).
LogicalResult makeLossRule(GradBuilder &gb, MakeLossOp op, ValueRange, Grads &grads) {
  FailureOr<Value> ones = gb.filledLike<OnesOp>(op.getData());
  if (failed(ones))
    return noShape(op);
  double scale = op.getGradScale();
  if (op.getNormalization() == "batch")
    scale /= cast<RankedTensorType>(op.getData().getType()).getDimSize(0);
  Value grad = gb.scalar<MulScalarOp>(*ones, scale);
  if (op.getNormalization() == "valid") {
    Value above = isPositive(gb, gb.scalar<MinusScalarOp>(op.getOutput(), op.getValidThresh()));
    Value count = gb.make<SumOp>(gb.unknown(above), above);
    Value atLeastOne = gb.make<ClipOp>(gb.unknown(count), count,
                                       {gb.attr("a_min", gb.b.getF64FloatAttr(1.0)),
                                        gb.attr("a_max", gb.b.getF64FloatAttr(std::numeric_limits<double>::max()))});
    grad = gb.same<BroadcastDivOp>(grad, {grad, atLeastOne});
  }
  grads.push_back(grad);
  return success();
}

/// softmax's rule over the channel axis, or over all but the batch axis
/// (instance): out * (g - sum(g * out)).
LogicalResult softmaxActivationRule(GradBuilder &gb, SoftmaxActivationOp op, ValueRange resultGrads,
                                    Grads &grads) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!type)
    return noShape(op);
  SmallVector<int64_t> axes{1};
  if (op.getMode() == "instance")
    for (int64_t i = 2; i < type.getRank(); ++i)
      axes.push_back(i);
  Value g = resultGrad(resultGrads), out = op.getOutput();
  Value dot = gb.make<SumOp>(gb.unknown(g), gb.mul(g, out), {gb.attr("axis", gb.b.getDenseI64ArrayAttr(axes)),
                                                             gb.attr("keepdims", gb.b.getBoolAttr(true))});
  grads.push_back(gb.mul(out, gb.same<BroadcastSubOp>(g, {g, dot})));
  return success();
}

template <typename OpTy, Value (*Fn)(GradBuilder &, Value, Value, Value)>
void attachUnary(MLIRContext &ctx) {
  attach<OpTy, unaryRule<OpTy, Fn>>(ctx);
}

/// The ops whose FGradient is MakeZeroGradNodes: piecewise-constant functions.
template <typename... OpTys> struct OpList {};
using ZeroGradientOps =
    OpList<FloorOp, CeilOp, RoundOp, RintOp, FixOp, TruncOp, ZerosLikeOp, OnesLikeOp, GreaterScalarOp,
           GreaterEqualScalarOp, LesserScalarOp, LesserEqualScalarOp, EqualScalarOp, NotEqualScalarOp, GreaterOp,
           GreaterEqualOp, LesserOp, LesserEqualOp, EqualOp, NotEqualOp, BroadcastGreaterOp, BroadcastGreaterEqualOp,
           BroadcastLesserOp, BroadcastLesserEqualOp, BroadcastEqualOp, BroadcastNotEqualOp, ArangeLikeOp,
           BoxDecodeOp, BoxEncodeOp, ShapeArrayOp, ArgsortOp, ArgmaxOp, ArgminOp, OneHotOp>;

/// Legacy operators whose backward node writes zeros: MXNet builds the node
/// (debug_str shows it) and reads the head gradient for it.
using LegacyZeroGradientOps = OpList<MultiBoxPriorOp, MultiBoxDetectionOp, MultiBoxTargetOp>;

/// MakeZeroGradNodes' ops read no head gradient.
template <bool Reads = false, typename... OpTys> void attachZeroGradient(MLIRContext &ctx, OpList<OpTys...>) {
  (attach<OpTys, generic<OpTys, zeroGradRule>, Reads>(ctx), ...);
}

template <typename... OpTys> bool isOneOf(Operation *op, OpList<OpTys...>) { return isa<OpTys...>(op); }

template <typename OpTy> LogicalResult scaledRule(GradBuilder &gb, OpTy op, ValueRange resultGrads, Grads &grads) {
  Value g = resultGrad(resultGrads);
  double s = op.getScalar();
  if constexpr (std::is_same_v<OpTy, MulScalarOp>)
    grads.push_back(gb.scalar<MulScalarOp>(g, s));
  else if constexpr (std::is_same_v<OpTy, DivScalarOp>)
    grads.push_back(gb.scalar<DivScalarOp>(g, s));
  else // x ** s: s * x ** (s - 1)
    grads.push_back(gb.scalar<MulScalarOp>(gb.mul(g, gb.scalar<PowerScalarOp>(op.getData(), s - 1)), s));
  return success();
}

} // namespace

void mlir::sym::registerGradientRules(MLIRContext &ctx) {
  attach<ElemwiseAddOp, arithmeticRule<ElemwiseAddOp, ElemwiseMulOp, ElemwiseDivOp, '+'>>(ctx);
  attach<ElemwiseSubOp, arithmeticRule<ElemwiseSubOp, ElemwiseMulOp, ElemwiseDivOp, '-'>>(ctx);
  attach<ElemwiseMulOp, arithmeticRule<ElemwiseMulOp, ElemwiseMulOp, ElemwiseDivOp, '*'>>(ctx);
  attach<ElemwiseDivOp, arithmeticRule<ElemwiseDivOp, ElemwiseMulOp, ElemwiseDivOp, '/'>>(ctx);
  attach<BroadcastAddOp, arithmeticRule<BroadcastAddOp, BroadcastMulOp, BroadcastDivOp, '+'>>(ctx);
  attach<BroadcastSubOp, arithmeticRule<BroadcastSubOp, BroadcastMulOp, BroadcastDivOp, '-'>>(ctx);
  attach<BroadcastMulOp, arithmeticRule<BroadcastMulOp, BroadcastMulOp, BroadcastDivOp, '*'>>(ctx);
  attach<BroadcastDivOp, arithmeticRule<BroadcastDivOp, BroadcastMulOp, BroadcastDivOp, '/'>>(ctx);
  attachUnary<PlusScalarOp, sameGrad>(ctx);
  attachUnary<MinusScalarOp, sameGrad>(ctx);
  attachUnary<RMinusScalarOp, negativeGrad>(ctx);
  attachUnary<RDivScalarOp, rdivGrad>(ctx);
  attach<MulScalarOp, scaledRule<MulScalarOp>>(ctx);
  attach<DivScalarOp, scaledRule<DivScalarOp>>(ctx);
  attach<PowerScalarOp, scaledRule<PowerScalarOp>>(ctx);
  attachUnary<ExpOp, expGrad>(ctx);
  attachUnary<LogOp, logGrad>(ctx);
  attachUnary<SqrtOp, sqrtGrad>(ctx);
  attachUnary<SquareOp, squareGrad>(ctx);
  attachUnary<NegativeOp, negativeGrad>(ctx);
  attachUnary<SinOp, sinGrad>(ctx);
  attachUnary<CosOp, cosGrad>(ctx);
  attachUnary<TanhOp, tanhGrad>(ctx);
  attachUnary<SigmoidOp, sigmoidGrad>(ctx);
  attachUnary<ReluOp, reluGrad>(ctx);
  attachUnary<AbsOp, absGrad>(ctx);
  attach<SignOp, generic<SignOp, blockGradRule>>(ctx); // piecewise constant: no gradient
  attachUnary<RsqrtOp, rsqrtGrad>(ctx);
  attachUnary<ReciprocalOp, reciprocalGrad>(ctx);
  attachUnary<ErfOp, erfGrad>(ctx);
  attachUnary<Log1pOp, log1pGrad>(ctx);
  attachUnary<Expm1Op, expm1Grad>(ctx);
  attachUnary<Log2Op, logBaseGrad<2>>(ctx);
  attachUnary<Log10Op, logBaseGrad<10>>(ctx);
  attachUnary<TanOp, tanGrad>(ctx);
  attachUnary<ArctanOp, arctanGrad>(ctx);
  attachUnary<SinhOp, sinhGrad>(ctx);
  attachUnary<CoshOp, coshGrad>(ctx);
  attach<MaximumScalarOp, extremumScalarRule<MaximumScalarOp, GreaterEqualScalarOp>>(ctx);
  attach<MinimumScalarOp, extremumScalarRule<MinimumScalarOp, LesserEqualScalarOp>>(ctx);
  attach<WhereOp, whereRule>(ctx);
  attachZeroGradient(ctx, ZeroGradientOps());
  attach<ClipOp, clipRule>(ctx);
  attach<MaximumOp, extremumRule<MaximumOp, ElemwiseSubOp, ElemwiseMulOp, true>>(ctx);
  attach<MinimumOp, extremumRule<MinimumOp, ElemwiseSubOp, ElemwiseMulOp, false>>(ctx);
  attach<BroadcastMaximumOp, extremumRule<BroadcastMaximumOp, BroadcastSubOp, BroadcastMulOp, true>>(ctx);
  attach<BroadcastMinimumOp, extremumRule<BroadcastMinimumOp, BroadcastSubOp, BroadcastMulOp, false>>(ctx);
  attach<LinearRegressionOutputOp, regressionRule<LinearRegressionOutputOp>, /*reads=*/false>(ctx);
  attach<LogisticRegressionOutputOp, regressionRule<LogisticRegressionOutputOp>, /*reads=*/false>(ctx);
  attach<MAERegressionOutputOp, regressionRule<MAERegressionOutputOp>, /*reads=*/false>(ctx);
  attach<MakeLossOp, makeLossRule, /*reads=*/false>(ctx);
  attach<SoftmaxActivationOp, softmaxActivationRule>(ctx);
  attach<SoftmaxOutputOp, softmaxOutputRule>(ctx);
  attach<ConvolutionOp, convolutionRule>(ctx);
  attach<PoolingOp, poolingRule>(ctx);
  attach<DeconvolutionOp, deconvolutionRule>(ctx);
  attach<PadOp, padRule>(ctx);
  attach<BilinearResize2DOp, bilinearResizeRule>(ctx);
  attach<AdaptiveAvgPooling2DOp, dataGradRule<AdaptiveAvgPooling2DOp, BackwardAdaptiveAvgPooling2DOp>>(ctx);
  attach<ActivationOp, activationRule>(ctx);
  attach<AddNOp, addNRule>(ctx);
  attach<CopyOp, generic<CopyOp, identityRule>>(ctx);
  // MakeZeroGradNodes in MXNet: a BlockGrad head needs no head gradient.
  attach<BlockGradOp, generic<BlockGradOp, blockGradRule>, /*reads=*/false>(ctx);
  attach<ZerosOp, generic<ZerosOp, constantRule>>(ctx);
  attach<OnesOp, generic<OnesOp, constantRule>>(ctx);
  attach<IdentityLossOp, identityLossRule, /*reads=*/false>(ctx);
  attach<CastOp, castRule>(ctx);
  attach<BatchNormOp, batchNormRule>(ctx);
  attach<LayerNormOp, layerNormRule>(ctx);
  attach<SequenceMaskOp, sequenceMaskRule>(ctx);
  attach<SequenceReverseOp, sequenceReverseRule>(ctx);
  attach<SequenceLastOp, sequenceLastRule>(ctx);
  attach<SliceOp, dataGradRule<SliceOp, BackwardSliceOp>>(ctx);
  attach<SliceLikeOp, sliceLikeRule>(ctx);
  attach<L2NormalizationOp, l2NormalizationRule>(ctx);
  attach<InstanceNormOp, instanceNormRule>(ctx);
  attach<NormOp, normRule>(ctx);
  attach<CropOp, cropRule>(ctx);
  attach<ROIPoolingOp, roiPoolingRule>(ctx);
  attachZeroGradient</*Reads=*/true>(ctx, LegacyZeroGradientOps());
  attach<BoxNmsOp, boxNmsRule>(ctx);
  attach<ROIAlignOp, roiAlignRule>(ctx);
  attach<GatherNdOp, positionsGradRule<GatherNdOp, BackwardGatherNdOp>>(ctx);
  attach<TopkOp, topkRule>(ctx);
  attach<RNNOp, rnnRule>(ctx);
  attach<SortOp, sortRule>(ctx);
  attach<PickOp, positionsGradRule<PickOp, BackwardPickOp>>(ctx);
  attach<TakeOp, positionsGradRule<TakeOp, BackwardTakeOp>>(ctx);
  attach<BroadcastLikeOp, broadcastLikeRule>(ctx);
  attach<ArangeOp, generic<ArangeOp, constantRule>>(ctx);
  attach<StackOp, stackRule>(ctx);
  attach<TileOp, tileRule>(ctx);
  attach<RepeatOp, repeatRule>(ctx);
  attach<ReverseOp, reverseRule>(ctx);
  attach<SqueezeOp, generic<SqueezeOp, reshapeRule>>(ctx);
  attach<BroadcastAxisOp, broadcastRule<BroadcastAxisOp>>(ctx);
  attach<BroadcastToOp, broadcastRule<BroadcastToOp>>(ctx);
  attach<InterleavedMatmulSelfAttQKOp, selfAttQKRule>(ctx);
  attach<InterleavedMatmulSelfAttValAttOp, selfAttValAttRule>(ctx);
  attach<FlattenOp, generic<FlattenOp, reshapeRule>>(ctx);
  attach<ReshapeOp, generic<ReshapeOp, reshapeRule>>(ctx);
  attach<ExpandDimsOp, generic<ExpandDimsOp, reshapeRule>>(ctx);
  attach<TransposeOp, transposeRule>(ctx);
  attach<SwapAxisOp, swapAxisRule>(ctx);
  attach<FullyConnectedOp, fullyConnectedRule>(ctx);
  attach<DotOp, productRule<DotOp>>(ctx);
  attach<BatchDotOp, productRule<BatchDotOp>>(ctx);
  attach<SumOp, reduceRule<SumOp>>(ctx);
  attach<MeanOp, reduceRule<MeanOp>>(ctx);
  attach<SoftmaxOp, softmaxRule<SoftmaxOp>>(ctx);
  attach<LogSoftmaxOp, softmaxRule<LogSoftmaxOp>>(ctx);
  attach<ConcatOp, concatRule>(ctx);
  attach<SliceAxisOp, sliceAxisRule>(ctx);
  attach<SliceChannelOp, sliceChannelRule>(ctx);
  attach<EmbeddingOp, embeddingRule>(ctx);
  attach<DropoutOp, dropoutRule>(ctx);
  attach<LeakyReLUOp, leakyReLURule>(ctx);
  attach<LRNOp, lrnRule>(ctx);
  attach<UpSamplingOp, upSamplingRule>(ctx);
}

bool mlir::sym::hasZeroGradient(Operation *op) { return isOneOf(op, ZeroGradientOps()); }
