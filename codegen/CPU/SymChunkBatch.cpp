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
// A static batch is chunked the same way where that keeps activations in
// the caches: a MobileNet at batch 16 writes and reads 77 MB tensors from
// memory, where one image's pass leaves each layer's output in cache for the
// next (the batch rows come from the arguments sym-infer-shapes marked
// kBatchAttr). Graphs whose weights outweigh their activations stay whole,
// as does a graph with an op that mixes rows.
//
//===----------------------------------------------------------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/CPU/LoweringUtils.h"
#include "codegen/CPU/Passes.h"

#include "dialects/Sym/IR/ShapeInference.h"
#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
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
/// the operands, `batched` telling which values carry the batch. Reshapes
/// keep rows apart only when the row size is kept.
bool mixesBatchRows(Operation *op, llvm::function_ref<bool(Value)> batched) {
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
      .Case([&](sym::DotOp dot) { return dot.getTransposeA() || batched(dot.getRhs()); })
      .Case([&](sym::LayerNormOp norm) { return axisIsZero(norm.getAxis(), norm.getData()); })
      // Sums over the batch; reads positions along dim 0 (the sequence).
      .Case<sym::BackwardLayerNormOp, sym::ArangeLikeOp, sym::InterleavedMatmulSelfAttQKOp,
            sym::InterleavedMatmulSelfAttValAttOp, sym::BackwardInterleavedMatmulSelfAttQKOp,
            sym::BackwardInterleavedMatmulSelfAttValAttOp>([](Operation *) { return true; })
      .Case([](sym::SequenceMaskOp mask) { return mask.getUseSequenceLength() && mask.getAxis() == 0; })
      .Case<sym::SequenceLastOp, sym::BackwardSequenceLastOp>([](auto last) { return last.getAxis() == 0; })
      .Case([](sym::SequenceReverseOp) { return true; }) // along dim 0
      .Case<sym::RNNOp, sym::BackwardRNNOp>([](Operation *) { return true; }) // recurs along dim 0
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
          [&](auto take) { return axisIsZero(take.getAxis(), take.getA()) && batched(take.getA()); })
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
  if (mixesBatchRows(op, [](Value v) { return isDynamic(v.getType()); }))
    return op->emitError("'") << op->getName().stripDialect()
                              << "' combines elements across the dynamic batch dim; the CPU "
                                 "backend compiles a dynamic batch only through ops that keep "
                                 "batch rows independent (compile with a static --shape, or each batch size "
                                 "listed: data=2|4|8,...)";
  return success();
}

/// `type` with `rows` leading rows.
RankedTensorType withRows(Type type, int64_t rows) {
  auto ranked = cast<RankedTensorType>(type);
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

using IsBatched = llvm::function_ref<bool(Value)>;

/// Ops that see the batch, the batch values they read, and the values
/// they give to the rest of the function.
struct BatchRegion {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs, outputs;
};

/// The region of `ops` (in block order).
BatchRegion makeRegion(ArrayRef<Operation *> ops, IsBatched batched) {
  BatchRegion region;
  region.ops.assign(ops.begin(), ops.end());
  llvm::SmallPtrSet<Operation *, 32> inRegion(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs, outputs;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (batched(operand) && !inRegion.contains(operand.getDefiningOp()))
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
scf::ForOp buildChunkLoop(OpBuilder &b, Location loc, const BatchRegion &region, IsBatched batched,
                          Value begin, Value end, int64_t rows, ValueRange dests) {
  Value step = b.create<arith::ConstantIndexOp>(loc, rows);
  auto loop = b.create<scf::ForOp>(
      loc, begin, end, step, dests, [&](OpBuilder &body, Location l, Value row, ValueRange iters) {
        IRMapping mapping;
        for (Value input : region.inputs) {
          RankedTensorType chunk = withRows(input.getType(), rows);
          RowSlice slice(body, chunk, row, rows);
          mapping.map(input, body.create<tensor::ExtractSliceOp>(l, chunk, input, slice.offsets,
                                                                 slice.sizes, slice.strides));
        }
        for (Operation *op : region.ops) {
          Operation *clone = body.clone(*op, mapping);
          for (auto [result, cloned] : llvm::zip(op->getResults(), clone->getResults()))
            if (batched(result))
              cloned.setType(withRows(result.getType(), rows));
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

/// Replaces the region's ops by a loop over its batch, `rows` at a time,
/// then (for the rows of a dynamic batch past the last whole chunk) one at a
/// time; the loops go after the region's last op.
void replaceByChunkLoops(const BatchRegion &region, IsBatched batched, int64_t rows) {
  OpBuilder b(region.ops.back());
  b.setInsertionPointAfter(region.ops.back());
  Location loc = region.ops.front()->getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  RankedTensorType inputType = tensorType(region.inputs.front());
  bool dynamic = inputType.isDynamicDim(0);
  Value batch = dynamic ? b.create<tensor::DimOp>(loc, region.inputs.front(), zero).getResult()
                        : b.create<arith::ConstantIndexOp>(loc, inputType.getDimSize(0)).getResult();
  SmallVector<Value> dests;
  for (Value output : region.outputs) {
    RankedTensorType type = tensorType(output);
    dests.push_back(b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(),
                                              dynamic ? ValueRange{batch} : ValueRange{}));
  }
  ValueRange results;
  if (dynamic) {
    // The rows in whole chunks: batch - batch % rows.
    Value whole = b.create<arith::SubIOp>(
        loc, batch, b.create<arith::RemUIOp>(loc, batch, b.create<arith::ConstantIndexOp>(loc, rows)));
    scf::ForOp chunks = buildChunkLoop(b, loc, region, batched, zero, whole, rows, dests);
    results = chunks.getResults();
    if (rows > 1) {
      chunks->setAttr(kBatchChunkAttr, b.getI64IntegerAttr(rows));
      results = buildChunkLoop(b, loc, region, batched, whole, batch, 1, results).getResults();
    }
  } else {
    results = buildChunkLoop(b, loc, region, batched, zero, batch, rows, dests).getResults();
  }
  for (auto [output, result] : llvm::zip(region.outputs, results))
    Value(output).replaceAllUsesWith(result);
  for (Operation *op : llvm::reverse(region.ops))
    op->erase();
}

/// The static batch: its rows and the values whose leading dim it is.
struct StaticBatch {
  int64_t rows = 0;
  llvm::DenseSet<Value> values;
  /// The ops that see it, in block order.
  SmallVector<Operation *> ops;
};

/// The batch values that the arguments marked kBatchAttr give: each one
/// itself, or (after sym-artifact-abi) the tensor it is read as.
SmallVector<Value> batchArguments(func::FuncOp func) {
  SmallVector<Value> values;
  for (BlockArgument arg : func.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), sym::kBatchAttr))
      continue;
    if (isa<TensorType>(arg.getType()))
      values.push_back(arg);
    for (Operation *user : arg.getUsers())
      if (auto read = dyn_cast<bufferization::ToTensorOp>(user))
        values.push_back(read);
  }
  return values;
}

/// Which results of `op`, an op reading the batch, carry it: its shape rule
/// run again with the batch dims unknown, as a dynamic batch would see them,
/// must leave exactly their leading dims unknown. Fails when a result is
/// ambiguous or a used one loses the batch.
LogicalResult findBatchedResults(Operation *op, const StaticBatch &batch, SmallVector<Value> &batched) {
  auto rule = dyn_cast<sym::ShapeInferenceOpInterface>(op);
  if (!rule)
    return failure();
  auto withUnknownRows = [](Value v) {
    sym::PartialShape shape = sym::PartialShape::fromType(v.getType());
    if (shape.hasRank() && shape.rank() > 0)
      shape[0] = sym::kUnknownDim;
    return shape;
  };
  SmallVector<sym::PartialShape> ins, outs;
  for (Value operand : op->getOperands())
    ins.push_back(batch.values.contains(operand) ? withUnknownRows(operand)
                                                 : sym::PartialShape::fromType(operand.getType()));
  for (Value result : op->getResults())
    outs.push_back(withUnknownRows(result));
  sym::ShapeInferenceContext ctx(op, std::move(ins), std::move(outs));
  ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
  if (failed(rule.inferShapes(ctx)))
    return failure();
  for (auto [result, shape] : llvm::zip(op->getResults(), ctx.getOutputs())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape() || !shape.hasRank() || shape.rank() != type.getRank())
      return failure();
    bool rowsKnown = type.getRank() > 0 && shape.isKnown(0);
    if (type.getRank() == 0 || rowsKnown) {
      if (!result.use_empty())
        return failure();
      continue;
    }
    for (unsigned d = 1; d < shape.rank(); ++d)
      if (!shape.isKnown(d))
        return failure();
    if (type.getDimSize(0) != batch.rows)
      return failure();
    batched.push_back(result);
  }
  return success();
}

/// The static batch of `func`, or nothing when an op that sees it cannot
/// run on chunks of it (or the batch arguments disagree on its rows).
std::optional<StaticBatch> findStaticBatch(func::FuncOp func) {
  StaticBatch batch;
  for (Value value : batchArguments(func)) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
        (batch.rows && type.getDimSize(0) != batch.rows))
      return std::nullopt;
    batch.rows = type.getDimSize(0);
    batch.values.insert(value);
  }
  if (batch.rows < 2)
    return std::nullopt;
  auto isBatched = [&](Value v) { return batch.values.contains(v); };
  for (Operation &op : func.getBody().front()) {
    if (llvm::none_of(op.getOperands(), isBatched))
      continue;
    // Results leave through these; any other op is not chunked.
    if (isa<bufferization::MaterializeInDestinationOp, func::ReturnOp>(op))
      continue;
    SmallVector<Value> batched;
    if (!isa<sym::SymDialect>(op.getDialect()) || sym::drawsRandomNumbers(&op) ||
        mixesBatchRows(&op, isBatched) || failed(findBatchedResults(&op, batch, batched)))
      return std::nullopt;
    batch.values.insert(batched.begin(), batched.end());
    batch.ops.push_back(&op);
  }
  return batch;
}

int64_t bytesOf(Value value) {
  RankedTensorType type = tensorType(value);
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// Multiply-adds of a convolution or fully connected layer: each output
/// element sums over its output channel's weights. Other ops count as none:
/// they move data.
int64_t multiplyAdds(Operation *op) {
  if (!isa<sym::ConvolutionOp, sym::FullyConnectedOp>(op))
    return 0;
  RankedTensorType weight = tensorType(op->getOperand(1));
  return tensorType(op->getResult(0)).getNumElements() * (weight.getNumElements() / weight.getDimSize(0));
}

/// What a batch's pass costs: its largest tensor and all its tensors per
/// batch row, the weights it reads, and its arithmetic.
struct BatchTraffic {
  int64_t largestRowBytes = 0, activationRowBytes = 0, weightBytes = 0, flopsPerRow = 0;

  explicit BatchTraffic(const StaticBatch &batch) {
    llvm::DenseSet<Value> weights;
    for (Operation *op : batch.ops) {
      for (Value operand : op->getOperands())
        if (!batch.values.contains(operand) && isa<RankedTensorType>(operand.getType()) &&
            weights.insert(operand).second)
          weightBytes += bytesOf(operand);
      for (Value result : op->getResults())
        if (batch.values.contains(result)) {
          largestRowBytes = std::max(largestRowBytes, bytesOf(result) / batch.rows);
          activationRowBytes += bytesOf(result) / batch.rows;
        }
      flopsPerRow += 2 * multiplyAdds(op) / batch.rows;
    }
  }
};

/// Chunks the static batch of `func` where its activations, not its
/// arithmetic, bound its time and would not stay in the caches: when its
/// largest batch tensor outgrows `bytes`, its convolutions and layers do at
/// most kMemoryBoundFlopsPerByte per activation byte, and one chunk's
/// activations outweigh twice the weights (which each chunk reads again).
/// The chunk has the most rows (a divisor of the batch) whose largest
/// tensor fits `bytes`. MobileNets and SqueezeNet (7-25 flops per byte)
/// qualify; ResNets, Inception and VGG (57-230) stay whole.
void chunkStaticBatch(func::FuncOp func, int64_t bytes) {
  constexpr int64_t kMemoryBoundFlopsPerByte = 32;
  std::optional<StaticBatch> batch = findStaticBatch(func);
  if (!batch || batch->ops.empty())
    return;
  BatchTraffic traffic(*batch);
  if (batch->rows * traffic.largestRowBytes <= bytes ||
      traffic.flopsPerRow > kMemoryBoundFlopsPerByte * traffic.activationRowBytes)
    return;
  int64_t rows = 1;
  for (int64_t r = batch->rows / 2; r > 1 && rows == 1; --r)
    if (batch->rows % r == 0 && r * traffic.largestRowBytes <= bytes)
      rows = r;
  if (rows * traffic.activationRowBytes <= 2 * traffic.weightBytes)
    return;
  auto isBatched = [&](Value v) { return batch->values.contains(v); };
  replaceByChunkLoops(makeRegion(batch->ops, isBatched), isBatched, rows);
}

struct SymChunkBatchPass : impl::SymChunkBatchBase<SymChunkBatchPass> {
  using SymChunkBatchBase::SymChunkBatchBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<Operation *> dynamicOps;
    for (Operation &op : func.getBody().front())
      if (isa<sym::SymDialect>(op.getDialect()) && hasDynamicType(&op))
        dynamicOps.push_back(&op);
    if (dynamicOps.empty()) {
      if (chunkBytes > 0)
        chunkStaticBatch(func, chunkBytes);
      return;
    }
    for (Operation *op : dynamicOps)
      if (failed(checkChunkable(op)))
        return signalPassFailure();
    auto isBatched = [](Value v) { return isDynamic(v.getType()); };
    BatchRegion region = makeRegion(dynamicOps, isBatched);
    if (region.inputs.empty()) {
      region.ops.front()->emitError("a dynamic batch dim that no argument carries");
      return signalPassFailure();
    }
    replaceByChunkLoops(region, isBatched, std::max<int64_t>(1, chunk));
  }
};

} // namespace
} // namespace symc::cpu
