//===- LowerIndexing.cpp - sorting and gathering by computed indices ------===//
//
// argsort, sort, topk, argmax and argmin work on rows (the axis moved
// last) in kernels of symc's kernel library (Kernels/Sort.cpp); topk's mask
// and gradient scatter back into rows (Kernels/Scatter.cpp). pick, take and
// one_hot compute each element from its index. gather_nd turns its index columns into
// row numbers of data viewed as (positions, row size), gathers those rows
// in linalg, and sums gradients back into them in a kernel
// (Kernels/Scatter.cpp). take (mode 'raise') and gather_nd check their
// indices as MXNet does and report a failure into the run's SymcRunError;
// the gather itself reads clamped positions, so a failed run reads no memory
// outside the data.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

int64_t product(ArrayRef<int64_t> dims) { return ShapedType::getNumElements(dims); }

/// Reports `op`'s run-time check (kCheckAttr) as failed where `failed` (i1)
/// holds and no earlier check failed: the run error becomes {check,
/// values...}. A function without the C ABI's run error (symc-opt before
/// sym-artifact-abi) reports nothing.
void reportFailedCheck(OpBuilder &b, Operation *op, Value failed, ArrayRef<Value> values) {
  auto check = op->getAttrOfType<IntegerAttr>(sym::kCheckAttr);
  auto function = op->getParentOfType<func::FuncOp>();
  auto error = llvm::find_if(function.getArguments(), [&](BlockArgument arg) {
    return function.getArgAttr(arg.getArgNumber(), sym::kRunErrorAttr) != nullptr;
  });
  if (!check || error == function.getArguments().end())
    return;
  Location loc = op->getLoc();
  auto at = [&](int64_t i) { return b.create<arith::ConstantIndexOp>(loc, i).getResult(); };
  Value clear = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                        b.create<memref::LoadOp>(loc, *error, ValueRange{at(0)}), i64(b, loc, 0));
  b.create<scf::IfOp>(loc, b.create<arith::AndIOp>(loc, failed, clear), [&](OpBuilder &tb, Location l) {
    tb.create<memref::StoreOp>(l, i64(tb, l, check.getInt()), *error, ValueRange{at(0)});
    for (auto [i, value] : llvm::enumerate(values))
      tb.create<memref::StoreOp>(l, value, *error, ValueRange{at(i + 1)});
    tb.create<scf::YieldOp>(l);
  });
}

/// Whether `x` (an index, in its own type as MXNet compares it) lies
/// outside [lo, hi].
Value outside(OpBuilder &b, Location loc, Value x, int64_t lo, int64_t hi) {
  Type t = x.getType();
  if (isa<FloatType>(t))
    return b.create<arith::OrIOp>(
        loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, scalarConstant(b, loc, t, double(lo))),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, scalarConstant(b, loc, t, double(hi))));
  return b.create<arith::OrIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, scalarConstant(b, loc, t, double(lo))),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, x, scalarConstant(b, loc, t, double(hi))));
}

/// take (mode 'raise'): CheckIndexOutOfBound over the flat indices, [0, n).
void checkTakeIndices(OpBuilder &b, sym::TakeOp op, Value flatIndices, int64_t n) {
  Location loc = op.getLoc();
  auto flags = RankedTensorType::get(tensorType(flatIndices).getShape(), b.getI8Type());
  Value outsides = mapElementwise(b, loc, flags, flatIndices, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::ExtUIOp>(l, nb.getI8Type(), outside(nb, l, a[0], 0, n - 1));
  });
  Value any = reduce(b, loc, outsides, {0}, false, 0.0, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::MaxUIOp>(l, a[0], a[1]);
  });
  Value failed = b.create<arith::TruncIOp>(loc, b.getI1Type(), b.create<tensor::ExtractOp>(loc, any, ValueRange{}));
  reportFailedCheck(b, op, failed, {});
}

/// gather_nd: GatherNDCheckBoundCPU over indices (M, N) against data's first
/// M dims, [-size, size): of the first axis with an index outside, the last
/// such index, reported with the axis and its size.
void checkGatherNdIndices(OpBuilder &b, sym::GatherNdOp op, Value indices) {
  Location loc = op.getLoc();
  RankedTensorType data = tensorType(op.getData()), type = tensorType(indices);
  int64_t m = type.getDimSize(0), n = product(type.getShape().drop_front());
  Value flat = reshapeTo(b, loc, indices, {m, n});
  Value none = b.create<arith::ConstantIntOp>(loc, 0, 1), zero = i64(b, loc, 0);
  Value failed = none, index = zero, axis = zero, size = zero;
  // Axes last to first, positions first to last: the last report stands.
  for (int64_t j = m - 1; j >= 0; --j) {
    auto loop = b.create<scf::ForOp>(
        loc, b.create<arith::ConstantIndexOp>(loc, 0), b.create<arith::ConstantIndexOp>(loc, n),
        b.create<arith::ConstantIndexOp>(loc, 1), ValueRange{failed, index, axis, size},
        [&](OpBuilder &lb, Location l, Value k, ValueRange carried) {
          Value x = lb.create<tensor::ExtractOp>(l, flat, ValueRange{lb.create<arith::ConstantIndexOp>(l, j), k});
          int64_t dim = data.getDimSize(j);
          Value bad = outside(lb, l, x, -dim, dim - 1);
          SmallVector<Value> found{bad, convertScalar(lb, l, x, lb.getI64Type()), i64(lb, l, j), i64(lb, l, dim)};
          SmallVector<Value> next;
          for (auto [mine, kept] : llvm::zip(found, carried))
            next.push_back(lb.create<arith::SelectOp>(l, bad, mine, kept));
          next[0] = lb.create<arith::OrIOp>(l, bad, carried[0]);
          lb.create<scf::YieldOp>(l, next);
        });
    failed = loop.getResult(0);
    index = loop.getResult(1);
    axis = loop.getResult(2);
    size = loop.getResult(3);
  }
  reportFailedCheck(b, op, failed, {index, axis, size});
}

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

/// Data with `axis` moved last and viewed as (count, n) rows, the layout
/// the row kernels sort and search; sym::kNone flattens it to one row.
struct Rows {
  Value rows;
  int64_t count, n;
  bool flat;
  SmallVector<int64_t> movedShape, inverse;
};

Rows rowsAlong(OpBuilder &b, Location loc, Value data, int64_t axisAttr) {
  RankedTensorType type = tensorType(data);
  Rows r;
  r.flat = axisAttr == sym::kNone;
  int64_t axis = r.flat ? 0 : normalizeAxis(axisAttr, type.getRank());
  auto [forward, inverse] = axisLast(type.getRank(), axis);
  r.inverse = inverse;
  Value moved = r.flat ? data : transposeTo(b, loc, data, forward);
  r.movedShape.assign(tensorType(moved).getShape().begin(), tensorType(moved).getShape().end());
  r.n = r.flat ? type.getNumElements() : type.getDimSize(axis);
  r.count = r.n == 0 ? 0 : type.getNumElements() / r.n;
  r.rows = reshapeTo(b, loc, moved, {r.count, r.n});
  return r;
}

/// (count, m) rows back in the data's layout with m along the axis, shaped
/// as `result`.
Value fromRows(OpBuilder &b, Location loc, const Rows &r, Value rows, RankedTensorType result) {
  if (r.flat)
    return reshapeTo(b, loc, rows, result.getShape());
  SmallVector<int64_t> shape(r.movedShape);
  shape.back() = tensorType(rows).getDimSize(1);
  return reshapeTo(b, loc, transposeTo(b, loc, reshapeTo(b, loc, rows, shape), r.inverse), result.getShape());
}

/// The first k of each row's indices in sorted order, as i64 (count, k).
FailureOr<Value> sortedIndices(OpBuilder &b, Operation *op, const Rows &r, bool ascend, int64_t k) {
  Location loc = op->getLoc();
  auto indexType = RankedTensorType::get({r.count, r.n}, b.getI64Type());
  Lowered sorted = callKernel(b, op, {"symc_argsort_rows", tensorType(r.rows).getElementType(), /*integers=*/true},
                              r.rows, {indexType, indexType}, {i64(b, loc, r.count), i64(b, loc, r.n), i64(b, loc, ascend)});
  if (failed(sorted))
    return failure();
  if (k == r.n)
    return (*sorted)[0];
  return b.create<tensor::ExtractSliceOp>(loc, (*sorted)[0], ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
                                          ArrayRef<OpFoldResult>{b.getIndexAttr(r.count), b.getIndexAttr(k)},
                                          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)})
      .getResult();
}

Value convertElements(OpBuilder &b, Location loc, Value input, Type element) {
  return mapElementwise(b, loc, tensorType(input).clone(element), input,
                        [&](OpBuilder &nb, Location l, ValueRange a) { return convertScalar(nb, l, a[0], element); });
}

/// rows[r, indices[r, j]] for each (r, j).
Value gatherAlongRows(OpBuilder &b, Location loc, Value rows, Value indices) {
  auto type = tensorType(indices).clone(tensorType(rows).getElementType());
  return generateElements(b, loc, type, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value column = convertScalar(nb, l, nb.create<tensor::ExtractOp>(l, indices, at), nb.getI64Type());
    column = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), column);
    return nb.create<tensor::ExtractOp>(l, rows, ValueRange{at[0], column}).getResult();
  });
}

/// Zeros of (count, n) with values[r, j] at [r, indices[r, j]]: the
/// positions in a row are distinct, so the sum is a write.
FailureOr<Value> scatterAlongRows(OpBuilder &b, Operation *op, Value values, Value indices, int64_t n) {
  Location loc = op->getLoc();
  RankedTensorType type = tensorType(values);
  int64_t count = type.getDimSize(0), k = type.getDimSize(1);
  auto positionsType = RankedTensorType::get({count, k}, b.getI64Type());
  Value positions = generateElements(b, loc, positionsType, [&](OpBuilder &nb, Location l, ValueRange at) {
    Value column = convertScalar(nb, l, nb.create<tensor::ExtractOp>(l, indices, at), nb.getI64Type());
    Value row = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), at[0]);
    return add(nb, l, mul(nb, l, row, nb.create<arith::ConstantIntOp>(l, n, 64)), column);
  });
  FailureOr<Value> scattered = scatterAddRows(b, op, reshapeTo(b, loc, values, {count * k, 1}),
                                              reshapeTo(b, loc, positions, {count * k}), count * n);
  if (failed(scattered))
    return failure();
  return reshapeTo(b, loc, *scattered, {count, n});
}

Lowered lowerArgsort(OpBuilder &b, sym::ArgsortOp op) {
  Rows r = rowsAlong(b, op.getLoc(), op.getData(), op.getAxis());
  FailureOr<Value> indices = sortedIndices(b, op, r, op.getIsAscend(), r.n);
  if (failed(indices))
    return failure();
  RankedTensorType result = tensorType(op.getOutput());
  return SmallVector<Value>{
      fromRows(b, op.getLoc(), r, convertElements(b, op.getLoc(), *indices, result.getElementType()), result)};
}

/// topk and sort: the indices of the k first in sorted order, then what
/// ret_typ asks for, each converted to its result's element type.
Lowered lowerTopk(OpBuilder &b, Operation *op, Value data, int64_t axis, int64_t k, bool ascend, StringRef ret) {
  Location loc = op->getLoc();
  Rows r = rowsAlong(b, loc, data, axis);
  k = k < 1 ? r.n : k;
  FailureOr<Value> indices = sortedIndices(b, op, r, ascend, k);
  if (failed(indices))
    return failure();
  auto result = [&](unsigned i) { return tensorType(op->getResult(i)); };
  auto back = [&](Value rows, unsigned i) {
    return fromRows(b, loc, r, convertElements(b, loc, rows, result(i).getElementType()), result(i));
  };
  if (ret == "indices")
    return SmallVector<Value>{back(*indices, 0)};
  if (ret == "mask") {
    Value ones = filledTensor(b, loc, RankedTensorType::get({r.count, k}, result(0).getElementType()), 1.0);
    FailureOr<Value> mask = scatterAlongRows(b, op, ones, *indices, r.n);
    if (failed(mask))
      return failure();
    return SmallVector<Value>{back(*mask, 0)};
  }
  return SmallVector<Value>{back(gatherAlongRows(b, loc, r.rows, *indices), 0), back(*indices, 1)};
}

/// The out_grad rows written at their selected positions.
Lowered lowerTopkBackward(OpBuilder &b, sym::BackwardTopkOp op) {
  Location loc = op.getLoc();
  Rows data = rowsAlong(b, loc, op.getData(), op.getAxis());
  Rows grad = rowsAlong(b, loc, op.getOutGrad(), op.getAxis());
  Rows indices = rowsAlong(b, loc, op.getIndices(), op.getAxis());
  FailureOr<Value> scattered = scatterAlongRows(b, op, grad.rows, indices.rows, data.n);
  if (failed(scattered))
    return failure();
  return SmallVector<Value>{fromRows(b, loc, data, *scattered, tensorType(op.getDataGrad()))};
}

/// The first extreme's index along the axis, in the data's element type.
Lowered lowerSearch(OpBuilder &b, Operation *op, StringRef kernel, std::optional<int64_t> axis) {
  Location loc = op->getLoc();
  RankedTensorType result = tensorType(op->getResult(0));
  Rows r = rowsAlong(b, loc, op->getOperand(0), axis.value_or(sym::kNone));
  if (r.n == 0)
    return op->emitError("searching input tensor of shape ")
           << tensorType(op->getOperand(0)) << " along axis of zero dim-size is not allowed";
  Lowered found = callKernel(b, op, {kernel, result.getElementType(), /*integers=*/true}, r.rows,
                             {RankedTensorType::get({r.count}, b.getI64Type())},
                             {i64(b, loc, r.count), i64(b, loc, r.n)});
  if (failed(found))
    return failure();
  return SmallVector<Value>{reshapeTo(b, loc, convertElements(b, loc, (*found)[0], result.getElementType()),
                                      result.getShape())};
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
  checkGatherNdIndices(b, op, op.getIndices());
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
  FailureOr<Value> summed = scatterAddRows(b, op, grad, rows, tableRows);
  if (failed(summed))
    return failure();
  return SmallVector<Value>{reshapeTo(b, loc, *summed, data.getShape())};
}

/// The position along an axis of size m an index picks (static_cast to an
/// integer, then clipped into [0, m) or wrapped as Python does), as i64:
/// MXNet's pick and take.
Value pickedPosition(OpBuilder &b, Location loc, Value index, int64_t m, bool wrap) {
  auto c = [&](int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64); };
  Value j = convertScalar(b, loc, index, b.getI64Type());
  if (!wrap)
    return min(b, loc, max(b, loc, j, c(0)), c(m - 1));
  Value rest = b.create<arith::RemSIOp>(loc, j, c(m));
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, rest, c(0));
  return b.create<arith::SelectOp>(loc, negative, add(b, loc, rest, c(m)), rest);
}

Value toIndex(OpBuilder &b, Location loc, Value i64) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i64);
}

/// A shape as (before, along, after) the axis.
std::array<int64_t, 3> aroundAxis(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis], product(shape.drop_front(axis + 1))};
}

/// `data`'s shape as (before, along, after) the axis an op picks along;
/// picking from an empty axis would read outside the data.
FailureOr<std::array<int64_t, 3>> pickedAxis(Operation *op, Value data, int64_t axis) {
  RankedTensorType type = tensorType(data);
  std::array<int64_t, 3> dims = aroundAxis(type.getShape(), normalizeAxis(axis, type.getRank()));
  if (dims[1] > 0)
    return dims;
  return op->emitError("'") << op->getName().stripDialect() << "' picks along an axis of size 0";
}

/// data (L, M, T) and index (L, T): out[l, t] = data[l, j(index[l, t]), t].
Lowered lowerPick(OpBuilder &b, sym::PickOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  FailureOr<std::array<int64_t, 3>> view = pickedAxis(op, op.getData(), op.getAxis());
  if (failed(view))
    return failure();
  auto [l, m, t] = *view;
  Value data = reshapeTo(b, loc, op.getData(), {l, m, t}), index = reshapeTo(b, loc, op.getIndex(), {l, t});
  bool wrap = op.getMode() == "wrap";
  Value picked = generateElements(b, loc, RankedTensorType::get({l, t}, type.getElementType()),
                                  [&](OpBuilder &nb, Location nl, ValueRange at) {
    Value j = pickedPosition(nb, nl, nb.create<tensor::ExtractOp>(nl, index, at), m, wrap);
    return nb.create<tensor::ExtractOp>(nl, data, ValueRange{at[0], toIndex(nb, nl, j), at[1]}).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, picked, tensorType(op.getOutput()).getShape())};
}

/// grad[l, m, t] = out_grad[l, t] where index[l, t] picks m, else 0: each
/// (l, t) picks one position, so nothing sums.
Lowered lowerPickBackward(OpBuilder &b, sym::BackwardPickOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  FailureOr<std::array<int64_t, 3>> view = pickedAxis(op, op.getData(), op.getAxis());
  if (failed(view))
    return failure();
  auto [l, m, t] = *view;
  Value g = reshapeTo(b, loc, op.getOutGrad(), {l, t}), index = reshapeTo(b, loc, op.getIndex(), {l, t});
  bool wrap = op.getMode() == "wrap";
  Value grad = generateElements(b, loc, RankedTensorType::get({l, m, t}, type.getElementType()),
                                [&](OpBuilder &nb, Location nl, ValueRange at) {
    SmallVector<Value, 2> lt{at[0], at[2]};
    Value j = pickedPosition(nb, nl, nb.create<tensor::ExtractOp>(nl, index, lt), m, wrap);
    Value here = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, j,
                                          nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), at[1]));
    return nb.create<arith::SelectOp>(nl, here, nb.create<tensor::ExtractOp>(nl, g, lt),
                                      scalarConstant(nb, nl, type.getElementType(), 0.0)).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, grad, type.getShape())};
}

/// a (P, N, Q) and indices (I): out[p, i, q] = a[p, j(indices[i]), q].
Lowered lowerTake(OpBuilder &b, sym::TakeOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getA());
  FailureOr<std::array<int64_t, 3>> view = pickedAxis(op, op.getA(), op.getAxis());
  if (failed(view))
    return failure();
  auto [p, n, q] = *view;
  int64_t count = tensorType(op.getIndices()).getNumElements();
  Value a = reshapeTo(b, loc, op.getA(), {p, n, q}), indices = reshapeTo(b, loc, op.getIndices(), {count});
  if (op.getMode() == "raise")
    checkTakeIndices(b, op, indices, n);
  bool wrap = op.getMode() == "wrap";
  Value taken = generateElements(b, loc, RankedTensorType::get({p, count, q}, type.getElementType()),
                                 [&](OpBuilder &nb, Location nl, ValueRange at) {
    Value j = pickedPosition(nb, nl, nb.create<tensor::ExtractOp>(nl, indices, at[1]), n, wrap);
    return nb.create<tensor::ExtractOp>(nl, a, ValueRange{at[0], toIndex(nb, nl, j), at[2]}).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, taken, tensorType(op.getOutput()).getShape())};
}

/// out_grad (P, I, Q) summed into zeros (P, N, Q) at [p, j(indices[i]), q]:
/// as rows (I, P * Q) added into (N, P * Q), in index order.
Lowered lowerTakeBackward(OpBuilder &b, sym::BackwardTakeOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getA());
  FailureOr<std::array<int64_t, 3>> view = pickedAxis(op, op.getA(), op.getAxis());
  if (failed(view))
    return failure();
  auto [p, n, q] = *view;
  int64_t count = tensorType(op.getIndices()).getNumElements();
  Value indices = reshapeTo(b, loc, op.getIndices(), {count});
  bool wrap = op.getMode() == "wrap";
  Value rows = generateElements(b, loc, RankedTensorType::get({count}, b.getI64Type()),
                                [&](OpBuilder &nb, Location nl, ValueRange at) {
    return pickedPosition(nb, nl, nb.create<tensor::ExtractOp>(nl, indices, at), n, wrap);
  });
  Value g = reshapeTo(b, loc, op.getOutGrad(), {p, count, q});
  if (p > 1)
    g = transposeTo(b, loc, g, {1, 0, 2});
  FailureOr<Value> summed = scatterAddRows(b, op, reshapeTo(b, loc, g, {count, p * q}), rows, n);
  if (failed(summed))
    return failure();
  Value grad = reshapeTo(b, loc, *summed, {n, p, q});
  if (p > 1)
    grad = transposeTo(b, loc, grad, {1, 0, 2});
  return SmallVector<Value>{reshapeTo(b, loc, grad, type.getShape())};
}

/// out[i, d] = on_value where the index truncates to d, else off_value.
Lowered lowerOneHot(OpBuilder &b, sym::OneHotOp op) {
  Location loc = op.getLoc();
  RankedTensorType result = tensorType(op.getOutput());
  int64_t count = tensorType(op.getIndices()).getNumElements(), depth = op.getDepth();
  Value indices = reshapeTo(b, loc, op.getIndices(), {count});
  Type element = result.getElementType();
  Value hot = generateElements(b, loc, RankedTensorType::get({count, depth}, element),
                               [&](OpBuilder &nb, Location nl, ValueRange at) {
    Value j = convertScalar(nb, nl, nb.create<tensor::ExtractOp>(nl, indices, at[0]), nb.getI64Type());
    Value here = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, j,
                                          nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), at[1]));
    return nb.create<arith::SelectOp>(nl, here, scalarConstant(nb, nl, element, op.getOnValue()),
                                      scalarConstant(nb, nl, element, op.getOffValue())).getResult();
  });
  return SmallVector<Value>{reshapeTo(b, loc, hot, result.getShape())};
}

} // namespace

std::optional<Lowered> lowerIndexingOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::ArgsortOp o) { return lowerArgsort(b, o); })
      .Case([&](sym::TopkOp o) {
        return lowerTopk(b, o, o.getData(), o.getAxis(), o.getK(), o.getIsAscend(), o.getRetTyp());
      })
      .Case([&](sym::SortOp o) { return lowerTopk(b, o, o.getData(), o.getAxis(), 0, o.getIsAscend(), "value"); })
      .Case([&](sym::BackwardTopkOp o) { return lowerTopkBackward(b, o); })
      .Case([&](sym::ArgmaxOp o) { return lowerSearch(b, o, "symc_argmax_rows", o.getAxis()); })
      .Case([&](sym::ArgminOp o) { return lowerSearch(b, o, "symc_argmin_rows", o.getAxis()); })
      .Case([&](sym::PickOp o) { return lowerPick(b, o); })
      .Case([&](sym::BackwardPickOp o) { return lowerPickBackward(b, o); })
      .Case([&](sym::TakeOp o) { return lowerTake(b, o); })
      .Case([&](sym::BackwardTakeOp o) { return lowerTakeBackward(b, o); })
      .Case([&](sym::OneHotOp o) { return lowerOneHot(b, o); })
      .Case([&](sym::GatherNdOp o) { return lowerGatherNd(b, o); })
      .Case([&](sym::BackwardGatherNdOp o) { return lowerGatherNdBackward(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
