//===- LowerRandom.cpp - ops that draw random numbers -> linalg -----------===//
//
// Dropout's mask and rrelu's slopes are uniform draws from a counter-based
// generator: each element hashes (step seed, node name, element index) with
// splitmix64's finalizer. The step seed is an argument of the function that
// the runtime sets before each run; the node name gives every node its own
// stream. Hashing the index, rather than advancing a state, makes the draws
// independent of loop order and threads, and a backward that recomputes a
// mask under the same seed gets the forward's.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace symc::cpu {
namespace {

Value constantI64(OpBuilder &b, Location loc, uint64_t value) {
  return b.create<arith::ConstantIntOp>(loc, static_cast<int64_t>(value), 64);
}

/// The step's seed, read from the enclosing function's seed argument (a
/// memref once sym-artifact-abi has given the function its C ABI).
Value stepSeed(OpBuilder &b, Operation *op) {
  BlockArgument seed = sym::seedArgument(op->getParentOfType<func::FuncOp>());
  if (isa<MemRefType>(seed.getType()))
    return b.create<memref::LoadOp>(op->getLoc(), seed, ValueRange{});
  return b.create<tensor::ExtractOp>(op->getLoc(), seed, ValueRange{});
}

/// splitmix64's finalizer: a bijection on 64-bit integers whose outputs look
/// independent even for consecutive inputs.
Value mix64(OpBuilder &b, Location loc, Value z) {
  auto xorShift = [&](Value x, unsigned shift) -> Value {
    return b.create<arith::XOrIOp>(loc, x, b.create<arith::ShRUIOp>(loc, x, constantI64(b, loc, shift)));
  };
  auto times = [&](Value x, uint64_t factor) -> Value {
    return b.create<arith::MulIOp>(loc, x, constantI64(b, loc, factor));
  };
  return xorShift(times(xorShift(times(xorShift(z, 30), 0xBF58476D1CE4E5B9ull), 27), 0x94D049BB133111EBull), 31);
}

/// The row-major position of the current element of a linalg.generic over
/// `shape`, as an i64.
Value linearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Value index = b.create<arith::ConstantIndexOp>(loc, 0);
  for (auto [dim, size] : llvm::enumerate(shape)) {
    index = b.create<arith::MulIOp>(loc, index, b.create<arith::ConstantIndexOp>(loc, size));
    index = b.create<arith::AddIOp>(loc, index, b.create<linalg::IndexOp>(loc, dim));
  }
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
}

/// One uniform draw in [lo, hi) per element of `type`, from `op`'s stream
/// number `substream` (a node that draws several tensors numbers them).
Value uniformDraws(OpBuilder &b, Operation *op, RankedTensorType type, double lo, double hi, uint64_t substream = 0) {
  Location loc = op->getLoc();
  uint64_t node = llvm::xxh3_64bits(sym::nodeName(loc)) ^ (substream * 0x9E3779B97F4A7C15ull);
  Value stream = mix64(b, loc, b.create<arith::XOrIOp>(loc, stepSeed(b, op), constantI64(b, loc, node)));
  return mapWithMaps(b, loc, type, {}, {}, [&](OpBuilder &b, Location loc, ValueRange) -> Value {
    // Weyl steps apart, as splitmix64 spaces its states.
    Value counter = b.create<arith::MulIOp>(loc, linearIndex(b, loc, type.getShape()),
                                            constantI64(b, loc, 0x9E3779B97F4A7C15ull));
    Value bits = mix64(b, loc, b.create<arith::AddIOp>(loc, stream, counter));
    // The top 24 bits, exact in float32 (computed there whatever the
    // element type: float16 cannot hold them), so draws stay below 1.
    Value top = b.create<arith::ShRUIOp>(loc, bits, constantI64(b, loc, 40));
    Type f32 = b.getF32Type();
    Value unit = mul(b, loc, b.create<arith::UIToFPOp>(loc, f32, top), scalarConstant(b, loc, f32, 1.0 / (1 << 24)));
    Value draw = add(b, loc, mul(b, loc, unit, scalarConstant(b, loc, f32, hi - lo)), scalarConstant(b, loc, f32, lo));
    return convertScalar(b, loc, draw, type.getElementType());
  });
}

} // namespace

Value dropoutMask(OpBuilder &b, Operation *op, RankedTensorType type, double p, uint64_t substream) {
  double keep = 1.0 - p;
  Value draws = uniformDraws(b, op, type, 0.0, 1.0, substream);
  return mapElementwise(b, op->getLoc(), type, draws, [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
    Type t = args[0].getType();
    Value kept = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, args[0], scalarConstant(b, loc, t, keep));
    return b.create<arith::SelectOp>(loc, kept, scalarConstant(b, loc, t, keep > 0 ? 1.0 / keep : 0.0),
                                     scalarConstant(b, loc, t, 0.0));
  });
}

namespace {

/// MXNet's inverted dropout: out = data * mask, the mask broadcast over
/// `axes`.
Lowered lowerDropout(OpBuilder &b, sym::DropoutOp op) {
  Location loc = op.getLoc();
  RankedTensorType maskType = tensorType(op.getMask());
  if (!isa<FloatType>(maskType.getElementType()))
    return op.emitError("the CPU backend supports 'Dropout' on floating-point tensors only");
  Value mask = dropoutMask(b, op, maskType, op.getP(), 0);
  Value out = mapElementwise(b, loc, tensorType(op.getOutput()), {op.getData(), mask},
                             [](OpBuilder &b, Location loc, ValueRange args) { return mul(b, loc, args[0], args[1]); });
  return SmallVector<Value>{out, mask};
}

/// rrelu in training: a slope drawn from [lower_bound, upper_bound) per
/// element, kept as the mask.
Lowered lowerRandomizedReLU(OpBuilder &b, sym::LeakyReLUOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getOutput());
  if (!isa<FloatType>(type.getElementType()))
    return op.emitError("the CPU backend supports 'LeakyReLU' on floating-point tensors only");
  Value slopes = uniformDraws(b, op, type, op.getLowerBound(), op.getUpperBound());
  Value out = mapElementwise(b, loc, type, {op.getData(), slopes}, [](OpBuilder &b, Location loc, ValueRange args) {
    return selectPositive(b, loc, args[0], args[0], mul(b, loc, args[1], args[0]));
  });
  return SmallVector<Value>{out, slopes};
}

} // namespace

std::optional<Lowered> lowerRandomOp(Operation *op, OpBuilder &b) {
  if (!sym::drawsRandomNumbers(op))
    return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::DropoutOp o) { return lowerDropout(b, o); })
      .Case([&](sym::LeakyReLUOp o) { return lowerRandomizedReLU(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
