//===- LayerUtils.h - helpers shared by the layer lowerings -----*- C++ -*-===//
#ifndef SYMC_CODEGEN_CPU_LAYERUTILS_H
#define SYMC_CODEGEN_CPU_LAYERUTILS_H

#include "codegen/CPU/LoweringUtils.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"

namespace symc::cpu {

Value addFn(OpBuilder &b, Location loc, ValueRange args);
/// A generic whose init is `init`, with explicit maps and iterators.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init, llvm::ArrayRef<mlir::AffineMap> maps,
                   llvm::ArrayRef<mlir::utils::IteratorType> iterators, ScalarFn body);
Value zeros(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> shape, Type elementType);
/// C = A · B (2-d, or batched 3-d). Transposed operands are materialized so
/// that every product is a plain linalg.matmul / batch_matmul, the one form
/// sym-schedule-matmuls generates fast code for.
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, bool transA, bool transB);
/// C = A · Bᵀ for A (M, K) and B (N, K), as FullyConnected reads its weight,
/// without a transposed copy of the larger operand: few rows of A (a small
/// batch) stream B once in a lane contraction; otherwise the smaller of A
/// and B is transposed for a matmul.
Value matmulTransposedB(OpBuilder &b, Location loc, Value lhs, Value rhs);
/// The sum of products of `inputs` into zeros of `shape`, marked as a tap
/// contraction for sym-schedule-matmuls: out (M, middle..., N) over parallel
/// loops m, middle..., n (the middle ones cut to unit thread tiles), A =
/// input 0 (read along m), B = input 1 (read along n).
Value tapContraction(OpBuilder &b, Location loc, ValueRange inputs, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<mlir::AffineMap> maps, llvm::ArrayRef<mlir::utils::IteratorType> iterators);
/// The same contraction added to `init`.
Value tapContractionInto(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                         llvm::ArrayRef<mlir::AffineMap> maps, llvm::ArrayRef<mlir::utils::IteratorType> iterators);
/// Filters per strip of packed weights: a 512-bit register tile's columns.
constexpr int64_t kPackedFilters = 32;
/// Adds a per-channel `bias` along dim `axis`.
Value addBias(OpBuilder &b, Location loc, Value data, Value bias, int64_t axis = 1);

/// Per-spatial-dim window parameters, defaulted as MXNet does.
struct Window {
  llvm::SmallVector<int64_t> kernel, stride, dilate, pad;
  Window(llvm::ArrayRef<int64_t> k, llvm::ArrayRef<int64_t> s, llvm::ArrayRef<int64_t> d, llvm::ArrayRef<int64_t> p);
  unsigned rank() const { return kernel.size(); }
};

/// The tensor over loops of `shape` whose element at loops i is the sum
/// over k of terms[k][termMap(i)] * coefficients[k][i_coefficientDim]: a
/// weighted sum of tensors (a pass of a Winograd transform, a depthwise
/// convolution's taps), each weight a vector along one dim. The result's
/// dims are the loops', or the loops `resultDims` in that order (loops
/// ordered for the reads, the result laid out for its reader).
Value weightedSum(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> shape, ValueRange terms,
                  mlir::AffineMap termMap, ValueRange coefficients, unsigned coefficientDim,
                  llvm::ArrayRef<unsigned> resultDims = {});

/// The strided views of `padded` (N, H, W, C) that the taps (i, j) of a
/// 2-d window read, row-major, for an output of `outShape`: view (i, j)
/// [n, y, x, c] = padded[n, y s + i d, x s + j d, c], each a run of whole
/// channel vectors.
llvm::SmallVector<Value> channelsLastWindowViews(OpBuilder &b, Location loc, Value padded, const Window &w,
                                                 llvm::ArrayRef<int64_t> outShape);

/// `o * stride + k * dilate` for spatial dim i, with loop positions given.
mlir::AffineExpr windowExpr(OpBuilder &b, const Window &w, unsigned i, unsigned outDim, unsigned kDim);

/// Zeros of (outRows, width) with row i of `grad` (count, width) added to
/// row rows[i] (a 1-d i64 tensor), in index order (Kernels/Scatter.cpp): the
/// gradient of ops that read rows by position. Reported at `op` on failure.
mlir::FailureOr<Value> scatterAddRows(OpBuilder &b, mlir::Operation *op, Value grad, Value rows, int64_t outRows);
/// A tensor of `type` whose each element `body` computes from its indices
/// (linalg.index), without inputs: gathers and interpolations.
Value generateElements(OpBuilder &b, Location loc, RankedTensorType type,
                       llvm::function_ref<Value(OpBuilder &, Location, ValueRange indices)> body);

/// Index arithmetic for hand-built loops.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y); // of non-negative values
  Value min(Value x, Value y);
  Value max(Value x, Value y);
  /// An index as a floating-point scalar of `type`.
  Value toFloat(Value x, Type type);
};

/// Fills `init` (N, C, S...) one (n, c) plane per parallel iteration:
/// `fillPlane` gets n, c and the plane as a (1, 1, S...) slice of `init`,
/// indexed [0, 0, s...], and returns its new value.
using PlaneFn = llvm::function_ref<Value(OpBuilder &, Location, Value n, Value c, Value plane)>;
Value forEachPlane(OpBuilder &b, Location loc, Value init, PlaneFn fillPlane);

/// forEachPlane, visiting in each plane every position `o` of an output of
/// spatial shape `outSpatial`; `body` returns the plane's next value.
using PositionFn = llvm::function_ref<Value(OpBuilder &, Location, Value n, Value c, ValueRange o, Value plane)>;
Value forEachOutputPosition(OpBuilder &b, Location loc, Value init, llvm::ArrayRef<int64_t> outSpatial,
                            PositionFn body);

/// plane[0, 0, at...] += v.
Value addToPlane(OpBuilder &b, Location loc, Value plane, ValueRange at, Value v);
/// Adds `share` to every element of plane[0, 0, begins..ends).
mlir::scf::ValueVector spreadOverPlane(OpBuilder &b, Location loc, Value plane, ValueRange begins, ValueRange ends,
                                       Value share);

/// A loop nest over [begins, ends) carrying `iterArgs`, whose body returns
/// their next values.
mlir::scf::LoopNest loopNest(OpBuilder &b, Location loc, ValueRange begins, ValueRange ends, ValueRange iterArgs,
                             llvm::function_ref<mlir::scf::ValueVector(OpBuilder &, Location, ValueRange, ValueRange)> body);

} // namespace symc::cpu

#endif
