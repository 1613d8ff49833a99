//===- SymOps.cpp - sym op verifiers --------------------------------------===//
//
// Verifiers hold the parameter checks MXNet's ops make at bind time (dmlc
// parameter ranges, input counts); shape checks come from the shape
// inference interface.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/SymOps.h"

using namespace mlir;
using namespace mlir::sym;

namespace {

/// A per-spatial-dim tuple is empty (the default) or has one value per dim.
LogicalResult verifySpatialTuple(Operation *op, llvm::StringRef name,
                                 llvm::ArrayRef<int64_t> values, size_t dims, bool positive) {
  if (!values.empty() && values.size() != dims)
    return op->emitOpError() << name << " has " << values.size() << " values but the kernel has "
                             << dims << " dims";
  for (int64_t v : values)
    if (positive ? v <= 0 : v < 0)
      return op->emitOpError() << name << " values must be " << (positive ? "positive" : "non-negative");
  return success();
}

LogicalResult verifyInputCount(Operation *op, int64_t expected, llvm::StringRef param) {
  if (static_cast<int64_t>(op->getNumOperands()) == expected)
    return success();
  return op->emitOpError() << "has " << op->getNumOperands() << " inputs but " << param << " is "
                           << expected;
}

} // namespace

LogicalResult FullyConnectedOp::verify() {
  return verifyOptionalOperand(*this, getBias(), !getNoBias(), "bias", "no_bias = false");
}

/// What Convolution and Deconvolution check alike: the window, the layout
/// (NHWC too where `channelsLast` allows it) and the bias.
template <typename OpTy> LogicalResult verifyConvolutionLike(OpTy op, bool channelsLast = false) {
  size_t dims = op.getKernel().size();
  if (dims < 1 || dims > 3)
    return op.emitOpError() << "kernel must have 1, 2 or 3 dims, got " << dims;
  if (llvm::any_of(op.getKernel(), [](int64_t k) { return k <= 0; }))
    return op.emitOpError("kernel dims must be positive");
  if (failed(verifySpatialTuple(op, "stride", op.getStride(), dims, true)) ||
      failed(verifySpatialTuple(op, "dilate", op.getDilate(), dims, true)) ||
      failed(verifySpatialTuple(op, "pad", op.getPad(), dims, false)))
    return failure();
  std::optional<llvm::StringRef> layout = op.getLayout();
  if (layout && *layout == "NHWC" && channelsLast && dims != 2)
    return op.emitOpError() << "layout NHWC needs a 2-d kernel, got " << dims << " dims";
  if (layout && !layout->starts_with("NC") && !(channelsLast && *layout == "NHWC"))
    return op.emitOpError() << "layout " << *layout << " is not supported (NCW, NCHW, NCDHW"
                            << (channelsLast ? ", NHWC are)" : " are)");
  return verifyOptionalOperand(op, op.getBias(), !op.getNoBias(), "bias", "no_bias = false");
}

// Convolution runs channels-last too (NHWC, a 2-d kernel), as MXNet's GPU
// build does; Deconvolution does not.
LogicalResult ConvolutionOp::verify() { return verifyConvolutionLike(*this, /*channelsLast=*/true); }

LogicalResult AdaptiveAvgPooling2DOp::verify() {
  if (getOutputSize().size() > 2)
    return emitOpError() << "output_size must have at most 2 dims, got " << getOutputSize().size();
  if (llvm::any_of(getOutputSize(), [](int64_t s) { return s <= 0; }))
    return emitOpError("output_size dims must be positive");
  return success();
}

// The projection's and the state clip's checks are MXNet's cuDNN RNN's:
// its CPU RNN runs only the projection, in inference.
LogicalResult RNNOp::verify() {
  size_t results = getStateOutputs() ? (isLstm() ? 3 : 2) : 1;
  if (getNumResults() != results)
    return emitOpError() << "has " << results << " results for these parameters, got " << getNumResults();
  if (std::optional<int64_t> projection = getProjectionSize()) {
    if (!isLstm())
      return emitOpError("Projection is only supported for LSTM.");
    if (*projection <= 0 || *projection > int64_t(getStateSize()))
      return emitOpError("State size must be larger than projection size.");
  }
  if (getLstmStateClipMin() || getLstmStateClipMax()) {
    if (!isLstm())
      return emitOpError("State clipping is only supported for LSTM.");
    if (!getLstmStateClipMin() || !getLstmStateClipMax())
      return emitOpError("lstm_state_clip_min and lstm_state_clip_max must be specified together.");
    if (*getLstmStateClipMax() < *getLstmStateClipMin())
      return emitOpError("lstm_state_clip_max must be greater or equal to lstm_state_clip_min");
  }
  return success();
}

LogicalResult PadOp::verify() {
  if (llvm::any_of(getPadWidth(), [](int64_t p) { return p < 0; }))
    return emitOpError("pad_width must not be negative");
  if (getPadWidth().size() < 4 || llvm::any_of(getPadWidth().take_front(4), [](int64_t p) { return p != 0; }))
    return emitOpError("Current implementation expects padding on the first two axes to be zero.");
  return success();
}

LogicalResult BilinearResize2DOp::verify() {
  if (getMode() == "odd_scale" && (!getScaleHeight() || !getScaleWidth()))
    return emitOpError("mode odd_scale needs scale_height and scale_width");
  return verifyOptionalOperand(*this, getLike(), getMode() == "like", "like", "mode = like");
}

LogicalResult DeconvolutionOp::verify() {
  size_t dims = getKernel().size();
  if (failed(verifyConvolutionLike(*this)) || failed(verifySpatialTuple(*this, "adj", getAdj(), dims, false)) ||
      failed(verifySpatialTuple(*this, "target_shape", getTargetShape(), dims, false)))
    return failure();
  for (auto [i, adj] : llvm::enumerate(getAdj()))
    if (adj >= (getStride().empty() ? 1 : getStride()[i]))
      return emitOpError("adj must be smaller than stride");
  return success();
}

std::pair<SmallVector<int64_t>, SmallVector<int64_t>> DeconvolutionOp::getPadAndAdj(ArrayRef<int64_t> input) {
  size_t n = getKernel().size();
  auto at = [](ArrayRef<int64_t> values, size_t i, int64_t dflt) { return values.empty() ? dflt : values[i]; };
  SmallVector<int64_t> pad, adj;
  for (size_t i = 0; i < n; ++i) {
    // DeconvolutionParam::InferPad: a target shape centers the output.
    if (!getTargetShape().empty() && llvm::any_of(getTargetShape(), [](int64_t t) { return t != 0; })) {
      int64_t full = at(getStride(), i, 1) * (input[i] - 1) + 1 + (getKernel()[i] - 1) * at(getDilate(), i, 1) -
                     getTargetShape()[i];
      adj.push_back(full % 2);
      pad.push_back((full + 1) / 2);
    } else {
      pad.push_back(at(getPad(), i, 0));
      adj.push_back(at(getAdj(), i, 0));
    }
  }
  return {pad, adj};
}

LogicalResult PoolingOp::verify() {
  size_t dims = getKernel().size();
  if (!getGlobalPool() && (dims < 1 || dims > 3))
    return emitOpError("kernel must have 1, 2 or 3 dims unless global_pool is set");
  if (llvm::any_of(getKernel(), [](int64_t k) { return k <= 0; }))
    return emitOpError("kernel dims must be positive");
  if (!getGlobalPool() && (failed(verifySpatialTuple(*this, "stride", getStride(), dims, true)) ||
                           failed(verifySpatialTuple(*this, "pad", getPad(), dims, false))))
    return failure();
  if (getPoolType() == "lp" && !getPValue())
    return emitOpError("p_value must be set for lp pooling");
  if (getPoolingConvention() == "same" && (getPoolType() != "max" || dims != 1))
    return emitOpError("pooling_convention 'same' is supported only for 1-d max pooling");
  std::optional<llvm::StringRef> layout = getLayout();
  if (isChannelsLast() && !getGlobalPool() && dims != 2)
    return emitOpError() << "layout NHWC needs a 2-d kernel, got " << dims << " dims";
  if (layout && !layout->starts_with("NC") && !isChannelsLast())
    return emitOpError() << "layout " << *layout << " is not supported (NCW, NCHW, NCDHW, NHWC are)";
  return success();
}

LogicalResult LeakyReLUOp::verify() {
  if (failed(verifyOptionalOperand(*this, getGamma(), getActType() == "prelu", "gamma",
                                   "act_type = prelu")))
    return failure();
  if (static_cast<bool>(getMask()) != (getActType() == "rrelu"))
    return emitOpError("has a mask result exactly when act_type is rrelu");
  return success();
}

LogicalResult BackwardLeakyReLUOp::verify() {
  StringRef act = getActType();
  if (act == "prelu" && !getSlopes())
    return emitOpError("needs the slopes (gamma) for act_type = prelu");
  if (getSlopes() && act != "prelu" && act != "rrelu")
    return emitOpError("takes slopes for act_type prelu or rrelu only, not ") << act;
  return success();
}

LogicalResult DropoutOp::verify() {
  double p = getP();
  if (p < 0 || p > 1)
    return emitOpError() << "p must be in [0, 1], got " << p;
  return success();
}

bool mlir::sym::isTrainSensitive(Operation *op) {
  if (auto bn = dyn_cast<BatchNormOp>(op))
    return !bn.getUseGlobalStats();
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getMode() == "training" && dropout.getP() > 0;
  if (auto leaky = dyn_cast<LeakyReLUOp>(op))
    return leaky.getActType() == "rrelu";
  if (auto rnn = dyn_cast<RNNOp>(op)) // dropout between layers
    return rnn.getP() > 0 && rnn.getNumLayers() > 1;
  return false;
}

func::FuncOp mlir::sym::cloneInTrainingMode(func::FuncOp forward, StringRef name) {
  if (forward.walk([](Operation *op) { return isTrainSensitive(op) ? WalkResult::interrupt() : WalkResult::advance(); })
          .wasInterrupted() == false)
    return nullptr;
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto train = cast<func::FuncOp>(b.clone(*forward));
  train.setName(name);
  train.walk([&](Operation *op) {
    if (isTrainSensitive(op))
      op->setAttr(kTrainAttr, b.getUnitAttr());
  });
  return train;
}

bool mlir::sym::drawsRandomNumbers(Operation *op) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getP() > 0 && (dropout.getMode() == "always" || runsInTraining(op));
  if (auto leaky = dyn_cast<LeakyReLUOp>(op))
    return leaky.getActType() == "rrelu" && runsInTraining(op);
  // Dropout between layers; the backward draws the forward's masks again.
  if (auto rnn = dyn_cast<RNNOp>(op))
    return rnn.getP() > 0 && rnn.getNumLayers() > 1 && runsInTraining(op);
  if (auto rnn = dyn_cast<BackwardRNNOp>(op))
    return rnn.getP() > 0 && rnn.getNumLayers() > 1;
  return false;
}

BlockArgument mlir::sym::seedArgument(FunctionOpInterface function) {
  for (BlockArgument arg : function.getArguments())
    if (function.getArgAttr(arg.getArgNumber(), kRngSeedAttr))
      return arg;
  unsigned index = function.getNumArguments();
  Builder b(function.getContext());
  function.insertArgument(index, RankedTensorType::get({}, b.getI64Type()),
                          b.getDictionaryAttr(b.getNamedAttr(kRngSeedAttr, b.getUnitAttr())), function.getLoc());
  return function.getArgument(index);
}

StringRef mlir::sym::runTimeCheckMessage(Operation *op) {
  if (auto take = dyn_cast<TakeOp>(op); take && take.getMode() == "raise")
    return "Check failed: is_valid: take operator contains indices out of bound";
  if (isa<GatherNdOp>(op))
    return "IndexError: index {0} is out of bounds for axis {1} with size {2}";
  return "";
}

StringRef mlir::sym::nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (StringRef name = nodeName(part); !name.empty())
        return name;
  return "";
}

LogicalResult UpSamplingOp::verify() {
  if (getSampleType() == "bilinear")
    return getNumOperands() == 2 ? success()
                                 : emitOpError("bilinear upsampling takes (data, weight)");
  return verifyInputCount(*this, getNumArgs(), "num_args");
}

LogicalResult ConcatOp::verify() { return verifyInputCount(*this, getNumArgs(), "num_args"); }

LogicalResult AddNOp::verify() { return verifyInputCount(*this, getNumArgs(), "num_args"); }

LogicalResult StackOp::verify() { return verifyInputCount(*this, getNumArgs(), "num_args"); }

LogicalResult ReverseOp::verify() {
  if (auto type = dyn_cast<RankedTensorType>(getData().getType()))
    for (int64_t a : getAxis())
      if (a < -type.getRank() || a >= type.getRank())
        return emitOpError() << "axis " << a << " is out of range for a " << type.getRank() << "-d input";
  return success();
}

LogicalResult SequenceLastOp::verify() {
  if (getAxis() != 0 && getAxis() != 1)
    return emitOpError("Current implementation expects axis to be 0 or 1.");
  return verifyOptionalOperand(*this, getSequenceLength(), getUseSequenceLength(), "sequence_length",
                               "use_sequence_length = true");
}

LogicalResult SequenceReverseOp::verify() {
  if (getAxis() != 0)
    return emitOpError("Current implementation expects axis to be 0.");
  return verifyOptionalOperand(*this, getSequenceLength(), getUseSequenceLength(), "sequence_length",
                               "use_sequence_length = true");
}

LogicalResult SequenceMaskOp::verify() {
  if (getAxis() != 0 && getAxis() != 1)
    return emitOpError("Current implementation expects axis to be 0 or 1.");
  return verifyOptionalOperand(*this, getSequenceLength(), getUseSequenceLength(), "sequence_length",
                               "use_sequence_length = true");
}

/// MXNet's GetIndexRange and SetSliceOpOutputDimSize (matrix_op-inl.h).
FailureOr<SmallVector<SliceDim>> mlir::sym::getSliceDims(ArrayRef<int64_t> begins, ArrayRef<int64_t> ends,
                                                         ArrayRef<int64_t> steps, ArrayRef<int64_t> shape,
                                                         std::string &error) {
  auto fail = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  if (begins.size() > shape.size() || ends.size() > shape.size())
    return fail("Slicing axis exceeds data dimensions");
  if (begins.size() != ends.size())
    return fail("begin and end must have the same length");
  if (!steps.empty() && steps.size() != begins.size())
    return fail("step and begin must have the same length");
  SmallVector<SliceDim> slices;
  for (auto [i, len] : llvm::enumerate(shape)) {
    if (i >= begins.size()) {
      slices.push_back({0, 1, len});
      continue;
    }
    int64_t s = steps.empty() || steps[i] == kNone ? 1 : steps[i];
    if (s == 0)
      return fail("slice op step[" + Twine(i) + "] cannot be 0");
    int64_t b = begins[i] != kNone ? begins[i] : (s < 0 ? len - 1 : 0);
    int64_t e = ends[i] != kNone ? ends[i] : (s < 0 ? -1 : len);
    if (b < 0)
      b += len;
    if (e < 0 && ends[i] != kNone)
      e += len;
    b = b < 0 && s > 0 ? 0 : b;
    b = b > len - 1 && s < 0 ? len - 1 : b;
    b = b < 0 || b > len - 1 ? -1 : b;
    e = std::min(std::max(e, int64_t{-1}), len);
    int64_t size = 0;
    if (e != b && b >= 0)
      size = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (e < b ? (b - e - 1) / -s + 1 : 0);
    if (size == 0)
      return fail("dim " + Twine(i) + " of size " + Twine(len) + " sliced to nothing");
    slices.push_back({b, s, size});
  }
  return slices;
}

LogicalResult SliceChannelOp::verify() {
  if (static_cast<int64_t>(getNumResults()) == getNumOutputs())
    return success();
  return emitOpError() << "has " << getNumResults() << " results but num_outputs is "
                       << getNumOutputs();
}

LogicalResult NormOp::verify() {
  if (getOrd() != 1 && getOrd() != 2)
    return emitOpError("norm only supports ord=1 and ord=2, got ord=") << getOrd();
  return success();
}

LogicalResult CropOp::verify() {
  if (getNumArgs() != 1 && getNumArgs() != 2)
    return emitOpError("num_args must be 1 or 2, got ") << getNumArgs();
  if (static_cast<int64_t>(getNumOperands()) != getNumArgs())
    return emitOpError("has ") << getNumOperands() << " inputs but num_args = " << getNumArgs();
  if (getOffset().size() != 2 || getHW().size() != 2)
    return emitOpError("offset and h_w must be (y, x) and (h, w) pairs");
  return success();
}

/// CropOp::InferCropOfferset: centered, or at `offset`, which must leave the
/// window inside data.
std::pair<int64_t, int64_t> CropOp::windowOrigin(ArrayRef<int64_t> dataShape, ArrayRef<int64_t> outShape) {
  if (getCenterCrop())
    return {(dataShape[2] - outShape[2]) / 2, (dataShape[3] - outShape[3]) / 2};
  return {getOffset()[0], getOffset()[1]};
}

LogicalResult ROIPoolingOp::verify() {
  ArrayRef<int64_t> pooled = getPooledSize();
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    return emitOpError("pooled_size must be two positive sizes (h, w)");
  if (getSpatialScale() < 0.0 || getSpatialScale() > 1.0)
    return emitOpError("spatial_scale must be in [0, 1], got ") << getSpatialScale();
  return success();
}

LogicalResult MultiBoxPriorOp::verify() {
  if (getSizes().empty() || getRatios().empty())
    return emitOpError("needs at least one size and one ratio");
  if (getSteps().size() != 2)
    return emitOpError("Step ndim must be 2: (step_y, step_x)");
  if (getSteps()[0] * getSteps()[1] < 0)
    return emitOpError("Must specify both step_y and step_x");
  if (getOffsets().size() != 2 || llvm::any_of(getOffsets(), [](float o) { return o < 0.f || o > 1.f; }))
    return emitOpError("offsets must be two values in [0, 1]: (y, x)");
  return success();
}

LogicalResult MultiBoxDetectionOp::verify() {
  if (getVariances().size() != 4)
    return emitOpError("Variance size must be 4");
  return success();
}

LogicalResult MultiBoxTargetOp::verify() {
  if (getVariances().size() != 4)
    return emitOpError("Variance size must be 4");
  if (getNegativeMiningRatio() > 0 && getNegativeMiningThresh() <= 0)
    return emitOpError("negative_mining_thresh must be > 0 with negative mining");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Sym/IR/SymOps.cpp.inc"
