//===- LowerResampling.cpp - adaptive pooling and resizing -> loops -------===//
//
// Ops whose windows vary with the output position (AdaptiveAvgPooling2D's
// bins) or read interpolated positions (BilinearResize2D): one (n, c) plane
// per parallel iteration, loops over the output positions inside, as
// MXNet's CPU kernels compute them.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

/// Output position o's bin along a dim of `in` inputs and `out` outputs:
/// [floor(o in / out), ceil((o + 1) in / out)).
std::pair<Value, Value> adaptiveBin(IndexMath &m, Value o, int64_t in, int64_t out) {
  Value begin = m.div(m.mul(o, m.c(in)), m.c(out));
  Value end = m.div(m.add(m.mul(m.add(o, m.c(1)), m.c(in)), m.c(out - 1)), m.c(out));
  return {begin, end};
}

/// A bin's value (its sum, or its share of a gradient) divided by its
/// height, then its width, as MXNet's kernels divide.
Value perBinElement(IndexMath &m, Value v, ValueRange begins, ValueRange ends) {
  for (unsigned i = 0; i < begins.size(); ++i)
    v = div(m.b, m.loc, v, m.toFloat(m.sub(ends[i], begins[i]), v.getType()));
  return v;
}

/// Fills `init` (N, C, ...) plane by plane, visiting each output position
/// `o` of an (N, C, OH, OW) output with its bins over an (H, W) input;
/// `body` returns the plane's next value.
using BinFn = function_ref<Value(OpBuilder &, Location, Value n, Value c, ValueRange o, ValueRange begins,
                                 ValueRange ends, Value plane)>;
Value forEachBin(OpBuilder &b, Location loc, Value init, ArrayRef<int64_t> in, ArrayRef<int64_t> out, BinFn body) {
  return forEachOutputPosition(b, loc, init, out,
                               [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, Value plane) {
    IndexMath m{ob, l};
    SmallVector<Value> begins, ends;
    for (unsigned i = 0; i < out.size(); ++i) {
      auto [begin, end] = adaptiveBin(m, o[i], in[i], out[i]);
      begins.push_back(begin);
      ends.push_back(end);
    }
    return body(ob, l, n, ch, o, begins, ends, plane);
  });
}

Lowered lowerAdaptiveAvgPooling(OpBuilder &b, sym::AdaptiveAvgPooling2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType dataType = tensorType(op.getData()), outType = tensorType(op.getOutput());
  Type element = outType.getElementType();
  if (!isa<FloatType>(element))
    return op.emitError("the CPU backend supports AdaptiveAvgPooling2D of floats only");
  Value init = emptyTensor(b, loc, outType.getShape(), element);
  return SmallVector<Value>{forEachBin(
      b, loc, init, dataType.getShape().drop_front(2), outType.getShape().drop_front(2),
      [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, ValueRange begins, ValueRange ends,
          Value plane) -> Value {
        IndexMath m{ob, l};
        Value sum = loopNest(ob, l, begins, ends, scalarConstant(ob, l, element, 0.0),
                             [&](OpBuilder &sb, Location l, ValueRange x, ValueRange s) {
                               Value v = sb.create<tensor::ExtractOp>(l, op.getData(), ValueRange{n, ch, x[0], x[1]});
                               return scf::ValueVector{add(sb, l, s[0], v)};
                             })
                        .results.front();
        Value at[] = {m.c(0), m.c(0), o[0], o[1]};
        return ob.create<tensor::InsertOp>(l, perBinElement(m, sum, begins, ends), plane, at);
      })};
}

Lowered lowerAdaptiveAvgPoolingBackward(OpBuilder &b, sym::BackwardAdaptiveAvgPooling2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType dataType = tensorType(op.getData()), gType = tensorType(op.getOutGrad());
  Value init = zeros(b, loc, dataType.getShape(), dataType.getElementType());
  return SmallVector<Value>{forEachBin(
      b, loc, init, dataType.getShape().drop_front(2), gType.getShape().drop_front(2),
      [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, ValueRange begins, ValueRange ends,
          Value plane) -> Value {
        IndexMath m{ob, l};
        Value g = ob.create<tensor::ExtractOp>(l, op.getOutGrad(), ValueRange{n, ch, o[0], o[1]});
        return spreadOverPlane(ob, l, plane, begins, ends, perBinElement(m, g, begins, ends)).front();
      })};
}

/// Where output position `o` of a resized dim reads: input positions
/// `first` and `second` (the same at the last one), weighted by
/// `firstWeight` and `secondWeight`, in MXNet's float arithmetic.
struct Taps {
  Value first, second, firstWeight, secondWeight;
};

Taps bilinearTaps(IndexMath &m, Value o, int64_t in, int64_t out, bool alignCorners, Type element) {
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Type f32 = b.getF32Type();
  float scale = alignCorners ? (out > 1 ? static_cast<float>(in - 1) / (out - 1) : 0.f)
                             : static_cast<float>(in) / out;
  Value position = m.toFloat(o, f32), c = scalarConstant(b, loc, f32, scale);
  Value source;
  if (alignCorners) {
    source = mul(b, loc, c, position);
  } else { // pixel centers, clamped at 0
    Value half = scalarConstant(b, loc, f32, 0.5);
    source = max(b, loc, sub(b, loc, mul(b, loc, c, add(b, loc, position, half)), half),
                 scalarConstant(b, loc, f32, 0.0));
  }
  Value first = b.create<arith::IndexCastOp>(loc, b.getIndexType(), b.create<arith::FPToSIOp>(loc, b.getI64Type(), source));
  Value second = m.min(m.add(first, m.c(1)), m.c(in - 1));
  Value secondWeight = convertScalar(b, loc, sub(b, loc, source, m.toFloat(first, f32)), element);
  Value firstWeight = sub(b, loc, scalarConstant(b, loc, element, 1.0), secondWeight);
  return {first, second, firstWeight, secondWeight};
}

Lowered lowerBilinearResize(OpBuilder &b, sym::BilinearResize2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType dataType = tensorType(op.getData()), outType = tensorType(op.getOutput());
  Type element = outType.getElementType();
  if (!isa<FloatType>(element))
    return op.emitError("the CPU backend supports BilinearResize2D of floats only");
  ArrayRef<int64_t> in = dataType.getShape().drop_front(2), out = outType.getShape().drop_front(2);
  Value resized = generateElements(b, loc, outType, [&](OpBuilder &nb, Location l, ValueRange at) -> Value {
    IndexMath m{nb, l};
    Value n = at[0], ch = at[1];
    Taps h = bilinearTaps(m, at[2], in[0], out[0], op.getAlignCorners(), element);
    Taps w = bilinearTaps(m, at[3], in[1], out[1], op.getAlignCorners(), element);
    auto row = [&](Value y) {
      Value left = nb.create<tensor::ExtractOp>(l, op.getData(), ValueRange{n, ch, y, w.first});
      Value right = nb.create<tensor::ExtractOp>(l, op.getData(), ValueRange{n, ch, y, w.second});
      return add(nb, l, mul(nb, l, w.firstWeight, left), mul(nb, l, w.secondWeight, right));
    };
    return add(nb, l, mul(nb, l, h.firstWeight, row(h.first)), mul(nb, l, h.secondWeight, row(h.second)));
  });
  return SmallVector<Value>{resized};
}

Lowered lowerBilinearResizeBackward(OpBuilder &b, sym::BackwardBilinearResize2DOp op) {
  Location loc = op.getLoc();
  RankedTensorType dataType = tensorType(op.getData()), gType = tensorType(op.getOutGrad());
  Type element = dataType.getElementType();
  ArrayRef<int64_t> in = dataType.getShape().drop_front(2), out = gType.getShape().drop_front(2);
  Value init = zeros(b, loc, dataType.getShape(), element);
  Value grad = forEachOutputPosition(b, loc, init, out,
                                     [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, Value plane) {
    IndexMath m{ob, l};
    Taps h = bilinearTaps(m, o[0], in[0], out[0], op.getAlignCorners(), element);
    Taps w = bilinearTaps(m, o[1], in[1], out[1], op.getAlignCorners(), element);
    Value g = ob.create<tensor::ExtractOp>(l, op.getOutGrad(), ValueRange{n, ch, o[0], o[1]});
    for (auto [y, hw] : {std::pair{h.first, h.firstWeight}, std::pair{h.second, h.secondWeight}})
      for (auto [x, ww] : {std::pair{w.first, w.firstWeight}, std::pair{w.second, w.secondWeight}})
        plane = addToPlane(ob, l, plane, ValueRange{y, x}, mul(ob, l, mul(ob, l, hw, ww), g));
    return plane;
  });
  return SmallVector<Value>{grad};
}

} // namespace

std::optional<Lowered> lowerResamplingOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::AdaptiveAvgPooling2DOp o) { return lowerAdaptiveAvgPooling(b, o); })
      .Case([&](sym::BackwardAdaptiveAvgPooling2DOp o) { return lowerAdaptiveAvgPoolingBackward(b, o); })
      .Case([&](sym::BilinearResize2DOp o) { return lowerBilinearResize(b, o); })
      .Case([&](sym::BackwardBilinearResize2DOp o) { return lowerBilinearResizeBackward(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
