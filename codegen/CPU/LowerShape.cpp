//===- LowerShape.cpp - layout sym ops -> tensor ops ----------------------===//
//
// Shape inference has already fixed every result type, so reshapes only need
// the target type; slices and concatenations become tensor slice ops.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include <numeric>

using namespace mlir;

namespace symc::cpu {
namespace {

SmallVector<OpFoldResult> folds(OpBuilder &b, ArrayRef<int64_t> values) {
  return getAsIndexOpFoldResult(b.getContext(), values);
}


Lowered reshapeToResult(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{
      reshapeTo(b, op->getLoc(), op->getOperand(0), tensorType(op->getResult(0)).getShape())};
}

Lowered lowerTranspose(OpBuilder &b, sym::TransposeOp op) {
  int64_t rank = tensorType(op.getData()).getRank();
  SmallVector<int64_t> permutation(rank);
  if (op.getAxes().empty())
    std::iota(permutation.rbegin(), permutation.rend(), 0);
  else
    for (int64_t i = 0; i < rank; ++i)
      permutation[i] = normalizeAxis(op.getAxes()[i], rank);
  return SmallVector<Value>{transposeTo(b, op.getLoc(), op.getData(), permutation)};
}

Lowered lowerSwapAxis(OpBuilder &b, sym::SwapAxisOp op) {
  int64_t rank = tensorType(op.getData()).getRank();
  SmallVector<int64_t> permutation(rank);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[normalizeAxis(op.getDim1(), rank)],
            permutation[normalizeAxis(op.getDim2(), rank)]);
  return SmallVector<Value>{transposeTo(b, op.getLoc(), op.getData(), permutation)};
}

/// The slice [begin, begin + size) of `input` along `axis`.
Value sliceAlong(OpBuilder &b, Location loc, Value input, int64_t axis, int64_t begin, int64_t size) {
  RankedTensorType type = tensorType(input);
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()), strides(type.getRank(), 1);
  offsets[axis] = begin;
  sizes[axis] = size;
  return b.create<tensor::ExtractSliceOp>(loc, input, folds(b, offsets), folds(b, sizes),
                                         folds(b, strides));
}

Lowered lowerSliceAxis(OpBuilder &b, sym::SliceAxisOp op) {
  RankedTensorType type = tensorType(op.getData());
  int64_t axis = normalizeAxis(op.getAxis(), type.getRank());
  int64_t begin = normalizeAxis(op.getBegin(), type.getDimSize(axis));
  int64_t size = tensorType(op.getOutput()).getDimSize(axis);
  return SmallVector<Value>{sliceAlong(b, op.getLoc(), op.getData(), axis, begin, size)};
}

/// The result's shape from data's origin.
Lowered lowerSliceLike(OpBuilder &b, sym::SliceLikeOp op) {
  RankedTensorType type = tensorType(op.getOutput());
  SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
  return SmallVector<Value>{b.create<tensor::ExtractSliceOp>(op.getLoc(), op.getData(), folds(b, offsets),
                                                             folds(b, type.getShape()), folds(b, strides))};
}

Lowered lowerCrop(OpBuilder &b, sym::CropOp op) {
  RankedTensorType out = tensorType(op.getOutput());
  auto [y, x] = op.windowOrigin(tensorType(op.getData()).getShape(), out.getShape());
  SmallVector<int64_t> offsets{0, 0, y, x}, strides(4, 1);
  return SmallVector<Value>{b.create<tensor::ExtractSliceOp>(op.getLoc(), op.getData(), folds(b, offsets),
                                                             folds(b, out.getShape()), folds(b, strides))};
}

Lowered lowerShapeArray(OpBuilder &b, sym::ShapeArrayOp op) {
  SmallVector<Value> dims;
  for (int64_t dim : tensorType(op.getData()).getShape())
    dims.push_back(b.create<arith::ConstantIntOp>(op.getLoc(), dim, 64));
  return SmallVector<Value>{b.create<tensor::FromElementsOp>(op.getLoc(), tensorType(op.getOutput()), dims)};
}

Lowered lowerSliceChannel(OpBuilder &b, sym::SliceChannelOp op) {
  RankedTensorType type = tensorType(op.getData());
  int64_t axis = normalizeAxis(op.getAxis(), type.getRank());
  int64_t size = type.getDimSize(axis) / op.getNumOutputs();
  SmallVector<Value> results;
  for (auto [i, result] : llvm::enumerate(op.getOutputs())) {
    Value part = sliceAlong(b, op.getLoc(), op.getData(), axis, i * size, size);
    results.push_back(reshapeTo(b, op.getLoc(), part, tensorType(result).getShape()));
  }
  return results;
}

/// `inputs` side by side along `axis` in a tensor of `resultType`.
Value concatenate(OpBuilder &b, Location loc, ValueRange inputs, RankedTensorType resultType, int64_t axis) {
  Value result = emptyLike(b, loc, resultType);
  int64_t offset = 0;
  for (Value input : inputs) {
    RankedTensorType type = tensorType(input);
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    offsets[axis] = offset;
    result = b.create<tensor::InsertSliceOp>(loc, input, result, folds(b, offsets), folds(b, type.getShape()),
                                             folds(b, strides));
    offset += type.getDimSize(axis);
  }
  return result;
}

Lowered lowerConcat(OpBuilder &b, sym::ConcatOp op) {
  RankedTensorType resultType = tensorType(op.getOutput());
  return SmallVector<Value>{
      concatenate(b, op.getLoc(), op.getInputs(), resultType, normalizeAxis(op.getDim(), resultType.getRank()))};
}

/// Each input viewed with a unit dim at `axis`, concatenated there.
Lowered lowerStack(OpBuilder &b, sym::StackOp op) {
  RankedTensorType resultType = tensorType(op.getOutput());
  int64_t axis = normalizeAxis(op.getAxis(), resultType.getRank());
  SmallVector<int64_t> partShape(resultType.getShape());
  partShape[axis] = 1;
  SmallVector<Value> parts;
  for (Value input : op.getInputs())
    parts.push_back(reshapeTo(b, op.getLoc(), input, partShape));
  return SmallVector<Value>{concatenate(b, op.getLoc(), parts, resultType, axis)};
}

/// `input` with the dims `reversed` flipped.
Value reverseDims(OpBuilder &b, Location loc, Value input, ArrayRef<bool> reversed) {
  if (!llvm::is_contained(reversed, true))
    return input;
  RankedTensorType type = tensorType(input);
  SmallVector<AffineExpr> exprs;
  for (auto [i, flip] : llvm::enumerate(reversed)) {
    AffineExpr d = b.getAffineDimExpr(i);
    exprs.push_back(flip ? type.getDimSize(i) - 1 - d : d);
  }
  return mapWithMaps(b, loc, type, input, AffineMap::get(type.getRank(), 0, exprs, b.getContext()),
                     [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// A slice with negative steps is the reverse of one with positive steps
/// that starts at its last element: the offsets and strides of that one,
/// and which dims to reverse.
struct PositiveSlice {
  SmallVector<int64_t> offsets, sizes, strides;
  SmallVector<bool> reversed;
};

FailureOr<PositiveSlice> positiveSlice(Operation *op, ArrayRef<int64_t> begin, ArrayRef<int64_t> end,
                                       ArrayRef<int64_t> step, RankedTensorType dataType) {
  std::string error;
  FailureOr<SmallVector<sym::SliceDim>> dims = sym::getSliceDims(begin, end, step, dataType.getShape(), error);
  if (failed(dims))
    return op->emitError(error);
  PositiveSlice slice;
  for (const sym::SliceDim &d : *dims) {
    bool negative = d.step < 0;
    slice.offsets.push_back(negative ? d.begin + (d.size - 1) * d.step : d.begin);
    slice.sizes.push_back(d.size);
    slice.strides.push_back(negative ? -d.step : d.step);
    slice.reversed.push_back(negative);
  }
  return slice;
}

Lowered lowerSlice(OpBuilder &b, sym::SliceOp op) {
  FailureOr<PositiveSlice> slice =
      positiveSlice(op, op.getBegin(), op.getEnd(), op.getStep(), tensorType(op.getData()));
  if (failed(slice))
    return failure();
  Value part = b.create<tensor::ExtractSliceOp>(op.getLoc(), op.getData(), folds(b, slice->offsets),
                                                folds(b, slice->sizes), folds(b, slice->strides));
  return SmallVector<Value>{reverseDims(b, op.getLoc(), part, slice->reversed)};
}

Lowered lowerSliceBackward(OpBuilder &b, sym::BackwardSliceOp op) {
  RankedTensorType type = tensorType(op.getData());
  FailureOr<PositiveSlice> slice = positiveSlice(op, op.getBegin(), op.getEnd(), op.getStep(), type);
  if (failed(slice))
    return failure();
  Value g = reverseDims(b, op.getLoc(), op.getOutGrad(), slice->reversed);
  Value init = zeros(b, op.getLoc(), type.getShape(), type.getElementType());
  return SmallVector<Value>{b.create<tensor::InsertSliceOp>(op.getLoc(), g, init, folds(b, slice->offsets),
                                                           folds(b, slice->sizes), folds(b, slice->strides))};
}

/// Each output element reads data at `sourceExpr(dim, data dim)` of its
/// index along each of data's dims, aligned at the right.
Value readEachElement(OpBuilder &b, Location loc, Value data, RankedTensorType resultType,
                      function_ref<AffineExpr(AffineExpr, int64_t)> sourceExpr) {
  RankedTensorType type = tensorType(data);
  int64_t lead = resultType.getRank() - type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < type.getRank(); ++k)
    exprs.push_back(sourceExpr(b.getAffineDimExpr(lead + k), k));
  return mapWithMaps(b, loc, resultType, data, AffineMap::get(resultType.getRank(), 0, exprs, b.getContext()),
                     [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// numpy's tile: output index i reads i mod size.
Lowered lowerTile(OpBuilder &b, sym::TileOp op) {
  ArrayRef<int64_t> shape = tensorType(op.getData()).getShape();
  return SmallVector<Value>{readEachElement(b, op.getLoc(), op.getData(), tensorType(op.getOutput()),
                                            [&](AffineExpr d, int64_t k) { return d % shape[k]; })};
}

/// Output index i along the axis reads i floordiv repeats.
Lowered lowerRepeat(OpBuilder &b, sym::RepeatOp op) {
  Value data = op.getData();
  RankedTensorType type = tensorType(data);
  int64_t axis = 0;
  if (std::optional<int64_t> a = op.getAxis())
    axis = normalizeAxis(*a, type.getRank());
  else
    data = reshapeTo(b, op.getLoc(), data, {type.getNumElements()});
  int64_t repeats = op.getRepeats();
  return SmallVector<Value>{readEachElement(b, op.getLoc(), data, tensorType(op.getOutput()),
                                            [&](AffineExpr d, int64_t k) { return k == axis ? d.floorDiv(repeats) : d; })};
}

Lowered lowerReverse(OpBuilder &b, sym::ReverseOp op) {
  int64_t rank = tensorType(op.getData()).getRank();
  SmallVector<bool> reversed(rank, false);
  for (int64_t a : op.getAxis())
    reversed[normalizeAxis(a, rank)] = true;
  return SmallVector<Value>{reverseDims(b, op.getLoc(), op.getData(), reversed)};
}

/// broadcast_axis and broadcast_to: numpy broadcasting of equal ranks.
Lowered broadcastToResult(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{mapElementwise(b, op->getLoc(), tensorType(op->getResult(0)), op->getOperand(0),
                                           [](OpBuilder &, Location, ValueRange args) { return args[0]; })};
}

/// `value` at steps (along axis) at or past their batch entry's length,
/// which MXNet truncates to an integer.
Lowered lowerSequenceMask(OpBuilder &b, sym::SequenceMaskOp op) {
  if (!op.getUseSequenceLength())
    return SmallVector<Value>{op.getData()};
  RankedTensorType type = tensorType(op.getData());
  int64_t axis = op.getAxis(), batchAxis = 1 - axis;
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank()),
                              AffineMap::get(type.getRank(), 0, b.getAffineDimExpr(batchAxis))};
  Value masked = mapWithMaps(b, op.getLoc(), type, {op.getData(), op.getSequenceLength()}, maps,
                             [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value step = b.create<arith::IndexCastOp>(loc, b.getI64Type(), b.create<linalg::IndexOp>(loc, axis));
    Value length = convertScalar(b, loc, args[1], b.getI64Type());
    Value within = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, step, length);
    return b.create<arith::SelectOp>(loc, within, args[0], scalarConstant(b, loc, args[0].getType(), op.getValue()));
  });
  return SmallVector<Value>{masked};
}

/// The position along the steps of batch entry n's last step (length - 1,
/// clamped into the data: MXNet reads outside it for a length of 0) or its
/// length, or `steps` without lengths.
Value sequencePosition(OpBuilder &b, Location loc, Value lengths, Value n, int64_t steps, bool last) {
  if (!lengths)
    return b.create<arith::ConstantIntOp>(loc, last ? steps - 1 : steps, 64);
  Value length = convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, lengths, n), b.getI64Type());
  if (last)
    length = b.create<arith::SubIOp>(loc, length, b.create<arith::ConstantIntOp>(loc, 1, 64));
  Value low = b.create<arith::ConstantIntOp>(loc, 0, 64);
  Value high = b.create<arith::ConstantIntOp>(loc, last ? steps - 1 : steps, 64);
  return min(b, loc, max(b, loc, length, low), high);
}

/// data viewed as (T, N, rest) for axis 0 or (N, T, rest) for axis 1.
Value stepsView(OpBuilder &b, Location loc, Value data) {
  ArrayRef<int64_t> shape = tensorType(data).getShape();
  return reshapeTo(b, loc, data, {shape[0], shape[1], ShapedType::getNumElements(shape.drop_front(2))});
}

Value toIndex(OpBuilder &b, Location loc, Value i64) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i64);
}

/// out[n, r] = data at batch entry n's last step.
Lowered lowerSequenceLast(OpBuilder &b, sym::SequenceLastOp op) {
  Location loc = op.getLoc();
  Value data = stepsView(b, loc, op.getData());
  ArrayRef<int64_t> view = tensorType(data).getShape();
  bool batchFirst = op.getAxis() == 1;
  int64_t steps = view[batchFirst ? 1 : 0], batch = view[batchFirst ? 0 : 1];
  auto type = RankedTensorType::get({batch, view[2]}, tensorType(data).getElementType());
  Value last = generateElements(b, loc, type, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value t = toIndex(nb, l, sequencePosition(nb, l, op.getSequenceLength(), at[0], steps, /*last=*/true));
    ValueRange position = batchFirst ? ValueRange{at[0], t, at[1]} : ValueRange{t, at[0], at[1]};
    return nb.create<tensor::ExtractOp>(l, data, position).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, last, tensorType(op.getOutput()).getShape())};
}

/// grad = out_grad[n, r] at batch entry n's last step, zeros elsewhere.
Lowered lowerSequenceLastBackward(OpBuilder &b, sym::BackwardSequenceLastOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  bool batchFirst = op.getAxis() == 1;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t steps = shape[batchFirst ? 1 : 0], rest = ShapedType::getNumElements(shape.drop_front(2));
  Value g = reshapeTo(b, loc, op.getOutGrad(), {shape[batchFirst ? 0 : 1], rest});
  auto viewType = RankedTensorType::get({shape[0], shape[1], rest}, type.getElementType());
  Value grad = generateElements(b, loc, viewType, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value n = batchFirst ? at[0] : at[1], t = batchFirst ? at[1] : at[0];
    Value last = sequencePosition(nb, l, op.getSequenceLength(), n, steps, /*last=*/true);
    Value here = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, last,
                                          nb.create<arith::IndexCastOp>(l, nb.getI64Type(), t));
    return nb.create<arith::SelectOp>(l, here, nb.create<tensor::ExtractOp>(l, g, ValueRange{n, at[2]}),
                                      scalarConstant(nb, l, type.getElementType(), 0.0))
        .getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, grad, shape)};
}

/// out[t, n, r] = data[L - 1 - t, n, r] for t < L (batch entry n's length),
/// data[t, n, r] past it.
Lowered lowerSequenceReverse(OpBuilder &b, sym::SequenceReverseOp op) {
  Location loc = op.getLoc();
  Value data = stepsView(b, loc, op.getData());
  int64_t steps = tensorType(data).getDimSize(0);
  Value reversed = generateElements(b, loc, tensorType(data), [&](OpBuilder &nb, Location l, ValueRange at) {
    Value length = sequencePosition(nb, l, op.getSequenceLength(), at[1], steps, /*last=*/false);
    Value t = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), at[0]);
    Value inside = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, t, length);
    Value mirrored = nb.create<arith::SubIOp>(l, nb.create<arith::SubIOp>(l, length, t),
                                              nb.create<arith::ConstantIntOp>(l, 1, 64));
    Value source = toIndex(nb, l, nb.create<arith::SelectOp>(l, inside, mirrored, t));
    return nb.create<tensor::ExtractOp>(l, data, ValueRange{source, at[1], at[2]}).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, reversed, tensorType(op.getOutput()).getShape())};
}

/// The input position output position `i` of a padded dim copies: the
/// nearest (edge) or the mirror image (reflect) inside [0, size).
Value padSource(IndexMath &m, StringRef mode, Value i, int64_t before, int64_t size) {
  Value j = m.sub(i, m.c(before));
  if (mode == "edge")
    return m.max(m.min(j, m.c(size - 1)), m.c(0));
  Value mirrored = m.max(j, m.sub(m.c(0), j));
  return m.min(mirrored, m.sub(m.c(2 * (size - 1)), mirrored));
}

Lowered lowerPad(OpBuilder &b, sym::PadOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> pads = op.getPadWidth();
  RankedTensorType type = tensorType(op.getData()), outType = tensorType(op.getOutput());
  if (op.getMode() == "constant") {
    SmallVector<int64_t> low, high;
    for (unsigned i = 0; i < type.getRank(); ++i) {
      low.push_back(pads[2 * i]);
      high.push_back(pads[2 * i + 1]);
    }
    return SmallVector<Value>{padConstant(b, loc, op.getData(), low, high, op.getConstantValue())};
  }
  // Each output element reads its source element.
  Value padded = generateElements(b, loc, outType, [&](OpBuilder &nb, Location l, ValueRange indices) -> Value {
    IndexMath m{nb, l};
    SmallVector<Value> at(indices.take_front(2));
    for (unsigned i = 2; i < type.getRank(); ++i)
      at.push_back(padSource(m, op.getMode(), indices[i], pads[2 * i], type.getDimSize(i)));
    return nb.create<tensor::ExtractOp>(l, op.getData(), at);
  });
  return SmallVector<Value>{padded};
}

/// The interior of the output gradient, plus, for edge and reflect, the
/// gradient of every padded element added to its source.
Lowered lowerPadBackward(OpBuilder &b, sym::BackwardPadOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> pads = op.getPadWidth();
  RankedTensorType type = tensorType(op.getDataGrad()), gType = tensorType(op.getOutGrad());
  unsigned rank = type.getRank();
  if (op.getMode() == "constant") {
    SmallVector<int64_t> offsets, strides(rank, 1);
    for (unsigned i = 0; i < rank; ++i)
      offsets.push_back(pads[2 * i]);
    return SmallVector<Value>{b.create<tensor::ExtractSliceOp>(loc, op.getOutGrad(), folds(b, offsets),
                                                              folds(b, type.getShape()), folds(b, strides))};
  }
  Value init = zeros(b, loc, type.getShape(), type.getElementType());
  Value grad = forEachOutputPosition(b, loc, init, gType.getShape().drop_front(2),
                                     [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, Value plane) {
    IndexMath m{ob, l};
    SmallVector<Value> gAt{n, ch}, source;
    for (unsigned i = 2; i < rank; ++i) {
      gAt.push_back(o[i - 2]);
      source.push_back(padSource(m, op.getMode(), o[i - 2], pads[2 * i], type.getDimSize(i)));
    }
    return addToPlane(ob, l, plane, source, ob.create<tensor::ExtractOp>(l, op.getOutGrad(), gAt));
  });
  return SmallVector<Value>{grad};
}

} // namespace

std::optional<Lowered> lowerShapeOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case<sym::FlattenOp, sym::ReshapeOp, sym::ExpandDimsOp, sym::SqueezeOp>(
          [&](auto) { return reshapeToResult(b, op); })
      .Case([&](sym::TransposeOp t) { return lowerTranspose(b, t); })
      .Case([&](sym::SwapAxisOp s) { return lowerSwapAxis(b, s); })
      .Case([&](sym::SliceAxisOp s) { return lowerSliceAxis(b, s); })
      .Case([&](sym::SliceChannelOp s) { return lowerSliceChannel(b, s); })
      .Case([&](sym::SliceLikeOp s) { return lowerSliceLike(b, s); })
      .Case([&](sym::CropOp c) { return lowerCrop(b, c); })
      .Case([&](sym::ShapeArrayOp s) { return lowerShapeArray(b, s); })
      .Case([&](sym::ConcatOp c) { return lowerConcat(b, c); })
      .Case([&](sym::StackOp c) { return lowerStack(b, c); })
      .Case([&](sym::TileOp t) { return lowerTile(b, t); })
      .Case([&](sym::RepeatOp r) { return lowerRepeat(b, r); })
      .Case([&](sym::ReverseOp r) { return lowerReverse(b, r); })
      .Case([&](sym::SliceOp s) { return lowerSlice(b, s); })
      .Case([&](sym::BackwardSliceOp s) { return lowerSliceBackward(b, s); })
      .Case<sym::BroadcastAxisOp, sym::BroadcastToOp, sym::BroadcastLikeOp>(
          [&](auto) { return broadcastToResult(b, op); })
      .Case([&](sym::SequenceMaskOp s) { return lowerSequenceMask(b, s); })
      .Case([&](sym::SequenceLastOp s) { return lowerSequenceLast(b, s); })
      .Case([&](sym::BackwardSequenceLastOp s) { return lowerSequenceLastBackward(b, s); })
      .Case([&](sym::SequenceReverseOp s) { return lowerSequenceReverse(b, s); })
      .Case([&](sym::PadOp p) { return lowerPad(b, p); })
      .Case([&](sym::BackwardPadOp p) { return lowerPadBackward(b, p); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
