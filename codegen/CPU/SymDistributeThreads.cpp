//===- SymDistributeThreads.cpp - the sym-distribute-threads pass ---------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMDISTRIBUTETHREADS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

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
  SmallVector<int64_t> sizes(ranges.size(), 0);
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

/// Tile sizes that walk `op`, when it moves the input's innermost dim
/// elsewhere, in squares of the two innermost dims (of the output and of
/// the input); empty otherwise. Row by row, every output row would read a
/// column of the input, a cache line per element; in squares, the lines a
/// square reads serve its whole width.
SmallVector<int64_t> transposeBlockSizes(Operation *op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op);
  if (!transpose)
    return {};
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t innermost = permutation.size() - 1;
  if (permutation.back() == innermost)
    return {};
  SmallVector<int64_t> sizes(permutation.size(), 1);
  sizes.back() = kTransposeBlock;
  sizes[llvm::find(permutation, innermost) - permutation.begin()] = kTransposeBlock;
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

/// The producers to compute inside `consumer`'s thread tiles (tiled by
/// `sizes`): linalg ops whose one use is an op of the group, read through a
/// projected permutation that keeps every dim the user is cut along (at the
/// consumer: its tiled dims; further up: all of the user's parallel dims),
/// so that the tiles partition each producer's work rather than redo it.
/// Each tile then runs the chain (a fill, a reduction, its elementwise
/// epilogue) on data its thread just wrote, where it is still in cache, and
/// the chain forks threads once.
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
      auto producer = operand.get().getDefiningOp<linalg::LinalgOp>();
      if (!producer || producer->getNumResults() != 1 || !producer->hasOneUse() ||
          producer->getBlock() != consumer->getBlock() || !producer.hasPureTensorSemantics() ||
          hasUntileableMaps(producer) || isScheduledContraction(producer))
        continue;
      AffineMap map = user.getMatchingIndexingMap(&operand);
      if (!map.isProjectedPermutation() ||
          !llvm::all_of(cutDims, [&](unsigned dim) { return map.isFunctionOfDim(dim); }))
        continue;
      group.insert(producer);
      SmallVector<unsigned> parallelDims;
      producer.getParallelDims(parallelDims);
      work.push_back({producer, parallelDims});
    }
  }
  return group;
}

/// `consumer` tiled by `sizes` in an scf.forall with `producers` computed
/// in each tile; the op that computes a tile, or null after an error.
Operation *tileAndFuse(IRRewriter &rewriter, TilingInterface consumer, ArrayRef<int64_t> sizes,
                       const llvm::SmallPtrSet<Operation *, 4> &producers) {
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer, bool) {
    return std::make_tuple(producers.contains(producer.getOwner()), false);
  });
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> fused = scf::tileConsumerAndFuseProducersUsingSCF(rewriter, consumer, options);
  if (failed(fused)) {
    consumer->emitError("internal error: cannot tile this op with its producers");
    return nullptr;
  }
  for (OpResult result : consumer->getResults())
    rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  rewriter.eraseOp(consumer);
  // Each fused producer is now read only by slices left unused, nearest
  // the consumer first.
  for (Operation *producer : fused->fusedProducers) {
    for (Operation *user : llvm::make_early_inc_range(producer->getUsers()))
      if (isa<tensor::ExtractSliceOp>(user) && user->use_empty())
        rewriter.eraseOp(user);
    if (producer->use_empty())
      rewriter.eraseOp(producer);
  }
  return fused->tiledAndFusedOps.front();
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
        fused.insert(producers.begin(), producers.end());
        tiled = producers.empty() ? tile(rewriter, op, sizes, scf::SCFTilingOptions::LoopType::ForallOp)
                                  : tileAndFuse(rewriter, op, sizes, producers);
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
