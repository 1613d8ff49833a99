//===- LowerShape.cpp - layout sym ops -> tensor ops ----------------------===//
//
// Shape inference has already fixed every result type, so reshapes only need
// the target type; slices and concatenations become tensor slice ops.
//
//===----------------------------------------------------------------------===//
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

Lowered lowerConcat(OpBuilder &b, sym::ConcatOp op) {
  RankedTensorType resultType = tensorType(op.getOutput());
  int64_t axis = normalizeAxis(op.getDim(), resultType.getRank());
  Value result = emptyLike(b, op.getLoc(), resultType);
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    RankedTensorType type = tensorType(input);
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    offsets[axis] = offset;
    result = b.create<tensor::InsertSliceOp>(op.getLoc(), input, result, folds(b, offsets),
                                             folds(b, type.getShape()), folds(b, strides));
    offset += type.getDimSize(axis);
  }
  return SmallVector<Value>{result};
}

} // namespace

std::optional<Lowered> lowerShapeOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case<sym::FlattenOp, sym::ReshapeOp, sym::ExpandDimsOp>(
          [&](auto) { return reshapeToResult(b, op); })
      .Case([&](sym::TransposeOp t) { return lowerTranspose(b, t); })
      .Case([&](sym::SwapAxisOp s) { return lowerSwapAxis(b, s); })
      .Case([&](sym::SliceAxisOp s) { return lowerSliceAxis(b, s); })
      .Case([&](sym::SliceChannelOp s) { return lowerSliceChannel(b, s); })
      .Case([&](sym::ConcatOp c) { return lowerConcat(b, c); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
