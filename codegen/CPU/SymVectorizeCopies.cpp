//===- SymVectorizeCopies.cpp - the sym-vectorize-copies pass -------------===//
//
// Bufferization's copies (a pad's interior, an inserted slice) are mostly
// rows contiguous in both buffers. As scalar loops, LLVM unrolls them fully
// and, unable to rule out aliasing, never vectorizes them; so they become
// loops of vector loads and stores here.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMVECTORIZECOPIES
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// Bits of one vector register (AVX2's).
constexpr int64_t kVectorBits = 256;

bool hasContiguousRows(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) && strides.back() == 1;
}

bool copiesByVectors(MemRefType from, MemRefType to) {
  Type element = from.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  return from.getRank() > 0 && bits >= 8 && bits % 8 == 0 && !ShapedType::isDynamic(from.getShape().back()) &&
         hasContiguousRows(from) && hasContiguousRows(to);
}

/// Moves `size` elements of the row at `indices` (the innermost one last)
/// from `from` to `to`.
void moveVector(OpBuilder &b, Location loc, Value from, Value to, ValueRange indices, int64_t size) {
  auto type = VectorType::get({size}, cast<MemRefType>(from.getType()).getElementType());
  Value v = b.create<vector::LoadOp>(loc, type, from, indices);
  b.create<vector::StoreOp>(loc, v, to, indices);
}

/// `from` copied into `to` (one shape) by rows of vectors along the
/// innermost dim, static and contiguous in both.
void copyByVectors(OpBuilder &b, Location loc, Value from, Value to) {
  auto fromType = cast<MemRefType>(from.getType());
  unsigned rank = fromType.getRank();
  int64_t width = fromType.getShape().back();
  int64_t lanes = std::max<int64_t>(1, kVectorBits / fromType.getElementTypeBitWidth());
  int64_t whole = width - width % lanes;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0), one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> lower(rank - 1, zero), upper, steps(rank - 1, one);
  for (unsigned i = 0; i + 1 < rank; ++i)
    upper.push_back(b.createOrFold<memref::DimOp>(loc, from, i));
  scf::buildLoopNest(b, loc, lower, upper, steps, [&](OpBuilder &nb, Location l, ValueRange rows) {
    SmallVector<Value> indices(rows);
    if (whole > 0) {
      Value end = nb.create<arith::ConstantIndexOp>(l, whole), step = nb.create<arith::ConstantIndexOp>(l, lanes);
      nb.create<scf::ForOp>(l, zero, end, step, std::nullopt, [&](OpBuilder &lb, Location ll, Value j, ValueRange) {
        SmallVector<Value> at(indices);
        at.push_back(j);
        moveVector(lb, ll, from, to, at, lanes);
        lb.create<scf::YieldOp>(ll);
      });
    }
    if (whole < width) {
      indices.push_back(nb.create<arith::ConstantIndexOp>(l, whole));
      moveVector(nb, l, from, to, indices, width - whole);
    }
  });
}

struct SymVectorizeCopiesPass : impl::SymVectorizeCopiesBase<SymVectorizeCopiesPass> {
  void runOnOperation() override {
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      auto from = dyn_cast<MemRefType>(copy.getInputs()[0].getType());
      auto to = dyn_cast<MemRefType>(copy.getOutputs()[0].getType());
      if (from && to && copiesByVectors(from, to))
        copies.push_back(copy);
    });
    for (linalg::CopyOp copy : copies) {
      OpBuilder b(copy);
      copyByVectors(b, copy.getLoc(), copy.getInputs()[0], copy.getOutputs()[0]);
      copy.erase();
    }
  }
};

} // namespace
} // namespace symc::cpu
