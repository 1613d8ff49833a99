//===- LayerUtils.cpp - helpers shared by the layer lowerings ------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"

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

Value tapContraction(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape, ArrayRef<AffineMap> maps,
                     ArrayRef<IteratorType> iterators) {
  return tapContractionInto(b, loc, inputs, zeros(b, loc, shape, tensorType(inputs[0]).getElementType()), maps,
                            iterators);
}

Value tapContractionInto(OpBuilder &b, Location loc, ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                         ArrayRef<IteratorType> iterators) {
  Value out = buildGeneric(b, loc, inputs, init, maps, iterators, [](OpBuilder &nb, Location l, ValueRange args) {
    return nb.create<math::FmaOp>(l, args[0], args[1], args[2]).getResult();
  });
  out.getDefiningOp()->setAttr(kTapContractionAttr, b.getUnitAttr());
  return out;
}

Value generateElements(OpBuilder &b, Location loc, RankedTensorType type,
                       function_ref<Value(OpBuilder &, Location, ValueRange indices)> body) {
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  return buildGeneric(b, loc, {}, emptyLike(b, loc, type), maps, iterators,
                      [&](OpBuilder &nb, Location l, ValueRange) {
                        SmallVector<Value> indices;
                        for (unsigned i = 0; i < rank; ++i)
                          indices.push_back(nb.create<linalg::IndexOp>(l, i));
                        return body(nb, l, indices);
                      });
}

FailureOr<Value> scatterAddRows(OpBuilder &b, Operation *op, Value grad, Value rows, int64_t outRows) {
  Location loc = op->getLoc();
  RankedTensorType type = tensorType(grad);
  int64_t count = type.getDimSize(0), width = type.getDimSize(1);
  Lowered summed = callKernel(b, op, {"symc_scatter_add_rows", type.getElementType(), /*integers=*/true},
                              {grad, rows}, {RankedTensorType::get({outRows, width}, type.getElementType())},
                              {i64(b, loc, count), i64(b, loc, width), i64(b, loc, outRows)});
  if (failed(summed))
    return failure();
  return (*summed)[0];
}

Value IndexMath::c(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
Value IndexMath::add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
Value IndexMath::sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
Value IndexMath::mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
Value IndexMath::div(Value x, Value y) { return b.create<arith::DivUIOp>(loc, x, y); }
Value IndexMath::min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
Value IndexMath::max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
Value IndexMath::toFloat(Value x, Type type) {
  return b.create<arith::SIToFPOp>(loc, type, b.create<arith::IndexCastOp>(loc, b.getI64Type(), x));
}

Value forEachPlane(OpBuilder &b, Location loc, Value init, PlaneFn fillPlane) {
  RankedTensorType type = tensorType(init);
  SmallVector<OpFoldResult> planes{b.getIndexAttr(type.getDimSize(0)), b.getIndexAttr(type.getDimSize(1))};
  auto forall = b.create<scf::ForallOp>(loc, planes, ValueRange{init}, std::nullopt,
                                        [&](OpBuilder &pb, Location l, ValueRange args) {
    Value n = args[0], c = args[1], shared = args[2];
    SmallVector<OpFoldResult> offsets{n, c}, sizes(2, pb.getIndexAttr(1));
    for (int64_t size : type.getShape().drop_front(2)) {
      offsets.push_back(pb.getIndexAttr(0));
      sizes.push_back(pb.getIndexAttr(size));
    }
    SmallVector<OpFoldResult> unit(type.getRank(), pb.getIndexAttr(1));
    Value plane = pb.create<tensor::ExtractSliceOp>(l, shared, offsets, sizes, unit);
    Value filled = fillPlane(pb, l, n, c, plane);
    auto terminator = pb.create<scf::InParallelOp>(l);
    OpBuilder::InsertionGuard guard(pb);
    pb.setInsertionPointToStart(terminator.getBody());
    pb.create<tensor::ParallelInsertSliceOp>(l, filled, shared, offsets, sizes, unit);
  });
  return forall.getResult(0);
}

Value forEachOutputPosition(OpBuilder &b, Location loc, Value init, ArrayRef<int64_t> outSpatial, PositionFn body) {
  return forEachPlane(b, loc, init, [&](OpBuilder &pb, Location l, Value n, Value c, Value plane) {
    IndexMath m{pb, l};
    SmallVector<Value> zeroes(outSpatial.size(), m.c(0)), sizes;
    for (int64_t size : outSpatial)
      sizes.push_back(m.c(size));
    return loopNest(pb, l, zeroes, sizes, plane, [&](OpBuilder &ob, Location l, ValueRange o, ValueRange acc) {
             return scf::ValueVector{body(ob, l, n, c, o, acc[0])};
           })
        .results.front();
  });
}

scf::LoopNest loopNest(OpBuilder &b, Location loc, ValueRange begins, ValueRange ends, ValueRange iterArgs,
                       function_ref<scf::ValueVector(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  SmallVector<Value> steps(begins.size(), b.create<arith::ConstantIndexOp>(loc, 1));
  return scf::buildLoopNest(b, loc, begins, ends, steps, iterArgs, body);
}

Value addToPlane(OpBuilder &b, Location loc, Value plane, ValueRange at, Value v) {
  SmallVector<Value> index(2, b.create<arith::ConstantIndexOp>(loc, 0));
  llvm::append_range(index, at);
  Value old = b.create<tensor::ExtractOp>(loc, plane, index);
  return b.create<tensor::InsertOp>(loc, add(b, loc, old, v), plane, index);
}

scf::ValueVector spreadOverPlane(OpBuilder &b, Location loc, Value plane, ValueRange begins, ValueRange ends,
                                 Value share) {
  return loopNest(b, loc, begins, ends, plane, [&](OpBuilder &sb, Location l, ValueRange x, ValueRange acc) {
           return scf::ValueVector{addToPlane(sb, l, acc[0], x, share)};
         }).results;
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

/// Rows of A up to which a lane contraction beats a matmul: its register
/// tile holds every row's accumulators.
constexpr int64_t kLaneContractionRows = 8;

/// `matrix` (R, K) as (R, K / lanes, lanes), contiguous runs of K in lanes.
static Value splitIntoLanes(OpBuilder &b, Location loc, Value matrix) {
  RankedTensorType type = tensorType(matrix);
  auto split = RankedTensorType::get({type.getDimSize(0), type.getDimSize(1) / kContractionLanes, kContractionLanes},
                                     type.getElementType());
  return b.create<tensor::ExpandShapeOp>(loc, split, matrix, SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

/// Columns [begin, begin + size) of `matrix`.
static Value columns(OpBuilder &b, Location loc, Value matrix, int64_t begin, int64_t size) {
  int64_t rows = tensorType(matrix).getDimSize(0);
  return b.create<tensor::ExtractSliceOp>(loc, matrix, getAsIndexOpFoldResult(b.getContext(), {0, begin}),
                                          getAsIndexOpFoldResult(b.getContext(), {rows, size}),
                                          getAsIndexOpFoldResult(b.getContext(), {1, 1}));
}

static Value multiplyAdd(OpBuilder &b, Location loc, ValueRange args) {
  return b.create<math::FmaOp>(loc, args[0], args[1], args[2]);
}

/// A (M, K) · B (N, K)ᵀ for K a multiple of the lanes: each lane l sums
/// A[m, k] * B[n, k] over the k = l (mod lanes) into P (M, N, lanes), a
/// vector FMA per step with both operands read along K (the lane
/// contraction, scheduled by sym-schedule-matmuls); then P's lanes are summed.
static Value laneContraction(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType l = tensorType(lhs), r = tensorType(rhs);
  int64_t m = l.getDimSize(0), n = r.getDimSize(0);
  Type element = l.getElementType();
  AffineExpr i, j, k, lane;
  bindDims(ctx, i, j, k, lane);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(4, 0, results, ctx); };
  Value partial = buildGeneric(b, loc, {splitIntoLanes(b, loc, lhs), splitIntoLanes(b, loc, rhs)},
                               zeros(b, loc, {m, n, kContractionLanes}, element),
                               {map({i, k, lane}), map({j, k, lane}), map({i, j, lane})},
                               {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
                                IteratorType::parallel},
                               multiplyAdd);
  partial.getDefiningOp()->setAttr(kLaneContractionAttr, b.getUnitAttr());
  AffineMap all = AffineMap::getMultiDimIdentityMap(3, ctx);
  return buildGeneric(b, loc, partial, zeros(b, loc, {m, n}, element), {all, all.dropResult(2)},
                      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction}, addFn);
}

/// A (M, K) · B (N, K)ᵀ added to `init`, in scalar loops (for K < lanes).
static Value contractRows(OpBuilder &b, Location loc, Value lhs, Value rhs, Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(3, 0, results, ctx); };
  return buildGeneric(b, loc, {lhs, rhs}, init, {map({i, k}), map({j, k}), map({i, j})},
                      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction}, multiplyAdd);
}

Value matmulTransposedB(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  RankedTensorType l = tensorType(lhs), r = tensorType(rhs);
  int64_t m = l.getDimSize(0), k = l.getDimSize(1), n = r.getDimSize(0);
  int64_t lanes = k - k % kContractionLanes;
  if (m <= kLaneContractionRows && lanes > 0) {
    if (lanes == k)
      return laneContraction(b, loc, lhs, rhs);
    Value main = laneContraction(b, loc, columns(b, loc, lhs, 0, lanes), columns(b, loc, rhs, 0, lanes));
    return contractRows(b, loc, columns(b, loc, lhs, lanes, k - lanes), columns(b, loc, rhs, lanes, k - lanes),
                        main);
  }
  if (n * k <= m * (n + k))
    return matmul(b, loc, lhs, rhs, false, /*transB=*/true);
  // C = (B · Aᵀ)ᵀ: only A and C are transposed.
  return transposeTo(b, loc, matmul(b, loc, rhs, lhs, false, /*transB=*/true), {1, 0});
}

Value addBias(OpBuilder &b, Location loc, Value data, Value bias, int64_t axis) {
  return mapAlongAxis(b, loc, data, axis, bias, addFn);
}

Window::Window(ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> d, ArrayRef<int64_t> p) : kernel(k) {
  auto orDefault = [&](ArrayRef<int64_t> v, int64_t dflt) {
    return v.empty() ? SmallVector<int64_t>(k.size(), dflt) : SmallVector<int64_t>(v);
  };
  stride = orDefault(s, 1);
  dilate = orDefault(d, 1);
  pad = orDefault(p, 0);
}

Value weightedSum(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange terms, AffineMap termMap,
                  ValueRange coefficients, unsigned coefficientDim, ArrayRef<unsigned> resultDims) {
  unsigned rank = shape.size();
  SmallVector<AffineMap> maps(terms.size(), termMap);
  maps.append(coefficients.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(coefficientDim)));
  SmallVector<unsigned> order(resultDims);
  if (order.empty())
    order = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  SmallVector<AffineExpr> resultExprs;
  SmallVector<int64_t> resultShape;
  for (unsigned dim : order) {
    resultExprs.push_back(b.getAffineDimExpr(dim));
    resultShape.push_back(shape[dim]);
  }
  maps.push_back(AffineMap::get(rank, 0, resultExprs, b.getContext()));
  SmallVector<Value> inputs(terms);
  llvm::append_range(inputs, coefficients);
  auto type = RankedTensorType::get(resultShape, tensorType(terms.front()).getElementType());
  size_t count = terms.size();
  auto generic = b.create<linalg::GenericOp>(
      loc, type, inputs, emptyLike(b, loc, type), maps, SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [count](OpBuilder &nb, Location l, ValueRange args) {
        Value sum = mul(nb, l, args[0], args[count]);
        for (size_t k = 1; k < count; ++k)
          sum = nb.create<math::FmaOp>(l, args[k], args[count + k], sum);
        nb.create<linalg::YieldOp>(l, sum);
      });
  return generic.getResult(0);
}

SmallVector<Value> channelsLastWindowViews(OpBuilder &b, Location loc, Value padded, const Window &w,
                                           ArrayRef<int64_t> outShape) {
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(b.getContext(), outShape),
                            strides = getAsIndexOpFoldResult(b.getContext(), {1, w.stride[0], w.stride[1], 1});
  SmallVector<Value> views;
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j) {
      SmallVector<int64_t> offsets{0, i * w.dilate[0], j * w.dilate[1], 0};
      views.push_back(b.create<tensor::ExtractSliceOp>(loc, padded, getAsIndexOpFoldResult(b.getContext(), offsets),
                                                       sizes, strides));
    }
  return views;
}

AffineExpr windowExpr(OpBuilder &b, const Window &w, unsigned i, unsigned outDim, unsigned kDim) {
  return b.getAffineDimExpr(outDim) * w.stride[i] + b.getAffineDimExpr(kDim) * w.dilate[i];
}

} // namespace symc::cpu
