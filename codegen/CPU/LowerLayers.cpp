//===- LowerLayers.cpp - neural-network layers -> linalg ------------------===//
//
// Ops marked sym.is_train run in training mode (BatchNorm normalizes with
// batch statistics); otherwise inference semantics hold (moving statistics;
// Dropout that draws no random numbers, see LowerRandom.cpp, is the identity). Windowed ops (Pooling, LRN) are linalg.generic
// ops with reduction loops over the window, reading a padded input through
// affine maps `o * stride + k * dilate`; Convolution has its own file.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>

using namespace mlir;

namespace symc::cpu {
namespace {

using utils::IteratorType;

Lowered lowerFullyConnected(OpBuilder &b, sym::FullyConnectedOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  int64_t k = tensorType(op.getWeight()).getDimSize(1);
  Value data2d = reshapeTo(b, loc, op.getData(), {type.getNumElements() / k, k});
  Value out = matmulTransposedB(b, loc, data2d, op.getWeight());
  if (op.getBias())
    out = addBias(b, loc, out, op.getBias());
  return SmallVector<Value>{reshapeTo(b, loc, out, tensorType(op.getOutput()).getShape())};
}

/// `t` as a matrix whose rows are its first dim (`splitFirst`) or all but its
/// last dim; a vector is one row or one column (`vectorAsColumn`).
SmallVector<int64_t> matrixView(RankedTensorType t, bool splitFirst, bool vectorAsColumn) {
  int64_t count = t.getNumElements();
  if (t.getRank() == 1)
    return vectorAsColumn ? SmallVector<int64_t>{count, 1} : SmallVector<int64_t>{1, count};
  int64_t rows = splitFirst ? t.getDimSize(0) : count / t.getDimSize(t.getRank() - 1);
  return {rows, count / rows};
}

Lowered lowerDot(OpBuilder &b, sym::DotOp op) {
  Location loc = op.getLoc();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  // lhs is (M, K), or (K, M) when transposed; rhs is (K, N), or (N, K).
  Value lhs = reshapeTo(b, loc, op.getLhs(), matrixView(tensorType(op.getLhs()), ta, ta));
  Value rhs = reshapeTo(b, loc, op.getRhs(), matrixView(tensorType(op.getRhs()), !tb, !tb));
  Value out = tb && !ta ? matmulTransposedB(b, loc, lhs, rhs) : matmul(b, loc, lhs, rhs, ta, tb);
  return SmallVector<Value>{reshapeTo(b, loc, out, tensorType(op.getOutput()).getShape())};
}

Lowered lowerBatchDot(OpBuilder &b, sym::BatchDotOp op) {
  Location loc = op.getLoc();
  RankedTensorType l = tensorType(op.getLhs()), r = tensorType(op.getRhs());
  auto as3d = [&](Value v, RankedTensorType t) {
    ArrayRef<int64_t> s = t.getShape();
    int64_t rows = s[s.size() - 2], cols = s.back();
    return reshapeTo(b, loc, v, {t.getNumElements() / (rows * cols), rows, cols});
  };
  Value out = matmul(b, loc, as3d(op.getLhs(), l), as3d(op.getRhs(), r), op.getTransposeA(),
                     op.getTransposeB());
  return SmallVector<Value>{reshapeTo(b, loc, out, tensorType(op.getOutput()).getShape())};
}

/// One pooling window of output position o along a spatial dim: [begin, end)
/// clipped to the input as MXNet's kernels do, and its extent before that
/// clipping (avg's divisor with count_include_pad).
struct WindowRange {
  Value begin, end, unclippedExtent;
};

WindowRange windowRange(IndexMath &m, Value o, int64_t kernel, int64_t stride, int64_t pad, int64_t size) {
  Value start = m.sub(m.mul(o, m.c(stride)), m.c(pad));
  Value stop = m.min(m.add(start, m.c(kernel)), m.c(size + pad));
  Value extent = m.sub(stop, start);
  return {m.max(start, m.c(0)), m.min(stop, m.c(size)), extent};
}

/// The position in `data` (N, C, S...) of the first largest element (in
/// row-major order) of plane (n, c)'s window [begins, ends): MXNet's
/// unpooling sends a max pooling's gradient there.
scf::ValueVector firstLargest(OpBuilder &b, Location loc, Value data, Value n, Value c, ValueRange begins,
                              ValueRange ends) {
  Type element = tensorType(data).getElementType();
  SmallVector<Value> start{scalarConstant(b, loc, element, -std::numeric_limits<double>::infinity())};
  llvm::append_range(start, begins);
  scf::LoopNest scan =
      loopNest(b, loc, begins, ends, start, [&](OpBuilder &sb, Location l, ValueRange x, ValueRange best) {
        SmallVector<Value> at{n, c};
        llvm::append_range(at, x);
        Value v = sb.create<tensor::ExtractOp>(l, data, at);
        Value better = sb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, best[0]);
        scf::ValueVector next{sb.create<arith::SelectOp>(l, better, v, best[0])};
        for (unsigned i = 0; i < begins.size(); ++i)
          next.push_back(sb.create<arith::SelectOp>(l, better, x[i], best[1 + i]));
        return next;
      });
  return scf::ValueVector(std::next(scan.results.begin()), scan.results.end());
}

/// The data gradient of pooling over any number of spatial dims, one (n, c)
/// plane per parallel iteration: for each output position, max sends its
/// gradient to the window's first largest element (MXNet's unpooling), avg
/// and sum spread it.
Value poolingGrad(OpBuilder &b, Location loc, sym::BackwardPoolingOp op, Value g, Value data, const Window &w) {
  RankedTensorType dataType = tensorType(data), gType = tensorType(g);
  Type element = dataType.getElementType();
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(2);
  unsigned d = spatial.size();
  StringRef kind = op.getPoolType();
  bool includePad = op.getCountIncludePad().value_or(true);
  Value init = zeros(b, loc, dataType.getShape(), element);
  return forEachOutputPosition(b, loc, init, gType.getShape().drop_front(2),
                               [&](OpBuilder &ob, Location l, Value n, Value ch, ValueRange o, Value plane) -> Value {
    IndexMath m{ob, l};
    SmallVector<Value> begins, ends, gAt{n, ch};
    Value count = m.c(1);
    for (unsigned i = 0; i < d; ++i) {
      WindowRange r = windowRange(m, o[i], w.kernel[i], w.stride[i], w.pad[i], spatial[i]);
      begins.push_back(r.begin);
      ends.push_back(r.end);
      count = m.mul(count, includePad ? r.unclippedExtent : m.sub(r.end, r.begin));
      gAt.push_back(o[i]);
    }
    Value gradient = ob.create<tensor::ExtractOp>(l, g, gAt);
    if (kind == "max")
      return addToPlane(ob, l, plane, firstLargest(ob, l, data, n, ch, begins, ends), gradient);
    Value share = kind == "avg" ? div(ob, l, gradient, m.toFloat(count, element)) : gradient;
    return spreadOverPlane(ob, l, plane, begins, ends, share).front();
  });
}

/// The flat position in its (n, c) plane of the first largest element of
/// each max-pooling window of `data` (N, C, S...), as poolingGrad's scan
/// finds it: (N, C, O...) of i64, for an output of `outShape`.
Value windowArgmax(OpBuilder &b, Location loc, Value data, const Window &w, ArrayRef<int64_t> outShape) {
  ArrayRef<int64_t> spatial = tensorType(data).getShape().drop_front(2);
  unsigned d = spatial.size();
  auto type = RankedTensorType::get(outShape, b.getI64Type());
  return generateElements(b, loc, type, [&](OpBuilder &ob, Location l, ValueRange at) -> Value {
    IndexMath m{ob, l};
    SmallVector<Value> begins, ends;
    for (unsigned i = 0; i < d; ++i) {
      WindowRange r = windowRange(m, at[2 + i], w.kernel[i], w.stride[i], w.pad[i], spatial[i]);
      begins.push_back(r.begin);
      ends.push_back(r.end);
    }
    scf::ValueVector first = firstLargest(ob, l, data, at[0], at[1], begins, ends);
    Value flat = m.c(0);
    for (unsigned i = 0; i < d; ++i)
      flat = m.add(m.mul(flat, m.c(spatial[i])), first[i]);
    return ob.create<arith::IndexCastOp>(l, ob.getI64Type(), flat).getResult();
  });
}

/// The data gradient of pooling (N, C, S...) gathered at each input
/// element: the sum, in output order, of the shares of the windows that
/// cover it (max: a window's whole gradient where the element is its first
/// largest, windowArgmax). A thread per element on a GPU, where poolingGrad
/// scatters a plane per thread.
Value poolingGradByGather(OpBuilder &b, Location loc, sym::BackwardPoolingOp op, const Window &w) {
  Value g = op.getOutGrad(), data = op.getData();
  RankedTensorType dataType = tensorType(data), gType = tensorType(g);
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(2), outSpatial = gType.getShape().drop_front(2);
  unsigned d = spatial.size();
  StringRef kind = op.getPoolType();
  bool includePad = op.getCountIncludePad().value_or(true);
  Value argmax = kind == "max" ? windowArgmax(b, loc, data, w, gType.getShape()) : Value();
  return generateElements(b, loc, dataType, [&](OpBuilder &ob, Location l, ValueRange at) -> Value {
    IndexMath m{ob, l};
    // Output o covers x along a dim where o s - p <= x < o s - p + k.
    SmallVector<Value> begins, ends;
    Value flat = m.c(0);
    for (unsigned i = 0; i < d; ++i) {
      Value x = at[2 + i], s = m.c(w.stride[i]);
      Value firstReach = m.max(m.sub(x, m.c(w.kernel[i] - 1 - w.pad[i])), m.c(0));
      begins.push_back(m.div(m.add(firstReach, m.c(w.stride[i] - 1)), s));
      ends.push_back(m.min(m.add(m.div(m.add(x, m.c(w.pad[i])), s), m.c(1)), m.c(outSpatial[i])));
      flat = m.add(m.mul(flat, m.c(spatial[i])), x);
    }
    Value zero = scalarConstant(ob, l, dataType.getElementType(), 0.0);
    scf::LoopNest sum = loopNest(ob, l, begins, ends, {zero}, [&](OpBuilder &sb, Location sl, ValueRange o,
                                                                  ValueRange acc) {
      IndexMath sm{sb, sl};
      SmallVector<Value> position{at[0], at[1]};
      llvm::append_range(position, o);
      Value share = sb.create<tensor::ExtractOp>(sl, g, position);
      if (kind == "max") {
        Value first = sb.create<tensor::ExtractOp>(sl, argmax, position);
        Value hit = sb.create<arith::CmpIOp>(sl, arith::CmpIPredicate::eq, first,
                                             sb.create<arith::IndexCastOp>(sl, sb.getI64Type(), flat));
        share = sb.create<arith::SelectOp>(sl, hit, share, zero);
      } else if (kind == "avg") {
        Value count = sm.c(1);
        for (unsigned i = 0; i < d; ++i) {
          WindowRange r = windowRange(sm, o[i], w.kernel[i], w.stride[i], w.pad[i], spatial[i]);
          count = sm.mul(count, includePad ? r.unclippedExtent : sm.sub(r.end, r.begin));
        }
        share = div(sb, sl, share, sm.toFloat(count, share.getType()));
      }
      return scf::ValueVector{add(sb, sl, acc[0], share)};
    });
    return sum.results.front();
  });
}

/// A global pooling's gradient channels-last: g (N, 1, 1, C) spread over
/// every position (divided by their count for avg).
Value globalSpreadChannelsLast(OpBuilder &b, Location loc, Value g, RankedTensorType dataType, bool average) {
  double share = average ? 1.0 / double(dataType.getDimSize(1) * dataType.getDimSize(2)) : 1.0;
  AffineExpr zero = b.getAffineConstantExpr(0);
  AffineMap read = AffineMap::get(4, 0, {b.getAffineDimExpr(0), zero, zero, b.getAffineDimExpr(3)}, b.getContext());
  return mapWithMaps(b, loc, dataType, g, read, [&](OpBuilder &b, Location loc, ValueRange args) {
    return mul(b, loc, args[0], scalarConstant(b, loc, args[0].getType(), share));
  });
}

/// For each spatial dim, how far 'full' windows run past the padded input:
/// the input is extended that much on the high side.
SmallVector<int64_t> fullWindowOverrun(ArrayRef<int64_t> spatial, ArrayRef<int64_t> outSpatial, const Window &w) {
  SmallVector<int64_t> extra;
  for (unsigned i = 0; i < w.rank(); ++i) {
    int64_t reach = (outSpatial[i] - 1) * w.stride[i] + w.kernel[i];
    extra.push_back(std::max<int64_t>(0, reach - spatial[i] - 2 * w.pad[i]));
  }
  return extra;
}

/// `data` (N, H, W, C) padded with `value` for pooling windows `w`: by the
/// window's padding, and on the high side by `extra` more (fullWindowOverrun).
Value padForPoolingChannelsLast(OpBuilder &b, Location loc, Value data, const Window &w, ArrayRef<int64_t> extra,
                                double value) {
  return padConstant(b, loc, data, {0, w.pad[0], w.pad[1], 0}, {0, w.pad[0] + extra[0], w.pad[1] + extra[1], 0},
                     value);
}

/// The first largest tap (row-major, i * kw + j) of each max-pooling window
/// of `data` (N, H, W, C), as an f32: (N, OH, OW, C), one elementwise op
/// over the taps' views (channel vectors). The input is padded with -inf,
/// never a window's largest (each window holds an input element), so the
/// scan is MXNet's over the window clipped to the input.
Value firstLargestTaps(OpBuilder &b, Location loc, Value data, const Window &w, ArrayRef<int64_t> outShape) {
  ArrayRef<int64_t> in = tensorType(data).getShape();
  SmallVector<int64_t> extra = fullWindowOverrun({in[1], in[2]}, {outShape[1], outShape[2]}, w);
  Value padded = padForPoolingChannelsLast(b, loc, data, w, extra, -std::numeric_limits<double>::infinity());
  SmallVector<Value> views = channelsLastWindowViews(b, loc, padded, w, outShape);
  SmallVector<AffineMap> maps(views.size(), b.getMultiDimIdentityMap(4));
  return mapWithMaps(b, loc, RankedTensorType::get(outShape, b.getF32Type()), views, maps,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       Value best = args[0], tap = scalarConstant(nb, l, nb.getF32Type(), 0);
                       for (auto [t, value] : llvm::enumerate(args.drop_front())) {
                         Value larger = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, value, best);
                         best = nb.create<arith::SelectOp>(l, larger, value, best);
                         tap = nb.create<arith::SelectOp>(l, larger, scalarConstant(nb, l, nb.getF32Type(), t + 1),
                                                          tap);
                       }
                       return tap;
                     });
}

/// Along one spatial dim of a window, the windows that read an input
/// element at y = s a + r (residue r < s): o = a + d for d in [first, last],
/// the same for every a; the tap of it that window o reads is r + p - s d,
/// when within the kernel.
struct CoveringWindows {
  int64_t first, last;
};

CoveringWindows coveringWindows(int64_t kernel, int64_t stride, int64_t pad) {
  return {llvm::divideCeilSigned(pad - kernel + 1, stride), llvm::divideFloorSigned(stride - 1 + pad, stride)};
}

/// The static slice of `source` at `offsets` of `sizes`, unit strides.
Value sliceOf(OpBuilder &b, Location loc, Value source, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  return b.create<tensor::ExtractSliceOp>(loc, source, getAsIndexOpFoldResult(b.getContext(), offsets),
                                          getAsIndexOpFoldResult(b.getContext(), sizes),
                                          getAsIndexOpFoldResult(b.getContext(), SmallVector<int64_t>(sizes.size(), 1)));
}

/// The (s0, s1) table of the tap (i * kw + j) that the window at offset
/// (dy, dx) from an input element's block reads it by, for each residue
/// (r, q) of its position; -1 where that window does not reach it.
Value tapsOfResidues(OpBuilder &b, Location loc, const Window &w, int64_t dy, int64_t dx) {
  int64_t s0 = w.stride[0], s1 = w.stride[1];
  SmallVector<float> table;
  for (int64_t r = 0; r < s0; ++r)
    for (int64_t q = 0; q < s1; ++q) {
      int64_t i = r + w.pad[0] - s0 * dy, j = q + w.pad[1] - s1 * dx;
      bool reached = i >= 0 && i < w.kernel[0] && j >= 0 && j < w.kernel[1];
      table.push_back(reached ? float(i * w.kernel[1] + j) : -1.0f);
    }
  auto type = RankedTensorType::get({s0, s1}, b.getF32Type());
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, ArrayRef<float>(table)));
}

/// The gradient of a max pooling channels-last (N, H, W, C), gathered at
/// each input element: the sum, in output order, of the gradients of the
/// windows whose first largest tap (firstLargestTaps) it is; MXNet scatters
/// each window's gradient there in output order, so the sums are its own.
/// One elementwise op over the input's positions split by their residues,
/// (N, A, s, B, s, C): for each candidate window (coveringWindows along
/// both dims) it reads that window's gradient and largest tap through
/// views shifted by the candidate's offset, and the tap the residues are
/// of it (tapsOfResidues). Vectors along the channels, where the scatter is
/// scalar.
Value maxPoolingGradChannelsLast(OpBuilder &b, Location loc, sym::BackwardPoolingOp op, const Window &w) {
  Value g = op.getOutGrad();
  ArrayRef<int64_t> in = tensorType(op.getData()).getShape(), out = tensorType(g).getShape();
  Value taps = firstLargestTaps(b, loc, op.getData(), w, out);
  CoveringWindows rows = coveringWindows(w.kernel[0], w.stride[0], w.pad[0]),
                  columns = coveringWindows(w.kernel[1], w.stride[1], w.pad[1]);
  int64_t blockRows = llvm::divideCeil(in[1], w.stride[0]), blockColumns = llvm::divideCeil(in[2], w.stride[1]);
  // Zeros around g and the taps where candidates fall outside the output.
  SmallVector<int64_t> low{0, std::max<int64_t>(0, -rows.first), std::max<int64_t>(0, -columns.first), 0},
      high{0, std::max<int64_t>(0, blockRows + rows.last - out[1]),
           std::max<int64_t>(0, blockColumns + columns.last - out[2]), 0};
  Value paddedG = padConstant(b, loc, g, low, high, 0.0), paddedTaps = padConstant(b, loc, taps, low, high, 0.0);
  // Loops (n, a, r, b, q, c); per candidate: its gradient, its largest tap,
  // the taps of the residues.
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineMap window = AffineMap::get(6, 0, {dim(0), dim(1), dim(3), dim(5)}, b.getContext());
  AffineMap residues = AffineMap::get(6, 0, {dim(2), dim(4)}, b.getContext());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t dy = rows.first; dy <= rows.last; ++dy)
    for (int64_t dx = columns.first; dx <= columns.last; ++dx) {
      SmallVector<int64_t> offsets{0, low[1] + dy, low[2] + dx, 0}, sizes{out[0], blockRows, blockColumns, out[3]};
      inputs.append({sliceOf(b, loc, paddedG, offsets, sizes), sliceOf(b, loc, paddedTaps, offsets, sizes),
                     tapsOfResidues(b, loc, w, dy, dx)});
      maps.append({window, window, residues});
    }
  Type element = tensorType(op.getData()).getElementType();
  auto splitType = RankedTensorType::get({in[0], blockRows, w.stride[0], blockColumns, w.stride[1], in[3]}, element);
  Value split = mapWithMaps(b, loc, splitType, inputs, maps, [&](OpBuilder &nb, Location l, ValueRange args) {
    Value zero = scalarConstant(nb, l, element, 0), sum = zero;
    for (size_t i = 0; i < args.size(); i += 3) {
      Value hit = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, args[i + 1], args[i + 2]);
      sum = add(nb, l, sum, nb.create<arith::SelectOp>(l, hit, args[i], zero));
    }
    return sum;
  });
  Value grad = b.create<tensor::CollapseShapeOp>(loc, split, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}});
  return tensorType(grad).getShape() == in ? grad : sliceOf(b, loc, grad, {0, 0, 0, 0}, in);
}

/// The pooling gradient channels-last (N, H, W, C): a global avg or sum
/// spread directly, a windowed max gathered, others through the
/// channels-first gradient.
Value poolingGradChannelsLast(OpBuilder &b, Location loc, sym::BackwardPoolingOp op, const Window &w) {
  RankedTensorType dataType = tensorType(op.getData());
  if (op.getGlobalPool() && op.getPoolType() != "max")
    return globalSpreadChannelsLast(b, loc, op.getOutGrad(), dataType, op.getPoolType() == "avg");
  if (!op.getGlobalPool() && op.getPoolType() == "max")
    return maxPoolingGradChannelsLast(b, loc, op, w);
  Value grad = poolingGrad(b, loc, op, transposeTo(b, loc, op.getOutGrad(), kToChannelsFirst),
                           transposeTo(b, loc, op.getData(), kToChannelsFirst), w);
  return transposeTo(b, loc, grad, kToChannelsLast);
}

Lowered lowerPoolingBackward(OpBuilder &b, sym::BackwardPoolingOp op, const LoweringOptions &options) {
  RankedTensorType dataType = tensorType(op.getData());
  if (op.getPoolType() == "lp" || op.getPoolingConvention() == "same" || !isa<FloatType>(dataType.getElementType()))
    return op.emitError("the CPU backend has a Pooling gradient for max/avg/sum pooling of floats only");
  bool channelsLast = op.getLayout() == "NHWC";
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(channelsLast ? 1 : 2).take_front(dataType.getRank() - 2);
  Window w = op.getGlobalPool() ? Window(spatial, {}, {}, {}) : Window(op.getKernel(), op.getStride(), {}, op.getPad());
  if (channelsLast)
    return SmallVector<Value>{poolingGradChannelsLast(b, op.getLoc(), op, w)};
  if (options.gpu)
    return SmallVector<Value>{poolingGradByGather(b, op.getLoc(), op, w)};
  return SmallVector<Value>{poolingGrad(b, op.getLoc(), op, op.getOutGrad(), op.getData(), w)};
}

/// Pools `input` (N, C, S...) already padded, with loops n, c, o..., k...
Value poolWindow(OpBuilder &b, Location loc, Value input, const Window &w,
                 ArrayRef<int64_t> outShape, double init, ScalarFn combine) {
  unsigned d = w.rank(), numLoops = 2 + 2 * d;
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dim(0), dim(1)}, outExprs{dim(0), dim(1)};
  for (unsigned i = 0; i < d; ++i) {
    inExprs.push_back(windowExpr(b, w, i, 2 + i, 2 + d + i));
    outExprs.push_back(dim(2 + i));
  }
  // A 1-sized batch/channel input (the count mask) is broadcast.
  RankedTensorType inType = tensorType(input);
  for (unsigned i = 0; i < 2; ++i)
    if (inType.getDimSize(i) == 1 && outShape[i] != 1)
      inExprs[i] = b.getAffineConstantExpr(0);
  // The window loops only need the kernel extent; a dummy input carries it.
  Value windowShape = emptyTensor(b, loc, w.kernel, inType.getElementType());
  SmallVector<AffineExpr> kExprs;
  for (unsigned i = 0; i < d; ++i)
    kExprs.push_back(dim(2 + d + i));
  SmallVector<AffineMap> maps;
  for (auto &exprs : {inExprs, kExprs, outExprs})
    maps.push_back(AffineMap::get(numLoops, 0, exprs, b.getContext()));
  SmallVector<IteratorType> iterators(2 + d, IteratorType::parallel);
  iterators.append(d, IteratorType::reduction);
  Value acc = filledTensor(b, loc, RankedTensorType::get(outShape, inType.getElementType()), init);
  return buildGeneric(b, loc, {input, windowShape}, acc, maps, iterators,
                      [&](OpBuilder &b, Location loc, ValueRange args) {
                        return combine(b, loc, ValueRange{args[0], args[2]});
                      });
}

/// The mask whose windows' sums are an average pooling's divisors: ones
/// over the padded input (count_include_pad, the default) or over the input
/// itself, zeros over the rest of the window's reach. Its spatial dims sit
/// at `firstSpatial` in a shape of ones.
Value averageCountMask(OpBuilder &b, Location loc, Type element, ArrayRef<int64_t> spatial, const Window &w,
                       ArrayRef<int64_t> extra, bool includePad, unsigned rank, unsigned firstSpatial) {
  SmallVector<int64_t> shape(rank, 1), low(rank, 0), high(rank, 0);
  for (unsigned i = 0; i < w.rank(); ++i) {
    shape[firstSpatial + i] = includePad ? spatial[i] + 2 * w.pad[i] : spatial[i];
    low[firstSpatial + i] = includePad ? 0 : w.pad[i];
    high[firstSpatial + i] = extra[i] + (includePad ? 0 : w.pad[i]);
  }
  Value ones = filledTensor(b, loc, RankedTensorType::get(shape, element), 1.0);
  return padConstant(b, loc, ones, low, high, 0.0);
}

ScalarFn poolCombiner(bool isMax) {
  return isMax ? ScalarFn([](OpBuilder &b, Location loc, ValueRange args) { return max(b, loc, args[0], args[1]); })
               : ScalarFn(addFn);
}

Value divide(OpBuilder &b, Location loc, RankedTensorType type, ValueRange values, ArrayRef<AffineMap> maps) {
  return mapWithMaps(b, loc, type, values, maps,
                     [](OpBuilder &b, Location loc, ValueRange args) { return div(b, loc, args[0], args[1]); });
}

/// `padded` (N, H, W, C) pooled by window `w` into `shape`: one elementwise
/// op combining a strided view of it per tap, each a run of whole channel
/// vectors.
Value poolByViews(OpBuilder &b, Location loc, Value padded, const Window &w, ArrayRef<int64_t> shape,
                  ScalarFn combine) {
  SmallVector<Value> views = channelsLastWindowViews(b, loc, padded, w, shape);
  auto type = RankedTensorType::get(shape, tensorType(padded).getElementType());
  SmallVector<AffineMap> maps(views.size(), b.getMultiDimIdentityMap(4));
  return mapWithMaps(b, loc, type, views, maps, [&](OpBuilder &nb, Location l, ValueRange args) {
    Value result = args[0];
    for (Value arg : args.drop_front())
      result = combine(nb, l, ValueRange{result, arg});
    return result;
  });
}

/// Pooling channels-last (N, H, W, C): a global pool reduces the spatial
/// dims; a window's pool combines its taps' views (poolByViews).
Value poolChannelsLast(OpBuilder &b, sym::PoolingOp op) {
  Location loc = op.getLoc();
  RankedTensorType dataType = tensorType(op.getData()), outType = tensorType(op.getOutput());
  Type element = dataType.getElementType();
  bool isMax = op.getPoolType() == "max", isAvg = op.getPoolType() == "avg";
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  SmallVector<int64_t> spatial{dataType.getDimSize(1), dataType.getDimSize(2)};
  if (op.getGlobalPool()) {
    Value pooled = reduce(b, loc, op.getData(), {1, 2}, /*keepDims=*/true, padValue, poolCombiner(isMax));
    if (!isAvg)
      return pooled;
    Value count = filledTensor(b, loc, RankedTensorType::get({}, element), double(spatial[0] * spatial[1]));
    return divide(b, loc, outType, {pooled, count},
                  {b.getMultiDimIdentityMap(4), AffineMap::get(4, 0, {}, b.getContext())});
  }
  Window w(op.getKernel(), op.getStride(), {}, op.getPad());
  SmallVector<int64_t> extra =
      fullWindowOverrun(spatial, {outType.getDimSize(1), outType.getDimSize(2)}, w);
  Value padded = padForPoolingChannelsLast(b, loc, op.getData(), w, extra, padValue);
  Value pooled = poolByViews(b, loc, padded, w, outType.getShape(), poolCombiner(isMax));
  if (!isAvg)
    return pooled;
  Value mask = averageCountMask(b, loc, element, spatial, w, extra, op.getCountIncludePad().value_or(true), 4, 1);
  Value counts = poolByViews(b, loc, mask, w, {1, outType.getDimSize(1), outType.getDimSize(2), 1}, addFn);
  AffineExpr y = b.getAffineDimExpr(1), x = b.getAffineDimExpr(2), zero = b.getAffineConstantExpr(0);
  return divide(b, loc, outType, {pooled, counts},
                {b.getMultiDimIdentityMap(4), AffineMap::get(4, 0, {zero, y, x, zero}, b.getContext())});
}

Lowered lowerPooling(OpBuilder &b, sym::PoolingOp op) {
  Location loc = op.getLoc();
  StringRef kind = op.getPoolType();
  if (kind == "lp" || op.getPoolingConvention() == "same")
    return op.emitError("the CPU backend does not support pool_type '")
           << kind << "' with pooling_convention '" << op.getPoolingConvention() << "'";
  if (op.getLayout() && !llvm::is_contained({"NCW", "NCHW", "NCDHW", "NHWC"}, *op.getLayout()))
    return op.emitError("the CPU backend supports channel-first layouts and NHWC only, got ") << *op.getLayout();
  if (op.isChannelsLast())
    return SmallVector<Value>{poolChannelsLast(b, op)};
  RankedTensorType dataType = tensorType(op.getData()), outType = tensorType(op.getOutput());
  Type element = dataType.getElementType();
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(2);
  Window w = op.getGlobalPool() ? Window(spatial, {}, {}, {})
                                : Window(op.getKernel(), op.getStride(), {}, op.getPad());
  // 'full' windows may run past the padded input: extend it on the high side.
  SmallVector<int64_t> extra = fullWindowOverrun(spatial, outType.getShape().drop_front(2), w);
  SmallVector<int64_t> low{0, 0}, high{0, 0};
  for (unsigned i = 0; i < w.rank(); ++i) {
    low.push_back(w.pad[i]);
    high.push_back(w.pad[i] + extra[i]);
  }
  bool isMax = kind == "max";
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value padded = padConstant(b, loc, op.getData(), low, high, padValue);
  Value pooled = poolWindow(b, loc, padded, w, outType.getShape(), padValue, poolCombiner(isMax));
  if (kind != "avg")
    return SmallVector<Value>{pooled};

  // MXNet divides by the window clipped to the padded input (count_include_pad,
  // the default) or to the input itself.
  Value mask = averageCountMask(b, loc, element, spatial, w, extra, op.getCountIncludePad().value_or(true),
                                dataType.getRank(), 2);
  SmallVector<int64_t> countShape{1, 1};
  llvm::append_range(countShape, outType.getShape().drop_front(2));
  Value counts = poolWindow(b, loc, mask, w, countShape, 0.0, addFn);
  return SmallVector<Value>{mapElementwise(b, loc, outType, {pooled, counts},
                                           [](OpBuilder &b, Location loc, ValueRange args) {
                                             return div(b, loc, args[0], args[1]);
                                           })};
}

/// The dims BatchNorm reduces over (all but `axis`) and their element count.
std::pair<SmallVector<int64_t>, int64_t> statisticAxes(RankedTensorType type, int64_t axis) {
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != axis) {
      axes.push_back(i);
      count *= type.getDimSize(i);
    }
  return {axes, count};
}

/// The accumulator type of wideSums: f64, or the input's own type if wider.
Type wideType(OpBuilder &b, Type element) {
  return element.getIntOrFloatBitWidth() >= 64 ? element : b.getF64Type();
}

/// The sums over `axes` of each of `inputs` (one shape), in one pass, in
/// wideType, by adds that may be reassociated: LLVM vectorizes them
/// (partial sums per lane), where an f32 sum has to stay sequential. One
/// pass reads each element once for all the sums: BatchNorm's x and x^2,
/// its backward's g and g * x^.
SmallVector<Value> wideSums(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> axes) {
  RankedTensorType type = tensorType(inputs.front());
  int64_t rank = type.getRank();
  SmallVector<int64_t> keptShape;
  SmallVector<AffineExpr> keptDims;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (!reduced) {
      keptShape.push_back(type.getDimSize(i));
      keptDims.push_back(b.getAffineDimExpr(i));
    }
  }
  SmallVector<Value> sums;
  SmallVector<Type> sumTypes;
  for (Value input : inputs) {
    auto sumType = RankedTensorType::get(keptShape, wideType(b, tensorType(input).getElementType()));
    sums.push_back(filledTensor(b, loc, sumType, 0.0));
    sumTypes.push_back(sumType);
  }
  SmallVector<AffineMap> maps(inputs.size(), b.getMultiDimIdentityMap(rank));
  maps.append(inputs.size(), AffineMap::get(rank, 0, keptDims, b.getContext()));
  auto generic = b.create<linalg::GenericOp>(
      loc, sumTypes, inputs, sums, maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        size_t count = args.size() / 2;
        SmallVector<Value> added;
        for (size_t i = 0; i < count; ++i) {
          Value term = args[i], sum = args[count + i];
          if (term.getType() != sum.getType())
            term = nb.create<arith::ExtFOp>(nl, sum.getType(), term);
          added.push_back(nb.create<arith::AddFOp>(nl, sum, term, arith::FastMathFlags::reassoc));
        }
        nb.create<linalg::YieldOp>(nl, added);
      });
  return generic.getResults();
}

/// A sum over every dim but the last (channels-last statistics) goes in
/// blocks: the leading dims up to the first that makes this many blocks,
/// where each block still sums this many rows.
constexpr int64_t kMinBlocks = 8;
constexpr int64_t kMinRowsPerBlock = 16;

/// How many leading dims of `type` index the blocks of a sum over `axes`;
/// 0 where it goes whole.
int64_t blockDims(RankedTensorType type, ArrayRef<int64_t> axes) {
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || !llvm::equal(axes, llvm::seq<int64_t>(0, rank - 1)))
    return 0;
  int64_t rows = type.getNumElements() / std::max<int64_t>(type.getDimSize(rank - 1), 1), blocks = 1;
  for (int64_t dim = 0; dim + 2 < rank; ++dim) {
    blocks *= type.getDimSize(dim);
    if (blocks >= kMinBlocks)
      return rows >= blocks * kMinRowsPerBlock ? dim + 1 : 0;
  }
  return 0;
}

/// The sums over `axes` of each of `inputs`, in wideType (wideSums). Over
/// every dim but the last (channels-last statistics), each block (an
/// image, or an image's rows) is summed by one thread along whole rows,
/// then the blocks' sums are added: split along the channels alone, every
/// thread would read every row's cache lines for a few channels. The
/// blocks are leading dims of the inputs themselves, not of reshaped views,
/// so that the elementwise ops that compute the inputs (BatchNorm's
/// squares) fuse into the sums rather than writing tensors of their own.
SmallVector<Value> blockedWideSums(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> axes) {
  // Along a summed innermost dim, LLVM keeps one sum in registers (it
  // hoists the accumulator's load and store out of the loop) but not two,
  // whose buffers might alias: those inputs are summed one at a time.
  int64_t innermost = tensorType(inputs.front()).getRank() - 1;
  if (inputs.size() > 1 && llvm::is_contained(axes, innermost)) {
    SmallVector<Value> sums;
    for (Value input : inputs)
      sums.push_back(blockedWideSums(b, loc, input, axes).front());
    return sums;
  }
  if (int64_t leading = blockDims(tensorType(inputs.front()), axes))
    return wideSums(b, loc, wideSums(b, loc, inputs, axes.drop_front(leading)), axes.take_front(leading));
  return wideSums(b, loc, inputs, axes);
}

/// `wide` rounded to `element`, elementwise.
Value roundTo(OpBuilder &b, Location loc, Value wide, Type element) {
  if (tensorType(wide).getElementType() == element)
    return wide;
  return mapElementwise(b, loc, tensorType(wide).clone(element), wide, [&](OpBuilder &b, Location loc, ValueRange a) {
    return b.create<arith::TruncFOp>(loc, element, a[0]).getResult();
  });
}

/// The sums over `axes` of each of `inputs`, accumulated in wideType, then
/// rounded to the inputs' type: the sum of the terms rounded once, more
/// accurate than f32 adds in any order.
SmallVector<Value> sumsOver(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> axes) {
  SmallVector<Value> sums = blockedWideSums(b, loc, inputs, axes);
  for (auto [sum, input] : llvm::zip(sums, inputs))
    sum = roundTo(b, loc, sum, tensorType(input).getElementType());
  return sums;
}

Value sumOver(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes) {
  return sumsOver(b, loc, input, axes).front();
}

Value scaleBy(OpBuilder &b, Location loc, Value vector, double factor) {
  return mapElementwise(b, loc, tensorType(vector), vector, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), factor));
  });
}

/// 1 / sqrt(var + eps), per channel.
Value inverseStd(OpBuilder &b, Location loc, Value var, double eps) {
  return mapElementwise(b, loc, tensorType(var), var, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
    return b.create<math::RsqrtOp>(loc, add(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), eps)));
  });
}

/// The batch mean and biased variance per channel, from the sums of x and
/// x^2 taken in one pass in wideType: the variance's cancellation
/// (mean(x^2) - mean^2) loses nothing an f32 result keeps unless mean^2
/// exceeds the variance by about 2^29, where MXNet's two f32 passes lose
/// more. A rounding below zero is clamped.
std::pair<Value, Value> batchStatistics(OpBuilder &b, Location loc, Value data, int64_t axis) {
  RankedTensorType type = tensorType(data);
  auto [axes, count] = statisticAxes(type, axis);
  Type wide = wideType(b, type.getElementType());
  Value squares = mapElementwise(b, loc, type.clone(wide), data, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value x = a[0].getType() == wide ? a[0] : b.create<arith::ExtFOp>(loc, wide, a[0]).getResult();
    return mul(b, loc, x, x);
  });
  SmallVector<Value> sums = blockedWideSums(b, loc, {data, squares}, axes);
  double inverseCount = 1.0 / count;
  Value mean = scaleBy(b, loc, sums[0], inverseCount);
  Value var = mapElementwise(b, loc, tensorType(mean), {mean, sums[1]}, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value meanOfSquares = mul(b, loc, a[1], scalarConstant(b, loc, wide, inverseCount));
    Value diff = sub(b, loc, meanOfSquares, mul(b, loc, a[0], a[0]));
    return b.create<arith::MaximumFOp>(loc, diff, scalarConstant(b, loc, wide, 0.0)).getResult();
  });
  return {roundTo(b, loc, mean, type.getElementType()), roundTo(b, loc, var, type.getElementType())};
}

/// Training (sym.is_train) normalizes with the batch statistics, inference
/// with the moving ones. Like MXNet's kernels, the mean and var results hold
/// the mean and 1/sqrt(var + eps) used.
Lowered lowerBatchNorm(OpBuilder &b, sym::BatchNormOp op) {
  Location loc = op.getLoc();
  int64_t axis = normalizeAxis(op.getAxis(), tensorType(op.getData()).getRank());
  Value mean = op.getMovingMean(), var = op.getMovingVar();
  if (sym::runsInTraining(op))
    std::tie(mean, var) = batchStatistics(b, loc, op.getData(), axis);
  Value invStd = inverseStd(b, loc, var, op.getEps());
  bool fixGamma = op.getFixGamma();
  Value out = mapAlongAxis(b, loc, op.getData(), axis, {op.getGamma(), op.getBeta(), mean, invStd},
                           [&](OpBuilder &b, Location loc, ValueRange args) {
                             Value x = args[0], gamma = args[1], beta = args[2];
                             Value scale = fixGamma ? args[4] : mul(b, loc, gamma, args[4]);
                             return add(b, loc, mul(b, loc, sub(b, loc, x, args[3]), scale), beta);
                           });
  return SmallVector<Value>{out, mean, invStd};
}

/// How a normalization's operands are read in a loop over data's dims: data
/// by all, the moments by all but the normalized `axis`, gamma and beta by
/// their channel axis (LayerNorm's is `axis` itself).
struct NormMaps {
  AffineMap all, moments, channel;
};

NormMaps normMaps(OpBuilder &b, int64_t rank, int64_t axis, int64_t channelAxis) {
  SmallVector<AffineExpr> rest;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      rest.push_back(b.getAffineDimExpr(i));
  return {b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, rest, b.getContext()),
          AffineMap::get(rank, 0, b.getAffineDimExpr(channelAxis))};
}

/// The mean of `input` over `axis`, that axis dropped.
Value meanOverAxis(OpBuilder &b, Location loc, Value input, int64_t axis) {
  return scaleBy(b, loc, sumOver(b, loc, input, {axis}), 1.0 / tensorType(input).getDimSize(axis));
}

/// sqrt(var + eps), elementwise.
Value stdOf(OpBuilder &b, Location loc, Value var, double eps) {
  return mapElementwise(b, loc, tensorType(var), var, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
    return b.create<math::SqrtOp>(loc, add(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), eps)));
  });
}

/// The moments over `axis` (`axis` dropped; the biased variance) and
/// (x - mean) / sqrt(var + eps) * gamma + beta.
struct Normalized {
  Value out, mean, var, std;
};

Normalized normalizeOverAxis(OpBuilder &b, Location loc, Value data, Value gamma, Value beta, int64_t axis,
                             int64_t channelAxis, double eps) {
  RankedTensorType type = tensorType(data);
  NormMaps maps = normMaps(b, type.getRank(), axis, channelAxis);
  Value mean = meanOverAxis(b, loc, data, axis);
  Value squares = mapWithMaps(b, loc, type, {data, mean}, {maps.all, maps.moments},
                              [](OpBuilder &b, Location loc, ValueRange a) {
                                Value centered = sub(b, loc, a[0], a[1]);
                                return mul(b, loc, centered, centered);
                              });
  Value var = meanOverAxis(b, loc, squares, axis), std = stdOf(b, loc, var, eps);
  Value out = mapWithMaps(b, loc, type, {data, mean, std, gamma, beta},
                          {maps.all, maps.moments, maps.moments, maps.channel, maps.channel},
                          [](OpBuilder &b, Location loc, ValueRange a) {
                            Value normalized = div(b, loc, sub(b, loc, a[0], a[1]), a[2]);
                            return add(b, loc, mul(b, loc, normalized, a[3]), a[4]);
                          });
  return {out, mean, var, std};
}

/// MXNet's LayerNorm: the moments over `axis`, std = sqrt(var + eps).
Lowered lowerLayerNorm(OpBuilder &b, sym::LayerNormOp op) {
  Location loc = op.getLoc();
  int64_t axis = normalizeAxis(op.getAxis(), tensorType(op.getData()).getRank());
  Normalized n = normalizeOverAxis(b, loc, op.getData(), op.getGamma(), op.getBeta(), axis, axis, op.getEps());
  ArrayRef<int64_t> momentsShape = tensorType(op.getMean()).getShape();
  return SmallVector<Value>{n.out, reshapeTo(b, loc, n.mean, momentsShape), reshapeTo(b, loc, n.std, momentsShape)};
}

/// InstanceNorm's view of data: (n, c, the rest), normalized over the rest.
SmallVector<int64_t> instanceView(RankedTensorType type) {
  ArrayRef<int64_t> dims = type.getShape();
  return {dims[0], dims[1], ShapedType::getNumElements(dims.drop_front(2))};
}

/// MXNet's InstanceNorm: the moments of each (n, c) plane; mean and var
/// are its hidden results.
Lowered lowerInstanceNorm(OpBuilder &b, sym::InstanceNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  Value data = reshapeTo(b, loc, op.getData(), instanceView(type));
  Normalized n = normalizeOverAxis(b, loc, data, op.getGamma(), op.getBeta(), 2, 1, op.getEps());
  return SmallVector<Value>{reshapeTo(b, loc, n.out, type.getShape()), n.mean, n.var};
}

/// L2Normalization's view of its data: (n, rest) for instance mode, (n, c,
/// rest) otherwise, and the axis of the view that the norm sums over.
std::pair<SmallVector<int64_t>, int64_t> l2NormView(RankedTensorType type, StringRef mode) {
  ArrayRef<int64_t> dims = type.getShape();
  auto rest = [&](int64_t from) { return ShapedType::getNumElements(dims.drop_front(from)); };
  if (mode == "instance")
    return {{dims[0], rest(1)}, 1};
  return {{dims[0], dims[1], rest(2)}, mode == "channel" ? 1 : 2};
}

/// norm = sqrt(sum(x^2) + eps) over the view's axis, out = x / norm.
Lowered lowerL2Normalization(OpBuilder &b, sym::L2NormalizationOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  auto [view, axis] = l2NormView(type, op.getMode());
  Value data = reshapeTo(b, loc, op.getData(), view);
  Value squares = mapElementwise(b, loc, tensorType(data), data,
                                 [](OpBuilder &b, Location loc, ValueRange a) { return mul(b, loc, a[0], a[0]); });
  Value sums = sumOver(b, loc, squares, {axis});
  Value norm = mapElementwise(b, loc, tensorType(sums), sums, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
    return b.create<math::SqrtOp>(loc, add(b, loc, a[0], scalarConstant(b, loc, a[0].getType(), op.getEps())));
  });
  NormMaps maps = normMaps(b, view.size(), axis, axis);
  Value out = mapWithMaps(b, loc, tensorType(data), {data, norm}, {maps.all, maps.moments},
                          [](OpBuilder &b, Location loc, ValueRange a) { return div(b, loc, a[0], a[1]); });
  return SmallVector<Value>{reshapeTo(b, loc, out, type.getShape()),
                            reshapeTo(b, loc, norm, tensorType(op.getNorm()).getShape())};
}

/// MXNet's L2NormalizationOp::Backward: (g - out * sum(g * out)) / norm.
Lowered lowerL2NormalizationBackward(OpBuilder &b, sym::BackwardL2NormalizationOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getOutGrad());
  auto [view, axis] = l2NormView(type, op.getMode());
  Value g = reshapeTo(b, loc, op.getOutGrad(), view), out = reshapeTo(b, loc, op.getOutput(), view);
  Value products = mapElementwise(b, loc, tensorType(g), {g, out},
                                  [](OpBuilder &b, Location loc, ValueRange a) { return mul(b, loc, a[0], a[1]); });
  Value sums = sumOver(b, loc, products, {axis});
  NormMaps maps = normMaps(b, view.size(), axis, axis);
  Value norm = reshapeTo(b, loc, op.getNorm(), tensorType(sums).getShape());
  Value grad = mapWithMaps(b, loc, tensorType(g), {g, out, sums, norm},
                           {maps.all, maps.all, maps.moments, maps.moments},
                           [](OpBuilder &b, Location loc, ValueRange a) {
                             return div(b, loc, sub(b, loc, a[0], mul(b, loc, a[1], a[2])), a[3]);
                           });
  return SmallVector<Value>{reshapeTo(b, loc, grad, type.getShape())};
}

/// With x^ = (x - mean) / std and h = g * gamma / std, over `axis` (MXNet's
/// LayerNormGradCompute, and InstanceNorm's Backward once its gvar and gmean
/// terms are expanded): dx = h - mean(h) - x^ * mean(h * x^); dgamma =
/// sum(g * x^) and dbeta = sum(g) over all but the channel axis. mean and
/// std have data's shape without `axis`.
SmallVector<Value> normalizationGrads(OpBuilder &b, Location loc, Value g, Value data, Value mean, Value std,
                                      Value gamma, int64_t axis, int64_t channelAxis) {
  RankedTensorType type = tensorType(data);
  int64_t rank = type.getRank();
  NormMaps maps = normMaps(b, rank, axis, channelAxis);
  SmallVector<int64_t> otherAxes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != channelAxis)
      otherAxes.push_back(i);
  SmallVector<AffineMap> readMaps{maps.all, maps.all, maps.moments, maps.moments, maps.channel};
  auto normalized = [](OpBuilder &b, Location loc, ValueRange a) { return div(b, loc, sub(b, loc, a[1], a[2]), a[3]); };
  auto scaled = [](OpBuilder &b, Location loc, ValueRange a) { return div(b, loc, mul(b, loc, a[0], a[4]), a[3]); };
  SmallVector<Value> inputs{g, data, mean, std, gamma};
  Value gNormalized = mapWithMaps(b, loc, type, inputs, readMaps, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], normalized(b, loc, a));
  });
  Value h = mapWithMaps(b, loc, type, inputs, readMaps, scaled);
  Value hNormalized = mapWithMaps(b, loc, type, inputs, readMaps, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, scaled(b, loc, a), normalized(b, loc, a));
  });
  Value meanH = meanOverAxis(b, loc, h, axis), meanHNormalized = meanOverAxis(b, loc, hNormalized, axis);
  SmallVector<Value> gradInputs{g, data, mean, std, gamma, meanH, meanHNormalized};
  SmallVector<AffineMap> gradMaps(readMaps);
  gradMaps.append({maps.moments, maps.moments});
  Value dataGrad = mapWithMaps(b, loc, type, gradInputs, gradMaps, [&](OpBuilder &b, Location loc, ValueRange a) {
    return sub(b, loc, sub(b, loc, scaled(b, loc, a), a[5]), mul(b, loc, normalized(b, loc, a), a[6]));
  });
  SmallVector<Value> sums = sumsOver(b, loc, {gNormalized, g}, otherAxes);
  return {dataGrad, sums[0], sums[1]};
}

Lowered lowerLayerNormBackward(OpBuilder &b, sym::BackwardLayerNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  int64_t axis = normalizeAxis(op.getAxis(), type.getRank());
  SmallVector<int64_t> restShape(type.getShape());
  restShape.erase(restShape.begin() + axis);
  Value mean = reshapeTo(b, loc, op.getMean(), restShape), std = reshapeTo(b, loc, op.getStd(), restShape);
  return normalizationGrads(b, loc, op.getOutGrad(), op.getData(), mean, std, op.getGamma(), axis, axis);
}

Lowered lowerInstanceNormBackward(OpBuilder &b, sym::BackwardInstanceNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  SmallVector<int64_t> view = instanceView(type);
  SmallVector<Value> grads =
      normalizationGrads(b, loc, reshapeTo(b, loc, op.getOutGrad(), view), reshapeTo(b, loc, op.getData(), view),
                         op.getMean(), stdOf(b, loc, op.getVar(), op.getEps()), op.getGamma(), 2, 1);
  grads[0] = reshapeTo(b, loc, grads[0], type.getShape());
  return grads;
}

/// With batch statistics (N values per channel, x^ = (x - mean) * invstd):
///   dx = (g - sum(g) / N - x^ * sum(g * x^) / N) * gamma * invstd;
/// with fixed statistics dx = g * gamma * invstd. Either way dgamma =
/// sum(g * x^) (0 with fix_gamma) and dbeta = sum(g).
Lowered lowerBatchNormBackward(OpBuilder &b, sym::BackwardBatchNormOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  int64_t axis = normalizeAxis(op.getAxis(), type.getRank());
  auto [axes, count] = statisticAxes(type, axis);
  Value g = op.getOutGrad(), mean = op.getMean(), invStd = op.getInvstd();
  Value gNormalized = mapAlongAxis(b, loc, {g, op.getData()}, axis, {mean, invStd},
                                   [](OpBuilder &b, Location loc, ValueRange a) {
                                     return mul(b, loc, a[0], mul(b, loc, sub(b, loc, a[1], a[2]), a[3]));
                                   });
  SmallVector<Value> sums = sumsOver(b, loc, {g, gNormalized}, axes);
  Value sumG = sums[0], sumGNormalized = sums[1];
  bool fixGamma = op.getFixGamma();
  Value scale = fixGamma ? invStd
                         : mapElementwise(b, loc, tensorType(invStd), {op.getGamma(), invStd},
                                          [](OpBuilder &b, Location loc, ValueRange a) {
                                            return mul(b, loc, a[0], a[1]);
                                          });
  Value dataGrad;
  if (sym::runsInTraining(op) && !op.getUseGlobalStats()) {
    Value meanG = scaleBy(b, loc, sumG, 1.0 / count), meanGNormalized = scaleBy(b, loc, sumGNormalized, 1.0 / count);
    dataGrad = mapAlongAxis(b, loc, {g, op.getData()}, axis, {mean, invStd, meanG, meanGNormalized, scale},
                            [](OpBuilder &b, Location loc, ValueRange a) {
                              Value normalized = mul(b, loc, sub(b, loc, a[1], a[2]), a[3]);
                              Value centered = sub(b, loc, sub(b, loc, a[0], a[4]), mul(b, loc, normalized, a[5]));
                              return mul(b, loc, centered, a[6]);
                            });
  } else {
    dataGrad = mapAlongAxis(b, loc, g, axis, scale, [](OpBuilder &b, Location loc, ValueRange a) {
      return mul(b, loc, a[0], a[1]);
    });
  }
  Value gammaGrad = fixGamma ? filledTensor(b, loc, tensorType(op.getGammaGrad()), 0.0) : sumGNormalized;
  return SmallVector<Value>{dataGrad, gammaGrad, sumG};
}

/// Sums of `t` over the channel window [c - half, c + half] of every
/// channel c (axis 1), zero beyond the edges.
Value channelWindowSums(OpBuilder &b, Location loc, Value t, int64_t half) {
  RankedTensorType type = tensorType(t);
  int64_t rank = type.getRank();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = high[1] = half;
  Value padded = padConstant(b, loc, t, low, high, 0.0);
  // Loops: the output dims, then the channel window k; input channel c + k.
  unsigned numLoops = rank + 1;
  SmallVector<AffineExpr> inExprs, outExprs;
  for (unsigned i = 0; i < rank; ++i) {
    AffineExpr e = b.getAffineDimExpr(i);
    inExprs.push_back(i == 1 ? e + b.getAffineDimExpr(rank) : e);
    outExprs.push_back(e);
  }
  Value window = emptyTensor(b, loc, {2 * half + 1}, type.getElementType());
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, inExprs, b.getContext()),
                              AffineMap::get(numLoops, 0, b.getAffineDimExpr(rank)),
                              AffineMap::get(numLoops, 0, outExprs, b.getContext())};
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  return buildGeneric(b, loc, {padded, window}, zeros(b, loc, type.getShape(), type.getElementType()), maps,
                      iterators, [](OpBuilder &b, Location loc, ValueRange args) {
                        return add(b, loc, args[2], args[0]);
                      });
}

/// x^-beta elementwise.
Value powerOf(OpBuilder &b, Location loc, Value x, double exponent) {
  return b.create<math::PowFOp>(loc, x, scalarConstant(b, loc, x.getType(), exponent));
}

Lowered lowerLRN(OpBuilder &b, sym::LRNOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  Value squares = mapElementwise(b, loc, type, op.getData(), [](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], a[0]);
  });
  Value sums = channelWindowSums(b, loc, squares, op.getNsize() / 2);
  double salpha = op.getAlpha() / op.getNsize(), knorm = op.getKnorm(), beta = op.getBeta();
  Value norm = mapElementwise(b, loc, type, sums, [&](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    return add(b, loc, scalarConstant(b, loc, t, knorm), mul(b, loc, scalarConstant(b, loc, t, salpha), a[0]));
  });
  Value out = mapElementwise(b, loc, type, {op.getData(), norm}, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], powerOf(b, loc, a[1], -beta));
  });
  return SmallVector<Value>{out, norm};
}

/// dx = g n^-beta - 2 (alpha / nsize) beta x windowSums(g x n^(-beta-1)).
Lowered lowerLRNBackward(OpBuilder &b, sym::BackwardLRNOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  double beta = op.getBeta(), coefficient = -2.0 * op.getAlpha() / op.getNsize() * beta;
  SmallVector<Value> inputs{op.getOutGrad(), op.getData(), op.getTmpNorm()};
  Value scaled = mapElementwise(b, loc, type, inputs, [&](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, mul(b, loc, a[0], a[1]), powerOf(b, loc, a[2], -beta - 1));
  });
  Value sums = channelWindowSums(b, loc, scaled, op.getNsize() / 2);
  inputs.push_back(sums);
  return SmallVector<Value>{mapElementwise(b, loc, type, inputs, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value direct = mul(b, loc, a[0], powerOf(b, loc, a[2], -beta));
    Value c = scalarConstant(b, loc, a[0].getType(), coefficient);
    return add(b, loc, direct, mul(b, loc, c, mul(b, loc, a[1], a[3])));
  })};
}

/// The weight row an index picks: MXNet clips indices into [0, rows - 1].
Value embeddingRow(OpBuilder &b, Location loc, Value index, int64_t rows) {
  Value i = convertScalar(b, loc, index, b.getI64Type());
  i = b.create<arith::MaxSIOp>(loc, i, scalarConstant(b, loc, b.getI64Type(), 0));
  i = b.create<arith::MinSIOp>(loc, i, scalarConstant(b, loc, b.getI64Type(), rows - 1));
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
}

/// dW[row(i), :] += g[i, :] for every index i, in index order (rows may
/// repeat): the row scatter-add of take and gather_nd.
Lowered lowerEmbeddingBackward(OpBuilder &b, sym::BackwardEmbeddingOp op) {
  Location loc = op.getLoc();
  RankedTensorType wType = tensorType(op.getWeightGrad());
  int64_t rows = wType.getDimSize(0), cols = wType.getDimSize(1);
  int64_t count = tensorType(op.getData()).getNumElements();
  Value indices = reshapeTo(b, loc, op.getData(), {count});
  Value positions = generateElements(b, loc, RankedTensorType::get({count}, b.getI64Type()),
                                     [&](OpBuilder &nb, Location l, ValueRange at) -> Value {
    Value index = embeddingRow(nb, l, nb.create<tensor::ExtractOp>(l, indices, at), rows);
    return nb.create<arith::IndexCastOp>(l, nb.getI64Type(), index);
  });
  FailureOr<Value> summed = scatterAddRows(b, op, reshapeTo(b, loc, op.getOutGrad(), {count, cols}), positions, rows);
  if (failed(summed))
    return failure();
  return SmallVector<Value>{*summed};
}

Lowered lowerEmbedding(OpBuilder &b, sym::EmbeddingOp op) {
  Location loc = op.getLoc();
  RankedTensorType outType = tensorType(op.getOutput());
  unsigned rank = outType.getRank();
  Value weight = op.getWeight();
  int64_t rows = tensorType(weight).getDimSize(0);
  SmallVector<AffineExpr> dataExprs;
  for (unsigned i = 0; i + 1 < rank; ++i)
    dataExprs.push_back(b.getAffineDimExpr(i));
  AffineMap dataMap = AffineMap::get(rank, 0, dataExprs, b.getContext());
  return SmallVector<Value>{mapWithMaps(b, loc, outType, op.getData(), dataMap,
                                        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
    Value row = embeddingRow(b, loc, args[0], rows);
    Value col = b.create<linalg::IndexOp>(loc, rank - 1);
    Value v = b.create<tensor::ExtractOp>(loc, weight, ValueRange{row, col});
    return convertScalar(b, loc, v, outType.getElementType());
  })};
}

Lowered lowerUpSampling(OpBuilder &b, sym::UpSamplingOp op) {
  Location loc = op.getLoc();
  RankedTensorType outType = tensorType(op.getOutput());
  SmallVector<Value> parts;
  for (Value input : op.getInputs()) {
    // Nearest upsampling reads in[n, c, h, w] for out[n, c, h, i, w, j]
    // (an (N, C, H, s, W, s) view of the output): a broadcast, no division.
    RankedTensorType type = tensorType(input);
    int64_t scale = outType.getDimSize(2) / type.getDimSize(2);
    SmallVector<int64_t> expanded{type.getDimSize(0), type.getDimSize(1)};
    SmallVector<AffineExpr> exprs{b.getAffineDimExpr(0), b.getAffineDimExpr(1)};
    for (unsigned i = 2; i < type.getRank(); ++i) {
      exprs.push_back(b.getAffineDimExpr(expanded.size()));
      expanded.append({type.getDimSize(i), scale});
    }
    Value up = mapWithMaps(b, loc, RankedTensorType::get(expanded, type.getElementType()), input,
                           AffineMap::get(expanded.size(), 0, exprs, b.getContext()),
                           [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    SmallVector<int64_t> shape(outType.getShape());
    shape[1] = type.getDimSize(1);
    parts.push_back(reshapeTo(b, loc, up, shape));
  }
  Value result = parts.front();
  if (op.getMultiInputMode() == "sum") {
    for (Value part : ArrayRef<Value>(parts).drop_front())
      result = mapElementwise(b, loc, outType, {result, part}, addFn);
    return SmallVector<Value>{result};
  }
  result = emptyLike(b, loc, outType);
  int64_t offset = 0;
  for (Value part : parts) {
    RankedTensorType type = tensorType(part);
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    offsets[1] = offset;
    result = b.create<tensor::InsertSliceOp>(loc, part, result,
                                             getAsIndexOpFoldResult(b.getContext(), offsets),
                                             getAsIndexOpFoldResult(b.getContext(), type.getShape()),
                                             getAsIndexOpFoldResult(b.getContext(), strides));
    offset += type.getDimSize(1);
  }
  return SmallVector<Value>{result};
}

} // namespace

std::optional<Lowered> lowerLayerOp(Operation *op, OpBuilder &b, const LoweringOptions &options) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::FullyConnectedOp o) { return lowerFullyConnected(b, o); })
      .Case([&](sym::DotOp o) { return lowerDot(b, o); })
      .Case([&](sym::BatchDotOp o) { return lowerBatchDot(b, o); })
      .Case([&](sym::BackwardPoolingOp o) { return lowerPoolingBackward(b, o, options); })
      .Case([&](sym::PoolingOp o) { return lowerPooling(b, o); })
      .Case([&](sym::BatchNormOp o) { return lowerBatchNorm(b, o); })
      .Case([&](sym::BackwardBatchNormOp o) { return lowerBatchNormBackward(b, o); })
      .Case([&](sym::LayerNormOp o) { return lowerLayerNorm(b, o); })
      .Case([&](sym::BackwardLayerNormOp o) { return lowerLayerNormBackward(b, o); })
      .Case([&](sym::InstanceNormOp o) { return lowerInstanceNorm(b, o); })
      .Case([&](sym::BackwardInstanceNormOp o) { return lowerInstanceNormBackward(b, o); })
      .Case([&](sym::L2NormalizationOp o) { return lowerL2Normalization(b, o); })
      .Case([&](sym::BackwardL2NormalizationOp o) { return lowerL2NormalizationBackward(b, o); })
      .Case([&](sym::LRNOp o) { return lowerLRN(b, o); })
      .Case([&](sym::BackwardLRNOp o) { return lowerLRNBackward(b, o); })
      .Case([&](sym::EmbeddingOp o) { return lowerEmbedding(b, o); })
      .Case([&](sym::BackwardEmbeddingOp o) { return lowerEmbeddingBackward(b, o); })
      .Case([&](sym::UpSamplingOp o) -> std::optional<Lowered> {
        if (o.getSampleType() == "bilinear")
          return std::nullopt; // a transposed convolution (LowerConvolution.cpp)
        return lowerUpSampling(b, o);
      })
      .Case([&](sym::DropoutOp o) -> Lowered {
        // Dropout that draws no random numbers is the identity.
        return SmallVector<Value>{o.getData(), emptyLike(b, o.getLoc(), tensorType(o.getMask()))};
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
