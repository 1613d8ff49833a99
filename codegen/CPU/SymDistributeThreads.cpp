//===- SymDistributeThreads.cpp - the sym-distribute-threads pass ---------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMDISTRIBUTETHREADS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// Positions (the iterations of the other parallel dims) up to which an
/// elementwise op over whole vectors of many channels is cut along the
/// channels alone: a 7x7 map's 49 positions cut in rows and thirds of rows
/// leave ragged tiles, and a thread reads the positions whose channels
/// another thread's GEMM tiles computed (strips of filters first).
constexpr int64_t kMostPositionsCutByChannels = 64;

/// Tile sizes that cut `vectorDim` alone into `chunks` pieces of whole
/// vectors, where the other parallel dims are few positions (see
/// kMostPositionsCutByChannels).
std::optional<SmallVector<int64_t>> vectorDimTiles(ArrayRef<int64_t> ranges, ArrayRef<utils::IteratorType> iterators,
                                                   std::optional<unsigned> vectorDim, int64_t chunks) {
  if (!vectorDim || ShapedType::isDynamic(ranges[*vectorDim]) || ranges[*vectorDim] % (chunks * kMaxVectorLanes) != 0)
    return std::nullopt;
  int64_t positions = 1;
  for (auto [i, range] : llvm::enumerate(ranges))
    if (i != *vectorDim && iterators[i] == utils::IteratorType::parallel)
      positions *= ShapedType::isDynamic(range) ? kMostPositionsCutByChannels + 1 : range;
  if (positions > kMostPositionsCutByChannels)
    return std::nullopt;
  SmallVector<int64_t> sizes(ranges.size(), 0);
  sizes[*vectorDim] = ranges[*vectorDim] / chunks;
  return sizes;
}

/// Tile sizes that cut the outermost parallel dims into about `chunks` pieces
/// (0 = untiled); empty when the op has nothing worth splitting or fewer
/// than `minIterations` iterations.
SmallVector<int64_t> threadTileSizes(TilingInterface op, int64_t chunks, int64_t minIterations) {
  OpBuilder b(op);
  SmallVector<int64_t> ranges;
  int64_t iterations = 1;
  for (Range range : op.getIterationDomain(b)) {
    std::optional<int64_t> size = getConstantIntValue(range.size);
    ranges.push_back(size ? *size : ShapedType::kDynamic);
    // Saturating at the threshold: a dynamic dim counts as large.
    iterations = std::min(size ? iterations * std::min(*size, minIterations) : minIterations, minIterations);
  }
  if (iterations < minIterations)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  std::optional<unsigned> vectorDim =
      generic && generic.getNumReductionLoops() == 0 ? elementwiseVectorDim(generic) : std::nullopt;
  SmallVector<int64_t> sizes(ranges.size(), 0);
  if (std::optional<SmallVector<int64_t>> byVectors = vectorDimTiles(ranges, iterators, vectorDim, chunks))
    return *byVectors;
  int64_t pieces = 1;
  for (unsigned i = 0; i < ranges.size() && pieces < chunks; ++i) {
    // Reduction dims stay whole within a thread (BatchNorm's per-channel
    // sums reduce dims 0, 2 and 3: threads split the channels).
    if (iterators[i] != utils::IteratorType::parallel || ShapedType::isDynamic(ranges[i]))
      continue;
    int64_t want = std::min(ranges[i], (chunks + pieces - 1) / pieces);
    if (want <= 1)
      continue;
    sizes[i] = (ranges[i] + want - 1) / want;
    // A vector dim is cut into whole vectors.
    if (i == vectorDim && ranges[i] % kMaxVectorLanes == 0)
      sizes[i] = llvm::alignTo(sizes[i], kMaxVectorLanes);
    pieces *= (ranges[i] + sizes[i] - 1) / sizes[i];
  }
  if (pieces < 2)
    return {};
  return sizes;
}

/// Tiling computes operand slices through the indexing maps; MLIR 19 gets
/// them wrong for floordiv/mod/ceildiv expressions, for reversed dims (a
/// negative coefficient, as in a flipped kernel) and for constant terms
/// (the slice starts at the constant, which the tiled map adds again), so
/// those ops stay whole.
bool hasUntileableMaps(linalg::LinalgOp op) {
  return llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr e) {
      bool untileable = false;
      e.walk([&](AffineExpr sub) {
        auto product = dyn_cast<AffineBinaryOpExpr>(sub);
        auto factor = product ? dyn_cast<AffineConstantExpr>(product.getRHS()) : AffineConstantExpr();
        untileable |= sub.getKind() == AffineExprKind::FloorDiv || sub.getKind() == AffineExprKind::CeilDiv ||
                      sub.getKind() == AffineExprKind::Mod ||
                      (sub.getKind() == AffineExprKind::Mul && factor && factor.getValue() < 0) ||
                      (sub.getKind() == AffineExprKind::Add && factor && factor.getValue() != 0);
      });
      return untileable;
    });
  });
}

/// Side of the squares a transpose of the innermost dim walks in.
constexpr int64_t kTransposeBlock = 16;

/// The side of a transpose's block along a dim of `range`: all of it up to
/// kTransposeBlock, else the most that divides it, a power of two where one
/// does (vectors of whole registers), so that every block is whole (static:
/// sym-vectorize-elementwise transposes those in registers).
int64_t blockSide(int64_t range) {
  if (ShapedType::isDynamic(range))
    return kTransposeBlock;
  if (range <= kTransposeBlock)
    return range;
  for (int64_t side = kTransposeBlock; side > 1; side /= 2)
    if (range % side == 0)
      return side;
  int64_t side = kTransposeBlock;
  while (range % side != 0)
    --side;
  return side;
}

/// Tile sizes that walk `op`, when it moves the input's innermost dim
/// elsewhere, in blocks of the two innermost dims (of the output and of
/// the input); empty otherwise. Row by row, every output row would read a
/// column of the input, a cache line per element; in blocks, the lines a
/// block reads serve its whole width.
SmallVector<int64_t> transposeBlockSizes(Operation *op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op);
  if (!transpose)
    return {};
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t innermost = permutation.size() - 1;
  if (permutation.back() == innermost)
    return {};
  SmallVector<int64_t> ranges = cast<linalg::LinalgOp>(op).getStaticLoopRanges();
  SmallVector<int64_t> sizes(permutation.size(), 1);
  sizes.back() = blockSide(ranges.back());
  int64_t inputInnermost = llvm::find(permutation, innermost) - permutation.begin();
  sizes[inputInnermost] = blockSide(ranges[inputInnermost]);
  return sizes;
}

/// `op` tiled by `sizes` in `loopType` loops and replaced by their results;
/// the op inside that computes a tile, or null after an error.
Operation *tile(IRRewriter &rewriter, TilingInterface op, ArrayRef<int64_t> sizes,
                scf::SCFTilingOptions::LoopType loopType) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType);
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled)) {
    op->emitError("internal error: cannot tile this op");
    return nullptr;
  }
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

/// The dims of what `map` reads that are cut where the reader's loop dims
/// `cutDims` are: each read by a cut dim alone. None where a cut dim is read
/// otherwise (a window along it: tiles would overlap) or not at all (every
/// tile would need the whole of the operand).
std::optional<SmallVector<unsigned>> cutResults(AffineMap map, ArrayRef<unsigned> cutDims) {
  SmallVector<unsigned> results;
  llvm::SmallBitVector covered(map.getNumDims());
  for (auto [index, expr] : llvm::enumerate(map.getResults())) {
    if (llvm::none_of(cutDims, [&](unsigned dim) { return expr.isFunctionOfDim(dim); }))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    results.push_back(index);
    covered.set(dim.getPosition());
  }
  if (!llvm::all_of(cutDims, [&](unsigned dim) { return covered.test(dim); }))
    return std::nullopt;
  return results;
}

/// Whether `pad` pads none of the dims in `dims`.
bool keepsDims(tensor::PadOp pad, ArrayRef<unsigned> dims) {
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  return llvm::all_of(dims, [&](unsigned dim) { return low[dim] == 0 && high[dim] == 0; });
}

/// Whether both `producer` and its reader reduce: a sum in two levels
/// (BatchNorm's statistics: blocks of rows, then the blocks' sums) keeps
/// its first level on threads of its own, each summing its blocks' rows
/// whole. Computed in the second level's tiles, which split the channels,
/// every thread would read every row for a few channels, in a loop LLVM
/// leaves scalar.
bool reducesBoth(linalg::LinalgOp producer, linalg::LinalgOp reader) {
  return producer.getNumReductionLoops() > 0 && reader.getNumReductionLoops() > 0;
}

/// The producers to compute inside `consumer`'s thread tiles (tiled by
/// `sizes`): ops whose one use is an op of the group, read so that the
/// tiles partition them (cutResults) rather than redo or overlap their work:
/// linalg ops (not scheduled contractions), and the zero padding of a
/// windowed reduction's input along dims it does not pad. Each tile then
/// runs the chain (a pad, a fill, a reduction, its elementwise epilogue) on
/// data its thread just wrote, where it is still in cache, and the chain
/// forks threads once.
llvm::SmallPtrSet<Operation *, 4> fusableProducers(linalg::LinalgOp consumer, ArrayRef<int64_t> sizes) {
  llvm::SmallPtrSet<Operation *, 4> group;
  SmallVector<std::pair<linalg::LinalgOp, SmallVector<unsigned>>> work;
  SmallVector<unsigned> tiledDims;
  for (auto [dim, size] : llvm::enumerate(sizes))
    if (size != 0)
      tiledDims.push_back(dim);
  work.push_back({consumer, tiledDims});
  while (!work.empty()) {
    auto [user, cutDims] = work.pop_back_val();
    for (OpOperand &operand : user->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!producer || producer->getNumResults() != 1 || !producer->hasOneUse() ||
          producer->getBlock() != consumer->getBlock())
        continue;
      std::optional<SmallVector<unsigned>> cut = cutResults(user.getMatchingIndexingMap(&operand), cutDims);
      if (!cut)
        continue;
      if (auto pad = dyn_cast<tensor::PadOp>(producer)) {
        if (keepsDims(pad, *cut))
          group.insert(pad);
        continue;
      }
      auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer);
      if (!linalgProducer || !linalgProducer.hasPureTensorSemantics() || hasUntileableMaps(linalgProducer) ||
          isScheduledContraction(linalgProducer) || reducesBoth(linalgProducer, user))
        continue;
      AffineMap resultMap = linalgProducer.getIndexingMapMatchingResult(producer->getResult(0));
      if (!resultMap.isProjectedPermutation())
        continue;
      group.insert(producer);
      SmallVector<unsigned> producerCut;
      for (unsigned result : *cut)
        producerCut.push_back(resultMap.getDimPosition(result));
      work.push_back({linalgProducer, producerCut});
    }
  }
  return group;
}

/// The tile `slice` of `pad`'s result, where `pad` pads none of the dims
/// the slice cuts (it takes padded dims whole), as the padding of the
/// source's slice: tensor.pad does not fuse through TilingInterface in
/// MLIR 19. Returns false where the slice has another form.
bool padTheSlice(IRRewriter &rewriter, tensor::ExtractSliceOp slice, tensor::PadOp pad) {
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  ArrayRef<int64_t> padded = pad.getResultType().getShape(), source = pad.getSourceType().getShape();
  if (!slice.hasUnitStride() || !pad.getConstantPaddingValue())
    return false;
  SmallVector<OpFoldResult> offsets(slice.getMixedOffsets()), sizes(slice.getMixedSizes());
  for (unsigned dim = 0; dim < padded.size(); ++dim) {
    if (low[dim] == 0 && high[dim] == 0)
      continue;
    if (getConstantIntValue(offsets[dim]) != 0 || getConstantIntValue(sizes[dim]) != padded[dim])
      return false;
    sizes[dim] = rewriter.getIndexAttr(source[dim]);
  }
  rewriter.setInsertionPoint(slice);
  Location loc = slice.getLoc();
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  Value sourceSlice = rewriter.create<tensor::ExtractSliceOp>(loc, pad.getSource(), offsets, sizes, strides);
  rewriter.replaceOpWithNewOp<tensor::PadOp>(slice, slice.getType(), sourceSlice, pad.getMixedLowPad(),
                                             pad.getMixedHighPad(), pad.getConstantPaddingValue());
  return true;
}

/// `consumer` tiled by `sizes` in an scf.forall with `producers` computed
/// in each tile; the op that computes a tile, or null after an error. The
/// producers now computed in the tiles are added to `fused`.
Operation *tileAndFuse(IRRewriter &rewriter, TilingInterface consumer, ArrayRef<int64_t> sizes,
                       const llvm::SmallPtrSet<Operation *, 4> &producers, llvm::DenseSet<Operation *> &fused) {
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer, bool) {
    bool fuse = producers.contains(producer.getOwner()) && !isa<tensor::PadOp>(producer.getOwner());
    return std::make_tuple(fuse, false);
  });
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(rewriter, consumer, options);
  if (failed(result)) {
    consumer->emitError("internal error: cannot tile this op with its producers");
    return nullptr;
  }
  for (OpResult value : consumer->getResults())
    rewriter.replaceAllUsesWith(value, result->replacements.lookup(value));
  rewriter.eraseOp(consumer);
  SmallVector<Operation *> done(result->fusedProducers.begin(), result->fusedProducers.end());
  result->loops.front()->walk([&](tensor::ExtractSliceOp slice) {
    auto pad = slice.getSource().getDefiningOp<tensor::PadOp>();
    if (pad && producers.contains(pad) && padTheSlice(rewriter, slice, pad))
      done.push_back(pad);
  });
  // Each fused producer is now read only by slices left unused, nearest
  // the consumer first.
  for (Operation *producer : done) {
    if (!fused.insert(producer).second)
      continue;
    for (Operation *user : llvm::make_early_inc_range(producer->getUsers()))
      if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
        rewriter.eraseOp(user);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
  }
  return result->tiledAndFusedOps.front();
}

struct SymDistributeThreadsPass : impl::SymDistributeThreadsBase<SymDistributeThreadsPass> {
  using SymDistributeThreadsBase::SymDistributeThreadsBase;

  void runOnOperation() override {
    // Linalg ops, and tensor.pad: bufferized, a pad is a copy that would
    // otherwise run on one thread.
    SmallVector<TilingInterface> ops;
    getOperation().walk([&](TilingInterface op) {
      if (op->getParentOfType<scf::ForallOp>())
        return;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation());
      if ((linalgOp && linalgOp.hasPureTensorSemantics() && !hasUntileableMaps(linalgOp)) ||
          isa<tensor::PadOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Consumers first, each taking in the producers it computes per tile.
    llvm::DenseSet<Operation *> fused;
    for (TilingInterface op : llvm::reverse(ops)) {
      if (fused.contains(op))
        continue;
      Operation *tiled = op;
      if (SmallVector<int64_t> sizes = threadTileSizes(op, chunks, minIterations); !sizes.empty()) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation());
        llvm::SmallPtrSet<Operation *, 4> producers;
        if (linalgOp)
          producers = fusableProducers(linalgOp, sizes);
        tiled = producers.empty() ? tile(rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForallOp)
                                  : tileAndFuse(rewriter, op, sizes, producers, fused);
      }
      if (!tiled)
        return signalPassFailure();
      if (SmallVector<int64_t> sizes = transposeBlockSizes(tiled); !sizes.empty() &&
          !tile(rewriter, cast<TilingInterface>(tiled), sizes, scf::SCFTilingOptions::LoopType::ForOp))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace symc::cpu
