//===- Epilogues.cpp - Elementwise work moved onto a contraction's tiles --===//
//
// A convolution's result (F, positions), maybe padded to whole tiles, is
// sliced and reshaped to (N, F, H, W) before its BatchNorm and activation
// read it. Run as their own ops, those stream the whole output through
// memory once more, behind a join of the threads. Moved in place onto the
// contraction's result, in its index space, they run on each thread tile
// right after the tile is computed. Only what that index space can express
// moves: operands indexed by the rows (per-channel ones) or columns, unit
// dims, and operands laid out exactly like the consumed result, which the
// reshapes, undone, bring back to the contraction's layout.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Epilogues.h"

#include "codegen/CPU/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace symc::cpu {
namespace {

/// What a dim of a value reshaped from the contraction's result indexes in
/// that result: one of its dims, whole (from position 0); consecutive dims
/// whole, flattened (a channels-last output's filters, strips by lanes);
/// nothing (a unit dim); or something no per-dim map follows (part of a
/// dim, dims out of order, a shifted dim).
struct Origin {
  enum Kind { Whole, Flattened, Unit, Mixed } kind;
  unsigned dim = 0;   // the first, if flattened
  unsigned count = 1; // dims flattened
};

/// The reshapes and slices from the contraction's result to the generic
/// that reads it, and the origin of each dim of what that generic reads.
struct Chain {
  SmallVector<Operation *> ops;
  SmallVector<Origin> origins;
  Value consumed;
  linalg::GenericOp consumer;
};

bool staticUnitSlice(tensor::ExtractSliceOp slice) {
  return slice.hasUnitStride() && slice.getSourceType().getRank() == slice.getType().getRank() &&
         !ShapedType::isDynamicShape(slice.getStaticOffsets()) && !ShapedType::isDynamicShape(slice.getStaticSizes());
}

SmallVector<Origin> throughSlice(tensor::ExtractSliceOp slice, ArrayRef<Origin> in) {
  SmallVector<Origin> out(in);
  for (auto [i, origin] : llvm::enumerate(out)) {
    if (slice.getType().getDimSize(i) == 1)
      origin = {Origin::Unit};
    else if (slice.getStaticOffsets()[i] != 0 ||
             (origin.kind == Origin::Flattened && slice.getType().getDimSize(i) != slice.getSourceType().getDimSize(i)))
      origin = {Origin::Mixed};
  }
  return out;
}

SmallVector<Origin> throughExpand(tensor::ExpandShapeOp expand, ArrayRef<Origin> in) {
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  SmallVector<Origin> out(shape.size(), {Origin::Unit});
  for (auto [source, group] : llvm::enumerate(expand.getReassociationIndices())) {
    int64_t wide = llvm::count_if(group, [&](int64_t i) { return shape[i] != 1; });
    for (int64_t i : group)
      if (shape[i] != 1)
        out[i] = wide == 1 ? in[source] : Origin{Origin::Mixed};
  }
  return out;
}

/// The origin of wide dims `wide` flattened: consecutive whole dims in
/// order flatten to one origin, anything else is mixed.
Origin flattened(ArrayRef<Origin> wide) {
  unsigned next = wide.front().dim, count = 0;
  for (const Origin &origin : wide) {
    if ((origin.kind != Origin::Whole && origin.kind != Origin::Flattened) || origin.dim != next)
      return {Origin::Mixed};
    next += origin.count, count += origin.count;
  }
  return {Origin::Flattened, wide.front().dim, count};
}

SmallVector<Origin> throughCollapse(tensor::CollapseShapeOp collapse, ArrayRef<Origin> in) {
  SmallVector<Origin> out;
  for (ReassociationIndices group : collapse.getReassociationIndices()) {
    SmallVector<Origin> wide;
    for (int64_t i : group)
      if (in[i].kind != Origin::Unit)
        wide.push_back(in[i]);
    out.push_back(wide.empty() ? Origin{Origin::Unit} : wide.size() == 1 ? wide.front() : flattened(wide));
  }
  return out;
}

bool hasStaticShape(Value value) { return cast<RankedTensorType>(value.getType()).hasStaticShape(); }

/// Whether `consumer` is elementwise over what it reads through the chain
/// (`consumed`, read once, by the identity), writing a fresh tensor of that
/// shape and element type, its payload blind to the loop indices.
bool isElementwiseConsumer(linalg::GenericOp consumer, Value consumed) {
  if (consumer.getNumDpsInits() != 1 || consumer->getNumResults() != 1 || isScheduledContraction(consumer) ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() || consumer.hasIndexSemantics())
    return false;
  OpOperand *init = consumer.getDpsInitOperand(0);
  if (!init->get().getDefiningOp<tensor::EmptyOp>() || consumer.payloadUsesValueFromOperand(init) ||
      !consumer.getMatchingIndexingMap(init).isIdentity() || init->get().getType() != consumed.getType())
    return false;
  SmallVector<OpOperand *> inputs = consumer.getDpsInputOperands();
  auto reads = llvm::make_filter_range(inputs, [&](OpOperand *operand) { return operand->get() == consumed; });
  return llvm::range_size(reads) == 1 && consumer.getMatchingIndexingMap(*reads.begin()).isIdentity() &&
         llvm::all_of(inputs, [&](OpOperand *operand) {
           return hasStaticShape(operand->get()) && consumer.getMatchingIndexingMap(operand).isProjectedPermutation();
         });
}

std::optional<Chain> findChain(Value result) {
  Chain chain;
  unsigned rank = cast<RankedTensorType>(result.getType()).getRank();
  for (unsigned i = 0; i < rank; ++i)
    chain.origins.push_back({Origin::Whole, i});
  Value value = result;
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      if (!isElementwiseConsumer(generic, value))
        return std::nullopt;
      chain.consumed = value;
      chain.consumer = generic;
      return chain;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user); slice && staticUnitSlice(slice))
      chain.origins = throughSlice(slice, chain.origins);
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user); expand && hasStaticShape(expand.getResult()))
      chain.origins = throughExpand(expand, chain.origins);
    else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
      chain.origins = throughCollapse(collapse, chain.origins);
    else
      return std::nullopt;
    chain.ops.push_back(user);
    value = user->getResult(0);
  }
  return std::nullopt;
}

/// How an operand of the consumer is read in the contraction's index
/// space: either by its own dims, each following one dim of the result
/// (unit dims dropped, each kept dim padded to the result's size) or
/// several (the kept dim split into them), or, laid out like the consumed
/// value, through the chain undone.
struct Reindexing {
  bool undoChain = false;
  SmallVector<int64_t> kept;     // the operand dims read (the others are unit)
  SmallVector<AffineExpr> exprs; // of the kept dims, split, over the result's dims
  SmallVector<ReassociationIndices> splits; // of the kept dims into the exprs
  bool split() const { return splits.size() != exprs.size(); }
};

/// The per-dim reindexing of an operand read by `map`, if every dim it
/// reads follows one result dim (at most once, so that the map stays a
/// projected permutation) and, where it needs padding, it is a vector.
std::optional<Reindexing> reindexByDims(AffineMap map, const Chain &chain, RankedTensorType operandType,
                                         RankedTensorType resultType) {
  Reindexing r;
  llvm::SmallBitVector used(resultType.getRank());
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    Origin origin = chain.origins[cast<AffineDimExpr>(expr).getPosition()];
    if (origin.kind == Origin::Mixed || (origin.kind != Origin::Unit && used.test(origin.dim)))
      return std::nullopt;
    if (origin.kind == Origin::Unit)
      continue;
    r.kept.push_back(i);
    ReassociationIndices split;
    for (unsigned dim = origin.dim; dim < origin.dim + origin.count; ++dim) {
      used.set(dim);
      split.push_back(r.exprs.size());
      r.exprs.push_back(getAffineDimExpr(dim, map.getContext()));
    }
    r.splits.push_back(split);
  }
  // Only a vector read by one result dim may need padding to its size.
  for (auto [dim, split] : llvm::zip(r.kept, r.splits)) {
    int64_t size = 1;
    for (int64_t e : split)
      size *= resultType.getDimSize(cast<AffineDimExpr>(r.exprs[e]).getPosition());
    if (operandType.getDimSize(dim) != size && (r.kept.size() > 1 || r.split()))
      return std::nullopt;
  }
  return r;
}

/// How `operand` of the consumer is read in the contraction's index space,
/// if it can be.
std::optional<Reindexing> reindex(OpOperand *operand, const Chain &chain, RankedTensorType resultType) {
  AffineMap map = linalg::GenericOp(chain.consumer).getMatchingIndexingMap(operand);
  auto type = cast<RankedTensorType>(operand->get().getType());
  if (auto byDims = reindexByDims(map, chain, type, resultType))
    return byDims;
  // Laid out like the consumed value, and no slice to undo (that would need
  // a padded copy of the operand).
  if (!map.isIdentity() || type != chain.consumed.getType() ||
      llvm::any_of(chain.ops, [](Operation *op) { return isa<tensor::ExtractSliceOp>(op); }))
    return std::nullopt;
  Reindexing r;
  r.undoChain = true;
  return r;
}

/// `operand` reindexed as `r` says, for a result of `resultType`.
Value reindexed(OpBuilder &b, Location loc, Value operand, const Reindexing &r, const Chain &chain,
                RankedTensorType resultType) {
  if (r.undoChain) {
    for (Operation *op : llvm::reverse(chain.ops)) {
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        operand = b.create<tensor::CollapseShapeOp>(loc, operand, expand.getReassociationIndices());
      else
        operand = b.create<tensor::ExpandShapeOp>(loc, cast<tensor::CollapseShapeOp>(op).getSrcType(), operand,
                                                  cast<tensor::CollapseShapeOp>(op).getReassociationIndices());
    }
    return operand;
  }
  auto type = cast<RankedTensorType>(operand.getType());
  if (r.kept.size() != static_cast<size_t>(type.getRank())) {
    SmallVector<int64_t> shape;
    for (int64_t dim : r.kept)
      shape.push_back(type.getDimSize(dim));
    auto reduced = RankedTensorType::get(shape, type.getElementType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), strides(type.getRank(), b.getIndexAttr(1));
    operand = b.create<tensor::ExtractSliceOp>(loc, reduced, operand, offsets,
                                               getAsIndexOpFoldResult(b.getContext(), type.getShape()), strides);
  }
  if (r.split()) {
    SmallVector<int64_t> shape;
    for (AffineExpr e : r.exprs)
      shape.push_back(resultType.getDimSize(cast<AffineDimExpr>(e).getPosition()));
    return b.create<tensor::ExpandShapeOp>(loc, RankedTensorType::get(shape, type.getElementType()), operand,
                                           r.splits);
  }
  if (r.kept.size() != 1)
    return operand;
  // A vector along a padded result dim is padded too: the padded rows and
  // columns are computed and dropped.
  int64_t size = resultType.getDimSize(cast<AffineDimExpr>(r.exprs[0]).getPosition());
  int64_t length = cast<RankedTensorType>(operand.getType()).getDimSize(0);
  if (length == size)
    return operand;
  Type element = type.getElementType();
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(element));
  return b.create<tensor::PadOp>(loc, RankedTensorType::get({size}, element), operand,
                                 ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
                                 ArrayRef<OpFoldResult>{b.getIndexAttr(size - length)}, zero);
}

} // namespace

linalg::GenericOp fuseEpilogue(linalg::LinalgOp contraction) {
  if (contraction->getNumResults() != 1)
    return {};
  Value result = contraction->getResult(0);
  auto resultType = cast<RankedTensorType>(result.getType());
  std::optional<Chain> chain = findChain(result);
  if (!chain || getElementTypeOrSelf(chain->consumer->getResult(0).getType()) != resultType.getElementType())
    return {};
  linalg::GenericOp consumer = chain->consumer;
  SmallVector<std::pair<OpOperand *, Reindexing>> operands;
  for (OpOperand *operand : consumer.getDpsInputOperands()) {
    if (operand->get() == chain->consumed)
      continue;
    std::optional<Reindexing> r = reindex(operand, *chain, resultType);
    if (!r)
      return {};
    operands.emplace_back(operand, std::move(*r));
  }

  OpBuilder b(consumer);
  Location loc = consumer.getLoc();
  unsigned rank = resultType.getRank();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto &[operand, r] : operands) {
    inputs.push_back(reindexed(b, loc, operand->get(), r, *chain, resultType));
    maps.push_back(r.undoChain ? b.getMultiDimIdentityMap(rank) : AffineMap::get(rank, 0, r.exprs, b.getContext()));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto epilogue = b.create<linalg::GenericOp>(loc, resultType, inputs, ValueRange{result}, maps, iterators);
  // The payload, its read of the consumed value now a read of the init.
  Block *body = b.createBlock(&epilogue.getRegion());
  IRMapping mapping;
  for (auto &[operand, r] : operands)
    mapping.map(consumer.getMatchingBlockArgument(operand),
                body->addArgument(getElementTypeOrSelf(operand->get().getType()), loc));
  for (OpOperand *operand : consumer.getDpsInputOperands())
    if (operand->get() == chain->consumed)
      mapping.map(consumer.getMatchingBlockArgument(operand), body->addArgument(resultType.getElementType(), loc));
  for (Operation &op : consumer.getBody()->getOperations())
    b.clone(op, mapping);

  // The consumer's result: the epilogue's, reshaped as the chain did.
  b.setInsertionPointAfter(epilogue);
  IRMapping rebuilt;
  rebuilt.map(result, epilogue.getResult(0));
  for (Operation *op : chain->ops)
    b.clone(*op, rebuilt);
  consumer->getResult(0).replaceAllUsesWith(rebuilt.lookup(chain->consumed));
  consumer->erase();
  for (Operation *op : llvm::reverse(chain->ops))
    op->erase();
  return epilogue;
}

} // namespace symc::cpu
