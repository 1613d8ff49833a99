//===- LoweringUtils.h - building blocks for sym -> linalg ------*- C++ -*-===//
//
// Every sym op lowers to linalg/tensor/arith/math on tensors of static shape.
// Elementwise work becomes linalg.generic with numpy-broadcast indexing maps
// so that linalg's elementwise fusion can merge chains into one loop nest.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_CPU_LOWERINGUTILS_H
#define SYMC_CODEGEN_CPU_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include <optional>

namespace symc::cpu {

using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

/// The replacement values of one lowered op, or failure (already reported).
using Lowered = mlir::FailureOr<llvm::SmallVector<Value>>;

/// The permutations between NCHW and NHWC, as transposes take them.
inline constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
inline constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

/// Computes one output element from the input elements of a linalg.generic.
using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A possibly negative (Python-style) axis as an index into `rank` dims.
int64_t normalizeAxis(int64_t axis, int64_t rank);
/// The axes sum/mean reduce: all without `axis`, the complement with `exclude`.
llvm::SmallVector<int64_t> reducedAxes(std::optional<llvm::ArrayRef<int64_t>> axis, bool exclude,
                                       int64_t rank);

RankedTensorType tensorType(Value value);
Value emptyTensor(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> shape, Type elementType);
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type);
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type, double value);

/// A linalg.generic over `resultType`'s dims; each input is read through its
/// map. All loops are parallel.
Value mapWithMaps(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                  llvm::ArrayRef<mlir::AffineMap> inputMaps, ScalarFn fn);
/// Elementwise map with numpy broadcasting of the inputs to `resultType`.
Value mapElementwise(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                     ScalarFn fn);
/// Elementwise map over the same-shaped `tensors`, with 1-d `vectors`
/// indexed by dim `axis` (the scalar function gets tensors, then vectors).
Value mapAlongAxis(OpBuilder &b, Location loc, ValueRange tensors, int64_t axis, ValueRange vectors,
                   ScalarFn fn);

/// Reduces `input` over the sorted `axes` with `combine`, starting at `init`,
/// into elements of `accumulator` (default: the input's element type).
/// With `keepDims` the reduced axes stay as size 1.
Value reduce(OpBuilder &b, Location loc, Value input, llvm::ArrayRef<int64_t> axes, bool keepDims,
             double init, ScalarFn combine, Type accumulator = nullptr);

/// Any static reshape: collapse to 1-d, then expand to `shape`.
Value reshapeTo(OpBuilder &b, Location loc, Value input, llvm::ArrayRef<int64_t> shape);
Value transposeTo(OpBuilder &b, Location loc, Value input, llvm::ArrayRef<int64_t> permutation);
/// Pads with a constant; `low`/`high` have one entry per dim.
Value padConstant(OpBuilder &b, Location loc, Value input, llvm::ArrayRef<int64_t> low,
                  llvm::ArrayRef<int64_t> high, double value);

/// Scalar arithmetic that picks the float or integer arith op.
Value add(OpBuilder &b, Location loc, Value x, Value y);
Value sub(OpBuilder &b, Location loc, Value x, Value y);
Value mul(OpBuilder &b, Location loc, Value x, Value y);
Value div(OpBuilder &b, Location loc, Value x, Value y);
Value max(OpBuilder &b, Location loc, Value x, Value y);
Value min(OpBuilder &b, Location loc, Value x, Value y);
Value sigmoid(OpBuilder &b, Location loc, Value x);
/// x > 0 ? ifPositive : otherwise, for a float x.
Value selectPositive(OpBuilder &b, Location loc, Value x, Value ifPositive, Value otherwise);
/// A kernel of symc's kernel library (codegen/CPU/Kernels/KernelABI.h): its
/// name without the element suffix (_f32, _f64; with `integers` also _i32,
/// _i64) and the elements it runs on.
struct Kernel {
  llvm::StringRef name;
  Type element;
  bool integers = false;
};

/// Calls `kernel` on the buffers of `inputs`, then on new buffers of
/// `resultTypes`, then with `scalars`; returns the results as tensors.
/// Declares the kernel in the enclosing module; a failure (an element type
/// the library lacks) is reported at `op`.
Lowered callKernel(OpBuilder &b, mlir::Operation *op, const Kernel &kernel, ValueRange inputs,
                   llvm::ArrayRef<RankedTensorType> resultTypes, ValueRange scalars);
/// An i64 scalar operand of a kernel.
Value i64(OpBuilder &b, Location loc, int64_t value);

/// Numeric conversion between any two int/float element types.
Value convertScalar(OpBuilder &b, Location loc, Value x, Type to);

/// Softmax (or log-softmax) along `axis` of a ranked tensor.
Value softmax(OpBuilder &b, Location loc, Value input, int64_t axis, bool log);

} // namespace symc::cpu

#endif
