//===- LowerIndexing.cpp - sorting and gathering by computed indices ------===//
//
// argsort sorts each row (the sorted axis moved last) in a kernel of symc's
// kernel library (Kernels/Sort.cpp). gather_nd turns its index columns into
// row numbers of data viewed as (positions, row size), gathers those rows
// in linalg, and sums gradients back into them in a kernel
// (Kernels/Scatter.cpp).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

int64_t product(ArrayRef<int64_t> dims) { return ShapedType::getNumElements(dims); }

/// The permutation that moves `axis` last, and its inverse.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>> axisLast(int64_t rank, int64_t axis) {
  SmallVector<int64_t> forward, inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      forward.push_back(i);
  forward.push_back(axis);
  for (int64_t i = 0; i < rank; ++i)
    inverse[forward[i]] = i;
  return {forward, inverse};
}

Lowered lowerArgsort(OpBuilder &b, sym::ArgsortOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData()), result = tensorType(op.getOutput());
  bool flat = op.getAxis() == sym::kNone;
  int64_t axis = flat ? 0 : normalizeAxis(op.getAxis(), type.getRank());
  auto [forward, inverse] = axisLast(type.getRank(), axis);
  Value rows = flat ? op.getData() : transposeTo(b, loc, op.getData(), forward);
  SmallVector<int64_t> sortedShape(tensorType(rows).getShape());
  int64_t n = flat ? type.getNumElements() : type.getDimSize(axis), count = n == 0 ? 0 : type.getNumElements() / n;
  rows = reshapeTo(b, loc, rows, {count, n});
  auto indexType = RankedTensorType::get({count, n}, b.getI64Type());
  Lowered sorted = callKernel(b, op, {"symc_argsort_rows", type.getElementType(), /*integers=*/true}, rows,
                              {indexType, indexType}, {i64(b, loc, count), i64(b, loc, n), i64(b, loc, op.getIsAscend())});
  if (failed(sorted))
    return failure();
  Value converted = mapElementwise(b, loc, indexType.clone(result.getElementType()), (*sorted)[0],
                                   [&](OpBuilder &nb, Location l, ValueRange a) {
                                     return convertScalar(nb, l, a[0], result.getElementType());
                                   });
  if (flat)
    return SmallVector<Value>{reshapeTo(b, loc, converted, result.getShape())};
  return SmallVector<Value>{transposeTo(b, loc, reshapeTo(b, loc, converted, sortedShape), inverse)};
}

/// gather_nd's positions as row numbers of data viewed as (rows, row
/// size): index j wraps as MXNet's kernel does ((i + size) % size, after
/// adding in the indices' type) and is clamped into the data, which MXNet
/// bounds-checks.
Value gatheredRows(OpBuilder &b, Location loc, Value indices, RankedTensorType data) {
  RankedTensorType type = tensorType(indices);
  int64_t m = type.getDimSize(0);
  Type element = type.getElementType();
  auto rowsType = RankedTensorType::get({product(type.getShape().drop_front())}, b.getI64Type());
  Value flat = reshapeTo(b, loc, indices, {m, rowsType.getDimSize(0)});
  return generateElements(b, loc, rowsType, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value row = nb.create<arith::ConstantIntOp>(l, 0, 64);
    for (int64_t j = 0; j < m; ++j) {
      int64_t size = data.getDimSize(j);
      Value index = nb.create<tensor::ExtractOp>(l, flat, ValueRange{nb.create<arith::ConstantIndexOp>(l, j), at[0]});
      Value shifted = convertScalar(nb, l, add(nb, l, index, scalarConstant(nb, l, element, size)), nb.getI64Type());
      Value sizeValue = nb.create<arith::ConstantIntOp>(l, size, 64);
      Value wrapped = nb.create<arith::RemSIOp>(l, shifted, sizeValue);
      Value clamped = min(nb, l, max(nb, l, wrapped, nb.create<arith::ConstantIntOp>(l, 0, 64)),
                          nb.create<arith::SubIOp>(l, sizeValue, nb.create<arith::ConstantIntOp>(l, 1, 64)));
      row = add(nb, l, mul(nb, l, row, sizeValue), clamped);
    }
    return row;
  });
}

Lowered lowerGatherNd(OpBuilder &b, sym::GatherNdOp op) {
  Location loc = op.getLoc();
  RankedTensorType data = tensorType(op.getData()), result = tensorType(op.getOutput());
  int64_t m = tensorType(op.getIndices()).getDimSize(0);
  int64_t rowSize = product(data.getShape().drop_front(m));
  Value rows = gatheredRows(b, loc, op.getIndices(), data);
  Value table = reshapeTo(b, loc, op.getData(), {product(data.getShape().take_front(m)), rowSize});
  int64_t count = tensorType(rows).getDimSize(0);
  auto gatheredType = RankedTensorType::get({count, rowSize}, data.getElementType());
  Value gathered = generateElements(b, loc, gatheredType, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value row = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), nb.create<tensor::ExtractOp>(l, rows, at[0]));
    return nb.create<tensor::ExtractOp>(l, table, ValueRange{row, at[1]}).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, gathered, result.getShape())};
}

Lowered lowerGatherNdBackward(OpBuilder &b, sym::BackwardGatherNdOp op) {
  Location loc = op.getLoc();
  RankedTensorType data = tensorType(op.getData());
  int64_t m = tensorType(op.getIndices()).getDimSize(0);
  int64_t rowSize = product(data.getShape().drop_front(m)), tableRows = product(data.getShape().take_front(m));
  Value rows = gatheredRows(b, loc, op.getIndices(), data);
  int64_t count = tensorType(rows).getDimSize(0);
  Value grad = reshapeTo(b, loc, op.getOutGrad(), {count, rowSize});
  Lowered summed = callKernel(b, op, {"symc_scatter_add_rows", data.getElementType()}, {grad, rows},
                              {RankedTensorType::get({tableRows, rowSize}, data.getElementType())},
                              {i64(b, loc, count), i64(b, loc, rowSize), i64(b, loc, tableRows)});
  if (failed(summed))
    return failure();
  return SmallVector<Value>{reshapeTo(b, loc, (*summed)[0], data.getShape())};
}

} // namespace

std::optional<Lowered> lowerIndexingOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::ArgsortOp o) { return lowerArgsort(b, o); })
      .Case([&](sym::GatherNdOp o) { return lowerGatherNd(b, o); })
      .Case([&](sym::BackwardGatherNdOp o) { return lowerGatherNdBackward(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
