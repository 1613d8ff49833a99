//===- SymChannelsLast.cpp - the sym-channels-last pass -------------------===//
//
// The CPU's fastest convolution kernels read and write channels-last: a
// pointwise convolution is then a GEMM over the positions' channel rows, a
// depthwise one a sum of whole channel vectors, with no transpose of the
// input or the output around either. Each such convolution is rewritten as
// an NHWC one between transposes, and the transposes move down the graph
// (the layers after a convolution run channels-last too) until they meet
// the next convolution's, with which they cancel. Training runs so too: the
// convolutions' gradients go channels-last like the convolutions, the
// backward's layers between them follow, and the activations the training
// forward saves for the backward are saved channels-last. A training step
// keeps its RGB stem channels-first (kMinTrainingChannels) but hands the
// stem's output on channels-last (handOnChannelsLast).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/OpLowerings.h"
#include "codegen/CPU/Passes.h"

#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMCHANNELSLAST
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// `type` with its dims permuted as a transpose by `axes` permutes them.
RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (int64_t axis : axes)
    shape.push_back(type.getDimSize(axis));
  return RankedTensorType::get(shape, type.getElementType());
}

Value transpose(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(value.getType());
  return b.create<sym::TransposeOp>(loc, permuted(type, axes), value, b.getDenseI64ArrayAttr(axes));
}

/// Whether a function trains: it runs ops in training mode or gradients.
bool trains(func::FuncOp function) {
  WalkResult found = function.walk([](Operation *op) {
    bool training = sym::runsInTraining(op) || op->getName().stripDialect().starts_with("_backward");
    return training ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Data channels below which a training step keeps a convolution (an RGB
/// stem) channels-first: channels-last, its forward and weight gradient
/// would copy every window into rows of a few channels each (at batch 16,
/// 118 MB per pass for a 7x7 stem over 224x224 images), where
/// channels-first they go by taps.
constexpr int64_t kMinTrainingChannels = 16;

/// Whether `op` (a Convolution or its gradient, channels-first) has a
/// channels-last kernel and static shapes.
template <typename ConvolutionLike> bool hasChannelsLastForm(ConvolutionLike op, Value output) {
  return !op.isChannelsLast() && hasChannelsLastKernel(op) && cast<ShapedType>(output.getType()).hasStaticShape();
}

/// Whether a training step keeps `op` channels-first for its few data
/// channels (kMinTrainingChannels).
template <typename ConvolutionLike> bool keptChannelsFirst(ConvolutionLike op, bool training) {
  return training && cast<ShapedType>(op.getData().getType()).getDimSize(1) < kMinTrainingChannels;
}

/// Whether `op` (a Convolution or its gradient, channels-first) runs
/// channels-last.
template <typename ConvolutionLike> bool convertsToChannelsLast(ConvolutionLike op, Value output, bool training) {
  return hasChannelsLastForm(op, output) && !keptChannelsFirst(op, training);
}

/// Whether `op` is a stem that a training step keeps channels-first while
/// the convolutions after it, over its outputs' channels, run channels-last.
bool handsOnChannelsLast(sym::ConvolutionOp op, bool training) {
  auto out = cast<ShapedType>(op.getOutput().getType());
  return hasChannelsLastForm(op, op.getOutput()) && keptChannelsFirst(op, training) && out.getRank() == 4 &&
         out.getDimSize(1) >= kMinTrainingChannels;
}

/// Marks the transpose to channels-last that hands a stem's output on
/// (handOnChannelsLast): FoldTransposes leaves it until the transpose back
/// has moved down the layers after the stem.
constexpr llvm::StringLiteral kHandOnAttr = "symc.hand_on_channels_last";

/// A convolution that a training step keeps channels-first (an RGB stem)
/// hands its output on channels-last: the output goes through a transpose
/// to NHWC and one back, and the one back moves down the layers after it
/// (BatchNorm, relu, a max pooling: channels-first, the pooling and its
/// gradient read strided windows or scan them element by element) until it
/// meets the next convolution's transpose to NHWC. The saved output goes
/// channels-last too (saveChannelsLast).
void handOnChannelsLast(sym::ConvolutionOp op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op.getLoc();
  Value last = transpose(b, loc, op.getOutput(), kToChannelsLast);
  last.getDefiningOp()->setAttr(kHandOnAttr, b.getUnitAttr());
  Value first = transpose(b, loc, last, kToChannelsFirst);
  op.getOutput().replaceAllUsesExcept(first, last.getDefiningOp());
}

/// The transposes back of handOnChannelsLast that did not move: a pair of
/// transposes that cancel, but where a saved value's (a result of the
/// training forward), whose transpose back saveChannelsLast moves to the
/// backward.
void foldIdleHandOns(func::FuncOp function) {
  auto saved = [&](OpOperand &use) {
    return isa<func::ReturnOp>(use.getOwner()) &&
           function.getResultAttr(use.getOperandNumber(), sym::kSavedAttr);
  };
  SmallVector<sym::TransposeOp> handOns;
  function.walk([&](sym::TransposeOp t) {
    if (t->removeAttr(kHandOnAttr))
      handOns.push_back(t);
  });
  for (sym::TransposeOp last : handOns) {
    for (Operation *user : llvm::make_early_inc_range(last->getUsers())) {
      auto first = dyn_cast<sym::TransposeOp>(user);
      if (!first || !llvm::equal(first.getAxes(), kToChannelsFirst))
        continue;
      first.getOutput().replaceUsesWithIf(last.getData(), [&](OpOperand &use) { return !saved(use); });
      if (first->use_empty())
        first->erase();
    }
    if (last->use_empty())
      last->erase();
  }
}

/// The NCHW convolution `op` as an NHWC one between transposes.
void convertToChannelsLast(sym::ConvolutionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> operands{transpose(b, loc, op.getData(), kToChannelsLast),
                              transpose(b, loc, op.getWeight(), kToChannelsLast)};
  if (op.getBias())
    operands.push_back(op.getBias());
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  auto converted = b.create<sym::ConvolutionOp>(loc, TypeRange{permuted(outType, kToChannelsLast)}, operands,
                                                op->getAttrs());
  converted.setLayout("NHWC");
  op.getOutput().replaceAllUsesWith(transpose(b, loc, converted, kToChannelsFirst));
  op.erase();
}

/// The NCHW convolution gradient `op` as an NHWC one between transposes.
void convertToChannelsLast(sym::BackwardConvolutionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(transpose(b, loc, operand, kToChannelsLast));
  auto converted = b.create<sym::BackwardConvolutionOp>(
      loc, TypeRange{operands[1].getType(), operands[2].getType()}, operands, op->getAttrs());
  converted.setLayout("NHWC");
  for (auto [result, channelsLast] : llvm::zip(op->getResults(), converted->getResults()))
    result.replaceAllUsesWith(transpose(b, loc, channelsLast, kToChannelsFirst));
  op.erase();
}

/// The transpose that computes `value`, one the patterns may move or fold:
/// not a stem's hand-on transpose (handOnChannelsLast), which the layers
/// after it would otherwise move back above them (through a BatchNorm
/// that reads it, say) and fold with its transpose back.
sym::TransposeOp movableTranspose(Value value) {
  auto t = value.getDefiningOp<sym::TransposeOp>();
  return t && !t->hasAttr(kHandOnAttr) ? t : sym::TransposeOp();
}

bool isTransposed(Value value) { return movableTranspose(value) != nullptr; }

/// A transpose of a transpose is one transpose, or none.
struct FoldTransposes : OpRewritePattern<sym::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = movableTranspose(op.getData());
    if (!inner || op.getAxes().empty() || inner.getAxes().empty())
      return failure();
    SmallVector<int64_t> axes;
    for (int64_t axis : op.getAxes())
      axes.push_back(inner.getAxes()[axis]);
    if (llvm::equal(axes, llvm::seq<int64_t>(0, axes.size())))
      rewriter.replaceOp(op, inner.getData());
    else
      rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), inner.getData(), axes));
    return success();
  }
};

/// The ops that compute each element from the elements at the same
/// position of their operands, all of one shape, with no axis to move.
bool isElementwise(Operation *op) { return op->hasTrait<sym::Elementwise>(); }

/// The inputs of the transposes that make `operands` (all transposed alike,
/// by the `axes` set here), or none. In a training step, whose gradients
/// flow from channels-first head gradients into channels-last layers, some
/// operands may be plain instead where the others come from channels-last:
/// those get a transpose to channels-last (the op then runs channels-last;
/// the transpose back after it moves on into the next layers).
std::optional<SmallVector<Value>> transposedSources(PatternRewriter &rewriter, Location loc, ValueRange operands,
                                                    bool mixed, SmallVector<int64_t> &axes) {
  auto first = llvm::find_if(operands, isTransposed);
  if (first == operands.end())
    return std::nullopt;
  axes = SmallVector<int64_t>(movableTranspose(*first).getAxes());
  bool plainOnes = llvm::any_of(operands, [](Value v) { return !isTransposed(v); });
  if (axes.empty() || (plainOnes && !(mixed && llvm::equal(axes, kToChannelsFirst))))
    return std::nullopt;
  SmallVector<Value> sources;
  for (Value operand : operands) {
    auto t = movableTranspose(operand);
    if (t && t.getAxes() != ArrayRef<int64_t>(axes))
      return std::nullopt;
    sources.push_back(t ? t.getData() : Value());
  }
  for (auto [source, operand] : llvm::zip(sources, operands))
    if (!source)
      source = transpose(rewriter, loc, operand, kToChannelsLast);
  return sources;
}

/// An elementwise op whose operands are all transposed alike runs on the
/// transposes' inputs, its result transposed instead.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context, bool mixed)
      : RewritePattern(MatchAnyOpTypeTag(), 1, context), mixed(mixed) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || op->getNumOperands() == 0 || op->getNumResults() != 1)
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto ofResultShape = [&](Type t) {
      auto type = dyn_cast<RankedTensorType>(t);
      return type && type.getShape() == resultType.getShape();
    };
    if (!resultType || !llvm::all_of(op->getOperandTypes(), ofResultShape))
      return failure();
    SmallVector<int64_t> axes;
    std::optional<SmallVector<Value>> sources =
        transposedSources(rewriter, op->getLoc(), op->getOperands(), mixed, axes);
    if (!sources)
      return failure();
    auto sourceType = cast<RankedTensorType>(sources->front().getType());
    OperationState state(op->getLoc(), op->getName(), *sources,
                         TypeRange{RankedTensorType::get(sourceType.getShape(), resultType.getElementType())},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), moved->getResult(0), axes));
    return success();
  }
  bool mixed;
};

/// A broadcast op of a transposed operand and a small one (a squeeze-and-
/// excitation block's per-channel scale, (N, C, 1, 1)) runs on the
/// transpose's input and the small operand transposed back: the large one
/// is never materialized channels-first.
struct SinkThroughBroadcast : RewritePattern {
  SinkThroughBroadcast(MLIRContext *context) : RewritePattern(MatchAnyOpTypeTag(), 1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<sym::BroadcastAddOp, sym::BroadcastSubOp, sym::BroadcastMulOp, sym::BroadcastDivOp,
             sym::BroadcastMaximumOp, sym::BroadcastMinimumOp>(op))
      return failure();
    // A transposed operand the result's size: the one not to materialize.
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto transposed = llvm::find_if(op->getOperands(), [&](Value operand) {
      return isTransposed(operand) && resultType &&
             cast<RankedTensorType>(operand.getType()).getNumElements() == resultType.getNumElements();
    });
    if (transposed == op->operand_end())
      return failure();
    ArrayRef<int64_t> axes = movableTranspose(*transposed).getAxes();
    if (axes.size() != size_t(resultType.getRank()))
      return failure();
    SmallVector<int64_t> inverse(axes.size());
    for (auto [i, axis] : llvm::enumerate(axes))
      inverse[axis] = i;
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto t = movableTranspose(operand);
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (t && t.getAxes() == axes) {
        operands.push_back(t.getData());
        continue;
      }
      // Only a small operand is worth its own transpose.
      if (!type || type.getRank() != resultType.getRank() || 8 * type.getNumElements() > resultType.getNumElements())
        return failure();
      operands.push_back(transpose(rewriter, op->getLoc(), operand, inverse));
    }
    OperationState state(op->getLoc(), op->getName(), operands, TypeRange{permuted(resultType, inverse)},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), moved->getResult(0), axes));
    return success();
  }
};

/// A BatchNorm of a transposed input normalizes the transpose's input along
/// the axis the transpose moved its own to.
struct SinkThroughBatchNorm : OpRewritePattern<sym::BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::BatchNormOp op, PatternRewriter &rewriter) const override {
    auto t = movableTranspose(op.getData());
    auto type = dyn_cast<RankedTensorType>(op.getData().getType());
    if (!t || t.getAxes().empty() || !type)
      return failure();
    int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
    SmallVector<Value> operands(op->getOperands());
    operands[0] = t.getData();
    SmallVector<Type> types(op->getResultTypes());
    types[0] = t.getData().getType();
    auto moved = rewriter.create<sym::BatchNormOp>(op.getLoc(), types, operands, op->getAttrs());
    moved.setAxis(t.getAxes()[axis]);
    SmallVector<Value> results{transpose(rewriter, op.getLoc(), moved.getOutput(), t.getAxes())};
    results.append({moved.getMean(), moved.getVar()});
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// BatchNorm's gradient, of an output gradient and data transposed alike,
/// is taken along the axis the transposes moved its own to.
struct SinkThroughBatchNormGrad : OpRewritePattern<sym::BackwardBatchNormOp> {
  SinkThroughBatchNormGrad(MLIRContext *context, bool mixed) : OpRewritePattern(context), mixed(mixed) {}
  LogicalResult matchAndRewrite(sym::BackwardBatchNormOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getData().getType());
    if (!type || op.getOutGrad().getType() != type)
      return failure();
    SmallVector<int64_t> axes;
    std::optional<SmallVector<Value>> sources =
        transposedSources(rewriter, op.getLoc(), {op.getOutGrad(), op.getData()}, mixed, axes);
    if (!sources)
      return failure();
    int64_t axis = op.getAxis() < 0 ? op.getAxis() + type.getRank() : op.getAxis();
    SmallVector<Value> operands(op->getOperands());
    operands[0] = (*sources)[0];
    operands[1] = (*sources)[1];
    SmallVector<Type> types(op->getResultTypes());
    types[0] = operands[1].getType();
    auto moved = rewriter.create<sym::BackwardBatchNormOp>(op.getLoc(), types, operands, op->getAttrs());
    moved.setAxis(axes[axis]);
    rewriter.replaceOp(op, {transpose(rewriter, op.getLoc(), moved.getDataGrad(), axes), moved.getGammaGrad(),
                            moved.getBetaGrad()});
    return success();
  }
  bool mixed;
};

/// A sum of a transposed value down to one dim (a bias gradient, the sum
/// of an output gradient over all but its channels) sums the transpose's
/// input over the dims the transpose moved the summed ones to.
struct SinkThroughSum : OpRewritePattern<sym::SumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::SumOp op, PatternRewriter &rewriter) const override {
    auto t = movableTranspose(op.getData());
    auto type = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!t || t.getAxes().empty() || !op.getAxis() || op.getKeepdims() || op.getExclude() || !type ||
        type.getRank() > 1)
      return failure();
    SmallVector<int64_t> axes;
    std::optional<ArrayRef<int64_t>> summed = op.getAxis();
    for (int64_t axis : *summed) {
      if (axis < 0 || axis >= int64_t(t.getAxes().size()))
        return failure();
      axes.push_back(t.getAxes()[axis]);
    }
    llvm::sort(axes);
    auto moved = rewriter.create<sym::SumOp>(op.getLoc(), type, t.getData(), op->getAttrs());
    moved.setAxis(axes);
    rewriter.replaceOp(op, moved);
    return success();
  }
};

/// A concatenation of inputs all transposed alike concatenates the
/// transposes' inputs along the dim the transpose moved its own to.
struct SinkThroughConcat : OpRewritePattern<sym::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::ConcatOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().empty() || !llvm::all_of(op.getInputs(), isTransposed))
      return failure();
    ArrayRef<int64_t> axes = movableTranspose(op.getInputs().front()).getAxes();
    SmallVector<Value> sources;
    for (Value input : op.getInputs()) {
      auto t = movableTranspose(input);
      if (t.getAxes() != axes)
        return failure();
      sources.push_back(t.getData());
    }
    auto type = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (axes.empty() || !type)
      return failure();
    int64_t dim = op.getDim() < 0 ? op.getDim() + type.getRank() : op.getDim();
    SmallVector<int64_t> shape(type.getRank());
    for (auto [i, axis] : llvm::enumerate(axes))
      shape[axis] = type.getDimSize(i);
    auto moved = rewriter.create<sym::ConcatOp>(op.getLoc(), RankedTensorType::get(shape, type.getElementType()),
                                                sources, op->getAttrs());
    moved.setDim(axes[dim]);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved, axes));
    return success();
  }
};

/// A 2-d pooling of a channels-last value transposed to channels-first
/// pools it channels-last (NHWC), as the CPU lowering can.
struct SinkThroughPooling : OpRewritePattern<sym::PoolingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::PoolingOp op, PatternRewriter &rewriter) const override {
    auto t = movableTranspose(op.getData());
    auto type = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!t || !llvm::equal(t.getAxes(), kToChannelsFirst) || !type || op.isChannelsLast() ||
        op.getPoolType() == "lp" || op.getPoolingConvention() == "same")
      return failure();
    auto moved = rewriter.create<sym::PoolingOp>(op.getLoc(), TypeRange{permuted(type, kToChannelsLast)},
                                                 t.getData(), op->getAttrs());
    moved.setLayout("NHWC");
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved, kToChannelsFirst));
    return success();
  }
};

/// A 2-d pooling's gradient, of data transposed to channels-first from
/// channels-last and an output gradient transposed alike (or small: a
/// global pool's), is taken channels-last.
struct SinkThroughPoolingGrad : OpRewritePattern<sym::BackwardPoolingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::BackwardPoolingOp op, PatternRewriter &rewriter) const override {
    auto data = movableTranspose(op.getData());
    auto g = movableTranspose(op.getOutGrad());
    auto type = dyn_cast<RankedTensorType>(op.getData().getType());
    auto gType = dyn_cast<RankedTensorType>(op.getOutGrad().getType());
    if (!data || !llvm::equal(data.getAxes(), kToChannelsFirst) || !type || !gType ||
        op.getLayout().value_or("NCHW") != "NCHW" || op.getPoolType() == "lp" ||
        op.getPoolingConvention() == "same")
      return failure();
    bool gTransposed = g && llvm::equal(g.getAxes(), kToChannelsFirst);
    if (!gTransposed && 8 * gType.getNumElements() > type.getNumElements())
      return failure();
    Value gLast = gTransposed ? g.getData() : transpose(rewriter, op.getLoc(), op.getOutGrad(), kToChannelsLast);
    auto moved = rewriter.create<sym::BackwardPoolingOp>(op.getLoc(), TypeRange{data.getData().getType()},
                                                         ValueRange{gLast, data.getData()}, op->getAttrs());
    moved.setLayout("NHWC");
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved, kToChannelsFirst));
    return success();
  }
};

/// Converts the convolutions and their gradients of `function` that have
/// channels-last kernels, then moves the transposes until they meet.
LogicalResult runChannelsLast(func::FuncOp function, bool training) {
  SmallVector<Operation *> convolutions;
  SmallVector<sym::ConvolutionOp> stems;
  function.walk([&](Operation *op) {
    auto forward = dyn_cast<sym::ConvolutionOp>(op);
    auto backward = dyn_cast<sym::BackwardConvolutionOp>(op);
    if ((forward && convertsToChannelsLast(forward, forward.getOutput(), training)) ||
        (backward && convertsToChannelsLast(backward, backward.getOutGrad(), training)))
      convolutions.push_back(op);
    else if (forward && handsOnChannelsLast(forward, training))
      stems.push_back(forward);
  });
  for (Operation *op : convolutions) {
    if (auto forward = dyn_cast<sym::ConvolutionOp>(op))
      convertToChannelsLast(forward);
    else
      convertToChannelsLast(cast<sym::BackwardConvolutionOp>(op));
  }
  for (sym::ConvolutionOp stem : stems)
    handOnChannelsLast(stem);
  MLIRContext *context = function.getContext();
  RewritePatternSet patterns(context);
  patterns.add<FoldTransposes, SinkThroughBroadcast, SinkThroughBatchNorm, SinkThroughSum, SinkThroughConcat,
               SinkThroughPooling, SinkThroughPoolingGrad>(context);
  patterns.add<SinkThroughElementwise, SinkThroughBatchNormGrad>(context, /*mixed=*/training);
  if (failed(applyPatternsAndFoldGreedily(function, std::move(patterns))))
    return failure();
  foldIdleHandOns(function);
  return success();
}

/// The activations that the training forward computes channels-last are
/// saved so, and the backward reads them so: the transpose back to NCHW
/// before the save moves to the backward, where it meets the transposes to
/// NHWC of the layers that read it and folds.
void saveChannelsLast(func::FuncOp train, func::FuncOp backward) {
  llvm::StringMap<BlockArgument> savedArgs;
  for (BlockArgument arg : backward.getArguments())
    if (auto name = backward.getArgAttrOfType<StringAttr>(arg.getArgNumber(), sym::kSavedAttr))
      savedArgs[name.getValue()] = arg;
  auto ret = cast<func::ReturnOp>(train.getBody().front().getTerminator());
  OpBuilder b = OpBuilder::atBlockBegin(&backward.getBody().front());
  for (OpOperand &result : ret->getOpOperands()) {
    auto name = train.getResultAttrOfType<StringAttr>(result.getOperandNumber(), sym::kSavedAttr);
    auto t = result.get().getDefiningOp<sym::TransposeOp>();
    if (!name || !t || !llvm::equal(t.getAxes(), kToChannelsFirst) || !savedArgs.count(name.getValue()))
      continue;
    result.set(t.getData());
    if (t->use_empty())
      t->erase();
    BlockArgument arg = savedArgs[name.getValue()];
    arg.setType(result.get().getType());
    Value channelsFirst = transpose(b, arg.getLoc(), arg, kToChannelsFirst);
    arg.replaceAllUsesExcept(channelsFirst, channelsFirst.getDefiningOp());
  }
  train.setType(FunctionType::get(train.getContext(), train.getArgumentTypes(), ret.getOperandTypes()));
  backward.setType(FunctionType::get(backward.getContext(), backward.getBody().front().getArgumentTypes(),
                                     backward.getResultTypes()));
}

struct SymChannelsLastPass : impl::SymChannelsLastBase<SymChannelsLastPass> {
  using SymChannelsLastBase::SymChannelsLastBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Named functions, or (by default) every function that does not train.
    auto selected = [&](func::FuncOp function) {
      return function &&
             (functions.empty() ? !trains(function) : llvm::is_contained(functions, function.getSymName()));
    };
    auto train = module.lookupSymbol<func::FuncOp>("main_train");
    auto backward = module.lookupSymbol<func::FuncOp>("main_backward");
    if (!selected(backward))
      backward = nullptr;
    for (func::FuncOp function : module.getOps<func::FuncOp>())
      if (function != backward && selected(function) &&
          failed(runChannelsLast(function, function == train || trains(function))))
        return signalPassFailure();
    if (!backward)
      return;
    if (selected(train))
      saveChannelsLast(train, backward);
    if (failed(runChannelsLast(backward, /*training=*/true)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
