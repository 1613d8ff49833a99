//===- SymVectorizeCopies.cpp - the sym-vectorize-copies pass -------------===//
//
// Bufferization's copies (a pad's interior, an inserted slice) are mostly
// rows contiguous in both buffers. As scalar loops, LLVM unrolls them fully
// and, unable to rule out aliasing, never vectorizes them; so they become
// loops of vector loads and stores here. A large copy outside any threaded
// loop (a layer's result moved into place, a padded image built) has its
// rows spread over the threads.
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

/// Elements from which a copy outside threaded loops is worth the threads'
/// fork and join (a few microseconds: about 64 KiB moved).
constexpr int64_t kMinThreadedCopy = 16384;
/// Pieces a threaded copy is cut into: few, as the threaded loops of the
/// layers have (each piece handed to a thread costs a call into libsymrt).
constexpr int64_t kThreadedCopyPieces = 16;

/// The outer dim whose rows the threads split: the first one of more than
/// one index, if the copy is large and not already on a thread.
std::optional<unsigned> threadedDim(linalg::CopyOp copy, MemRefType type) {
  if (!type.hasStaticShape() || type.getNumElements() < kMinThreadedCopy ||
      copy->getParentOfType<scf::ForallOp>() || copy->getParentOfType<scf::ParallelOp>())
    return std::nullopt;
  for (unsigned i = 0; i + 1 < type.getRank(); ++i)
    if (type.getDimSize(i) > 1)
      return i;
  return std::nullopt;
}

/// Moves `size` elements of the row at `indices` (the innermost one last)
/// from `from` to `to`.
void moveVector(OpBuilder &b, Location loc, Value from, Value to, ValueRange indices, int64_t size) {
  auto type = VectorType::get({size}, cast<MemRefType>(from.getType()).getElementType());
  Value v = b.create<vector::LoadOp>(loc, type, from, indices);
  b.create<vector::StoreOp>(loc, v, to, indices);
}

/// `from` copied into `to` (one shape) by rows of vectors along the
/// innermost dim, static and contiguous in both; dim `threaded`'s indices
/// spread over the threads (an scf.forall), if given.
void copyByVectors(OpBuilder &b, Location loc, Value from, Value to, std::optional<unsigned> threaded) {
  auto fromType = cast<MemRefType>(from.getType());
  unsigned rank = fromType.getRank();
  int64_t width = fromType.getShape().back();
  int64_t lanes = std::max<int64_t>(1, kVectorBits / fromType.getElementTypeBitWidth());
  int64_t whole = width - width % lanes;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0), one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto rowsOf = [&](OpBuilder &nb, Location l, ValueRange rows) {
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
  };
  SmallVector<Value> upper;
  for (unsigned i = 0; i + 1 < rank; ++i)
    upper.push_back(b.createOrFold<memref::DimOp>(loc, from, i));
  if (!threaded) {
    SmallVector<Value> lower(rank - 1, zero), steps(rank - 1, one);
    scf::buildLoopNest(b, loc, lower, upper, steps, rowsOf);
    return;
  }
  // Dims before the threaded one have one index; the threaded one goes in
  // up to kThreadedCopyPieces runs of rows, and the dims after it are loops
  // within each.
  unsigned t = *threaded;
  int64_t size = fromType.getDimSize(t), perPiece = llvm::divideCeil(size, kThreadedCopyPieces);
  Value pieceRows = b.create<arith::ConstantIndexOp>(loc, perPiece), end = upper[t];
  b.create<scf::ForallOp>(
      loc, ArrayRef<OpFoldResult>{b.getIndexAttr(llvm::divideCeil(size, perPiece))}, ValueRange{}, std::nullopt,
      [&](OpBuilder &fb, Location l, ValueRange piece) {
        Value first = fb.create<arith::MulIOp>(l, piece[0], pieceRows);
        Value last = fb.create<arith::MinSIOp>(l, fb.create<arith::AddIOp>(l, first, pieceRows), end);
        SmallVector<Value> lower(rank - 1 - t, zero), steps(rank - 1 - t, one), bounds(upper.begin() + t, upper.end());
        lower[0] = first;
        bounds[0] = last;
        scf::buildLoopNest(fb, l, lower, bounds, steps, [&](OpBuilder &nb, Location ll, ValueRange rest) {
          SmallVector<Value> rows(t, zero);
          llvm::append_range(rows, rest);
          rowsOf(nb, ll, rows);
        });
        fb.create<scf::InParallelOp>(l);
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
      copyByVectors(b, copy.getLoc(), copy.getInputs()[0], copy.getOutputs()[0],
                    threadedDim(copy, cast<MemRefType>(copy.getInputs()[0].getType())));
      copy.erase();
    }
  }
};

} // namespace
} // namespace symc::cpu
