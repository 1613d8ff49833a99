//===- SymVectorizeElementwise.cpp - the sym-vectorize-elementwise pass ---===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMVECTORIZEELEMENTWISE
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// The widest element of `op`'s operands, in bits; 0 if one is not a
/// number of whole bytes (an i1 mask: memory holds a byte per element, a
/// vector of i1 loads packed bits).
unsigned widestElementBits(linalg::GenericOp op) {
  unsigned widest = 0;
  for (Value operand : op->getOperands()) {
    Type element = getElementTypeOrSelf(operand.getType());
    if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
      return 0;
    widest = std::max(widest, element.getIntOrFloatBitWidth());
  }
  return widest;
}

/// Whether LLVM lowers `op` on vectors: math ops that become libm calls
/// (tan, atan, erf, ...) are lowered for scalars only.
bool lowersOnVectors(Operation *op) {
  if (!isa<math::MathDialect>(op->getDialect()))
    return true;
  return isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::CopySignOp, math::CosOp, math::SinOp, math::ExpOp,
             math::Exp2Op, math::ExpM1Op, math::FloorOp, math::FmaOp, math::LogOp, math::Log10Op, math::Log1pOp,
             math::Log2Op, math::PowFOp, math::RoundEvenOp, math::RoundOp, math::RsqrtOp, math::SqrtOp,
             math::TruncOp>(op);
}

bool isElementwiseOnBuffers(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumReductionLoops() == 0 && op.getNumLoops() > 0 &&
         !op.getBody()
              ->walk([](Operation *inner) {
                return isa<tensor::ExtractOp>(inner) || !lowersOnVectors(inner) ? WalkResult::interrupt()
                                                                                 : WalkResult::advance();
              })
              .wasInterrupted();
}

/// Tile sizes that leave one vector along `dim` of `ranges`, of the most
/// lanes up to `lanes` that divide it (so that every step is whole: masked
/// steps are slower, and linalg cannot mask every body), unit steps along
/// the others (dynamic ones, a thread's share, included); empty when that
/// dim is dynamic or has no divisor to make a vector of.
SmallVector<int64_t> vectorTileSizes(ArrayRef<int64_t> ranges, unsigned dim, int64_t lanes) {
  if (ShapedType::isDynamic(ranges[dim]))
    return {};
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes[dim] = std::min(lanes, ranges[dim]);
  while (ranges[dim] % sizes[dim] != 0)
    --sizes[dim];
  if (sizes[dim] == 1)
    return {};
  return sizes;
}

/// Steps `sizes` grown to several rows of vectors along the innermost other
/// dim that some input does not vary along (a channels-last depthwise
/// convolution's weights, a BatchNorm's per-channel operands): such an
/// input is read once per step, into a register its rows share, not once
/// per vector. (A depthwise convolution's step reads 9 image vectors and 9
/// weight vectors per output vector; in steps of 7 rows, 9 and 9 / 7.) The
/// rows, at most 8, leave registers for the shared inputs and for an
/// accumulator and an operand per row; none where the maps are no
/// projected permutations (linalg vectorizes only those).
SmallVector<int64_t> withSharedRows(linalg::GenericOp op, SmallVector<int64_t> sizes, unsigned dim,
                                    unsigned vectorBits) {
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return sizes;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t registers = vectorBits >= 512 ? 32 : 16;
  for (int64_t row = int64_t(dim) - 1; row >= 0; --row) {
    if (ShapedType::isDynamic(ranges[row]) || ranges[row] == 1)
      continue;
    int64_t shared = llvm::count_if(op.getDpsInputOperands(), [&](OpOperand *input) {
      return !op.getMatchingIndexingMap(input).isFunctionOfDim(row);
    });
    if (shared == 0)
      continue;
    int64_t rows = std::min<int64_t>(8, (registers - shared) / 2);
    while (rows > 1 && ranges[row] % rows != 0)
      --rows;
    if (rows > 1)
      sizes[row] = rows;
    return sizes;
  }
  return sizes;
}

/// `value`, a static memref, as the view of its dims `kept` (the others
/// unit dims).
Value keepDims(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> kept) {
  auto type = cast<MemRefType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : kept)
    shape.push_back(type.getDimSize(dim));
  SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
  auto viewType = memref::SubViewOp::inferRankReducedResultType(shape, type, offsets, type.getShape(), strides);
  return b.create<memref::SubViewOp>(loc, cast<MemRefType>(viewType), value, offsets, type.getShape(), strides);
}

/// Output rows shorter than this (a stem's image going channels-last, 3
/// channels per row) are written faster element by element than as
/// vectors shuffled out of a transposed block.
constexpr int64_t kMinTransposedRow = 4;

/// A block of a transpose on buffers (sym-distribute-threads cuts them so)
/// whose dims but two are unit ones, as the 2-D transpose of views of those
/// two: a block that linalg vectorizes into one read, one vector.transpose
/// and one write. Null where the block has another form.
linalg::TransposeOp asTwoDimTranspose(IRRewriter &rewriter, linalg::TransposeOp op) {
  auto inType = dyn_cast<MemRefType>(op.getInput().getType());
  auto outType = dyn_cast<MemRefType>(op.getInit().getType());
  // (Elements of whole bytes: a vector of i1 would load packed bits.)
  Type element = inType ? inType.getElementType() : Type();
  if (!inType || !outType || !inType.hasStaticShape() || !outType.hasStaticShape() || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  SmallVector<int64_t> outDims;
  for (auto [dim, size] : llvm::enumerate(outType.getShape()))
    if (size != 1)
      outDims.push_back(dim);
  ArrayRef<int64_t> permutation = op.getPermutation();
  if (outDims.size() != 2 || permutation[outDims[0]] < permutation[outDims[1]] ||
      outType.getDimSize(outDims[1]) < kMinTransposedRow)
    return {};
  SmallVector<int64_t> inDims{permutation[outDims[1]], permutation[outDims[0]]};
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value input = keepDims(rewriter, loc, op.getInput(), inDims);
  Value init = keepDims(rewriter, loc, op.getInit(), outDims);
  auto flat = rewriter.create<linalg::TransposeOp>(loc, input, init, ArrayRef<int64_t>{1, 0});
  rewriter.eraseOp(op);
  return flat;
}

struct SymVectorizeElementwisePass : impl::SymVectorizeElementwiseBase<SymVectorizeElementwisePass> {
  using SymVectorizeElementwiseBase::SymVectorizeElementwiseBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](Operation *op) {
      if (auto generic = dyn_cast<linalg::GenericOp>(op); generic && isElementwiseOnBuffers(generic) &&
                                                          widestElementBits(generic) > 0)
        generics.push_back(generic);
      if (auto transpose = dyn_cast<linalg::TransposeOp>(op); transpose && transpose.hasPureBufferSemantics())
        transposes.push_back(transpose);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics)
      if (failed(vectorizeInSteps(rewriter, op)))
        return signalPassFailure();
    if (failed(transposeInRegisters(rewriter, transposes)))
      return signalPassFailure();
    // Steps are static: their transfers fold to in-bounds ones (no bounds
    // checks), and reads of outputs the body never reads go away.
    RewritePatternSet patterns(&getContext());
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }

  /// Each 2-D transpose block (asTwoDimTranspose) read into registers,
  /// transposed there by shuffles (16 x 16 of 32 bits by AVX-512's two-source
  /// shuffles in 4 rounds) and written as rows. Left to LLVM, a block's
  /// loops write its output columns by scatters, element by element.
  LogicalResult transposeInRegisters(IRRewriter &rewriter, ArrayRef<linalg::TransposeOp> transposes) {
    SmallVector<Operation *> vectorOps;
    for (linalg::TransposeOp op : transposes) {
      linalg::TransposeOp flat = asTwoDimTranspose(rewriter, op);
      if (!flat)
        continue;
      // (The vector ops replace it, erased, where it stood.)
      Block *block = flat->getBlock();
      Operation *before = flat->getPrevNode(), *after = flat->getNextNode();
      if (failed(linalg::vectorize(rewriter, flat)))
        return flat->emitError("internal error: cannot vectorize this transpose");
      for (Operation &vectorOp : llvm::make_range(before ? std::next(before->getIterator()) : block->begin(),
                                                  after->getIterator()))
        vectorOps.push_back(&vectorOp);
    }
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransformsOptions().setVectorTransposeLowering(
                      vector::VectorTransposeLowering::Shuffle16x16));
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    return applyOpPatternsAndFold(vectorOps, std::move(patterns), config);
  }

  LogicalResult vectorizeInSteps(IRRewriter &rewriter, linalg::GenericOp op) {
    std::optional<unsigned> dim = elementwiseVectorDim(op);
    if (!dim)
      return success();
    SmallVector<int64_t> sizes = vectorTileSizes(op.getStaticLoopRanges(), *dim, vectorBits / widestElementBits(op));
    if (sizes.empty())
      return success();
    sizes = withSharedRows(op, std::move(sizes), *dim, vectorBits);
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return op->emitError("internal error: cannot cut this op into vector steps");
    rewriter.eraseOp(op);
    Operation *step = tiled->tiledOps.front();
    // Every dim of a step is static.
    SmallVector<bool> scalable(sizes.size(), false);
    if (failed(linalg::vectorizeOpPrecondition(step, sizes, scalable)))
      return vectorizeCopyStep(rewriter, cast<linalg::GenericOp>(step), *dim, sizes[*dim]);
    if (failed(linalg::vectorize(rewriter, step, sizes, scalable)))
      return step->emitError("internal error: cannot vectorize this step");
    return success();
  }

  /// A step of a copy (its body yields its one input's element) whose maps
  /// linalg does not vectorize: a window read (y + i, an im2col copy's) is
  /// no projected permutation. Every dim of the step but `dim` is a unit
  /// one, and its operands are views that start at the step's elements, so
  /// where both read `dim` as their innermost index, the step is one vector
  /// read from the input at index 0 and written to the output. Other steps
  /// stay scalar.
  static LogicalResult vectorizeCopyStep(IRRewriter &rewriter, linalg::GenericOp step, unsigned dim, int64_t lanes) {
    if (step.getNumDpsInputs() != 1 || step.getNumDpsInits() != 1)
      return success();
    auto yield = cast<linalg::YieldOp>(step.getBody()->getTerminator());
    auto readsDimInnermost = [&](OpOperand *operand) {
      AffineMap map = step.getMatchingIndexingMap(operand);
      return map.getNumResults() > 0 && map.getResults().back() == rewriter.getAffineDimExpr(dim);
    };
    if (yield.getOperand(0) != step.getBody()->getArgument(0) || !readsDimInnermost(step.getDpsInputOperand(0)) ||
        !readsDimInnermost(step.getDpsInitOperand(0)))
      return success();
    Value input = step.getDpsInputOperand(0)->get(), output = step.getDpsInitOperand(0)->get();
    Location loc = step.getLoc();
    rewriter.setInsertionPoint(step);
    auto origin = [&](Value memref) {
      Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      return SmallVector<Value>(cast<MemRefType>(memref.getType()).getRank(), zero);
    };
    auto vectorType = VectorType::get({lanes}, getElementTypeOrSelf(input.getType()));
    Value vector = rewriter.create<vector::TransferReadOp>(loc, vectorType, input, origin(input), ArrayRef<bool>{true});
    rewriter.create<vector::TransferWriteOp>(loc, vector, output, origin(output), ArrayRef<bool>{true});
    rewriter.eraseOp(step);
    return success();
  }
};

} // namespace

// Only a dim every operand reads either contiguously (as its innermost
// index) or not at all: a vector that strides through memory would gather
// or scatter lane by lane, no faster than scalar code, and MLIR 19 lowers
// some such transfers wrongly.
std::optional<unsigned> elementwiseVectorDim(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto inner = llvm::find_if(llvm::reverse(ranges), [](int64_t range) { return range != 1; });
  if (inner == llvm::reverse(ranges).end())
    return std::nullopt;
  unsigned dim = ranges.size() - 1 - std::distance(llvm::reverse(ranges).begin(), inner);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [index, result] : llvm::enumerate(map.getResults())) {
      if (!result.isFunctionOfDim(dim))
        continue;
      auto read = dyn_cast<AffineDimExpr>(result);
      if (index + 1 != map.getNumResults() || !read || read.getPosition() != dim)
        return std::nullopt;
    }
  }
  return dim;
}

} // namespace symc::cpu
