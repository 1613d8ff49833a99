//===- LowerDetection.cpp - object-detection ops --------------------------===//
//
// Box decoding is elementwise over boxes and lowers to linalg. Non-maximum
// suppression sorts and suppresses sequentially per image, and ROIAlign
// samples at data-dependent positions: they call kernels of symc's kernel
// library (Kernels/BoxNms.cpp, Kernels/RoiAlign.cpp). NMS results keep
// MXNet's fixed shapes (rows of -1 after the survivors).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

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
    Value result = corners[3];
    for (int64_t k = 2; k >= 0; --k) {
      Value isK = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, at[2], nb.create<arith::ConstantIndexOp>(l, k));
      result = nb.create<arith::SelectOp>(l, isK, corners[k], result);
    }
    return result;
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
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
