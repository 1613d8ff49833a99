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

/// Tile sizes that cut the leading parallel dims into about `chunks` pieces
/// (0 = untiled); empty when the op has nothing worth splitting.
SmallVector<int64_t> threadTileSizes(linalg::LinalgOp op, int64_t chunks) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> sizes(ranges.size(), 0);
  int64_t pieces = 1;
  for (unsigned i = 0; i < ranges.size() && pieces < chunks; ++i) {
    if (iterators[i] != utils::IteratorType::parallel || ShapedType::isDynamic(ranges[i]))
      break;
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
/// them wrong for floordiv/mod/ceildiv expressions, so those ops stay whole.
bool hasDivisionInMaps(linalg::LinalgOp op) {
  return llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr e) {
      bool division = false;
      e.walk([&](AffineExpr sub) {
        division |= sub.getKind() == AffineExprKind::FloorDiv ||
                    sub.getKind() == AffineExprKind::CeilDiv || sub.getKind() == AffineExprKind::Mod;
      });
      return division;
    });
  });
}

struct SymDistributeThreadsPass : impl::SymDistributeThreadsBase<SymDistributeThreadsPass> {
  using SymDistributeThreadsBase::SymDistributeThreadsBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && !op->getParentOfType<scf::ForallOp>() &&
          !hasDivisionInMaps(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> sizes = threadTileSizes(op, chunks);
      if (sizes.empty())
        continue;
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("internal error: cannot distribute this op over threads");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
} // namespace symc::cpu
