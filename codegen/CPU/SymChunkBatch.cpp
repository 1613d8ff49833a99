//===- SymChunkBatch.cpp - the sym-chunk-batch pass -----------------------===//
//
// A dynamic batch dim (`--shape data=?,3,224,224`) is compiled as loops over
// chunks of the batch: the sym ops that see the batch are cloned into a loop
// body where their types are static (`chunk` rows, then single rows for the
// remainder), so every kernel below is the static, scheduled one, and the
// intermediate buffers are chunk-sized whatever the batch. This is only
// valid for ops that keep batch elements independent; any other op, or a
// dynamic dim that is not the leading one, is an error at its node.
//
//===----------------------------------------------------------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/CPU/LoweringUtils.h"
#include "codegen/CPU/Passes.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMCHUNKBATCH
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

bool isDynamic(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && !ranked.hasStaticShape();
}

bool hasDynamicType(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isDynamic) ||
         llvm::any_of(op->getResultTypes(), isDynamic);
}

/// The product of all dims but the first.
int64_t rowSize(Type type) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
  int64_t size = 1;
  for (int64_t d : shape.drop_front())
    size *= d;
  return size;
}

/// Whether an element of batch row n of a result depends on other rows of
/// the operands. Reshapes keep rows apart only when the row size is kept.
bool mixesBatchRows(Operation *op) {
  auto axisIsZero = [&](int64_t axis, Value v) {
    return normalizeAxis(axis, tensorType(v).getRank()) == 0;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<sym::SumOp, sym::MeanOp>([&](auto reduce) {
        return llvm::is_contained(reducedAxes(reduce.getAxis(), reduce.getExclude(),
                                              tensorType(reduce.getData()).getRank()),
                                  0);
      })
      .Case<sym::SoftmaxOp, sym::LogSoftmaxOp>(
          [&](auto softmax) { return axisIsZero(softmax.getAxis(), softmax.getData()); })
      .Case([&](sym::BatchNormOp bn) {
        return sym::runsInTraining(bn) || axisIsZero(bn.getAxis(), bn.getData());
      })
      .Case<sym::BackwardBatchNormOp, sym::BackwardInstanceNormOp>([](Operation *) { return true; }) // sums over the batch
      .Case([](sym::NormOp norm) {
        return !norm.getAxis() || norm.getAxis()->empty() ||
               llvm::is_contained(reducedAxes(norm.getAxis(), false, tensorType(norm.getData()).getRank()), 0);
      })
      .Case([&](sym::ConcatOp concat) { return axisIsZero(concat.getDim(), concat.getOutput()); })
      .Case<sym::SliceChannelOp, sym::SliceAxisOp>(
          [&](auto slice) { return axisIsZero(slice.getAxis(), slice.getData()); })
      .Case([&](sym::TransposeOp transpose) {
        int64_t rank = tensorType(transpose.getData()).getRank();
        return transpose.getAxes().empty() ? rank > 1
                                           : normalizeAxis(transpose.getAxes()[0], rank) != 0;
      })
      .Case([&](sym::SwapAxisOp swap) {
        return axisIsZero(swap.getDim1(), swap.getData()) != axisIsZero(swap.getDim2(), swap.getData());
      })
      .Case([&](sym::DotOp dot) { return dot.getTransposeA() || isDynamic(dot.getRhs().getType()); })
      .Case([&](sym::LayerNormOp norm) { return axisIsZero(norm.getAxis(), norm.getData()); })
      // Sums over the batch; reads positions along dim 0 (the sequence).
      .Case<sym::BackwardLayerNormOp, sym::ArangeLikeOp, sym::InterleavedMatmulSelfAttQKOp,
            sym::InterleavedMatmulSelfAttValAttOp, sym::BackwardInterleavedMatmulSelfAttQKOp,
            sym::BackwardInterleavedMatmulSelfAttValAttOp>([](Operation *) { return true; })
      .Case([](sym::SequenceMaskOp mask) { return mask.getUseSequenceLength() && mask.getAxis() == 0; })
      .Case<sym::SequenceLastOp, sym::BackwardSequenceLastOp>([](auto last) { return last.getAxis() == 0; })
      .Case([](sym::SequenceReverseOp) { return true; }) // along dim 0
      .Case<sym::SliceOp, sym::BackwardSliceOp>([](auto slice) { return !slice.getBegin().empty(); })
      .Case([&](sym::SliceLikeOp slice) {
        return slice.getAxes().empty() ||
               llvm::any_of(slice.getAxes(), [&](int64_t a) { return axisIsZero(a, slice.getData()); });
      })
      // Rois pick their image from the whole batch.
      .Case<sym::ROIAlignOp, sym::BackwardROIAlignOp, sym::ROIPoolingOp, sym::BackwardROIPoolingOp>(
          [](Operation *) { return true; })
      // The record numbers rows across the whole batch.
      .Case<sym::BoxNmsOp, sym::BackwardBoxNmsOp>([](Operation *) { return true; })
      .Case<sym::ArgsortOp, sym::TopkOp, sym::SortOp, sym::BackwardTopkOp>([&](auto sort) {
        return sort.getAxis() == sym::kNone || axisIsZero(sort.getAxis(), sort.getData());
      })
      .Case<sym::ArgmaxOp, sym::ArgminOp>(
          [&](auto search) { return !search.getAxis() || axisIsZero(*search.getAxis(), search.getData()); })
      .Case<sym::PickOp, sym::BackwardPickOp>([&](auto pick) { return axisIsZero(pick.getAxis(), pick.getData()); })
      .Case<sym::TakeOp, sym::BackwardTakeOp>(
          [&](auto take) { return axisIsZero(take.getAxis(), take.getA()) && isDynamic(take.getA().getType()); })
      .Case<sym::GatherNdOp, sym::BackwardGatherNdOp>([](Operation *) { return true; }) // rows by value
      .Case([&](sym::StackOp stack) { return axisIsZero(stack.getAxis(), stack.getOutput()); })
      .Case([](sym::TileOp tile) {
        int64_t rank = tensorType(tile.getData()).getRank(), reps = tile.getReps().size();
        return reps > rank || (reps == rank && tile.getReps()[0] != 1);
      })
      .Case([&](sym::RepeatOp repeat) { return !repeat.getAxis() || axisIsZero(*repeat.getAxis(), repeat.getData()); })
      .Case([&](sym::ReverseOp reverse) {
        return llvm::any_of(reverse.getAxis(), [&](int64_t a) { return axisIsZero(a, reverse.getData()); });
      })
      .Case<sym::FlattenOp, sym::ReshapeOp, sym::ExpandDimsOp, sym::SqueezeOp>([&](Operation *reshape) {
        return rowSize(reshape->getOperand(0).getType()) != rowSize(reshape->getResult(0).getType());
      })
      .Default([](Operation *) { return false; });
}

LogicalResult checkChunkable(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type type : types) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked)
      return op->emitError("the CPU backend needs ranked types; '")
             << op->getName().stripDialect() << "' has an unranked operand or result";
    for (int64_t i = 1; i < ranked.getRank(); ++i)
      if (ranked.isDynamicDim(i))
        return op->emitError("the CPU backend keeps only the leading (batch) dim dynamic; '")
               << op->getName().stripDialect() << "' has type " << type;
  }
  // (BatchNorm's per-channel mean and var are static: fine while unused.)
  if (llvm::any_of(op->getResults(), [](Value r) { return !isDynamic(r.getType()) && !r.use_empty(); }))
    return op->emitError("'") << op->getName().stripDialect()
                              << "' turns the dynamic batch dim into a static one; the CPU backend "
                                 "cannot compile that with a dynamic batch (compile with a static --shape, "
                                 "or each batch size listed: data=2|4|8,...)";
  // Chunks would repeat each other's draws: the generator counts elements
  // from the start of the tensor it fills.
  if (sym::drawsRandomNumbers(op))
    return op->emitError("'") << op->getName().stripDialect()
                              << "' draws random numbers over the dynamic batch dim; the CPU backend "
                                 "needs a static batch for it (compile with a static --shape, or each batch size "
                                 "listed: data=2|4|8,...)";
  if (mixesBatchRows(op))
    return op->emitError("'") << op->getName().stripDialect()
                              << "' combines elements across the dynamic batch dim; the CPU "
                                 "backend compiles a dynamic batch only through ops that keep "
                                 "batch rows independent (compile with a static --shape, or each batch size "
                                 "listed: data=2|4|8,...)";
  return success();
}

RankedTensorType withRows(Type type, int64_t rows) {
  auto ranked = cast<RankedTensorType>(type);
  if (!ranked.isDynamicDim(0))
    return ranked;
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = rows;
  return RankedTensorType::get(shape, ranked.getElementType());
}

/// Offsets [row, 0...], sizes [rows, rest...] and unit strides of `type`.
struct RowSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RowSlice(OpBuilder &b, RankedTensorType type, Value row, int64_t rows) {
    offsets.assign(type.getRank(), b.getIndexAttr(0));
    offsets[0] = row;
    for (int64_t d : type.getShape())
      sizes.push_back(b.getIndexAttr(d));
    sizes[0] = b.getIndexAttr(rows);
    strides.assign(type.getRank(), b.getIndexAttr(1));
  }
};

/// The ops that see the batch, the batch values they read, and the values
/// they give to the rest of the function.
struct BatchRegion {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs, outputs;
};

BatchRegion findRegion(Block &block) {
  BatchRegion region;
  llvm::SmallPtrSet<Operation *, 32> inRegion;
  for (Operation &op : block)
    if (isa<sym::SymDialect>(op.getDialect()) && hasDynamicType(&op)) {
      region.ops.push_back(&op);
      inRegion.insert(&op);
    }
  llvm::SetVector<Value> inputs, outputs;
  for (Operation *op : region.ops) {
    for (Value operand : op->getOperands())
      if (isDynamic(operand.getType()) && !inRegion.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *u) { return !inRegion.contains(u); }))
        outputs.insert(result);
  }
  region.inputs = inputs.takeVector();
  region.outputs = outputs.takeVector();
  return region;
}

/// for row in [begin, end) step rows: the region on rows [row, row + rows),
/// inserted into `dests`. Returns the loop (its results: the filled
/// destinations).
scf::ForOp buildChunkLoop(OpBuilder &b, Location loc, const BatchRegion &region, Value begin,
                          Value end, int64_t rows, ValueRange dests) {
  Value step = b.create<arith::ConstantIndexOp>(loc, rows);
  auto loop = b.create<scf::ForOp>(
      loc, begin, end, step, dests, [&](OpBuilder &body, Location l, Value row, ValueRange iters) {
        IRMapping mapping;
        for (Value input : region.inputs) {
          RowSlice slice(body, withRows(input.getType(), rows), row, rows);
          mapping.map(input, body.create<tensor::ExtractSliceOp>(l, withRows(input.getType(), rows),
                                                                 input, slice.offsets, slice.sizes,
                                                                 slice.strides));
        }
        for (Operation *op : region.ops) {
          Operation *clone = body.clone(*op, mapping);
          for (OpResult result : clone->getResults())
            result.setType(withRows(result.getType(), rows));
        }
        SmallVector<Value> filled;
        for (auto [output, dest] : llvm::zip(region.outputs, iters)) {
          Value chunk = mapping.lookup(output);
          RowSlice slice(body, tensorType(chunk), row, rows);
          filled.push_back(body.create<tensor::InsertSliceOp>(l, chunk, dest, slice.offsets,
                                                              slice.sizes, slice.strides));
        }
        body.create<scf::YieldOp>(l, filled);
      });
  return loop;
}

struct SymChunkBatchPass : impl::SymChunkBatchBase<SymChunkBatchPass> {
  using SymChunkBatchBase::SymChunkBatchBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BatchRegion region = findRegion(func.getBody().front());
    if (region.ops.empty())
      return;
    for (Operation *op : region.ops)
      if (failed(checkChunkable(op)))
        return signalPassFailure();
    if (region.inputs.empty()) {
      region.ops.front()->emitError("a dynamic batch dim that no argument carries");
      return signalPassFailure();
    }
    // After the last region op: every input is defined and outputs are built.
    OpBuilder b(region.ops.back());
    b.setInsertionPointAfter(region.ops.back());
    Location loc = func.getLoc();
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value batch = b.create<tensor::DimOp>(loc, region.inputs.front(), zero);
    SmallVector<Value> dests;
    for (Value output : region.outputs) {
      RankedTensorType type = tensorType(output);
      dests.push_back(b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(),
                                                ValueRange{batch}));
    }
    int64_t rows = std::max<int64_t>(1, chunk);
    // The rows in whole chunks: batch - batch % rows.
    Value whole = b.create<arith::SubIOp>(
        loc, batch, b.create<arith::RemUIOp>(loc, batch, b.create<arith::ConstantIndexOp>(loc, rows)));
    scf::ForOp chunks = buildChunkLoop(b, loc, region, zero, whole, rows, dests);
    ValueRange results = chunks.getResults();
    if (rows > 1) {
      chunks->setAttr(kBatchChunkAttr, b.getI64IntegerAttr(rows));
      results = buildChunkLoop(b, loc, region, whole, batch, 1, results).getResults();
    }
    for (auto [output, result] : llvm::zip(region.outputs, results))
      output.replaceAllUsesWith(result);
    for (Operation *op : llvm::reverse(region.ops))
      op->erase();
  }
};

} // namespace
} // namespace symc::cpu
