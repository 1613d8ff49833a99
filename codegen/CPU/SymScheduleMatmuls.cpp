//===- SymScheduleMatmuls.cpp - the sym-schedule-matmuls pass -------------===//
//
// Matmuls are scheduled by a transform-dialect script generated per op from
// its static shape (tile sizes, which loops need peeling), then interpreted
// in place. The recipe (shared/TOOLCHAIN.md, "GEMM codegen"): tile on tensors,
// keep the register tile's accumulator in registers across k, lower the
// contraction to outer products.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

#include "codegen/CPU/Epilogues.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/FormatVariadic.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMSCHEDULEMATMULS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// Names the schedule of the i-th op: `<prefix><i>`.
constexpr llvm::StringLiteral kSequencePrefix = "__schedule";

struct MicroKernel {
  int64_t mr, nr;
};

/// Register tiles of MR x NR/lanes accumulators (16 of AVX-512's 32 zmm,
/// 12 of AVX2's 16 ymm) that leave room for their operands, largest first.
SmallVector<MicroKernel> microKernels(unsigned vectorBits) {
  if (vectorBits >= 512)
    return {{8, 32}, {7, 32}, {6, 32}, {4, 32}, {2, 32}, {1, 32}};
  return {{6, 16}, {4, 16}, {2, 16}, {1, 16}};
}

/// The kernel for M rows padded with zero rows to a multiple of MR that
/// costs least: the fewest padded rows, each weighed by the B loads its tile
/// shares, 1 / MR.
MicroKernel cheapestMicroKernel(unsigned vectorBits, int64_t m) {
  SmallVector<MicroKernel> kernels = microKernels(vectorBits);
  auto cost = [&](MicroKernel k) { return llvm::alignTo(m, k.mr) * (1.0 + 1.0 / k.mr); };
  return *llvm::min_element(kernels, [&](MicroKernel a, MicroKernel b) { return cost(a) < cost(b); });
}

/// The first kernel whose MR divides M, so that rows need no remainder,
/// unless that leaves MR = 1 for M > 1: each row then streams all of B on
/// its own, so M is better padded (cheapestMicroKernel).
MicroKernel pickMicroKernel(unsigned vectorBits, int64_t m) {
  for (MicroKernel k : microKernels(vectorBits))
    if (m % k.mr == 0 && (k.mr > 1 || m == 1))
      return k;
  return cheapestMicroKernel(vectorBits, m);
}

struct Tiling {
  unsigned batchDims;
  int64_t mt, nt, kt, mr, nr;
  bool peelI, peelJ, chunkK;
};

/// M, N and K of a (batch) matmul.
std::array<int64_t, 3> matmulSizes(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned batch = ranges.size() - 3;
  return {ranges[batch], ranges[batch + 1], ranges[batch + 2]};
}

Tiling chooseTiling(linalg::LinalgOp op, MicroKernel kernel) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned batch = ranges.size() - 3;
  auto [m, n, k] = matmulSizes(op);
  Tiling t;
  t.batchDims = batch;
  t.mr = std::min(kernel.mr, m);
  t.nr = kernel.nr;
  // Thread tiles: whole register tiles, at most about 96 x 128 (A and B
  // panels in L2), of equal sizes so that threads get equal work.
  int64_t mTiles = llvm::divideCeil(m, 96), nTiles = llvm::divideCeil(n, 128);
  // A few tiles split evenly over an even thread count only when even
  // (worth it for products big enough to be worth two threads).
  if (mTiles * nTiles % 2 == 1 && mTiles * nTiles < 16 && m * n >= 4096) {
    if (n / (nTiles + 1) >= t.nr)
      ++nTiles;
    else if (m / (mTiles + 1) >= t.mr)
      ++mTiles;
  }
  t.mt = llvm::alignTo(llvm::divideCeil(m, mTiles), t.mr);
  t.nt = llvm::alignTo(llvm::divideCeil(n, nTiles), t.nr);
  t.kt = 256;
  t.chunkK = k > t.kt;
  // (A unit-step loop has no remainder to peel.)
  t.peelI = t.mr > 1 && (m % t.mt != 0 || t.mt % t.mr != 0);
  t.peelJ = n % t.nt != 0 || t.nt % t.nr != 0;
  return t;
}

/// `values` as a transform-script list: [a, b, ...].
std::string joined(ArrayRef<int64_t> values) {
  SmallVector<std::string> parts;
  for (int64_t v : values)
    parts.push_back(std::to_string(v));
  return "[" + llvm::join(parts, ", ") + "]";
}

std::string sizes(unsigned batchDims, std::initializer_list<int64_t> rest, int64_t batchValue) {
  SmallVector<int64_t> values(batchDims, batchValue);
  values.append(rest);
  return joined(values);
}

/// An epilogue (fuseEpilogue) scheduled with its contraction: the operand
/// number of its init (the contraction's result), its thread tile sizes
/// (the contraction's, over the rows, any middle dims and the columns), and
/// the columns of its vectors.
struct EpilogueTiling {
  unsigned initOperand;
  SmallVector<int64_t> threadSizes;
  int64_t nr;
};

/// Marks an epilogue, for its schedule to find it among its thread tile's ops.
constexpr llvm::StringLiteral kEpilogueAttr = "symc.epilogue";

/// The script fragment that tiles the epilogue `%epi<id>` into an
/// scf.forall and fuses its contraction `%op<id>` into the tiles, in place
/// on the tile the epilogue then rewrites.
std::string epilogueThreadTileScript(int64_t id, const EpilogueTiling &e) {
  return llvm::formatv(R"(
    %op{0} = transform.get_producer_of_operand %epi{0}[{1}] : (!transform.any_op) -> !transform.any_op
    %epithread{0}, %forall{0}e = transform.structured.tile_using_forall %epi{0} tile_sizes {2} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %init{0} = transform.get_producer_of_operand %op{0}[2] : (!transform.any_op) -> !transform.any_op
    %thread{0}, %forall{0} = transform.structured.fuse_into_containing_op %op{0} into %forall{0}e : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                       id, e.initOperand, joined(e.threadSizes))
      .str();
}

/// The script fragment that vectorizes the epilogue of thread tile `id`,
/// a row of NR columns at a time.
std::string epilogueVectorizeScript(int64_t id, const EpilogueTiling &e) {
  size_t rank = e.threadSizes.size();
  SmallVector<int64_t> rowSizes(rank, 1);
  rowSizes.back() = e.nr;
  return llvm::formatv(R"(
    %epitile{0} = transform.structured.match attributes {{{1}} in %forall{0}b : (!transform.any_op) -> !transform.any_op
    %epirow{0}, %epiloops{0}:{3} = transform.structured.tile_using_for %epitile{0} tile_sizes {2} : (!transform.any_op) -> ({4})
    transform.structured.vectorize %epirow{0} vector_sizes {2} : !transform.any_op
)",
                       id, kEpilogueAttr, joined(rowSizes), rank,
                       llvm::join(SmallVector<std::string>(rank + 1, "!transform.any_op"), ", "))
      .str();
}

/// Whether `value` is a fill of zeros.
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The script fragment that tiles op `id` into an scf.forall of
/// `threadSizes` tiles (or fuses it into its epilogue's), its zero init
/// fused in (unless it adds to a value, `zeroInit` false), then, given
/// `chunkSizes`, chunks its k loop. `tiled` is set to the handle of the op
/// to tile next.
std::string threadTileScript(int64_t id, const std::string &threadSizes, const std::string &chunkSizes,
                             const std::optional<EpilogueTiling> &epilogue, std::string &tiled,
                             bool zeroInit = true) {
  std::string s;
  if (!zeroInit) {
    assert(!epilogue && "an epilogue fuses a contraction of zero init");
    s = llvm::formatv(R"(
    %thread{0}, %forall{0}b = transform.structured.tile_using_forall %op{0} tile_sizes {1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                      id, threadSizes);
  } else {
    s = epilogue ? epilogueThreadTileScript(id, *epilogue) : llvm::formatv(R"(
    %init{0} = transform.get_producer_of_operand %op{0}[2] : (!transform.any_op) -> !transform.any_op
    %thread{0}, %forall{0} = transform.structured.tile_using_forall %op{0} tile_sizes {1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                                                                       id, threadSizes).str();
    s += llvm::formatv(R"(
    %fused{0}, %forall{0}b = transform.structured.fuse_into_containing_op %init{0} into %forall{0} : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                       id);
  }
  if (epilogue)
    s += epilogueVectorizeScript(id, *epilogue);
  tiled = "%thread" + std::to_string(id);
  if (chunkSizes.empty())
    return s;
  s += llvm::formatv(R"(
    %chunk{0}, %kloop{0} = transform.structured.tile_using_for %thread{0} tile_sizes {1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                     id, chunkSizes);
  tiled = "%chunk" + std::to_string(id);
  return s;
}

/// The transform op cutting `{1}` into register tiles of sizes `{2}` in
/// loop order `{3}`. With `fuseInit` (the reduction is not chunked), the
/// zero init moves into each register tile, where it is a vector of zeros
/// the accumulator starts from: the thread tile is neither zeroed in memory
/// nor read back.
std::string registerTileOp(bool fuseInit) {
  return fuseInit ? "transform.structured.fuse {1} {2} interchange {3}"
                  : "transform.structured.tile_using_for {1} tile_sizes {2} interchange = {3}";
}

/// Register tiles walk j outside i (BLIS's jr/ir order): one KC x NR strip of
/// B stays in L1 while the MR-row blocks of A stream past it.
std::string interchange(unsigned batchDims) {
  SmallVector<std::string> order;
  for (unsigned i = 0; i < batchDims; ++i)
    order.push_back(std::to_string(i));
  order.push_back(std::to_string(batchDims + 1));
  order.push_back(std::to_string(batchDims));
  order.push_back(std::to_string(batchDims + 2));
  return "[" + llvm::join(order, ", ") + "]";
}

/// The script fragment that tiles matmul `id`.
std::string tileScript(int64_t id, const Tiling &t, const std::optional<EpilogueTiling> &epilogue) {
  std::string chunk;
  std::string s = threadTileScript(id, sizes(t.batchDims, {t.mt, t.nt}, 1),
                                   t.chunkK ? sizes(t.batchDims, {0, 0, t.kt}, 0) : "", epilogue, chunk);
  s += llvm::formatv((std::string(R"(
    %reg{0}, %jloop{0}, %iloop{0} = )") + registerTileOp(!t.chunkK) + R"( : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %step{0}, %kstep{0} = transform.structured.tile_using_for %reg{0} tile_sizes {4} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)").c_str(),
                     id, chunk, sizes(t.batchDims, {t.mr, t.nr}, 0), interchange(t.batchDims),
                     sizes(t.batchDims, {0, 0, 1}, 0));
  auto peel = [&](const char *loop) {
    return llvm::formatv(R"(
    %{0}{1}for = transform.cast %{0}{1} : !transform.any_op to !transform.op<"scf.for">
    %{0}{1}main, %{0}{1}rest = transform.loop.peel %{0}{1}for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
)",
                         loop, id)
        .str();
  };
  // Inner loop first: peeling the outer one clones (and invalidates) it.
  if (t.peelI)
    s += peel("iloop");
  if (t.peelJ)
    s += peel("jloop");
  // Peeled main loops have static bounds once canonicalized; their tiles
  // vectorize without masks, the remainders with.
  s += llvm::formatv(R"(
    transform.apply_patterns to %forall{0}b {{
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %mm{0} = transform.structured.match ops{{["linalg.matmul", "linalg.batch_matmul"]} in %forall{0}b : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm{0} : !transform.any_op {{
    ^bb0(%tile: !transform.any_op):
      transform.structured.vectorize %tile vector_sizes {1} : !transform.any_op
    }
)",
                     id, sizes(t.batchDims, {t.mr, t.nr, 1}, 1));
  // Each register tile's zero init, when fused there, becomes a vector.
  if (!t.chunkK)
    s += llvm::formatv(R"(
    %fills{0} = transform.structured.match ops{{["linalg.fill"]} in %forall{0}b : (!transform.any_op) -> !transform.any_op
    transform.foreach %fills{0} : !transform.any_op {{
    ^bb0(%tile: !transform.any_op):
      transform.structured.vectorize %tile vector_sizes {1} : !transform.any_op
    }
)",
                       id, sizes(t.batchDims, {t.mr, t.nr}, 1));
  return s;
}

/// Lowers the vectorized contractions to outer products and keeps each
/// register tile's accumulator in registers across its k loop.
constexpr llvm::StringLiteral kFinishScript = R"(
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
    }
)";

/// The column count B and C get: N rounded up to a multiple of NR, so that
/// every register tile is full (masked remainders are much slower), plus NR
/// when rows would be a multiple of 4 KiB apart: the k loop walks down B's
/// rows, and such a stride maps every row to the same cache sets.
int64_t paddedColumns(int64_t n, int64_t k, int64_t nr, int64_t elementBytes) {
  if (n <= nr)
    return n;
  int64_t padded = llvm::alignTo(n, nr);
  if ((padded * elementBytes) % 4096 == 0 && k >= 64)
    padded += nr;
  return padded;
}

/// `value`, the one result of a linalg.generic that computes it afresh
/// (maybe collapsed), grown with zeros at the end of dim `dim` to `size` by
/// making the generic write into the grown buffer: an im2col matrix is built
/// padded rather than copied. Null for other values.
Value writePadded(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t size) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  Value result = collapse ? collapse.getSrc() : value;
  auto generic = result.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getNumResults() != 1 || !value.hasOneUse() || !result.hasOneUse() ||
      !generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape()), origin(rank, 0), unit(rank, 1), tailOffsets(rank, 0);
  shape[dim] = size;
  tailOffsets[dim] = type.getDimSize(dim);
  SmallVector<int64_t> tailSizes(shape);
  tailSizes[dim] = size - type.getDimSize(dim);
  auto attrs = [&](ArrayRef<int64_t> values) { return getAsIndexOpFoldResult(b.getContext(), values); };
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(generic);
  Value grown = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(type.getElementType()));
  Value tail = b.create<tensor::ExtractSliceOp>(loc, grown, attrs(tailOffsets), attrs(tailSizes), attrs(unit));
  tail = b.create<linalg::FillOp>(loc, zero, tail).getResult(0);
  grown = b.create<tensor::InsertSliceOp>(loc, tail, grown, attrs(tailOffsets), attrs(tailSizes), attrs(unit));
  Value slot = b.create<tensor::ExtractSliceOp>(loc, grown, attrs(origin), attrs(type.getShape()), attrs(unit));
  if (collapse)
    slot = b.create<tensor::ExpandShapeOp>(loc, collapse.getSrcType(), slot, collapse.getReassociationIndices());
  generic.getDpsInitsMutable()[0].set(slot);
  b.setInsertionPointAfter(generic);
  Value written = generic->getResult(0);
  if (collapse)
    written = b.create<tensor::CollapseShapeOp>(loc, written, collapse.getReassociationIndices());
  return b.create<tensor::InsertSliceOp>(loc, written, grown, attrs(origin), attrs(type.getShape()), attrs(unit));
}

/// `value` padded with zeros at the end of dim `dim` to `size`: written so
/// by its generic (writePadded), else padded in the block that defines
/// `value`, just before the op there that holds the use (a weight padded
/// for the contraction of each image of a batch is padded once, before the
/// images' loop; padded where the weight is defined, at the function's
/// start, every padded weight would be live at once in the workspace).
Value padDimTo(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getDimSize(dim) == size)
    return value;
  if (Value written = writePadded(b, loc, value, dim, size))
    return written;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(value.getParentBlock()->findAncestorOpInBlock(*b.getInsertionPoint()));
  SmallVector<int64_t> low(type.getRank(), 0), high(type.getRank(), 0), shape(type.getShape());
  high[dim] = size - type.getDimSize(dim);
  shape[dim] = size;
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(type.getElementType()));
  return b.create<tensor::PadOp>(loc, RankedTensorType::get(shape, type.getElementType()), value,
                                 getAsIndexOpFoldResult(b.getContext(), low),
                                 getAsIndexOpFoldResult(b.getContext(), high), zero);
}

/// Pads A and C to a multiple of the kernel's MR rows, B and C to
/// paddedColumns(), with zeros that are sliced off the result. Returns the
/// op to schedule.
linalg::LinalgOp padOperands(linalg::LinalgOp op, MicroKernel kernel) {
  auto [m, n, k] = matmulSizes(op);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = resultType.getElementType();
  int64_t rows = llvm::alignTo(m, kernel.mr);
  int64_t columns = paddedColumns(n, k, kernel.nr, element.getIntOrFloatBitWidth() / 8);
  if (rows == m && columns == n)
    return op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  unsigned rank = resultType.getRank();
  Value lhs = padDimTo(b, loc, op.getDpsInputs()[0], rank - 2, rows);
  Value rhs = padDimTo(b, loc, op.getDpsInputs()[1], rank - 1, columns);
  SmallVector<int64_t> outShape(resultType.getShape());
  outShape[rank - 2] = rows;
  outShape[rank - 1] = columns;
  // The original init is a zero fill (the lowering only emits those).
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(element));
  Value init = b.create<tensor::EmptyOp>(loc, outShape, element);
  init = b.create<linalg::FillOp>(loc, zero, init).getResult(0);
  Operation *paddedOp = clone(b, op, init.getType(), {lhs, rhs, init});
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  Value slice = b.create<tensor::ExtractSliceOp>(
      loc, paddedOp->getResult(0), getAsIndexOpFoldResult(b.getContext(), offsets),
      getAsIndexOpFoldResult(b.getContext(), resultType.getShape()),
      getAsIndexOpFoldResult(b.getContext(), strides));
  op->getResult(0).replaceAllUsesWith(slice);
  op->erase();
  return cast<linalg::LinalgOp>(paddedOp);
}

/// A tap contraction (kTapContractionAttr) runs as a matmul whose k loop is
/// its reduction loops: out (M, taps..., N) over its parallel loops m,
/// taps..., n, A = input 0 with rows on dim 0, B = input 1 with columns on
/// dim 1; one of them reads at a tap offset. Its tiles are padded to be
/// whole: the unit steps fold away only in static tiles (tapRows chooses
/// them to pad little).
struct TapTiling {
  unsigned parallel, reductions;
  int64_t mt, nt, mr, nr, rows, columns;
  int64_t kt = 0;            // chunk of the last reduction loop, if any
  int64_t stripsPerTile = 1; // of Winograd's B strips per thread tile (winogradStripsPerTile)
  bool zeroInit = true;      // else it adds to its init
};

/// How a tap contraction's rows go: register tiles of `kernel.mr` rows, in
/// `tiles` thread tiles of equal size.
struct TapRows {
  MicroKernel kernel;
  int64_t tiles;
};

/// Thread tiles of about 96 rows (A's panel in L2) and the register tile
/// (one of `kernels`) that together pad M with the fewest zero rows, each
/// row weighed by the B loads its register tile shares (1 / MR, as in
/// cheapestMicroKernel): zero rows cost their products, and a copy of A (a
/// layer's weight or input rows) at every run. A 17x17 map's 289 rows go in
/// 6 tiles of 49 (7-row kernels), where 8-row kernels would take 4 tiles of
/// 80, 11% of them zeros.
TapRows tapRows(ArrayRef<MicroKernel> kernels, int64_t m) {
  int64_t fewest = llvm::divideCeil(m, 96);
  std::optional<TapRows> best;
  double bestCost = 0;
  for (MicroKernel kernel : kernels) {
    kernel.mr = std::min(kernel.mr, m);
    for (int64_t tiles = fewest; tiles <= 2 * fewest; ++tiles) {
      int64_t rows = llvm::alignTo(llvm::divideCeil(m, tiles), kernel.mr) * tiles;
      double cost = rows * (1.0 + 1.0 / kernel.mr);
      if (!best || cost < bestCost)
        best = TapRows{kernel, tiles}, bestCost = cost;
    }
  }
  return *best;
}

/// Whether each row of a tap contraction reads a row of B of its own (a
/// depthwise convolution's), not all of B.
bool rowsReadOwnB(linalg::LinalgOp op) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  return map.getResult(0) == getAffineDimExpr(0, op.getContext());
}

/// What the copy of a value (written, read back) costs in reads of B from
/// the cache, roughly: measured at batch 1, worth it for MobileNet v2's
/// 7x7 expansions (K = 160: 20 more B reads per row and column), not for
/// ResNet-18's 7x7 convolutions (K = 2304: 282 more).
constexpr double kCopyCostInBReads = 32;

/// Thread tiles of rows within image rows of `rowLength` positions: the
/// most rows up to 96 that divide it, whole register tiles of the largest
/// MR that divides it (none below 4: rows would stream B too often).
std::optional<std::pair<int64_t, int64_t>> rowAlignedTiles(unsigned vectorBits, int64_t rowLength) {
  for (MicroKernel k : microKernels(vectorBits)) {
    if (k.mr < 4 || rowLength % k.mr != 0)
      continue;
    int64_t mt = k.mr;
    for (int64_t size = k.mr; size <= std::min<int64_t>(rowLength, 96); size += k.mr)
      if (rowLength % size == 0)
        mt = size;
    return std::make_pair(k.mr, mt);
  }
  return std::nullopt;
}

/// The most bytes of a tap contraction's B strip per chunk of its reduction:
/// more than the L1 cache holds (48 KiB), yet measured faster than chunks
/// that fit in it, each chunk's stores and reloads of the accumulators
/// costing more than B's reads from L2 (Zen 5, batch 1, ResNet-50 and -18:
/// 32 KiB chunks 0.92 and 0.91 of 16 KiB ones' time, 64 KiB 0.98 and 0.99
/// of 32 KiB ones', no chunks 1.01 and 1.02 of 64 KiB ones').
constexpr int64_t kChunkStripBytes = 64 * 1024;

/// The strips of B that a thread tile of Winograd's products (tile, e,
/// strip, lane), where A and B vary along e and B alone along its strips,
/// walks inside each register row tile: that row tile's rows of A (a tile's
/// points are (m + 2)^2 * C apart, rows that map to few cache sets) then
/// come into L1 once for all the strips, whose B cycles through L2 instead.
/// As many strips as divide them and fit kChunkStripBytes together: 4 of a
/// 28x28 map's 128 channels (ResNet-18 at batch 1: its products 0.85 of the
/// time with one strip per tile), one of a 7x7 map's 512, whose transformed
/// weight streams from memory and is best read once for all row tiles.
int64_t winogradStripsPerTile(linalg::LinalgOp op) {
  if (op.getNumParallelLoops() != 4)
    return 1;
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  if (!a.isFunctionOfDim(1) || !b.isFunctionOfDim(1) || !b.isFunctionOfDim(2) || a.isFunctionOfDim(2))
    return 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t stripBytes = computeProduct(ArrayRef<int64_t>(ranges).drop_front(4)) * ranges[3] *
                       cast<ShapedType>(op->getResult(0).getType()).getElementTypeBitWidth() / 8;
  int64_t perTile = 1;
  for (int64_t strips = 2; strips <= ranges[2] && strips * stripBytes <= kChunkStripBytes; ++strips)
    if (ranges[2] % strips == 0)
      perTile = strips;
  return perTile;
}

TapTiling chooseTapTiling(linalg::LinalgOp op, unsigned vectorBits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  TapTiling t;
  t.zeroInit = isZeroFill(op.getDpsInits()[0]);
  t.parallel = op.getNumParallelLoops();
  t.reductions = ranges.size() - t.parallel;
  int64_t m = ranges[0], n = ranges[t.parallel - 1];
  // Where each row reads its own B (no outer product to share loads across
  // rows), one row of twice the columns, the taps' weights broadcast from
  // scalars.
  SmallVector<MicroKernel> kernels = microKernels(vectorBits);
  TapRows rows = tapRows(rowsReadOwnB(op) ? SmallVector<MicroKernel>{{1, 2 * kernels.front().nr}} : kernels, m);
  t.mr = rows.kernel.mr;
  t.nr = rows.kernel.nr;
  int64_t mTiles = rows.tiles;
  t.mt = llvm::alignTo(llvm::divideCeil(m, mTiles), t.mr);
  // An image that is padded next is computed in its padding
  // (sym-write-into-padding), its tiles within image rows: worth it unless
  // the shorter tiles read B (K values per row per column, once per tile)
  // much more often than the copy of the padding they save would (a value
  // per row per column written, read again).
  std::optional<int64_t> rowLength = paddedImageRowLength(op->getResult(0));
  if (auto aligned = rowLength && !rowsReadOwnB(op) ? rowAlignedTiles(vectorBits, *rowLength) : std::nullopt) {
    int64_t k = computeProduct(ArrayRef<int64_t>(ranges).drop_front(t.parallel));
    if (double(k) / aligned->second - double(k) / t.mt <= kCopyCostInBReads) {
      std::tie(t.mr, t.mt) = *aligned;
      mTiles = m / t.mt;
    }
  }
  t.rows = t.mt * mTiles;
  t.stripsPerTile = winogradStripsPerTile(op);
  // Thread tiles of up to 8 register columns, the count that pads least,
  // halved when that evens out a few tiles over an even thread count.
  int64_t strips = llvm::divideCeil(n, t.nr), best = std::min<int64_t>(strips, 8);
  for (int64_t perTile = best; perTile >= std::min<int64_t>(best, 4); --perTile)
    if (llvm::alignTo(strips, perTile) < llvm::alignTo(strips, best))
      best = perTile;
  int64_t tiles = mTiles * computeProduct(ArrayRef<int64_t>(ranges).slice(1, t.parallel - 2)) / t.stripsPerTile *
                  (llvm::alignTo(strips, best) / best);
  if (tiles % 2 == 1 && tiles < 16 && best % 2 == 0)
    best /= 2;
  t.nt = best * t.nr;
  t.columns = llvm::alignTo(strips, best) * t.nr;
  // The last reduction loop goes in chunks whose B strip (NR columns by
  // every other reduction loop) is at most kChunkStripBytes, for the thread
  // tile's register tiles to share from the cache. Not for two or fewer: with
  // one, there is nothing to share; with two, LLVM unrolls the pair and
  // carries both accumulators from chunk to chunk in registers (the stored
  // tile forwarded to the next chunk's loads), twice what the register file
  // holds: spills and copies in the inner loop.
  int64_t stripBytes = computeProduct(ArrayRef<int64_t>(ranges).slice(t.parallel, t.reductions - 1)) * t.nr *
                       cast<ShapedType>(op->getResult(0).getType()).getElementTypeBitWidth() / 8;
  int64_t chunk = llvm::bit_floor(uint64_t(std::max<int64_t>(1, kChunkStripBytes / stripBytes)));
  if (chunk >= 8 && chunk < ranges.back() && t.mt > 2 * t.mr)
    t.kt = chunk;
  return t;
}

/// `value`, built by slices inserted into an empty tensor (a concatenation),
/// built in one `extra` longer along `dim` instead, the tail filled with
/// zeros; its other readers read the slice of it that `value` was. Null for
/// other values. (Every 1x1 convolution that reads an Inception block's
/// concatenation pads its 289 rows to whole register tiles: each padded a
/// copy of the whole image.)
Value growInsertedSlices(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t extra) {
  SmallVector<tensor::InsertSliceOp> inserts;
  Value dest = value;
  while (auto insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!inserts.empty() && !dest.hasOneUse())
      return {}; // a partial concatenation read elsewhere
    inserts.push_back(insert);
    dest = insert.getDest();
  }
  auto type = cast<RankedTensorType>(value.getType());
  if (inserts.empty() || !dest.getDefiningOp<tensor::EmptyOp>() || !type.hasStaticShape())
    return {};
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape()), tailOffsets(rank, 0), tailSizes(type.getShape());
  shape[dim] += extra;
  tailOffsets[dim] = type.getDimSize(dim);
  tailSizes[dim] = extra;
  auto attrs = [&](ArrayRef<int64_t> values) { return getAsIndexOpFoldResult(b.getContext(), values); };
  SmallVector<int64_t> origin(rank, 0), unit(rank, 1);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(inserts.front());
  Value grown = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(type.getElementType()));
  Value tail = b.create<tensor::ExtractSliceOp>(loc, grown, attrs(tailOffsets), attrs(tailSizes), attrs(unit));
  tail = b.create<linalg::FillOp>(loc, zero, tail).getResult(0);
  grown = b.create<tensor::InsertSliceOp>(loc, tail, grown, attrs(tailOffsets), attrs(tailSizes), attrs(unit));
  for (tensor::InsertSliceOp insert : llvm::reverse(inserts))
    grown = b.create<tensor::InsertSliceOp>(insert.getLoc(), insert.getSource(), grown, insert.getMixedOffsets(),
                                            insert.getMixedSizes(), insert.getMixedStrides());
  Value slice = b.create<tensor::ExtractSliceOp>(loc, grown, attrs(origin), attrs(type.getShape()), attrs(unit));
  value.replaceAllUsesWith(slice);
  for (tensor::InsertSliceOp insert : inserts)
    insert->erase();
  return grown;
}

/// `value` with `extra` zeros more at the end of dim `dim`. A zero padding
/// that made `value` (the one a tap-read image gets, maybe flattened) grows
/// instead, so that the image is copied once, not twice; so does a
/// concatenation (growInsertedSlices); a slice of a padded image that reads
/// on past its end (the lowering leaves room there) just widens.
Value growEndPadding(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t extra) {
  if (extra == 0)
    return value;
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.hasUnitStride() && slice.getSourceType().getRank() == slice.getType().getRank() &&
      !ShapedType::isDynamicShape(slice.getStaticOffsets()) && !ShapedType::isDynamicShape(slice.getStaticSizes())) {
    SmallVector<int64_t> sizes(slice.getStaticSizes());
    sizes[dim] += extra;
    if (slice.getStaticOffsets()[dim] + sizes[dim] <= slice.getSourceType().getDimSize(dim))
      return b.create<tensor::ExtractSliceOp>(loc, slice.getSource(), slice.getMixedOffsets(),
                                              getAsIndexOpFoldResult(b.getContext(), sizes), slice.getMixedStrides());
  }
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>(); collapse && collapse->hasOneUse()) {
    // Grow the outermost wide source dim of dim `dim` by whole inner blocks
    // (the flat dim's end is that dim's end), then slice the flat dim to
    // its new size: a flattened padded image grows its last rows.
    ArrayRef<int64_t> sourceShape = collapse.getSrcType().getShape();
    ReassociationIndices group = collapse.getReassociationIndices()[dim];
    auto wide = llvm::make_filter_range(group, [&](int64_t i) { return sourceShape[i] != 1; });
    if (!wide.empty()) {
      int64_t outer = *wide.begin(), inner = 1;
      for (int64_t i : group)
        if (i > outer)
          inner *= sourceShape[i];
      int64_t blocks = llvm::divideCeil(extra, inner);
      Value grown = growEndPadding(b, loc, collapse.getSrc(), outer, blocks);
      Value flat = b.create<tensor::CollapseShapeOp>(loc, grown, collapse.getReassociationIndices());
      if (blocks * inner == extra)
        return flat;
      auto type = cast<RankedTensorType>(value.getType());
      unsigned rank = type.getRank();
      SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), strides(rank, 1);
      sizes[dim] += extra;
      return b.create<tensor::ExtractSliceOp>(loc, flat, getAsIndexOpFoldResult(b.getContext(), offsets),
                                              getAsIndexOpFoldResult(b.getContext(), sizes),
                                              getAsIndexOpFoldResult(b.getContext(), strides));
    }
  }
  if (Value grown = growInsertedSlices(b, loc, value, dim, extra))
    return grown;
  auto type = cast<RankedTensorType>(value.getType());
  auto pad = value.getDefiningOp<tensor::PadOp>();
  Value padding = pad ? pad.getConstantPaddingValue() : Value();
  if (!padding || !matchPattern(padding, m_AnyZeroFloat()) || !pad->hasOneUse() ||
      ShapedType::isDynamicShape(pad.getStaticHigh()) || ShapedType::isDynamicShape(pad.getStaticLow()))
    return padDimTo(b, loc, value, dim, type.getDimSize(dim) + extra);
  SmallVector<int64_t> high(pad.getStaticHigh()), shape(type.getShape());
  high[dim] += extra;
  shape[dim] += extra;
  return b.create<tensor::PadOp>(loc, RankedTensorType::get(shape, type.getElementType()), pad.getSource(),
                                 getAsIndexOpFoldResult(b.getContext(), pad.getStaticLow()),
                                 getAsIndexOpFoldResult(b.getContext(), high), padding);
}

/// The dim of input `input` of `op` that reads along loop `loop`.
unsigned dimAlongLoop(linalg::LinalgOp op, unsigned input, unsigned loop) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(input));
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getResult(r).isFunctionOfDim(loop))
      return r;
  llvm_unreachable("a tap contraction's operand reads along its rows or columns");
}

/// Pads a tap contraction to `t`'s rows and columns (zero rows of A, zero
/// columns at the end of B, the result's first and last dims; zero rows of
/// B too where each row reads its own, as a depthwise convolution's) and
/// slices the result back. An init it adds to (not zeros) is padded too.
/// Returns the op to schedule.
linalg::LinalgOp padTapContraction(linalg::LinalgOp op, const TapTiling &t) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  unsigned rank = resultType.getRank();
  int64_t m = resultType.getDimSize(0), n = resultType.getDimSize(rank - 1);
  if (t.rows == m && t.columns == n)
    return op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type element = resultType.getElementType();
  unsigned columnsLoop = t.parallel - 1;
  Value lhs = growEndPadding(b, loc, op.getDpsInputs()[0], dimAlongLoop(op, 0, 0), t.rows - m);
  Value rhs = growEndPadding(b, loc, op.getDpsInputs()[1], dimAlongLoop(op, 1, columnsLoop), t.columns - n);
  if (rowsReadOwnB(op))
    rhs = growEndPadding(b, loc, rhs, 0, t.rows - m);
  SmallVector<int64_t> shape(resultType.getShape()), offsets(rank, 0), strides(rank, 1);
  shape.front() = t.rows, shape.back() = t.columns;
  Value init = op.getDpsInits()[0];
  if (isZeroFill(init)) {
    Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(element));
    init = b.create<linalg::FillOp>(loc, zero, b.create<tensor::EmptyOp>(loc, shape, element).getResult())
               .getResult(0);
  } else {
    init = padDimTo(b, loc, padDimTo(b, loc, init, 0, t.rows), rank - 1, t.columns);
  }
  Operation *padded = clone(b, op, init.getType(), {lhs, rhs, init});
  Value slice = b.create<tensor::ExtractSliceOp>(loc, padded->getResult(0),
                                                 getAsIndexOpFoldResult(b.getContext(), offsets),
                                                 getAsIndexOpFoldResult(b.getContext(), resultType.getShape()),
                                                 getAsIndexOpFoldResult(b.getContext(), strides));
  op->getResult(0).replaceAllUsesWith(slice);
  op->erase();
  return cast<linalg::LinalgOp>(padded);
}

/// The script fragment that folds the unit dims of the unit steps that
/// thread tile `id` was cut into and vectorizes what is left, static tiles.
std::string vectorizeFoldedScript(int64_t id) {
  return llvm::formatv(R"(
    transform.apply_patterns to %forall{0}b {{
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %folded{0} = transform.structured.match ops{{["linalg.generic", "linalg.fill"]} in %forall{0}b : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %folded{0} : !transform.any_op
)",
                       id)
      .str();
}

/// A tap contraction's thread tile: MT rows by NT columns, one of each
/// middle dim.
SmallVector<int64_t> tapThreadSizes(const TapTiling &t) {
  SmallVector<int64_t> sizes(t.parallel, 1);
  sizes.front() = t.mt, sizes.back() = t.nt;
  if (t.stripsPerTile > 1)
    sizes[2] = t.stripsPerTile;
  return sizes;
}

/// The order of a tap contraction's thread tiles (its scf.forall keeps the
/// parallel dims cut into more than one tile, in loop order) where not
/// rows first: columns first where B outweighs A. A thread takes a run of
/// tiles in this order and reads the operand of the inner dims again for
/// each outer tile: better the smaller one, which stays in its L2. (Rows
/// first, a 1x1 convolution whose weights outweigh its 14x14 image streamed
/// all of the weights once per row tile.) Rows first otherwise, and where
/// A and B vary along the same dims (the points of Winograd's products):
/// then each thread's rows are the ones the transforms around it compute on
/// the same thread. Empty: rows first.
SmallVector<int64_t> tapThreadOrder(linalg::LinalgOp op, const TapTiling &t) {
  auto elements = [](Value value) { return cast<ShapedType>(value.getType()).getNumElements(); };
  if (elements(op.getDpsInputs()[1]) <= elements(op.getDpsInputs()[0]))
    return {};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges(), sizes = tapThreadSizes(t);
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  SmallVector<int64_t> rows, columns;
  for (unsigned d = 0; d < t.parallel; ++d) {
    if (ranges[d] <= sizes[d])
      continue;
    if (a.isFunctionOfDim(d) && b.isFunctionOfDim(d))
      return {};
    (b.isFunctionOfDim(d) ? columns : rows).push_back(rows.size() + columns.size());
  }
  if (rows.empty() || columns.empty())
    return {};
  return llvm::to_vector(llvm::concat<int64_t>(columns, rows));
}

/// The script fragment that tiles tap contraction `id`: thread tiles (one
/// tap each), maybe a chunk of the last reduction, register tiles (j outside
/// i, Winograd's strips inside i), unit steps over every reduction loop,
/// which then fold away with the taps' unit dims to leave an MR x NR outer
/// product to vectorize.
std::string tapTileScript(int64_t id, const TapTiling &t, const std::optional<EpilogueTiling> &epilogue) {
  unsigned loops = t.parallel + t.reductions;
  SmallVector<int64_t> threadSizes = tapThreadSizes(t), registerSizes(t.parallel, 0), steps(t.parallel, 0),
      order{t.parallel - 1, 0};
  registerSizes.front() = t.mr, registerSizes.back() = t.nr;
  if (t.stripsPerTile > 1)
    registerSizes[2] = 1;
  steps.append(t.reductions, 1);
  for (unsigned i = 1; i < loops; ++i)
    if (i != t.parallel - 1)
      order.push_back(i);
  SmallVector<int64_t> chunkSizes(loops, 0);
  chunkSizes.back() = t.kt;
  std::string chunk;
  std::string s =
      threadTileScript(id, joined(threadSizes), t.kt ? joined(chunkSizes) : "", epilogue, chunk, t.zeroInit);
  s += llvm::formatv((std::string(R"(
    %reg{0}, %jloop{0}, %iloop{0}{4} = )") + registerTileOp(!t.kt) + R"( : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op{5})
)").c_str(),
                     id, chunk, joined(registerSizes), joined(order),
                     t.stripsPerTile > 1 ? ", %sloop" + std::to_string(id) : "",
                     t.stripsPerTile > 1 ? ", !transform.any_op" : "");
  s += llvm::formatv(R"(
    %step{0}, %kloops{0}:{1} = transform.structured.tile_using_for %reg{0} tile_sizes {2} : (!transform.any_op) -> ({3})
)",
                     id, t.reductions, joined(steps),
                     llvm::join(SmallVector<std::string>(t.reductions + 1, "!transform.any_op"), ", "));
  return s + vectorizeFoldedScript(id);
}

/// A lane contraction (kLaneContractionAttr) over loops (m, n, k, lane):
/// thread tiles of NT rows of B, register tiles of all M rows by NR rows of
/// B, unit steps over k; with the unit dims folded, each step is M x NR
/// vector FMAs over the lanes, the accumulators kept in registers across k.
struct LaneTiling {
  int64_t nt, nr;
};

/// NR: as many B rows as keep the M x NR accumulators in half the register
/// file (B streams; its rows are loaded once for all M rows), a power of two
/// dividing N so that every tile is whole; NT: the largest multiple of NR
/// dividing N up to 256 rows that leaves at least two thread tiles.
LaneTiling chooseLaneTiling(linalg::LinalgOp op, unsigned vectorBits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[0], n = ranges[1];
  int64_t registersPerAccumulator = kContractionLanes * 32 / std::max(vectorBits, 256u);
  LaneTiling t;
  t.nr = llvm::bit_floor(uint64_t(std::clamp<int64_t>(32 / (m * registersPerAccumulator), 1, 8)));
  while (n % t.nr != 0)
    t.nr /= 2;
  int64_t strips = n / t.nr;
  int64_t perTile = std::max<int64_t>(1, std::min<int64_t>(256 / t.nr, strips / 2));
  while (strips % perTile != 0)
    --perTile;
  t.nt = perTile * t.nr;
  return t;
}

std::string laneTileScript(int64_t id, const LaneTiling &t) {
  std::string tiled;
  std::string s = threadTileScript(id, joined({0, t.nt, 0, 0}), "", std::nullopt, tiled);
  s += llvm::formatv(R"(
    %reg{0}, %jloop{0} = transform.structured.tile_using_for {1} tile_sizes {2} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %step{0}, %kloop{0} = transform.structured.tile_using_for %reg{0} tile_sizes [0, 0, 1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                     id, tiled, joined({0, t.nr, 0, 0}));
  return s + vectorizeFoldedScript(id);
}


/// The ops a schedule moves into its op's thread tiles: the producer of its
/// init (a fill) and that producer's own init producer (a tensor.empty).
SmallVector<Operation *> initChain(Operation *op) {
  SmallVector<Operation *> chain;
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  for (Operation *producer = op; dps && dps.getNumDpsInits() == 1;) {
    producer = dps.getDpsInitOperand(0)->get().getDefiningOp();
    if (!producer)
      break;
    chain.insert(chain.begin(), producer);
    dps = dyn_cast<DestinationStyleOpInterface>(producer);
  }
  return chain;
}

/// `forall` with its dims in `order`: new dim i iterates old dim order[i].
/// Threads take runs of the linearized iterations (the last dim fastest),
/// so the order decides which operand each thread reads again and again.
void permuteForall(scf::ForallOp forall, ArrayRef<int64_t> order) {
  auto permuted = [&](SmallVector<OpFoldResult> values) {
    return llvm::map_to_vector(order, [&](int64_t dim) { return values[dim]; });
  };
  IRRewriter rewriter(forall.getContext());
  rewriter.setInsertionPoint(forall);
  auto reordered = rewriter.create<scf::ForallOp>(
      forall.getLoc(), permuted(forall.getMixedLowerBound()), permuted(forall.getMixedUpperBound()),
      permuted(forall.getMixedStep()), forall.getOutputs(), std::nullopt);
  rewriter.eraseOp(reordered.getBody()->getTerminator());
  SmallVector<Value> arguments(forall.getBody()->getNumArguments());
  for (auto [position, dim] : llvm::enumerate(order))
    arguments[dim] = reordered.getInductionVar(position);
  llvm::copy(reordered.getRegionIterArgs(), arguments.begin() + order.size());
  rewriter.mergeBlocks(forall.getBody(), reordered.getBody(), arguments);
  rewriter.replaceOp(forall, reordered.getResults());
}

/// Scheduled isolated functions by the sequence applied and the function's
/// text before: the same layer in the forward, training and monitor
/// variants, and repeated blocks of one shape, are scheduled once.
using ScheduleCache = llvm::StringMap<OwningOpRef<ModuleOp>>;

/// Applies `sequence` to `root` (`op` or its epilogue) moved, with `op` and
/// its init chain, into a function of its own, and `finish` to that
/// function, its thread tiles' dims put in `threadOrder` (if given), then
/// puts the result back at `root` (taken
/// from `cache` where a twin was scheduled). Transforms that print the ops
/// they work on (fuse_into_containing_op builds its failure remark up front)
/// verify and print the whole enclosing function each time: per op, that is
/// quadratic in the function's size (minutes for a training step's).
LogicalResult scheduleIsolated(Operation *op, Operation *root, Operation *sequence, ArrayRef<int64_t> threadOrder,
                               Operation *finish, ModuleOp transforms, const transform::TransformOptions &options,
                               ScheduleCache &cache) {
  SmallVector<Operation *> moved = initChain(op);
  moved.push_back(op);
  if (root != op)
    moved.push_back(root);
  llvm::SetVector<Value> used, external;
  for (Operation *movedOp : moved) {
    used.insert(movedOp->operand_begin(), movedOp->operand_end());
    getUsedValuesDefinedAbove(movedOp->getRegions(), used);
  }
  for (Value value : used)
    if (!llvm::is_contained(moved, value.getDefiningOp()))
      external.insert(value);

  Location loc = op->getLoc();
  OwningOpRef<ModuleOp> isolated = ModuleOp::create(loc);
  OpBuilder builder = OpBuilder::atBlockEnd(isolated->getBody());
  auto function = builder.create<func::FuncOp>(
      loc, "isolated", builder.getFunctionType(ValueRange(external.getArrayRef()).getTypes(), root->getResultTypes()));
  builder.setInsertionPointToStart(function.addEntryBlock());
  IRMapping inward;
  inward.map(external.getArrayRef(), function.getArguments());
  for (Operation *movedOp : moved)
    builder.clone(*movedOp, inward);
  builder.create<func::ReturnOp>(loc, inward.lookup(root)->getResults());
  std::string key = cast<SymbolOpInterface>(sequence).getName().str() + joined(threadOrder);
  llvm::raw_string_ostream text(key);
  isolated->print(text, OpPrintingFlags().printGenericOpForm());
  OwningOpRef<ModuleOp> &scheduled = cache[key];
  if (!scheduled) {
    if (failed(transform::applyTransformNamedSequence(inward.lookup(root), sequence, transforms, options)) ||
        failed(transform::applyTransformNamedSequence(*isolated, finish, transforms, options)))
      return failure();
    if (!threadOrder.empty())
      isolated->walk([&](scf::ForallOp forall) {
        if (forall.getRank() == int64_t(threadOrder.size()) && !forall->getParentOfType<scf::ForallOp>())
          permuteForall(forall, threadOrder);
      });
    scheduled = std::move(isolated);
  }
  function = cast<func::FuncOp>(scheduled->getBody()->front());
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());

  builder.setInsertionPoint(root);
  IRMapping outward;
  outward.map(function.getArguments(), external.getArrayRef());
  for (Operation &scheduledOp : function.getBody().front().without_terminator())
    builder.clone(scheduledOp, outward)->walk([&](Operation *clone) { clone->setLoc(loc); }); // not its twin's
  for (auto [result, value] : llvm::zip(root->getResults(), ret.getOperands()))
    result.replaceAllUsesWith(outward.lookupOrDefault(value));
  for (Operation *movedOp : llvm::reverse(moved))
    if (movedOp->use_empty())
      movedOp->erase();
  return success();
}

/// An op to schedule by sequence `id`, applied to `root`: the op or the
/// epilogue fused into its tiles, and the order of its thread tiles' dims
/// (empty: as tiled).
struct Scheduled {
  Operation *op, *root;
  unsigned id;
  SmallVector<int64_t> threadOrder;
};

/// Marks `epilogue` for its schedule and tiles it as its contraction's
/// thread tiles, `mt` x `nt`, in vectors of `nr` columns.
EpilogueTiling epilogueTilingOf(linalg::GenericOp epilogue, ArrayRef<int64_t> threadSizes, int64_t nr) {
  epilogue->setAttr(kEpilogueAttr, UnitAttr::get(epilogue.getContext()));
  return {epilogue.getDpsInitOperand(0)->getOperandNumber(), SmallVector<int64_t>(threadSizes), nr};
}

struct SymScheduleMatmulsPass : impl::SymScheduleMatmulsBase<SymScheduleMatmulsPass> {
  using SymScheduleMatmulsBase::SymScheduleMatmulsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> matmuls, taps, lanes;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
        return;
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        matmuls.push_back(op);
      else if (op->hasAttr(kTapContractionAttr))
        taps.push_back(op);
      else if (op->hasAttr(kLaneContractionAttr) && op.getNumDpsInputs() == 2)
        lanes.push_back(op); // (not when canonicalization folded a constant operand into it)
    });
    if (matmuls.empty() && taps.empty() && lanes.empty())
      return;
    // One named sequence per op, applied to that op alone: a single script
    // over the module would find each op by a walk of the whole module and
    // keep every op's handles live to its end, quadratic in the op count.
    // Ops scheduled alike share one sequence (`script(id)` writes the
    // sequence's body with its handles numbered `id`).
    std::string sequences;
    llvm::StringMap<unsigned> sequenceIds;
    SmallVector<Scheduled> scheduled;
    auto add = [&](linalg::LinalgOp op, Operation *root, llvm::function_ref<std::string(int64_t)> script,
                   SmallVector<int64_t> threadOrder = {}) {
      auto [it, added] = sequenceIds.try_emplace(script(0), sequenceIds.size());
      if (added)
        sequences += llvm::formatv("  transform.named_sequence @{0}{1}(%{3}{1}: !transform.any_op {{transform.consumed}) {{\n"
                                   "{2}    transform.yield\n  }\n",
                                   kSequencePrefix, it->second, script(it->second), root == op ? "op" : "epi");
      scheduled.push_back({op, root, it->second, std::move(threadOrder)});
    };
    for (linalg::LinalgOp original : matmuls) {
      MicroKernel kernel = pickMicroKernel(vectorBits, matmulSizes(original)[0]);
      linalg::LinalgOp op = padOperands(original, kernel);
      Tiling tiling = chooseTiling(op, kernel);
      std::optional<EpilogueTiling> epilogueTiling;
      Operation *root = op;
      // (Whole thread tiles only: the epilogue's vectors have no masks.)
      if (tiling.batchDims == 0 && !tiling.peelI && !tiling.peelJ && !tiling.chunkK && epilogues)
        if (linalg::GenericOp epilogue = fuseEpilogue(op))
          root = epilogue, epilogueTiling = epilogueTilingOf(epilogue, {tiling.mt, tiling.nt}, tiling.nr);
      add(op, root, [&](int64_t id) { return tileScript(id, tiling, epilogueTiling); });
    }
    for (linalg::LinalgOp original : taps) {
      TapTiling tiling = chooseTapTiling(original, vectorBits);
      linalg::LinalgOp op = padTapContraction(original, tiling);
      std::optional<EpilogueTiling> epilogueTiling;
      Operation *root = op;
      if (epilogues && tiling.zeroInit)
        if (linalg::GenericOp epilogue = fuseEpilogue(op))
          root = epilogue, epilogueTiling = epilogueTilingOf(epilogue, tapThreadSizes(tiling), tiling.nr);
      add(op, root, [&](int64_t id) { return tapTileScript(id, tiling, epilogueTiling); },
          tapThreadOrder(op, tiling));
    }
    for (linalg::LinalgOp op : lanes) {
      LaneTiling tiling = chooseLaneTiling(op, vectorBits);
      add(op, op, [&](int64_t id) { return laneTileScript(id, tiling); });
    }
    if (failed(applyScripts(sequences, scheduled)))
      return signalPassFailure();
    module.walk([](Operation *op) {
      op->removeAttr(kLaneContractionAttr);
      op->removeAttr(kEpilogueAttr);
    });
  }

  /// Applies each op's sequence of `sequences` and the finishing script to
  /// it.
  LogicalResult applyScripts(const std::string &sequences, ArrayRef<Scheduled> scheduled) {
    ModuleOp module = getOperation();
    std::string script = "module attributes {transform.with_named_sequence} {\n" + sequences +
                         "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n" +
                         kFinishScript.str() + "    transform.yield\n  }\n}\n";
    ParserConfig config(&getContext());
    OwningOpRef<ModuleOp> transforms = parseSourceString<ModuleOp>(script, config);
    if (!transforms)
      return module.emitError("internal error: the generated matmul schedule does not parse:\n") << script;
    // The expensive checks (that no transform uses an invalidated handle)
    // verify the generated script, not the model.
    auto options = transform::TransformOptions().enableExpensiveChecks(false);
    Operation *finish = transform::detail::findTransformEntryPoint(module, *transforms);
    ScheduleCache cache;
    for (const Scheduled &s : scheduled) {
      Operation *sequence = transforms->lookupSymbol(kSequencePrefix.str() + std::to_string(s.id));
      if (failed(scheduleIsolated(s.op, s.root, sequence, s.threadOrder, finish, *transforms, options, cache)))
        return failure();
    }
    return success();
  }
};

} // namespace
} // namespace symc::cpu
