//===- LayerUtils.cpp - helpers shared by the layer lowerings ------------===//
#include "codegen/CPU/LayerUtils.h"

using namespace mlir;

namespace symc::cpu {

using utils::IteratorType;

Value addFn(OpBuilder &b, Location loc, ValueRange args) { return add(b, loc, args[0], args[1]); }

Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators, ScalarFn body) {
  return b
      .create<linalg::GenericOp>(loc, init.getType(), inputs, init, maps, iterators,
                                 [&](OpBuilder &nested, Location l, ValueRange args) {
                                   nested.create<linalg::YieldOp>(l, body(nested, l, args));
                                 })
      .getResult(0);
}

Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType) {
  return filledTensor(b, loc, RankedTensorType::get(shape, elementType), 0.0);
}

/// The last two dims swapped.
static Value transposeMatrix(OpBuilder &b, Location loc, Value v) {
  if (tensorType(v).getRank() == 3)
    return transposeTo(b, loc, v, {0, 2, 1});
  return transposeTo(b, loc, v, {1, 0});
}

Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, bool transA, bool transB) {
  if (transA)
    lhs = transposeMatrix(b, loc, lhs);
  if (transB)
    rhs = transposeMatrix(b, loc, rhs);
  RankedTensorType l = tensorType(lhs), r = tensorType(rhs);
  bool batched = l.getRank() == 3;
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(l.getDimSize(0));
  shape.append({l.getDimSize(l.getRank() - 2), r.getDimSize(r.getRank() - 1)});
  Value init = zeros(b, loc, shape, l.getElementType());
  SmallVector<Value, 2> ins{lhs, rhs};
  if (batched)
    return b.create<linalg::BatchMatmulOp>(loc, init.getType(), ins, init).getResult(0);
  return b.create<linalg::MatmulOp>(loc, init.getType(), ins, init).getResult(0);
}

Value addBias(OpBuilder &b, Location loc, Value data, Value bias) {
  return mapAlongAxis(b, loc, data, 1, bias, addFn);
}

Window::Window(ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> d, ArrayRef<int64_t> p) : kernel(k) {
  auto orDefault = [&](ArrayRef<int64_t> v, int64_t dflt) {
    return v.empty() ? SmallVector<int64_t>(k.size(), dflt) : SmallVector<int64_t>(v);
  };
  stride = orDefault(s, 1);
  dilate = orDefault(d, 1);
  pad = orDefault(p, 0);
}

AffineExpr windowExpr(OpBuilder &b, const Window &w, unsigned i, unsigned outDim, unsigned kDim) {
  return b.getAffineDimExpr(outDim) * w.stride[i] + b.getAffineDimExpr(kDim) * w.dilate[i];
}

} // namespace symc::cpu
