//===- SymChannelsLast.cpp - the sym-channels-last pass -------------------===//
//
// The CPU's fastest convolution kernels read and write channels-last: a
// pointwise convolution is then a GEMM over the positions' channel rows, a
// depthwise one a sum of whole channel vectors, with no transpose of the
// input or the output around either. Each such convolution is rewritten as
// an NHWC one between transposes, and the transposes move down the graph
// (the layers after a convolution run channels-last too) until they meet
// the next convolution's, with which they cancel.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/OpLowerings.h"
#include "codegen/CPU/Passes.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMCHANNELSLAST
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

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

/// Whether a function trains: its activations are saved for, or read by, a
/// backward, channels-first.
bool trains(func::FuncOp function) {
  WalkResult found = function.walk([](Operation *op) {
    bool training = sym::runsInTraining(op) || op->getName().stripDialect().starts_with("_backward");
    return training ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
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

bool isTransposed(Value value) { return value.getDefiningOp<sym::TransposeOp>() != nullptr; }

/// A transpose of a transpose is one transpose, or none.
struct FoldTransposes : OpRewritePattern<sym::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<sym::TransposeOp>();
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
bool isElementwise(Operation *op) {
  return isa<sym::ActivationOp, sym::ClipOp, sym::AddNOp, sym::CastOp, sym::ReluOp, sym::SigmoidOp, sym::TanhOp,
             sym::ExpOp, sym::SqrtOp, sym::SquareOp, sym::AbsOp, sym::NegativeOp, sym::PlusScalarOp,
             sym::MinusScalarOp, sym::RMinusScalarOp, sym::MulScalarOp, sym::DivScalarOp, sym::RDivScalarOp,
             sym::MaximumScalarOp, sym::MinimumScalarOp, sym::ElemwiseAddOp, sym::ElemwiseSubOp, sym::ElemwiseMulOp,
             sym::ElemwiseDivOp, sym::MaximumOp, sym::MinimumOp>(op);
}

/// An elementwise op whose operands are all transposed alike runs on the
/// transposes' inputs, its result transposed instead.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context) : RewritePattern(MatchAnyOpTypeTag(), 1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || op->getNumOperands() == 0 || !llvm::all_of(op->getOperands(), isTransposed))
      return failure();
    ArrayRef<int64_t> axes = op->getOperand(0).getDefiningOp<sym::TransposeOp>().getAxes();
    SmallVector<Value> sources;
    for (Value operand : op->getOperands()) {
      auto t = operand.getDefiningOp<sym::TransposeOp>();
      if (t.getAxes() != axes)
        return failure();
      sources.push_back(t.getData());
    }
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto sourceType = dyn_cast<RankedTensorType>(sources.front().getType());
    if (axes.empty() || !resultType || !sourceType)
      return failure();
    OperationState state(op->getLoc(), op->getName(), sources,
                         TypeRange{RankedTensorType::get(sourceType.getShape(), resultType.getElementType())},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), moved->getResult(0), axes));
    return success();
  }
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
    ArrayRef<int64_t> axes = (*transposed).getDefiningOp<sym::TransposeOp>().getAxes();
    if (axes.size() != size_t(resultType.getRank()))
      return failure();
    SmallVector<int64_t> inverse(axes.size());
    for (auto [i, axis] : llvm::enumerate(axes))
      inverse[axis] = i;
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto t = operand.getDefiningOp<sym::TransposeOp>();
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
    auto t = op.getData().getDefiningOp<sym::TransposeOp>();
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

/// A concatenation of inputs all transposed alike concatenates the
/// transposes' inputs along the dim the transpose moved its own to.
struct SinkThroughConcat : OpRewritePattern<sym::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(sym::ConcatOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().empty() || !llvm::all_of(op.getInputs(), isTransposed))
      return failure();
    ArrayRef<int64_t> axes = op.getInputs().front().getDefiningOp<sym::TransposeOp>().getAxes();
    SmallVector<Value> sources;
    for (Value input : op.getInputs()) {
      auto t = input.getDefiningOp<sym::TransposeOp>();
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
    auto t = op.getData().getDefiningOp<sym::TransposeOp>();
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

struct SymChannelsLastPass : impl::SymChannelsLastBase<SymChannelsLastPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (trains(function))
      return;
    SmallVector<sym::ConvolutionOp> convolutions;
    function.walk([&](sym::ConvolutionOp op) {
      if (!op.isChannelsLast() && hasChannelsLastKernel(op) && cast<ShapedType>(op.getOutput().getType()).hasStaticShape())
        convolutions.push_back(op);
    });
    for (sym::ConvolutionOp op : convolutions)
      convertToChannelsLast(op);
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposes, SinkThroughElementwise, SinkThroughBroadcast, SinkThroughBatchNorm, SinkThroughConcat,
               SinkThroughPooling>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(function, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
