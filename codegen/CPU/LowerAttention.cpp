//===- LowerAttention.cpp - interleaved self-attention -> matmuls ---------===//
//
// GluonNLP's fused attention keeps each head's query, key and value
// projections side by side: (seq, batch, heads * 3 * dim) is a
// (seq, batch, heads, 3, dim) view. Each op gathers the projections it reads
// into (batch * heads, seq, dim) operands of one batched matmul, and scatters
// gradients back into that interleaved layout.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace mlir;

namespace symc::cpu {
namespace {

/// The sizes of the interleaved layout.
struct Heads {
  int64_t seq, batch, heads, dim;

  Heads(Value qkv, int64_t heads) : heads(heads) {
    ArrayRef<int64_t> shape = tensorType(qkv).getShape();
    seq = shape[0];
    batch = shape[1];
    dim = shape[2] / (3 * heads);
  }
  /// (seq, batch, heads, 3, dim).
  SmallVector<int64_t> interleaved() const { return {seq, batch, heads, 3, dim}; }
  /// (batch * heads, seq, dim): one matrix per attention batch.
  SmallVector<int64_t> perHead() const { return {batch * heads, seq, dim}; }
};

enum Projection : int64_t { kQuery = 0, kKey = 1, kValue = 2 };

/// Projection `which` of `qkv` as (batch * heads, seq, dim).
Value gatherProjection(OpBuilder &b, Location loc, Value qkv, const Heads &h, Projection which) {
  Type element = tensorType(qkv).getElementType();
  Value view = reshapeTo(b, loc, qkv, h.interleaved());
  Value part = b.create<tensor::ExtractSliceOp>(
      loc, RankedTensorType::get({h.seq, h.batch, h.heads, h.dim}, element), view, ValueRange{}, ValueRange{},
      ValueRange{}, b.getDenseI64ArrayAttr({0, 0, 0, which, 0}),
      b.getDenseI64ArrayAttr({h.seq, h.batch, h.heads, 1, h.dim}), b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}));
  return reshapeTo(b, loc, transposeTo(b, loc, part, {1, 2, 0, 3}), h.perHead());
}

/// (batch * heads, seq, dim) back to (seq, batch, heads, dim).
Value seqMajor(OpBuilder &b, Location loc, Value perHead, const Heads &h) {
  Value split = reshapeTo(b, loc, perHead, {h.batch, h.heads, h.seq, h.dim});
  return transposeTo(b, loc, split, {2, 0, 1, 3});
}

/// The interleaved (seq, batch, heads * 3 * dim) tensor of three per-head
/// projections, a null one zeros.
Value scatterProjections(OpBuilder &b, Location loc, std::array<Value, 3> parts, const Heads &h, Type element) {
  RankedTensorType type = RankedTensorType::get(h.interleaved(), element);
  Value result = llvm::is_contained(parts, Value()) ? zeros(b, loc, type.getShape(), element)
                                                     : emptyLike(b, loc, type);
  for (auto [which, part] : llvm::enumerate(parts)) {
    if (!part)
      continue;
    Value rows = reshapeTo(b, loc, seqMajor(b, loc, part, h), {h.seq, h.batch, h.heads, 1, h.dim});
    result = b.create<tensor::InsertSliceOp>(
        loc, rows, result, ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr({0, 0, 0, static_cast<int64_t>(which), 0}),
        b.getDenseI64ArrayAttr({h.seq, h.batch, h.heads, 1, h.dim}), b.getDenseI64ArrayAttr({1, 1, 1, 1, 1}));
  }
  return reshapeTo(b, loc, result, {h.seq, h.batch, h.heads * 3 * h.dim});
}

/// x / sqrt(dim), MXNet's scale of the scores (applied to the products).
Value scaleByHeadDim(OpBuilder &b, Location loc, Value x, const Heads &h) {
  double scale = 1.0 / std::sqrt(static_cast<float>(h.dim));
  return mapElementwise(b, loc, tensorType(x), x, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), scale));
  });
}

Lowered lowerSelfAttQK(OpBuilder &b, sym::InterleavedMatmulSelfAttQKOp op) {
  Location loc = op.getLoc();
  Heads h(op.getQueriesKeysValues(), op.getHeads());
  Value q = gatherProjection(b, loc, op.getQueriesKeysValues(), h, kQuery);
  Value k = gatherProjection(b, loc, op.getQueriesKeysValues(), h, kKey);
  return SmallVector<Value>{scaleByHeadDim(b, loc, matmul(b, loc, q, k, false, true), h)};
}

Lowered lowerSelfAttValAtt(OpBuilder &b, sym::InterleavedMatmulSelfAttValAttOp op) {
  Location loc = op.getLoc();
  Heads h(op.getQueriesKeysValues(), op.getHeads());
  Value v = gatherProjection(b, loc, op.getQueriesKeysValues(), h, kValue);
  Value out = seqMajor(b, loc, matmul(b, loc, op.getAttention(), v, false, false), h);
  return SmallVector<Value>{reshapeTo(b, loc, out, tensorType(op.getOutput()).getShape())};
}

/// scores = s q kᵀ: dq = s g k, dk = s gᵀ q.
Lowered lowerSelfAttQKBackward(OpBuilder &b, sym::BackwardInterleavedMatmulSelfAttQKOp op) {
  Location loc = op.getLoc();
  Value qkv = op.getQueriesKeysValues(), g = op.getOutGrad();
  Heads h(qkv, op.getHeads());
  Value q = gatherProjection(b, loc, qkv, h, kQuery), k = gatherProjection(b, loc, qkv, h, kKey);
  Value dq = scaleByHeadDim(b, loc, matmul(b, loc, g, k, false, false), h);
  Value dk = scaleByHeadDim(b, loc, matmul(b, loc, g, q, true, false), h);
  return SmallVector<Value>{scatterProjections(b, loc, {dq, dk, Value()}, h, tensorType(qkv).getElementType())};
}

/// out = att v per head: dv = attᵀ g, datt = g vᵀ.
Lowered lowerSelfAttValAttBackward(OpBuilder &b, sym::BackwardInterleavedMatmulSelfAttValAttOp op) {
  Location loc = op.getLoc();
  Value qkv = op.getQueriesKeysValues();
  Heads h(qkv, op.getHeads());
  Value g = reshapeTo(b, loc, op.getOutGrad(), {h.seq, h.batch, h.heads, h.dim});
  g = reshapeTo(b, loc, transposeTo(b, loc, g, {1, 2, 0, 3}), h.perHead());
  Value v = gatherProjection(b, loc, qkv, h, kValue);
  Value dv = matmul(b, loc, op.getAttention(), g, true, false);
  Value dAttention = matmul(b, loc, g, v, false, true);
  Type element = tensorType(qkv).getElementType();
  return SmallVector<Value>{scatterProjections(b, loc, {Value(), Value(), dv}, h, element), dAttention};
}

} // namespace

std::optional<Lowered> lowerAttentionOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::InterleavedMatmulSelfAttQKOp o) { return lowerSelfAttQK(b, o); })
      .Case([&](sym::InterleavedMatmulSelfAttValAttOp o) { return lowerSelfAttValAtt(b, o); })
      .Case([&](sym::BackwardInterleavedMatmulSelfAttQKOp o) { return lowerSelfAttQKBackward(b, o); })
      .Case([&](sym::BackwardInterleavedMatmulSelfAttValAttOp o) { return lowerSelfAttValAttBackward(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
