//===- LowerDetection.cpp - object-detection ops --------------------------===//
//
// Box decoding and encoding are elementwise over boxes and lower to linalg;
// SSD's prior boxes depend on shapes only and become constants.
// Non-maximum suppression (box_nms, MultiBoxDetection) and SSD's target
// matching sort and decide sequentially per image, and ROIAlign and
// ROIPooling read data-dependent positions: they call kernels of symc's
// kernel library (Kernels/). Their results keep MXNet's fixed shapes (rows
// of -1 after the survivors).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"
#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;

namespace symc::cpu {
namespace {

/// MXNet's float params, as the kernel reads them.
Value f32(OpBuilder &b, Location loc, double value) {
  return b.create<arith::ConstantFloatOp>(loc, APFloat(static_cast<float>(value)), b.getF32Type());
}

Lowered lowerBoxNms(OpBuilder &b, sym::BoxNmsOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank(), boxes = shape[rank - 2], width = shape[rank - 1];
  int64_t batches = boxes * width == 0 ? 0 : type.getNumElements() / (boxes * width);
  auto order = RankedTensorType::get({2 * boxes}, b.getI32Type());
  auto areas = RankedTensorType::get({boxes}, type.getElementType());
  auto format = [](StringRef f) { return f == "center" ? 1 : 0; };
  SmallVector<Value> scalars = {
      i64(b, loc, batches),          i64(b, loc, boxes),         i64(b, loc, width),
      i64(b, loc, op.getTopk()),     i64(b, loc, op.getCoordStart()), i64(b, loc, op.getScoreIndex()),
      i64(b, loc, op.getIdIndex()),  i64(b, loc, op.getBackgroundId()), i64(b, loc, op.getForceSuppress()),
      i64(b, loc, format(op.getInFormat())), i64(b, loc, format(op.getOutFormat())),
      f32(b, loc, op.getOverlapThresh()),    f32(b, loc, op.getValidThresh())};
  Lowered results = callKernel(b, op, {"symc_box_nms", type.getElementType()}, op.getData(),
                               {type, tensorType(op.getRecord()), order, areas}, scalars);
  if (failed(results))
    return failure();
  return SmallVector<Value>{(*results)[0], (*results)[1]}; // without the scratch buffers
}

Lowered lowerBoxNmsBackward(OpBuilder &b, sym::BackwardBoxNmsOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getOutGrad());
  int64_t width = type.getShape().back();
  SmallVector<Value> scalars = {i64(b, loc, width == 0 ? 0 : type.getNumElements() / width), i64(b, loc, width)};
  return callKernel(b, op, {"symc_box_nms_backward", type.getElementType()}, {op.getOutGrad(), op.getRecord()},
                    {type}, scalars);
}

/// ROIAlign's forward and backward kernels take the same sizes and params.
template <typename OpTy>
SmallVector<Value> roiAlignScalars(OpBuilder &b, Location loc, RankedTensorType data, RankedTensorType rois,
                                   RankedTensorType out, OpTy attrs) {
  ArrayRef<int64_t> d = data.getShape(), o = out.getShape();
  return {i64(b, loc, d[0]),   i64(b, loc, o[1]),    i64(b, loc, d[2]),
          i64(b, loc, d[3]),   i64(b, loc, o[2]),    i64(b, loc, o[3]),
          i64(b, loc, o[0]),   i64(b, loc, rois.getDimSize(1)), i64(b, loc, attrs.getSampleRatio()),
          i64(b, loc, attrs.getPositionSensitive()), i64(b, loc, attrs.getAligned()),
          f32(b, loc, attrs.getSpatialScale())};
}

Lowered lowerROIAlign(OpBuilder &b, sym::ROIAlignOp op) {
  Location loc = op.getLoc();
  RankedTensorType out = tensorType(op.getOutput());
  return callKernel(b, op, {"symc_roi_align", out.getElementType()}, {op.getData(), op.getRois()}, {out},
                    roiAlignScalars(b, loc, tensorType(op.getData()), tensorType(op.getRois()), out, op));
}

Lowered lowerROIAlignBackward(OpBuilder &b, sym::BackwardROIAlignOp op) {
  Location loc = op.getLoc();
  RankedTensorType data = tensorType(op.getData());
  Lowered grads = callKernel(b, op, {"symc_roi_align_backward", data.getElementType()}, {op.getOutGrad(), op.getRois()},
                             {data}, roiAlignScalars(b, loc, data, tensorType(op.getRois()), tensorType(op.getOutGrad()), op));
  if (succeeded(grads))
    grads->push_back(filledTensor(b, loc, tensorType(op.getRoisGrad()), 0.0));
  return grads;
}

/// The kernels read every input as the first one's element type, as MXNet's
/// legacy operators infer them.
LogicalResult checkSameElementType(Operation *op) {
  Type first = getElementTypeOrSelf(op->getOperand(0).getType());
  for (Value operand : op->getOperands().drop_front())
    if (getElementTypeOrSelf(operand.getType()) != first)
      return op->emitError("all inputs must have one element type, ")
             << first << " and " << getElementTypeOrSelf(operand.getType()) << " given";
  return success();
}

Lowered lowerROIPooling(OpBuilder &b, sym::ROIPoolingOp op) {
  if (failed(checkSameElementType(op)))
    return failure();
  Location loc = op.getLoc();
  ArrayRef<int64_t> d = tensorType(op.getData()).getShape(), o = tensorType(op.getOutput()).getShape();
  SmallVector<Value> scalars{i64(b, loc, d[0]), i64(b, loc, d[1]), i64(b, loc, d[2]), i64(b, loc, d[3]),
                             i64(b, loc, o[2]), i64(b, loc, o[3]), i64(b, loc, o[0]),
                             f32(b, loc, op.getSpatialScale())};
  return callKernel(b, op, {"symc_roi_pooling", tensorType(op.getData()).getElementType()},
                    {op.getData(), op.getRois()}, {tensorType(op.getOutput()), tensorType(op.getMaxidx())}, scalars);
}

Lowered lowerROIPoolingBackward(OpBuilder &b, sym::BackwardROIPoolingOp op) {
  RankedTensorType data = tensorType(op.getData());
  Lowered grads = callKernel(b, op, {"symc_roi_pooling_backward", data.getElementType()},
                             {op.getOutGrad(), op.getMaxidx()}, {data}, {});
  if (succeeded(grads))
    grads->push_back(filledTensor(b, op.getLoc(), tensorType(op.getRoisGrad()), 0.0));
  return grads;
}

/// One of four per-box values, chosen by the innermost index `k`.
Value selectByIndex(OpBuilder &b, Location loc, Value k, ArrayRef<Value> values) {
  Value result = values.back();
  for (int64_t i = static_cast<int64_t>(values.size()) - 2; i >= 0; --i) {
    Value isI = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, k, b.create<arith::ConstantIndexOp>(loc, i));
    result = b.create<arith::SelectOp>(loc, isI, values[i], result);
  }
  return result;
}

/// MXNet's box_encode kernel: for each (B, N) anchor whose sample is > 0.5,
/// ((ref center - anchor center) / anchor size - mean) / std and (log(ref
/// size / anchor size) - mean) / std of its matched reference; masks of 1
/// there, 0 and 0 elsewhere. A match outside [0, M) is clamped (MXNet reads
/// out of bounds).
Lowered lowerBoxEncode(OpBuilder &b, sym::BoxEncodeOp op) {
  if (failed(checkSameElementType(op)))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType resultType = tensorType(op.getTargets());
  Type element = resultType.getElementType();
  int64_t batch = resultType.getDimSize(0), boxes = resultType.getDimSize(1);
  int64_t refCount = tensorType(op.getRefs()).getDimSize(1);
  auto type = RankedTensorType::get({batch, boxes, 4}, element);
  Value anchors = reshapeTo(b, loc, op.getAnchors(), type.getShape());
  Value samples = reshapeTo(b, loc, op.getSamples(), {batch, boxes});
  Value matches = reshapeTo(b, loc, op.getMatches(), {batch, boxes});
  Value refs = reshapeTo(b, loc, op.getRefs(), {batch, refCount, 4});
  auto valid = [&](OpBuilder &nb, Location l, ValueRange at) -> Value {
    Value sample = nb.create<tensor::ExtractOp>(l, samples, ValueRange{at[0], at[1]});
    return nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, sample, scalarConstant(nb, l, element, 0.5));
  };
  Value targets = generateElements(b, loc, type, [&](OpBuilder &nb, Location l, ValueRange at) {
    IndexMath im{nb, l};
    Value match = nb.create<tensor::ExtractOp>(l, matches, ValueRange{at[0], at[1]});
    match = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), nb.create<arith::FPToSIOp>(l, nb.getI64Type(), match));
    match = im.min(im.max(match, im.c(0)), im.c(refCount - 1));
    auto coord = [&](Value tensor, ValueRange prefix, int64_t k) {
      SmallVector<Value> indices(prefix);
      indices.push_back(im.c(k));
      return nb.create<tensor::ExtractOp>(l, tensor, indices).getResult();
    };
    auto center = [&](Value tensor, ValueRange prefix, Value out[4]) { // x, y, width, height
      Value half = scalarConstant(nb, l, element, 0.5);
      for (int64_t k = 0; k < 2; ++k) {
        out[k + 2] = sub(nb, l, coord(tensor, prefix, k + 2), coord(tensor, prefix, k));
        out[k] = add(nb, l, coord(tensor, prefix, k), mul(nb, l, out[k + 2], half));
      }
    };
    Value ref[4], anchor[4], encoded[4];
    center(refs, {at[0], match}, ref);
    center(anchors, {at[0], at[1]}, anchor);
    for (int64_t k = 0; k < 4; ++k) {
      Value raw = k < 2 ? div(nb, l, sub(nb, l, ref[k], anchor[k]), anchor[k + 2])
                        : nb.create<math::LogOp>(l, div(nb, l, ref[k], anchor[k])).getResult();
      Value mean = coord(op.getMeans(), {}, k), std = coord(op.getStds(), {}, k);
      encoded[k] = div(nb, l, sub(nb, l, raw, mean), std);
    }
    return nb.create<arith::SelectOp>(l, valid(nb, l, at), selectByIndex(nb, l, at[2], encoded),
                                      scalarConstant(nb, l, element, 0.0));
  });
  Value masks = generateElements(b, loc, type, [&](OpBuilder &nb, Location l, ValueRange at) -> Value {
    return nb.create<arith::SelectOp>(l, valid(nb, l, at), scalarConstant(nb, l, element, 1.0),
                                      scalarConstant(nb, l, element, 0.0));
  });
  return SmallVector<Value>{reshapeTo(b, loc, targets, resultType.getShape()),
                            reshapeTo(b, loc, masks, resultType.getShape())};
}

/// MultiBoxPriorForward's boxes for an (h, w) grid, computed in float as
/// MXNet does: per position each size at the first ratio, then the first
/// size at the other ratios.
std::vector<float> priorBoxes(sym::MultiBoxPriorOp op, int64_t height, int64_t width) {
  ArrayRef<float> sizes = op.getSizes(), ratios = op.getRatios(), offsets = op.getOffsets();
  float stepY = op.getSteps()[0], stepX = op.getSteps()[1];
  if (stepY <= 0 || stepX <= 0) { // from the grid
    stepY = 1.f / static_cast<int>(height);
    stepX = 1.f / static_cast<int>(width);
  }
  int in_height = static_cast<int>(height), in_width = static_cast<int>(width);
  std::vector<float> boxes;
  auto push = [&](float centerX, float centerY, float size, float ratio) {
    float w = size * in_height / in_width * ratio / 2;
    float h = size / ratio / 2;
    for (float v : {centerX - w, centerY - h, centerX + w, centerY + h})
      boxes.push_back(op.getClip() ? std::max(0.f, std::min(1.f, v)) : v);
  };
  for (int r = 0; r < in_height; ++r) {
    float centerY = (r + offsets[0]) * stepY;
    for (int c = 0; c < in_width; ++c) {
      float centerX = (c + offsets[1]) * stepX;
      for (float size : sizes)
        push(centerX, centerY, size, std::sqrt(ratios[0]));
      for (float ratio : ratios.drop_front())
        push(centerX, centerY, sizes[0], std::sqrt(ratio));
    }
  }
  return boxes;
}

Lowered lowerMultiBoxPrior(OpBuilder &b, sym::MultiBoxPriorOp op) {
  RankedTensorType data = tensorType(op.getData()), out = tensorType(op.getOutput());
  auto element = dyn_cast<FloatType>(out.getElementType());
  if (!element)
    return op.emitError("MultiBoxPrior needs floating-point data, not ") << out.getElementType();
  SmallVector<APFloat> values;
  for (float v : priorBoxes(op, data.getDimSize(2), data.getDimSize(3))) {
    APFloat value(v);
    bool lost;
    value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(value);
  }
  return SmallVector<Value>{b.create<arith::ConstantOp>(op.getLoc(), DenseElementsAttr::get(out, values))};
}

/// The variances as the kernels take them: four float scalars.
void appendVariances(OpBuilder &b, Location loc, ArrayRef<float> variances, SmallVectorImpl<Value> &scalars) {
  for (float v : variances)
    scalars.push_back(f32(b, loc, v));
}

Lowered lowerMultiBoxDetection(OpBuilder &b, sym::MultiBoxDetectionOp op) {
  if (failed(checkSameElementType(op)))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType prob = tensorType(op.getClsProb()), out = tensorType(op.getOutput());
  int64_t anchors = prob.getDimSize(2);
  SmallVector<Value> scalars{i64(b, loc, prob.getDimSize(0)), i64(b, loc, prob.getDimSize(1)),
                             i64(b, loc, anchors), i64(b, loc, op.getClip()), i64(b, loc, op.getForceSuppress()),
                             i64(b, loc, op.getNmsTopk()), f32(b, loc, op.getThreshold()),
                             f32(b, loc, op.getNmsThreshold())};
  appendVariances(b, loc, op.getVariances(), scalars);
  Lowered results = callKernel(
      b, op, {"symc_multibox_detection", out.getElementType()}, {op.getClsProb(), op.getLocPred(), op.getAnchor()},
      {out, RankedTensorType::get({anchors * 6}, out.getElementType()), RankedTensorType::get({2 * anchors}, b.getI32Type())},
      scalars);
  if (failed(results))
    return failure();
  return SmallVector<Value>{(*results)[0]}; // without the scratch buffers
}

Lowered lowerMultiBoxTarget(OpBuilder &b, sym::MultiBoxTargetOp op) {
  if (failed(checkSameElementType(op)))
    return failure();
  Location loc = op.getLoc();
  ArrayRef<int64_t> label = tensorType(op.getLabel()).getShape();
  RankedTensorType pred = tensorType(op.getClsPred());
  int64_t anchors = pred.getDimSize(2);
  Type element = pred.getElementType();
  SmallVector<Value> scalars{i64(b, loc, label[0]), i64(b, loc, anchors), i64(b, loc, label[1]),
                             i64(b, loc, label[2]), i64(b, loc, pred.getDimSize(1)),
                             f32(b, loc, op.getOverlapThreshold()), f32(b, loc, op.getIgnoreLabel()),
                             f32(b, loc, op.getNegativeMiningRatio()), f32(b, loc, op.getNegativeMiningThresh())};
  appendVariances(b, loc, op.getVariances(), scalars);
  SmallVector<RankedTensorType> results{tensorType(op.getLocTarget()), tensorType(op.getLocMask()),
                                        tensorType(op.getClsTarget()),
                                        RankedTensorType::get({anchors * label[1]}, element),
                                        RankedTensorType::get({2 * anchors}, b.getF32Type()),
                                        RankedTensorType::get({4 * anchors + label[1]}, b.getI32Type())};
  Lowered targets = callKernel(b, op, {"symc_multibox_target", element},
                               {op.getAnchor(), op.getLabel(), op.getClsPred()}, results, scalars);
  if (failed(targets))
    return failure();
  targets->resize(3); // without the scratch buffers
  return targets;
}

/// MXNet's box_decode kernel: each anchor as center and size, moved by
/// data * std and scaled by exp(data * std) (clipped), back to corners.
Lowered lowerBoxDecode(OpBuilder &b, sym::BoxDecodeOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getOutput());
  Type element = type.getElementType();
  int64_t boxes = type.getDimSize(1);
  Value anchors = reshapeTo(b, loc, op.getAnchors(), {boxes, 4});
  bool corner = op.getFormat() == "corner";
  double clip = static_cast<float>(op.getClip());
  std::array<double, 4> stds = {static_cast<float>(op.getStd0()), static_cast<float>(op.getStd1()),
                                static_cast<float>(op.getStd2()), static_cast<float>(op.getStd3())};
  Value out = generateElements(b, loc, type, [&](OpBuilder &nb, Location l, ValueRange at) {
    auto constant = [&](double v) { return scalarConstant(nb, l, element, v); };
    Value x[4], a[4];
    for (int64_t k = 0; k < 4; ++k) {
      Value c = nb.create<arith::ConstantIndexOp>(l, k);
      x[k] = mul(nb, l, nb.create<tensor::ExtractOp>(l, op.getData(), ValueRange{at[0], at[1], c}), constant(stds[k]));
      a[k] = nb.create<tensor::ExtractOp>(l, anchors, ValueRange{at[1], c});
    }
    Value half = constant(0.5);
    if (corner) { // (xmin, ymin, xmax, ymax) -> (x, y, width, height)
      a[2] = sub(nb, l, a[2], a[0]);
      a[3] = sub(nb, l, a[3], a[1]);
      a[0] = add(nb, l, a[0], mul(nb, l, a[2], half));
      a[1] = add(nb, l, a[1], mul(nb, l, a[3], half));
    }
    Value center[2], extent[2];
    for (int64_t k = 0; k < 2; ++k) {
      center[k] = add(nb, l, mul(nb, l, x[k], a[k + 2]), a[k]);
      Value scale = x[k + 2];
      if (clip > 0) // dw < clip ? dw : clip
        scale = nb.create<arith::SelectOp>(
            l, nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, scale, constant(clip)), scale, constant(clip));
      extent[k] = mul(nb, l, mul(nb, l, nb.create<math::ExpOp>(l, scale), a[k + 2]), half);
    }
    Value corners[4] = {sub(nb, l, center[0], extent[0]), sub(nb, l, center[1], extent[1]),
                        add(nb, l, center[0], extent[0]), add(nb, l, center[1], extent[1])};
    return selectByIndex(nb, l, at[2], corners);
  });
  return SmallVector<Value>{out};
}

} // namespace

std::optional<Lowered> lowerDetectionOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::BoxNmsOp o) { return lowerBoxNms(b, o); })
      .Case([&](sym::BackwardBoxNmsOp o) { return lowerBoxNmsBackward(b, o); })
      .Case([&](sym::BoxDecodeOp o) { return lowerBoxDecode(b, o); })
      .Case([&](sym::ROIAlignOp o) { return lowerROIAlign(b, o); })
      .Case([&](sym::BackwardROIAlignOp o) { return lowerROIAlignBackward(b, o); })
      .Case([&](sym::ROIPoolingOp o) { return lowerROIPooling(b, o); })
      .Case([&](sym::BackwardROIPoolingOp o) { return lowerROIPoolingBackward(b, o); })
      .Case([&](sym::BoxEncodeOp o) { return lowerBoxEncode(b, o); })
      .Case([&](sym::MultiBoxPriorOp o) { return lowerMultiBoxPrior(b, o); })
      .Case([&](sym::MultiBoxDetectionOp o) { return lowerMultiBoxDetection(b, o); })
      .Case([&](sym::MultiBoxTargetOp o) { return lowerMultiBoxTarget(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
