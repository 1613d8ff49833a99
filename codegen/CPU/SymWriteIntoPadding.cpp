//===- SymWriteIntoPadding.cpp - the sym-write-into-padding pass ----------===//
//
// A convolution with padding reads its input through a zero tensor.pad, a
// max pooling through a -inf one: once bufferized, a copy of the whole image
// into a bigger filled buffer, as long as the convolution itself where the
// image is large and the convolution cheap (a depthwise one). Where the
// image is computed for that padding alone, it is computed in the padded
// buffer instead, whose border alone is filled:
//
// - an elementwise linalg op (a generic, a transpose) gets the buffer's interior as its init;
// - a GEMM's thread tiles (scf.forall, sym-schedule-matmuls) whose rows are
//   the image's positions (the image is their expand_shape) write each tile
//   at its position in the interior. A tile's rows must lie within one image
//   row for that (the interior's rows are strided); sym-schedule-matmuls
//   cuts them so (paddedImageRowLength).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMWRITEINTOPADDING
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// The constant `pad` pads with, if it pads by static amounts, only dims in
/// `dims`.
TypedAttr constantPadding(tensor::PadOp pad, ArrayRef<int64_t> dims) {
  Value padding = pad.getConstantPaddingValue();
  TypedAttr value;
  if (!padding || !matchPattern(padding, m_Constant(&value)) || !pad.getResultType().hasStaticShape() ||
      ShapedType::isDynamicShape(pad.getStaticLow()) || ShapedType::isDynamicShape(pad.getStaticHigh()))
    return {};
  for (auto [dim, low, high] : llvm::enumerate(pad.getStaticLow(), pad.getStaticHigh()))
    if ((low != 0 || high != 0) && !llvm::is_contained(dims, int64_t(dim)))
      return {};
  return value;
}

bool isElementwiseMap(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() && op->getNumResults() == 1 &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); });
}

/// The result of the elementwise generic that alone reads `value` (a
/// contraction's epilogue), else `value`.
Value throughElementwise(Value value) {
  if (!value.hasOneUse())
    return value;
  auto epilogue = dyn_cast<linalg::GenericOp>(*value.user_begin());
  return epilogue && isElementwiseMap(epilogue) ? epilogue->getResult(0) : value;
}

/// The expand_shape that alone reads `rows` (dim 0: an image's positions)
/// and splits dim 0 alone, into the image's dims.
tensor::ExpandShapeOp imageOfRows(Value rows) {
  if (!rows.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*rows.user_begin());
  if (!expand)
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  return llvm::all_of(ArrayRef(groups).drop_front(),
                      [](const ReassociationIndices &group) { return group.size() == 1; })
             ? expand
             : tensor::ExpandShapeOp();
}

/// Whether the tile of `size` rows at `offset` lies within one image row of
/// `rowLength` positions: `size` divides the row, and `offset` is a multiple
/// of `size` (a constant, or an affine.apply whose expression is).
bool tileWithinRow(OpFoldResult offset, int64_t size, int64_t rowLength) {
  if (rowLength % size != 0)
    return false;
  if (std::optional<int64_t> constant = getConstantIntValue(offset))
    return *constant % size == 0;
  Value value = cast<Value>(offset);
  if (isa<BlockArgument>(value))
    return size == 1;
  auto apply = value.getDefiningOp<affine::AffineApplyOp>();
  return apply && apply.getAffineMap().getResult(0).isMultipleOf(size);
}

/// The offsets and sizes in the image `imageShape` (rows expanded to the
/// dims of `rows`) of the tile at `offsets`, `sizes` of the rows.
void tileInImage(OpBuilder &b, Location loc, ArrayRef<int64_t> imageShape, const ReassociationIndices &rows,
                 ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &imageOffsets,
                 SmallVector<OpFoldResult> &imageSizes) {
  AffineExpr position = b.getAffineDimExpr(0);
  int64_t stride = 1;
  SmallVector<OpFoldResult> rowOffsets, rowSizes;
  for (int64_t dim : llvm::reverse(rows)) {
    AffineExpr index = position.floorDiv(stride) % imageShape[dim];
    rowOffsets.insert(rowOffsets.begin(), affine::makeComposedFoldedAffineApply(b, loc, index, {offsets[0]}));
    rowSizes.insert(rowSizes.begin(), dim == rows.back() ? sizes[0] : b.getIndexAttr(1));
    stride *= imageShape[dim];
  }
  imageOffsets = rowOffsets;
  imageSizes = rowSizes;
  llvm::append_range(imageOffsets, offsets.drop_front());
  llvm::append_range(imageSizes, sizes.drop_front());
}

/// A tensor of `pad`'s type whose border (what `pad` adds) is `padding`,
/// the rest undefined: each padded side a slab filled with it.
Value filledBorder(OpBuilder &b, Location loc, tensor::PadOp pad, TypedAttr padding) {
  RankedTensorType type = pad.getResultType();
  ArrayRef<int64_t> shape = type.getShape();
  Value image = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  // (The pad's own constant may be defined in its region.)
  Value fill = b.create<arith::ConstantOp>(loc, padding);
  SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
  auto fillSlab = [&](unsigned dim, int64_t offset, int64_t size) {
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
        sizes = getAsIndexOpFoldResult(b.getContext(), shape);
    offsets[dim] = b.getIndexAttr(offset);
    sizes[dim] = b.getIndexAttr(size);
    Value slab = b.create<tensor::ExtractSliceOp>(loc, image, offsets, sizes, strides);
    Value filled = b.create<linalg::FillOp>(loc, fill, slab).getResult(0);
    image = b.create<tensor::InsertSliceOp>(loc, filled, image, offsets, sizes, strides);
  };
  for (auto [dim, low, high] : llvm::enumerate(pad.getStaticLow(), pad.getStaticHigh())) {
    if (low > 0)
      fillSlab(dim, 0, low);
    if (high > 0)
      fillSlab(dim, shape[dim] - high, high);
  }
  return image;
}

/// `pad`'s interior of `padded`.
tensor::ExtractSliceOp interiorOf(OpBuilder &b, Location loc, tensor::PadOp pad, Value padded) {
  unsigned rank = pad.getResultType().getRank();
  return b.create<tensor::ExtractSliceOp>(loc, padded, getAsIndexOpFoldResult(b.getContext(), pad.getStaticLow()),
                                          getAsIndexOpFoldResult(b.getContext(), pad.getSourceType().getShape()),
                                          SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

/// Whether a slice of `pad`'s result is exactly its interior (a stride-1
/// convolution's middle tap). Folded, that slice would read the computed
/// value itself, after its insertion into the padded tensor: the same
/// memory, but bufferization cannot tell and copies it out and back.
bool readsInteriorAlone(tensor::PadOp pad) {
  return llvm::any_of(pad->getUsers(), [&](Operation *user) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    return slice && slice.hasUnitStride() && slice.getStaticOffsets() == pad.getStaticLow() &&
           slice.getStaticSizes() == pad.getSourceType().getShape();
  });
}

/// Replaces `pad` by `interior`'s new value, `computed`, inserted back into
/// the padded tensor it was sliced from.
void replaceByInterior(RewriterBase &rewriter, tensor::PadOp pad, tensor::ExtractSliceOp interior, Value computed) {
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(pad, computed, interior.getSource(), interior.getMixedOffsets(),
                                                     interior.getMixedSizes(), interior.getMixedStrides());
}

/// An elementwise linalg op (a generic, a transpose) computed for `pad`
/// alone (maybe through a collapse_shape, as a pooling or Winograd's output
/// transform computes an image in row and column blocks) computes in its
/// interior.
LogicalResult writeElementwiseIntoPadding(RewriterBase &rewriter, tensor::PadOp pad) {
  auto collapse = pad.getSource().getDefiningOp<tensor::CollapseShapeOp>();
  Value image = collapse && collapse->hasOneUse() ? Value(collapse.getSrc()) : pad.getSource();
  auto op = image.getDefiningOp<linalg::LinalgOp>();
  TypedAttr padding = constantPadding(pad, llvm::to_vector(llvm::seq<int64_t>(0, pad.getResultType().getRank())));
  if (!op || !op->hasOneUse() || !isElementwiseMap(op) || op.getNumDpsInits() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || !padding)
    return failure();
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(op);
  tensor::ExtractSliceOp interior = interiorOf(rewriter, loc, pad, filledBorder(rewriter, loc, pad, padding));
  Value init = interior;
  if (image != pad.getSource())
    init = rewriter.create<tensor::ExpandShapeOp>(loc, image.getType(), interior, collapse.getReassociationIndices());
  rewriter.modifyOpInPlace(op, [&] { op.getDpsInitOperand(0)->set(init); });
  rewriter.setInsertionPoint(pad);
  replaceByInterior(rewriter, pad, interior, pad.getSource());
  return success();
}

/// `user`, a slice of a thread tile of rows, as the rank-reduced slice of
/// the tile's place in the image.
void retargetTile(RewriterBase &rewriter, Operation *user, ArrayRef<int64_t> imageShape,
                  const ReassociationIndices &rows) {
  auto slice = cast<OffsetSizeAndStrideOpInterface>(user);
  // (Not inside scf.forall.in_parallel, which holds the inserts alone.)
  rewriter.setInsertionPoint(isa<tensor::ParallelInsertSliceOp>(user) ? user->getParentOp() : user);
  SmallVector<OpFoldResult> offsets, sizes;
  tileInImage(rewriter, user->getLoc(), imageShape, rows, slice.getMixedOffsets(), slice.getMixedSizes(), offsets,
              sizes);
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(user)) {
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(extract, extract.getType(), extract.getSource(), offsets, sizes,
                                                        strides);
    return;
  }
  auto insert = cast<tensor::ParallelInsertSliceOp>(user);
  rewriter.setInsertionPoint(insert);
  rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(insert, insert.getSource(), insert.getDest(), offsets,
                                                             sizes, strides);
}

/// Thread tiles of rows (an scf.forall) whose image `pad` alone reads write
/// each tile into its place in `pad`'s interior.
LogicalResult writeTilesIntoPadding(RewriterBase &rewriter, tensor::PadOp pad) {
  auto expand = pad.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  auto forall = expand ? expand.getSrc().getDefiningOp<scf::ForallOp>() : scf::ForallOp();
  if (!forall || forall->getNumResults() != 1 || imageOfRows(forall->getResult(0)) != expand ||
      !forall.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return failure();
  ReassociationIndices rows = expand.getReassociationIndices()[0];
  TypedAttr padding = constantPadding(pad, rows);
  if (!padding)
    return failure();
  int64_t rowLength = expand.getResultType().getDimSize(rows.back());
  BlockArgument shared = forall.getRegionIterArgs()[0];
  for (Operation *user : shared.getUsers()) {
    auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(user);
    if (!slice || !isa<tensor::ExtractSliceOp, tensor::ParallelInsertSliceOp>(user) || !slice.hasUnitStride() ||
        slice.isDynamicSize(0) || !tileWithinRow(slice.getMixedOffsets()[0], slice.getStaticSize(0), rowLength))
      return failure();
  }

  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(forall);
  tensor::ExtractSliceOp interior = interiorOf(rewriter, loc, pad, filledBorder(rewriter, loc, pad, padding));
  ArrayRef<int64_t> imageShape = expand.getResultType().getShape();
  rewriter.modifyOpInPlace(forall, [&] {
    forall.getOutputsMutable()[0].set(interior);
    shared.setType(expand.getResultType());
    forall->getResult(0).setType(expand.getResultType());
  });
  for (Operation *user : llvm::make_early_inc_range(shared.getUsers()))
    retargetTile(rewriter, user, imageShape, rows);
  // A tile's slice and its insert must have the same offset values for
  // bufferization to see that the tile is computed in place: the floordiv
  // and mod of the image position are beyond what it can prove equal.
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, forall);
  rewriter.setInsertionPoint(pad);
  replaceByInterior(rewriter, pad, interior, forall->getResult(0));
  rewriter.eraseOp(expand);
  return success();
}

/// Whether a linalg op reads `pad`'s result as an operand of its own:
/// sym-distribute-threads may pad each of its thread tiles' slices (a
/// pooling's window reduction).
bool paddedPerTile(tensor::PadOp pad) {
  return pad->hasOneUse() && isa<linalg::LinalgOp>(*pad->user_begin());
}

/// An image computed for other readers too (a training forward's saved
/// activation), or not computed here at all, is copied into the interior
/// of a buffer whose border alone is filled: a generic that
/// sym-distribute-threads and sym-vectorize-elementwise run on threads and
/// vectors. (Tiled whole, a tensor.pad allocates, fills and copies a buffer
/// per tile, then copies that again into its result.)
LogicalResult copyIntoPadding(RewriterBase &rewriter, tensor::PadOp pad) {
  TypedAttr padding = constantPadding(pad, llvm::to_vector(llvm::seq<int64_t>(0, pad.getResultType().getRank())));
  if (!padding || paddedPerTile(pad))
    return failure();
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(pad);
  tensor::ExtractSliceOp interior = interiorOf(rewriter, loc, pad, filledBorder(rewriter, loc, pad, padding));
  unsigned rank = pad.getResultType().getRank();
  SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
  auto copy = rewriter.create<linalg::GenericOp>(
      loc, interior.getType(), pad.getSource(), interior.getResult(), maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &b, Location l, ValueRange args) { b.create<linalg::YieldOp>(l, args[0]); });
  replaceByInterior(rewriter, pad, interior, copy.getResult(0));
  return success();
}

struct SymWriteIntoPaddingPass : impl::SymWriteIntoPaddingBase<SymWriteIntoPaddingPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      if (!readsInteriorAlone(pad) && failed(writeTilesIntoPadding(rewriter, pad)) &&
          failed(writeElementwiseIntoPadding(rewriter, pad)))
        (void)copyIntoPadding(rewriter, pad);
  }
};

} // namespace

std::optional<int64_t> paddedImageRowLength(Value rows) {
  // (Before sym-schedule-matmuls fuses it, the epilogue reads the image.)
  tensor::ExpandShapeOp image = imageOfRows(throughElementwise(rows));
  Value padded = image ? throughElementwise(image.getResult()) : Value();
  if (!padded || !padded.hasOneUse())
    return std::nullopt;
  auto pad = dyn_cast<tensor::PadOp>(*padded.user_begin());
  ReassociationIndices dims = image.getReassociationIndices()[0];
  if (!pad || !constantPadding(pad, dims))
    return std::nullopt;
  return image.getResultType().getDimSize(dims.back());
}

} // namespace symc::cpu
