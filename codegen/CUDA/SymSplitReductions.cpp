//===- SymSplitReductions.cpp - the sym-split-reductions pass -------------===//
//
// On a GPU every output of a reduction is one thread summing its whole
// reduction serially (sym-map-to-gpu): BatchNorm's statistics over a batch
// of 32 at 56x56 are 64 threads summing 100k values each. This pass keeps
// some outer reduction dims serial and turns the others, the innermost
// (contiguous) one among them, into parallel ones, writing a partial
// result per value of them: neighbouring threads then read neighbouring
// elements at each step of their serial loops. A second generic reduces
// the partials (and is split again while it is still long). The partials
// start at the combiner's neutral element; the original init is the second
// generic's, so the results are those of the same sums taken in another
// order.
//
// Then every generic's parallel dims go first: linalg's parallel loops
// would make a leading reduction dim a loop on the host, launching a kernel
// per iteration.
//
//===----------------------------------------------------------------------===//
#include "codegen/CUDA/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/IRMapping.h"

namespace symc::cuda {
#define GEN_PASS_DEF_SYMSPLITREDUCTIONS
#include "codegen/CUDA/Passes.h.inc"
} // namespace symc::cuda

using namespace mlir;

namespace symc::cuda {
namespace {

using utils::IteratorType;

/// The combiner of each output of `op` (the op that folds a value into the
/// output's block argument), or none where some output is not a reduction
/// matchReduction recognizes with a neutral element.
std::optional<SmallVector<Operation *>> combinersOf(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    SmallVector<Operation *, 4> ops;
    if (!matchReduction(op.getRegionOutputArgs(), i, ops) || ops.size() != 1 ||
        !arith::getNeutralElement(ops.front()))
      return std::nullopt;
    combiners.push_back(ops.front());
  }
  return combiners;
}

class ReductionSplitter {
public:
  ReductionSplitter(int64_t maxSerial, int64_t minThreads) : maxSerial(maxSerial), minThreads(minThreads) {}

  /// Splits `op` where it pays, and its partials' reduction again; the
  /// generics it builds.
  void split(linalg::GenericOp op) {
    SmallVector<linalg::GenericOp> work{op};
    while (!work.empty()) {
      linalg::GenericOp next = work.pop_back_val();
      if (std::optional<linalg::GenericOp> partials = splitOnce(next))
        work.push_back(*partials);
    }
  }

private:
  /// The dim `op` reads its first input contiguously along, if any.
  static std::optional<unsigned> contiguousDim(linalg::GenericOp op) {
    if (op.getNumDpsInputs() == 0)
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    if (map.getNumResults() == 0)
      return std::nullopt;
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    return last ? std::optional<unsigned>(last.getPosition()) : std::nullopt;
  }

  /// The reduction dims of `op` to make parallel: all but the serial ones,
  /// chosen outermost first while their trips stay within maxSerial, never
  /// the contiguous dim (at least one, while there is another); none where
  /// the op has threads enough or a short reduction.
  SmallVector<unsigned> dimsToSplit(linalg::GenericOp op, ArrayRef<int64_t> ranges) {
    SmallVector<unsigned> reductions;
    int64_t parallelTrips = 1, reductionTrips = 1;
    for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray())) {
      if (type == IteratorType::reduction) {
        reductions.push_back(i);
        reductionTrips *= ranges[i];
      } else {
        parallelTrips *= ranges[i];
      }
    }
    if (reductionTrips <= maxSerial || parallelTrips >= minThreads || reductions.size() < 2)
      return {};
    std::optional<unsigned> contiguous = contiguousDim(op);
    SmallVector<unsigned> candidates(llvm::make_filter_range(reductions, [&](unsigned d) { return d != contiguous; }));
    if (candidates.empty())
      return {};
    llvm::SmallDenseSet<unsigned> serial;
    int64_t serialTrips = 1;
    for (unsigned d : candidates)
      if (serialTrips * ranges[d] <= maxSerial) {
        serial.insert(d);
        serialTrips *= ranges[d];
      }
    if (serial.empty()) // every candidate alone is longer: the shortest
      serial.insert(*llvm::min_element(candidates, [&](unsigned a, unsigned b) { return ranges[a] < ranges[b]; }));
    return SmallVector<unsigned>(llvm::make_filter_range(reductions, [&](unsigned d) { return !serial.contains(d); }));
  }

  /// Whether `op` is a generic this pass can split: tensors, static
  /// ranges, no index ops, a recognized reduction into each output, and the
  /// outputs all indexed alike (the partials' reduction is one generic).
  static bool splittable(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 || op.hasIndexSemantics())
      return false;
    if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
      return false;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    ArrayRef<AffineMap> outputMaps = ArrayRef(maps).drop_front(op.getNumDpsInputs());
    // Every parallel dim indexes the outputs (a partial per output element).
    return llvm::all_equal(outputMaps) && outputMaps.front().isProjectedPermutation() &&
           outputMaps.front().getNumResults() == op.getNumParallelLoops() && combinersOf(op);
  }

  /// Splits `op` once: the generic reducing its partials, or none.
  std::optional<linalg::GenericOp> splitOnce(linalg::GenericOp op) {
    if (!splittable(op))
      return std::nullopt;
    SmallVector<unsigned> split = dimsToSplit(op, op.getStaticLoopRanges());
    if (split.empty())
      return std::nullopt;
    SmallVector<Operation *> combiners = *combinersOf(op);
    OpBuilder b(op);
    linalg::GenericOp partials = partialReduction(b, op, split, combiners);
    linalg::GenericOp final = foldPartials(b, op, partials, split, combiners);
    op->replaceAllUsesWith(final->getResults());
    op->erase();
    return final;
  }

  /// `op` with the `split` reduction dims parallel, into partials filled
  /// with each combiner's neutral element: one per iteration of its
  /// parallel dims, laid out in their loop order (so that the threads
  /// write them contiguously).
  static linalg::GenericOp partialReduction(OpBuilder &b, linalg::GenericOp op, ArrayRef<unsigned> split,
                                            ArrayRef<Operation *> combiners) {
    Location loc = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned d : split)
      iterators[d] = IteratorType::parallel;
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      if (iterators[d] == IteratorType::parallel) {
        shape.push_back(ranges[d]);
        exprs.push_back(b.getAffineDimExpr(d));
      }
    SmallVector<Value> inits;
    for (auto [init, combiner] : llvm::zip(op.getDpsInits(), combiners)) {
      Value empty = b.create<tensor::EmptyOp>(loc, shape, cast<RankedTensorType>(init.getType()).getElementType());
      Value neutral = b.create<arith::ConstantOp>(loc, *arith::getNeutralElement(combiner));
      inits.push_back(b.create<linalg::FillOp>(loc, neutral, empty).getResult(0));
    }
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps.resize(op.getNumDpsInputs());
    maps.append(op.getNumDpsInits(), AffineMap::get(op.getNumLoops(), 0, exprs, b.getContext()));
    auto partials =
        b.create<linalg::GenericOp>(loc, TypeRange(ValueRange(inits)), op.getDpsInputs(), inits, maps, iterators);
    IRMapping none;
    op.getRegion().cloneInto(&partials.getRegion(), none);
    return partials;
  }

  /// The `partials` of `op` folded into its inits by its combiners: loops
  /// over the output's dims (parallel), then the split ones (reduction).
  static linalg::GenericOp foldPartials(OpBuilder &b, linalg::GenericOp op, linalg::GenericOp partials,
                                        ArrayRef<unsigned> split, ArrayRef<Operation *> combiners) {
    MLIRContext *ctx = b.getContext();
    AffineMap outputMap = op.getIndexingMapsArray().back();
    AffineMap partialMap = partials.getIndexingMapsArray().back();
    unsigned outRank = outputMap.getNumResults(), loops = outRank + split.size();
    SmallVector<AffineExpr> readExprs;
    for (AffineExpr e : partialMap.getResults()) {
      std::optional<unsigned> out = outputMap.getResultPosition(e);
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      readExprs.push_back(b.getAffineDimExpr(out ? *out : outRank + (llvm::find(split, d) - split.begin())));
    }
    SmallVector<AffineMap> maps(op.getNumDpsInits(), AffineMap::get(loops, 0, readExprs, ctx));
    maps.append(op.getNumDpsInits(), AffineMap::getMultiDimIdentityMap(loops, ctx).getMajorSubMap(outRank));
    SmallVector<IteratorType> iterators(outRank, IteratorType::parallel);
    iterators.append(split.size(), IteratorType::reduction);
    return b.create<linalg::GenericOp>(
        op.getLoc(), op.getResultTypes(), partials.getResults(), op.getDpsInits(), maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange args) {
          SmallVector<Value> folded;
          for (auto [i, combiner] : llvm::enumerate(combiners)) {
            BlockArgument out = op.getRegionOutputArgs()[i];
            IRMapping operands;
            for (Value operand : combiner->getOperands())
              operands.map(operand, operand == out ? args[combiners.size() + i] : args[i]);
            folded.push_back(nested.clone(*combiner, operands)->getResult(0));
          }
          nested.create<linalg::YieldOp>(l, folded);
        });
  }

  int64_t maxSerial, minThreads;
};

/// Interchanges `op`'s loops so that its parallel dims come first (each
/// kind in its order).
void parallelDimsFirst(linalg::GenericOp op) {
  SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto kind : {IteratorType::parallel, IteratorType::reduction})
    for (auto [i, type] : llvm::enumerate(iterators))
      if (type == kind)
        order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return;
  IRRewriter rewriter(op.getContext());
  rewriter.setInsertionPoint(op);
  (void)linalg::interchangeGenericOp(rewriter, op, order);
}

struct SymSplitReductionsPass : impl::SymSplitReductionsBase<SymSplitReductionsPass> {
  using SymSplitReductionsBase::SymSplitReductionsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    ReductionSplitter splitter(maxSerial, minThreads);
    for (linalg::GenericOp op : generics)
      splitter.split(op);
    getOperation().walk([](linalg::GenericOp op) { parallelDimsFirst(op); });
  }
};

} // namespace
} // namespace symc::cuda
