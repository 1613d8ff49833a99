//===- LowerLayers.cpp - neural-network layers -> linalg ------------------===//
//
// Ops marked sym.is_train run in training mode (BatchNorm normalizes with
// batch statistics); otherwise inference semantics hold (moving statistics,
// Dropout is the identity). Windowed ops (Convolution, Pooling,
// LRN) are linalg.generic ops with reduction loops over the window, reading a
// padded input through affine maps `o * stride + k * dilate`.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include <limits>
#include <numeric>

using namespace mlir;

namespace symc::cpu {
namespace {

using utils::IteratorType;

Value addFn(OpBuilder &b, Location loc, ValueRange args) { return add(b, loc, args[0], args[1]); }

/// A generic whose init is `init`, with explicit maps and iterators.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators, ScalarFn body) {
  return b
      .create<linalg::GenericOp>(loc, init.getType(), inputs, init, maps, iterators,
                                 [&](OpBuilder &nested, Location l, ValueRange args) {
                                   nested.create<linalg::YieldOp>(l, body(nested, l, args));
                                 })
      .getResult(0);
}

Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType) {
  return filledTensor(b, loc, RankedTensorType::get(shape, elementType), 0.0);
}

/// The last two dims swapped.
Value transposeMatrix(OpBuilder &b, Location loc, Value v) {
  if (tensorType(v).getRank() == 3)
    return transposeTo(b, loc, v, {0, 2, 1});
  return transposeTo(b, loc, v, {1, 0});
}

/// C = A · B (2-d, or batched 3-d). Transposed operands are materialized so
/// that every product is a plain linalg.matmul / batch_matmul, the one form
/// sym-schedule-matmuls generates fast code for.
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, bool transA, bool transB) {
  if (transA)
    lhs = transposeMatrix(b, loc, lhs);
  if (transB)
    rhs = transposeMatrix(b, loc, rhs);
  RankedTensorType l = tensorType(lhs), r = tensorType(rhs);
  bool batched = l.getRank() == 3;
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(l.getDimSize(0));
  shape.append({l.getDimSize(l.getRank() - 2), r.getDimSize(r.getRank() - 1)});
  Value init = zeros(b, loc, shape, l.getElementType());
  SmallVector<Value, 2> ins{lhs, rhs};
  if (batched)
    return b.create<linalg::BatchMatmulOp>(loc, init.getType(), ins, init).getResult(0);
  return b.create<linalg::MatmulOp>(loc, init.getType(), ins, init).getResult(0);
}

/// Adds a per-channel `bias` along dim 1.
Value addBias(OpBuilder &b, Location loc, Value data, Value bias) {
  return mapAlongAxis(b, loc, data, 1, bias, addFn);
}

Lowered lowerFullyConnected(OpBuilder &b, sym::FullyConnectedOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  int64_t k = tensorType(op.getWeight()).getDimSize(1);
  Value data2d = reshapeTo(b, loc, op.getData(), {type.getNumElements() / k, k});
  Value out = matmul(b, loc, data2d, op.getWeight(), false, /*transB=*/true);
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
  Value out = matmul(b, loc, lhs, rhs, ta, tb);
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

/// Per-spatial-dim window parameters, defaulted as MXNet does.
struct Window {
  SmallVector<int64_t> kernel, stride, dilate, pad;
  Window(ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> d, ArrayRef<int64_t> p)
      : kernel(k) {
    auto orDefault = [&](ArrayRef<int64_t> v, int64_t dflt) {
      return v.empty() ? SmallVector<int64_t>(k.size(), dflt) : SmallVector<int64_t>(v);
    };
    stride = orDefault(s, 1);
    dilate = orDefault(d, 1);
    pad = orDefault(p, 0);
  }
  unsigned rank() const { return kernel.size(); }
};

/// `o * stride + k * dilate` for spatial dim i, with loop positions given.
AffineExpr windowExpr(OpBuilder &b, const Window &w, unsigned i, unsigned outDim, unsigned kDim) {
  return b.getAffineDimExpr(outDim) * w.stride[i] + b.getAffineDimExpr(kDim) * w.dilate[i];
}

/// The im2col matrix (C*K..., N*O...) of `padded` for window `w`.
Value imageColumns(OpBuilder &b, Location loc, Value padded, const Window &w, ArrayRef<int64_t> outSpatial) {
  RankedTensorType in = tensorType(padded);
  unsigned d = w.rank();
  int64_t c = in.getDimSize(1);
  // The columns tensor is (C, K..., N, O...); the loops run over exactly
  // its dims.
  SmallVector<int64_t> shape{c};
  llvm::append_range(shape, w.kernel);
  shape.push_back(in.getDimSize(0));
  llvm::append_range(shape, outSpatial);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dim(1 + d), dim(0)};
  for (unsigned i = 0; i < d; ++i)
    inExprs.push_back(windowExpr(b, w, i, 2 + d + i, 1 + i));
  auto type = RankedTensorType::get(shape, in.getElementType());
  Value columns = mapWithMaps(b, loc, type, padded, AffineMap::get(shape.size(), 0, inExprs, b.getContext()),
                              [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  int64_t ck = c * computeProduct(w.kernel);
  return reshapeTo(b, loc, columns, {ck, type.getNumElements() / ck});
}

/// A group of N images convolved by one GEMM: W (F, C*K) times the im2col
/// matrix (C*K, N*O) gives (F, N*O), transposed to (N, F, O...) when N > 1.
Value convolveImages(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w,
                     RankedTensorType outType) {
  RankedTensorType in = tensorType(padded);
  int64_t n = in.getDimSize(0), f = outType.getDimSize(1);
  int64_t positions = outType.getNumElements() / (n * f);
  Value lhs = reshapeTo(b, loc, weight, {f, tensorType(weight).getNumElements() / f});
  bool pointwise = n == 1 && llvm::all_of(w.kernel, [](int64_t k) { return k == 1; }) &&
                   llvm::all_of(w.stride, [](int64_t s) { return s == 1; });
  // 1x1, stride 1: the input already is the columns matrix.
  Value columns = pointwise ? reshapeTo(b, loc, padded, {in.getDimSize(1), positions})
                            : imageColumns(b, loc, padded, w, outType.getShape().drop_front(2));
  Value product = matmul(b, loc, lhs, columns, false, false);
  if (n == 1)
    return reshapeTo(b, loc, product, outType.getShape());
  Value perImage = reshapeTo(b, loc, product, {f, n, positions});
  return reshapeTo(b, loc, transposeTo(b, loc, perImage, {1, 0, 2}), outType.getShape());
}

/// The number of images one GEMM takes: enough output positions for full
/// register and thread tiles (about 4096 columns), without a batch-sized
/// im2col buffer. A divisor of the batch, so that every group is whole.
int64_t imagesPerGemm(int64_t batch, int64_t positionsPerImage) {
  int64_t wanted = std::max<int64_t>(1, 4096 / positionsPerImage);
  int64_t group = std::min(batch, wanted);
  while (batch % group != 0)
    --group;
  return group;
}

/// `group` images of `batched` from image `first` on.
Value imagesFrom(OpBuilder &b, Location loc, Value batched, Value first, int64_t group) {
  RankedTensorType type = tensorType(batched);
  SmallVector<int64_t> sizes(type.getShape());
  sizes[0] = group;
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)), strides(sizes.size(), b.getIndexAttr(1));
  offsets[0] = first;
  return b.create<tensor::ExtractSliceOp>(loc, batched, offsets, getAsIndexOpFoldResult(b.getContext(), sizes),
                                          strides);
}

/// `images` (a group of them) inserted into the batch `acc` at image `first`.
Value insertImages(OpBuilder &b, Location loc, Value images, Value acc, Value first) {
  ArrayRef<int64_t> shape = tensorType(images).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), strides(shape.size(), b.getIndexAttr(1));
  offsets[0] = first;
  return b.create<tensor::InsertSliceOp>(loc, images, acc, offsets, getAsIndexOpFoldResult(b.getContext(), shape),
                                         strides);
}

using ImageGroupStep = llvm::function_ref<Value(OpBuilder &, Location, ValueRange images, Value first, Value acc)>;

/// Folds `step` over the batch of `batched` (all of one batch size) in
/// groups of `group` images, one after the other: acc = step(the group's
/// images of each, its first index, acc).
Value foldImageGroups(OpBuilder &b, Location loc, ValueRange batched, int64_t group, Value init,
                      ImageGroupStep step) {
  int64_t n = tensorType(batched.front()).getDimSize(0);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  if (group == n)
    return step(b, loc, batched, zero, init);
  Value count = b.create<arith::ConstantIndexOp>(loc, n);
  Value stride = b.create<arith::ConstantIndexOp>(loc, group);
  auto loop = b.create<scf::ForOp>(loc, zero, count, stride, ValueRange{init},
                                   [&](OpBuilder &nested, Location l, Value i, ValueRange acc) {
                                     SmallVector<Value> images;
                                     for (Value v : batched)
                                       images.push_back(imagesFrom(nested, l, v, i, group));
                                     nested.create<scf::YieldOp>(l, step(nested, l, images, i, acc[0]));
                                   });
  return loop.getResult(0);
}

/// Groups of images are convolved one after the other (one im2col buffer of
/// a group's size), each group by one parallel GEMM.
Value convolutionByGemm(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w,
                        RankedTensorType outType) {
  int64_t n = outType.getDimSize(0);
  int64_t group = imagesPerGemm(n, outType.getNumElements() / (n * outType.getDimSize(1)));
  SmallVector<int64_t> groupShape(outType.getShape());
  groupShape[0] = group;
  auto groupOut = RankedTensorType::get(groupShape, outType.getElementType());
  return foldImageGroups(b, loc, padded, group, emptyLike(b, loc, outType),
                         [&](OpBuilder &nested, Location l, ValueRange images, Value first, Value acc) -> Value {
                           Value result = convolveImages(nested, l, images[0], weight, w, groupOut);
                           return group == n ? result : insertImages(nested, l, result, acc, first);
                         });
}

/// init + sum of lhs * rhs over the loops after the first `parallel` ones,
/// each read through its exprs (lhs, rhs, then init's).
Value sumOfProducts(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    std::initializer_list<ArrayRef<AffineExpr>> exprs, unsigned parallel, Value init) {
  unsigned numLoops = 0;
  for (ArrayRef<AffineExpr> list : exprs)
    for (AffineExpr e : list)
      e.walk([&](AffineExpr sub) {
        if (auto dimExpr = dyn_cast<AffineDimExpr>(sub))
          numLoops = std::max(numLoops, dimExpr.getPosition() + 1);
      });
  SmallVector<AffineMap> maps;
  for (ArrayRef<AffineExpr> list : exprs)
    maps.push_back(AffineMap::get(numLoops, 0, list, b.getContext()));
  SmallVector<IteratorType> iterators(parallel, IteratorType::parallel);
  iterators.append(numLoops - parallel, IteratorType::reduction);
  return buildGeneric(b, loc, {lhs, rhs}, init, maps, iterators, [](OpBuilder &b, Location loc, ValueRange args) {
    return add(b, loc, args[2], mul(b, loc, args[0], args[1]));
  });
}

/// A grouped (e.g. depthwise) convolution of the padded input by `weight`
/// (G*F, C/G, K...) as one direct windowed reduction.
Value groupedConvolution(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w,
                         int64_t groups, RankedTensorType outType) {
  RankedTensorType inType = tensorType(padded);
  Type element = inType.getElementType();
  unsigned d = w.rank();
  int64_t n = inType.getDimSize(0), cg = inType.getDimSize(1) / groups, fg = outType.getDimSize(1) / groups;
  SmallVector<int64_t> inShape{n, groups, cg};
  llvm::append_range(inShape, inType.getShape().drop_front(2));
  Value input = reshapeTo(b, loc, padded, inShape);
  SmallVector<int64_t> wShape{groups, fg, cg};
  llvm::append_range(wShape, w.kernel);
  Value groupedWeight = reshapeTo(b, loc, weight, wShape);
  SmallVector<int64_t> outShape{n, groups, fg};
  llvm::append_range(outShape, outType.getShape().drop_front(2));

  // Loops: n, g, f, o_1..o_d (parallel), c, k_1..k_d (reduction).
  unsigned cDim = 3 + d;
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dim(0), dim(1), dim(cDim)}, wExprs{dim(1), dim(2), dim(cDim)},
      outExprs{dim(0), dim(1), dim(2)};
  for (unsigned i = 0; i < d; ++i) {
    inExprs.push_back(windowExpr(b, w, i, 3 + i, cDim + 1 + i));
    wExprs.push_back(dim(cDim + 1 + i));
    outExprs.push_back(dim(3 + i));
  }
  Value out = sumOfProducts(b, loc, input, groupedWeight, {inExprs, wExprs, outExprs}, 3 + d,
                            zeros(b, loc, outShape, element));
  return reshapeTo(b, loc, out, outType.getShape());
}

/// Ungrouped convolutions are GEMMs over im2col columns; grouped ones stay
/// direct.
Value convolve(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w, int64_t groups,
               RankedTensorType outType) {
  return groups == 1 ? convolutionByGemm(b, loc, padded, weight, w, outType)
                     : groupedConvolution(b, loc, padded, weight, w, groups, outType);
}

Lowered lowerConvolution(OpBuilder &b, sym::ConvolutionOp op) {
  Location loc = op.getLoc();
  if (op.getLayout() && !llvm::is_contained({"NCW", "NCHW", "NCDHW"}, *op.getLayout()))
    return op.emitError("the CPU backend supports channel-first layouts only, got ")
           << *op.getLayout();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  SmallVector<int64_t> low{0, 0}, high{0, 0};
  low.append(w.pad), high.append(w.pad);
  Value padded = padConstant(b, loc, op.getData(), low, high, 0.0);
  Value out = convolve(b, loc, padded, op.getWeight(), w, op.getNumGroup(), tensorType(op.getOutput()));
  if (op.getBias())
    out = addBias(b, loc, out, op.getBias());
  return SmallVector<Value>{out};
}

/// A group of images' gradients (N, F, O...) as the matrix (F, N*O).
Value filterMajor(OpBuilder &b, Location loc, Value images) {
  RankedTensorType type = tensorType(images);
  int64_t n = type.getDimSize(0), f = type.getDimSize(1), positions = type.getNumElements() / (n * f);
  if (n == 1)
    return reshapeTo(b, loc, images, {f, positions});
  Value perImage = reshapeTo(b, loc, images, {n, f, positions});
  return reshapeTo(b, loc, transposeTo(b, loc, perImage, {1, 0, 2}), {f, n * positions});
}

/// acc + value, written into acc (so that a loop carrying acc updates it in
/// place).
Value accumulate(OpBuilder &b, Location loc, Value acc, Value value) {
  unsigned rank = tensorType(acc).getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  return buildGeneric(b, loc, value, acc, {identity, identity}, SmallVector<IteratorType>(rank, IteratorType::parallel),
                      addFn);
}

/// dW^T (C*K, F) = sum over groups of images of the im2col matrix (C*K,
/// N*O) times g transposed (N*O, F): MXNet's formulation, transposed so
/// that the columns are built as the forward builds them (contiguous along
/// the output positions) and only g, K times smaller, is transposed.
Value convolutionWeightGrad(OpBuilder &b, Location loc, Value g, Value padded, const Window &w,
                            RankedTensorType weightType) {
  RankedTensorType gType = tensorType(g);
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(1);
  ArrayRef<int64_t> outSpatial = gType.getShape().drop_front(2);
  int64_t positions = computeProduct(outSpatial), group = imagesPerGemm(n, positions);
  int64_t ck = weightType.getNumElements() / f;
  Value sum = zeros(b, loc, {ck, f}, gType.getElementType());
  sum = foldImageGroups(
      b, loc, {g, padded}, group, sum, [&](OpBuilder &nested, Location l, ValueRange images, Value, Value acc) -> Value {
        Value perImage = reshapeTo(nested, l, images[0], {group, f, positions});
        Value gTransposed = reshapeTo(nested, l, transposeTo(nested, l, perImage, {0, 2, 1}), {group * positions, f});
        Value columns = imageColumns(nested, l, images[1], w, outSpatial);
        Value product = matmul(nested, l, columns, gTransposed, false, false);
        if (group == n)
          return product;
        return accumulate(nested, l, acc, product);
      });
  return reshapeTo(b, loc, transposeTo(b, loc, sum, {1, 0}), weightType.getShape());
}

/// Along one spatial dim, the data gradient at input positions phase,
/// phase + stride, ... gathers kernel taps first, first + step, ... (`taps`
/// of them, maybe none); tap j of input position i reads the output
/// gradient at i + offset - dilation * j.
struct StridePhase {
  int64_t positions, first = 0, step = 1, taps = 0, offset = 0, dilation = 1;
};

StridePhase stridePhase(int64_t phase, int64_t inputSize, int64_t kernel, int64_t stride, int64_t dilate,
                        int64_t pad) {
  StridePhase p;
  p.positions = llvm::divideCeil(inputSize - phase, stride);
  // Tap k reaches the phase when (phase + pad - k * dilate) is a multiple
  // of the stride: the first such k, then every stride / gcd.
  auto reaches = [&](int64_t k) { return ((phase + pad - k * dilate) % stride + stride) % stride == 0; };
  while (p.first < kernel && !reaches(p.first))
    ++p.first;
  if (p.first == kernel)
    return p;
  int64_t common = std::gcd(dilate, stride);
  p.step = stride / common;
  p.taps = (kernel - 1 - p.first) / p.step + 1;
  p.offset = (phase + pad - p.first * dilate) / stride;
  p.dilation = dilate / common;
  return p;
}

/// `e` over index values (sums and products by constants only).
Value evaluate(OpBuilder &b, Location loc, AffineExpr e, ArrayRef<Value> dims) {
  if (auto dim = dyn_cast<AffineDimExpr>(e))
    return dims[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(e))
    return b.create<arith::ConstantIndexOp>(loc, constant.getValue());
  auto binary = cast<AffineBinaryOpExpr>(e);
  Value lhs = evaluate(b, loc, binary.getLHS(), dims), rhs = evaluate(b, loc, binary.getRHS(), dims);
  if (e.getKind() == AffineExprKind::Add)
    return b.create<arith::AddIOp>(loc, lhs, rhs);
  assert(e.getKind() == AffineExprKind::Mul && "sums and products only");
  return b.create<arith::MulIOp>(loc, lhs, rhs);
}

/// result[i...] = source[map(i...)], reading the source by index: unlike an
/// input map with reversed dims, this splits over threads (sym-distribute-threads).
Value gatherByMap(OpBuilder &b, Location loc, RankedTensorType resultType, Value source, AffineMap map) {
  unsigned rank = resultType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  return buildGeneric(b, loc, {}, emptyLike(b, loc, resultType), identity,
                      SmallVector<IteratorType>(rank, IteratorType::parallel),
                      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
                        SmallVector<Value> positions, indices;
                        for (unsigned i = 0; i < rank; ++i)
                          positions.push_back(nb.create<linalg::IndexOp>(l, i));
                        for (AffineExpr e : map.getResults())
                          indices.push_back(evaluate(nb, l, e, positions));
                        return nb.create<tensor::ExtractOp>(l, source, indices);
                      });
}

/// The data gradient at one stride phase (one StridePhase per spatial dim):
/// a stride-1 convolution of the output gradient's window by the phase's
/// taps, flipped, with filter and channel dims swapped within each group.
Value phaseDataGrad(OpBuilder &b, Location loc, Value g, Value weight, ArrayRef<StridePhase> phases,
                    int64_t groups, int64_t channels) {
  unsigned d = phases.size();
  RankedTensorType gType = tensorType(g), wType = tensorType(weight);
  Type element = gType.getElementType();
  int64_t n = gType.getDimSize(0);
  SmallVector<int64_t> outShape{n, channels};
  for (const StridePhase &p : phases)
    outShape.push_back(p.positions);
  if (llvm::any_of(phases, [](const StridePhase &p) { return p.taps == 0; }))
    return zeros(b, loc, outShape, element);
  // The window of g the phase reads: zero outside g.
  SmallVector<int64_t> low{0, 0}, high{0, 0}, offsets{0, 0}, sizes(gType.getShape().take_front(2)), taps;
  for (auto [i, p] : llvm::enumerate(phases)) {
    int64_t start = p.offset - p.dilation * (p.taps - 1), extent = p.positions + p.dilation * (p.taps - 1);
    low.push_back(std::max<int64_t>(0, -start));
    high.push_back(std::max<int64_t>(0, start + extent - gType.getDimSize(2 + i)));
    offsets.push_back(start + low.back());
    sizes.push_back(extent);
    taps.push_back(p.taps);
  }
  SmallVector<int64_t> unitStrides(sizes.size(), 1);
  Value window = b.create<tensor::ExtractSliceOp>(
      loc, padConstant(b, loc, g, low, high, 0.0), getAsIndexOpFoldResult(b.getContext(), offsets),
      getAsIndexOpFoldResult(b.getContext(), sizes), getAsIndexOpFoldResult(b.getContext(), unitStrides));
  // flipped[g, c, f, j] = weight[g, f, c, first + step * (taps - 1 - j)], weight seen as (G, F, C, K...)
  int64_t fg = wType.getDimSize(0) / groups, cg = wType.getDimSize(1);
  SmallVector<int64_t> groupedShape{groups, fg, cg}, flippedShape{groups, cg, fg};
  llvm::append_range(groupedShape, wType.getShape().drop_front(2));
  llvm::append_range(flippedShape, taps);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> exprs{dim(0), dim(2), dim(1)};
  for (auto [i, p] : llvm::enumerate(phases))
    exprs.push_back(p.first + p.step * (p.taps - 1) - p.step * dim(3 + i));
  Value flipped = gatherByMap(b, loc, RankedTensorType::get(flippedShape, element),
                              reshapeTo(b, loc, weight, groupedShape), AffineMap::get(3 + d, 0, exprs, b.getContext()));
  SmallVector<int64_t> flippedWeightShape{groups * cg, fg}, dilations;
  llvm::append_range(flippedWeightShape, taps);
  for (const StridePhase &p : phases)
    dilations.push_back(p.dilation);
  Window unit(taps, SmallVector<int64_t>(d, 1), dilations, SmallVector<int64_t>(d, 0));
  return convolve(b, loc, window, reshapeTo(b, loc, flipped, flippedWeightShape), unit, groups,
                  RankedTensorType::get(outShape, element));
}

/// Data channels below which a convolution's data gradient goes by col2im.
constexpr int64_t kFewChannels = 16;

using PhaseGrad = llvm::function_ref<Value(ArrayRef<StridePhase> phases)>;

/// dX of `dataType`, assembled from the gradients of its stride phases
/// (`phaseGrad` of each combination of one phase per spatial dim).
Value assembleStridePhases(OpBuilder &b, Location loc, RankedTensorType dataType, const Window &w,
                           PhaseGrad phaseGrad) {
  unsigned d = w.rank();
  SmallVector<int64_t> phase(d, 0);
  Value dataGrad = emptyLike(b, loc, dataType);
  // Visits every phase combination, the last dim fastest.
  while (true) {
    SmallVector<StridePhase> phases;
    for (unsigned i = 0; i < d; ++i)
      phases.push_back(stridePhase(phase[i], dataType.getDimSize(2 + i), w.kernel[i], w.stride[i], w.dilate[i],
                                   w.pad[i]));
    Value part = phaseGrad(phases);
    SmallVector<int64_t> offsets{0, 0}, strides{1, 1};
    llvm::append_range(offsets, phase);
    llvm::append_range(strides, w.stride);
    dataGrad = b.create<tensor::InsertSliceOp>(loc, part, dataGrad, getAsIndexOpFoldResult(b.getContext(), offsets),
                                               getAsIndexOpFoldResult(b.getContext(), tensorType(part).getShape()),
                                               getAsIndexOpFoldResult(b.getContext(), strides));
    unsigned i = d;
    while (i > 0 && ++phase[i - 1] == w.stride[i - 1])
      phase[--i] = 0;
    if (i == 0)
      return dataGrad;
  }
}

/// The gradient of one stride phase gathered from the columns (C, K...,
/// N, O...) of every tap's contribution, the kernel dims reversed and the O
/// dims shifted by `low`.
Value gatherPhase(OpBuilder &b, Location loc, Value columns, ArrayRef<StridePhase> phases, ArrayRef<int64_t> low) {
  unsigned d = phases.size();
  RankedTensorType type = tensorType(columns);
  int64_t c = type.getDimSize(0), n = type.getDimSize(1 + d);
  SmallVector<int64_t> outShape{n, c};
  for (const StridePhase &p : phases)
    outShape.push_back(p.positions);
  Value init = zeros(b, loc, outShape, type.getElementType());
  if (llvm::any_of(phases, [](const StridePhase &p) { return p.taps == 0; }))
    return init;
  // Tap j is the phase's (taps - 1 - j)th: with the kernel stored reversed,
  // both of its reads step forward. The phase's taps and positions are
  // sliced out first, so that the maps have no constant terms (thread
  // tiling mishandles both reversed dims and constant terms).
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()), strides(type.getRank(), 1);
  for (auto [i, p] : llvm::enumerate(phases)) {
    offsets[1 + i] = type.getDimSize(1 + i) - 1 - (p.first + p.step * (p.taps - 1));
    sizes[1 + i] = p.taps;
    strides[1 + i] = p.step;
    offsets[2 + d + i] = p.offset + low[i] - p.dilation * (p.taps - 1);
    sizes[2 + d + i] = p.positions + p.dilation * (p.taps - 1);
  }
  Value taps = b.create<tensor::ExtractSliceOp>(loc, columns, getAsIndexOpFoldResult(b.getContext(), offsets),
                                                getAsIndexOpFoldResult(b.getContext(), sizes),
                                                getAsIndexOpFoldResult(b.getContext(), strides));
  // Loops: n, c (parallel), j_1..j_d (the taps, reduction), i_1..i_d
  // (parallel, innermost so that reads and writes are contiguous).
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dim(1)}, positionExprs, outExprs{dim(0), dim(1)};
  for (auto [i, p] : llvm::enumerate(phases)) {
    inExprs.push_back(dim(2 + i));
    positionExprs.push_back(dim(2 + d + i) + p.dilation * dim(2 + i));
    outExprs.push_back(dim(2 + d + i));
  }
  inExprs.push_back(dim(0));
  llvm::append_range(inExprs, positionExprs);
  SmallVector<IteratorType> iterators(2 + 2 * d, IteratorType::parallel);
  std::fill_n(iterators.begin() + 2, d, IteratorType::reduction);
  SmallVector<AffineMap> maps{AffineMap::get(2 + 2 * d, 0, inExprs, b.getContext()),
                              AffineMap::get(2 + 2 * d, 0, outExprs, b.getContext())};
  return buildGeneric(b, loc, taps, init, maps, iterators, addFn);
}

/// dX by stride-1 convolutions of g with sub-kernels, one per stride phase:
/// no product by a zero (as g dilated by the stride would give).
Value convolutionDataGrad(OpBuilder &b, Location loc, Value g, Value weight, const Window &w, int64_t groups,
                          RankedTensorType dataType) {
  return assembleStridePhases(b, loc, dataType, w, [&](ArrayRef<StridePhase> phases) {
    return phaseDataGrad(b, loc, g, weight, phases, groups, dataType.getDimSize(1));
  });
}

/// dX by MXNet's col2im, for few data channels (an RGB stem), where the
/// sub-kernel GEMMs of convolutionDataGrad would have C rows only: the
/// columns W^T (C*K, F) · g (F, N*O) hold every tap's contribution, which
/// each stride phase gathers.
Value convolutionDataGradByColumns(OpBuilder &b, Location loc, Value g, Value weight, const Window &w,
                                   RankedTensorType dataType) {
  unsigned d = w.rank();
  RankedTensorType gType = tensorType(g);
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(1), c = dataType.getDimSize(1);
  // g is padded so that every tap of every phase reads inside it.
  SmallVector<int64_t> low{0, 0}, high{0, 0}, paddedSpatial;
  for (unsigned i = 0; i < d; ++i) {
    int64_t before = 0, after = 0, size = gType.getDimSize(2 + i);
    for (int64_t phase = 0; phase < w.stride[i]; ++phase) {
      StridePhase p = stridePhase(phase, dataType.getDimSize(2 + i), w.kernel[i], w.stride[i], w.dilate[i], w.pad[i]);
      if (p.taps == 0)
        continue;
      before = std::max(before, p.dilation * (p.taps - 1) - p.offset);
      after = std::max(after, p.positions - 1 + p.offset - (size - 1));
    }
    low.push_back(before);
    high.push_back(after);
    paddedSpatial.push_back(size + before + after);
  }
  Value padded = padConstant(b, loc, g, low, high, 0.0);
  int64_t positions = computeProduct(paddedSpatial), group = imagesPerGemm(n, positions);
  int64_t ck = tensorType(weight).getNumElements() / f;
  // lhs[c, k, f] = weight[f, c, K - 1 - k]: W^T, the kernel reversed.
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<int64_t> lhsShape{c};
  SmallVector<AffineExpr> lhsExprs{dim(1 + d), dim(0)};
  for (unsigned i = 0; i < d; ++i) {
    lhsShape.push_back(w.kernel[i]);
    lhsExprs.push_back(w.kernel[i] - 1 - dim(1 + i));
  }
  lhsShape.push_back(f);
  Value lhs = mapWithMaps(b, loc, RankedTensorType::get(lhsShape, dataType.getElementType()), weight,
                          AffineMap::get(2 + d, 0, lhsExprs, b.getContext()),
                          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  lhs = reshapeTo(b, loc, lhs, {ck, f});
  SmallVector<int64_t> groupShape(dataType.getShape()), columnShape{c};
  groupShape[0] = group;
  llvm::append_range(columnShape, w.kernel);
  columnShape.push_back(group);
  llvm::append_range(columnShape, paddedSpatial);
  auto groupType = RankedTensorType::get(groupShape, dataType.getElementType());
  return foldImageGroups(
      b, loc, padded, group, emptyLike(b, loc, dataType),
      [&](OpBuilder &nested, Location l, ValueRange images, Value first, Value acc) -> Value {
        Value columns = reshapeTo(nested, l, matmul(nested, l, lhs, filterMajor(nested, l, images[0]), false, false),
                                  columnShape);
        Value part = assembleStridePhases(nested, l, groupType, w, [&](ArrayRef<StridePhase> phases) {
          return gatherPhase(nested, l, columns, phases, ArrayRef<int64_t>(low).drop_front(2));
        });
        return group == n ? part : insertImages(nested, l, part, acc, first);
      });
}

/// dW[g, f, c, k] = sum over n, o of g[n, g, f, o] x_padded[n, g, c, o * s + k * d]
/// for a grouped convolution, as one direct reduction.
Value groupedConvolutionWeightGrad(OpBuilder &b, Location loc, Value g, Value padded, const Window &w,
                                   int64_t groups, RankedTensorType weightType) {
  unsigned d = w.rank();
  RankedTensorType gType = tensorType(g), pType = tensorType(padded);
  int64_t n = gType.getDimSize(0), fg = gType.getDimSize(1) / groups, cg = pType.getDimSize(1) / groups;
  SmallVector<int64_t> gShape{n, groups, fg}, inShape{n, groups, cg}, outShape{groups, fg, cg};
  llvm::append_range(gShape, gType.getShape().drop_front(2));
  llvm::append_range(inShape, pType.getShape().drop_front(2));
  llvm::append_range(outShape, w.kernel);
  // Loops: g, f, c, k_1..k_d (parallel), n, o_1..o_d (reduction).
  unsigned nDim = 3 + d;
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> gExprs{dim(nDim), dim(0), dim(1)}, inExprs{dim(nDim), dim(0), dim(2)},
      outExprs{dim(0), dim(1), dim(2)};
  for (unsigned i = 0; i < d; ++i) {
    gExprs.push_back(dim(nDim + 1 + i));
    inExprs.push_back(windowExpr(b, w, i, nDim + 1 + i, 3 + i));
    outExprs.push_back(dim(3 + i));
  }
  Value grad = sumOfProducts(b, loc, reshapeTo(b, loc, g, gShape), reshapeTo(b, loc, padded, inShape),
                             {gExprs, inExprs, outExprs}, 3 + d, zeros(b, loc, outShape, pType.getElementType()));
  return reshapeTo(b, loc, grad, weightType.getShape());
}

Lowered lowerConvolutionBackward(OpBuilder &b, sym::BackwardConvolutionOp op) {
  Location loc = op.getLoc();
  int64_t groups = op.getNumGroup();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  SmallVector<int64_t> low{0, 0}, high{0, 0};
  low.append(w.pad), high.append(w.pad);
  Value padded = padConstant(b, loc, op.getData(), low, high, 0.0);
  RankedTensorType dataType = tensorType(op.getDataGrad());
  Value dataGrad = groups == 1 && dataType.getDimSize(1) < kFewChannels
                       ? convolutionDataGradByColumns(b, loc, op.getOutGrad(), op.getWeight(), w, dataType)
                       : convolutionDataGrad(b, loc, op.getOutGrad(), op.getWeight(), w, groups, dataType);
  RankedTensorType weightType = tensorType(op.getWeightGrad());
  Value weightGrad = groups == 1
                         ? convolutionWeightGrad(b, loc, op.getOutGrad(), padded, w, weightType)
                         : groupedConvolutionWeightGrad(b, loc, op.getOutGrad(), padded, w, groups, weightType);
  return SmallVector<Value>{dataGrad, weightGrad};
}

/// Index arithmetic for the pooling backward's loops.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
  Value max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
};

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

/// The data gradient of 2-d pooling, one (n, c) plane per parallel
/// iteration: for each output position, max sends its gradient to the
/// window's first largest element (MXNet's unpooling), avg and sum spread it.
Value poolingGrad2d(OpBuilder &b, Location loc, sym::BackwardPoolingOp op, const Window &w) {
  RankedTensorType dataType = tensorType(op.getData()), gType = tensorType(op.getOutGrad());
  Type element = dataType.getElementType();
  int64_t height = dataType.getDimSize(2), width = dataType.getDimSize(3);
  StringRef kind = op.getPoolType();
  bool includePad = op.getCountIncludePad().value_or(true);
  Value init = zeros(b, loc, dataType.getShape(), element);
  SmallVector<OpFoldResult> planes{b.getIndexAttr(dataType.getDimSize(0)), b.getIndexAttr(dataType.getDimSize(1))};
  auto forall = b.create<scf::ForallOp>(loc, planes, ValueRange{init}, std::nullopt,
                                        [&](OpBuilder &pb, Location l, ValueRange args) {
    Value n = args[0], ch = args[1], shared = args[2];
    IndexMath m{pb, l};
    SmallVector<OpFoldResult> offsets{n, ch, pb.getIndexAttr(0), pb.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{pb.getIndexAttr(1), pb.getIndexAttr(1), pb.getIndexAttr(height),
                                    pb.getIndexAttr(width)};
    SmallVector<OpFoldResult> unit(4, pb.getIndexAttr(1));
    Value plane = pb.create<tensor::ExtractSliceOp>(l, shared, offsets, sizes, unit);
    Value zero = m.c(0), one = m.c(1);
    auto outer = pb.create<scf::ForOp>(l, zero, m.c(gType.getDimSize(2)), one, ValueRange{plane},
                                       [&](OpBuilder &hb, Location l, Value oh, ValueRange rowAcc) {
      auto inner = hb.create<scf::ForOp>(l, zero, m.c(gType.getDimSize(3)), one, rowAcc,
                                         [&](OpBuilder &wb, Location l, Value ow, ValueRange acc) {
        IndexMath m{wb, l};
        WindowRange rows = windowRange(m, oh, w.kernel[0], w.stride[0], w.pad[0], height);
        WindowRange cols = windowRange(m, ow, w.kernel[1], w.stride[1], w.pad[1], width);
        Value g = wb.create<tensor::ExtractOp>(l, op.getOutGrad(), ValueRange{n, ch, oh, ow});
        Value updated;
        if (kind == "max") {
          // The first largest element, in row-major order.
          Value lowest = scalarConstant(wb, l, element, -std::numeric_limits<double>::infinity());
          auto scanRows = wb.create<scf::ForOp>(l, rows.begin, rows.end, m.c(1),
                                                ValueRange{lowest, rows.begin, cols.begin},
                                                [&](OpBuilder &rb, Location l, Value h, ValueRange best) {
            auto scanCols = rb.create<scf::ForOp>(l, cols.begin, cols.end, m.c(1), best,
                                                  [&](OpBuilder &cb, Location l, Value x, ValueRange cur) {
              Value v = cb.create<tensor::ExtractOp>(l, op.getData(), ValueRange{n, ch, h, x});
              Value better = cb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, cur[0]);
              cb.create<scf::YieldOp>(l, ValueRange{cb.create<arith::SelectOp>(l, better, v, cur[0]),
                                                    cb.create<arith::SelectOp>(l, better, h, cur[1]),
                                                    cb.create<arith::SelectOp>(l, better, x, cur[2])});
            });
            rb.create<scf::YieldOp>(l, scanCols.getResults());
          });
          SmallVector<Value> at{zero, zero, scanRows.getResult(1), scanRows.getResult(2)};
          Value old = wb.create<tensor::ExtractOp>(l, acc[0], at);
          updated = wb.create<tensor::InsertOp>(l, add(wb, l, old, g), acc[0], at);
        } else {
          Value share = g;
          if (kind == "avg") {
            Value count = includePad ? m.mul(rows.unclippedExtent, cols.unclippedExtent)
                                     : m.mul(m.sub(rows.end, rows.begin), m.sub(cols.end, cols.begin));
            Value countF = wb.create<arith::SIToFPOp>(
                l, element, wb.create<arith::IndexCastOp>(l, wb.getI64Type(), count));
            share = div(wb, l, g, countF);
          }
          auto spreadRows = wb.create<scf::ForOp>(l, rows.begin, rows.end, m.c(1), acc,
                                                  [&](OpBuilder &rb, Location l, Value h, ValueRange racc) {
            auto spreadCols = rb.create<scf::ForOp>(l, cols.begin, cols.end, m.c(1), racc,
                                                    [&](OpBuilder &cb, Location l, Value x, ValueRange cacc) {
              SmallVector<Value> at{zero, zero, h, x};
              Value old = cb.create<tensor::ExtractOp>(l, cacc[0], at);
              cb.create<scf::YieldOp>(l, cb.create<tensor::InsertOp>(l, add(cb, l, old, share), cacc[0], at)
                                             .getResult());
            });
            rb.create<scf::YieldOp>(l, spreadCols.getResults());
          });
          updated = spreadRows.getResult(0);
        }
        wb.create<scf::YieldOp>(l, updated);
      });
      hb.create<scf::YieldOp>(l, inner.getResults());
    });
    auto terminator = pb.create<scf::InParallelOp>(l);
    OpBuilder::InsertionGuard guard(pb);
    pb.setInsertionPointToStart(terminator.getBody());
    pb.create<tensor::ParallelInsertSliceOp>(l, outer.getResult(0), shared, offsets, sizes, unit);
  });
  return forall.getResult(0);
}

Lowered lowerPoolingBackward(OpBuilder &b, sym::BackwardPoolingOp op) {
  RankedTensorType dataType = tensorType(op.getData());
  if (op.getPoolType() == "lp" || op.getPoolingConvention() == "same" || dataType.getRank() != 4 ||
      !isa<FloatType>(dataType.getElementType()))
    return op.emitError("the CPU backend has a Pooling gradient for 2-d max/avg/sum pooling of floats only");
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(2);
  Window w = op.getGlobalPool() ? Window(spatial, {}, {}, {}) : Window(op.getKernel(), op.getStride(), {}, op.getPad());
  return SmallVector<Value>{poolingGrad2d(b, op.getLoc(), op, w)};
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

Lowered lowerPooling(OpBuilder &b, sym::PoolingOp op) {
  Location loc = op.getLoc();
  StringRef kind = op.getPoolType();
  if (kind == "lp" || op.getPoolingConvention() == "same")
    return op.emitError("the CPU backend does not support pool_type '")
           << kind << "' with pooling_convention '" << op.getPoolingConvention() << "'";
  if (op.getLayout() && !llvm::is_contained({"NCW", "NCHW", "NCDHW"}, *op.getLayout()))
    return op.emitError("the CPU backend supports channel-first layouts only, got ")
           << *op.getLayout();
  RankedTensorType dataType = tensorType(op.getData()), outType = tensorType(op.getOutput());
  Type element = dataType.getElementType();
  ArrayRef<int64_t> spatial = dataType.getShape().drop_front(2);
  Window w = op.getGlobalPool() ? Window(spatial, {}, {}, {})
                                : Window(op.getKernel(), op.getStride(), {}, op.getPad());
  // 'full' windows may run past the padded input: extend it on the high side.
  SmallVector<int64_t> low{0, 0}, high{0, 0}, extra;
  for (unsigned i = 0; i < w.rank(); ++i) {
    int64_t reach = (outType.getDimSize(2 + i) - 1) * w.stride[i] + w.kernel[i];
    extra.push_back(std::max<int64_t>(0, reach - spatial[i] - 2 * w.pad[i]));
    low.push_back(w.pad[i]);
    high.push_back(w.pad[i] + extra.back());
  }
  bool isMax = kind == "max";
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value padded = padConstant(b, loc, op.getData(), low, high, padValue);
  Value pooled = poolWindow(b, loc, padded, w, outType.getShape(), padValue,
                            isMax ? ScalarFn([](OpBuilder &b, Location loc, ValueRange args) {
                              return max(b, loc, args[0], args[1]);
                            })
                                  : ScalarFn(addFn));
  if (kind != "avg")
    return SmallVector<Value>{pooled};

  // MXNet divides by the window clipped to the padded input (count_include_pad,
  // the default) or to the input itself.
  bool includePad = op.getCountIncludePad().value_or(true);
  SmallVector<int64_t> maskShape{1, 1}, maskLow{0, 0}, maskHigh{0, 0};
  for (unsigned i = 0; i < w.rank(); ++i) {
    maskShape.push_back(includePad ? spatial[i] + 2 * w.pad[i] : spatial[i]);
    maskLow.push_back(includePad ? 0 : w.pad[i]);
    maskHigh.push_back(extra[i] + (includePad ? 0 : w.pad[i]));
  }
  Value ones = filledTensor(b, loc, RankedTensorType::get(maskShape, element), 1.0);
  Value mask = padConstant(b, loc, ones, maskLow, maskHigh, 0.0);
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

Value sumOver(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes) {
  return reduce(b, loc, input, axes, /*keepDims=*/false, 0.0, addFn);
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

/// The batch mean and biased variance per channel, in two passes as MXNet's
/// CPU kernel computes them.
std::pair<Value, Value> batchStatistics(OpBuilder &b, Location loc, Value data, int64_t axis) {
  auto [axes, count] = statisticAxes(tensorType(data), axis);
  Value mean = scaleBy(b, loc, sumOver(b, loc, data, axes), 1.0 / count);
  Value squares = mapAlongAxis(b, loc, data, axis, mean, [](OpBuilder &b, Location loc, ValueRange a) {
    Value centered = sub(b, loc, a[0], a[1]);
    return mul(b, loc, centered, centered);
  });
  return {mean, scaleBy(b, loc, sumOver(b, loc, squares, axes), 1.0 / count)};
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
  Value sumG = sumOver(b, loc, g, axes), sumGNormalized = sumOver(b, loc, gNormalized, axes);
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

Lowered lowerLRN(OpBuilder &b, sym::LRNOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = tensorType(op.getData());
  int64_t half = op.getNsize() / 2, rank = type.getRank();
  Value squares = mapElementwise(b, loc, type, op.getData(), [](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], a[0]);
  });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = high[1] = half;
  Value padded = padConstant(b, loc, squares, low, high, 0.0);
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
  Value sums = buildGeneric(b, loc, {padded, window}, zeros(b, loc, type.getShape(), type.getElementType()),
                            maps, iterators, [](OpBuilder &b, Location loc, ValueRange args) {
                              return add(b, loc, args[2], args[0]);
                            });
  double salpha = op.getAlpha() / op.getNsize(), knorm = op.getKnorm(), beta = op.getBeta();
  Value norm = mapElementwise(b, loc, type, sums, [&](OpBuilder &b, Location loc, ValueRange a) {
    Type t = a[0].getType();
    return add(b, loc, scalarConstant(b, loc, t, knorm), mul(b, loc, scalarConstant(b, loc, t, salpha), a[0]));
  });
  Value out = mapElementwise(b, loc, type, {op.getData(), norm}, [&](OpBuilder &b, Location loc, ValueRange a) {
    Value p = b.create<math::PowFOp>(loc, a[1], scalarConstant(b, loc, a[1].getType(), -beta));
    return mul(b, loc, a[0], p);
  });
  return SmallVector<Value>{out, norm};
}

/// The weight row an index picks: MXNet clips indices into [0, rows - 1].
Value embeddingRow(OpBuilder &b, Location loc, Value index, int64_t rows) {
  Value i = convertScalar(b, loc, index, b.getI64Type());
  i = b.create<arith::MaxSIOp>(loc, i, scalarConstant(b, loc, b.getI64Type(), 0));
  i = b.create<arith::MinSIOp>(loc, i, scalarConstant(b, loc, b.getI64Type(), rows - 1));
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
}

/// dW[row(i), :] += g[i, :] for every index i, in index order (rows may
/// repeat, so the loop over indices stays sequential).
Lowered lowerEmbeddingBackward(OpBuilder &b, sym::BackwardEmbeddingOp op) {
  Location loc = op.getLoc();
  RankedTensorType wType = tensorType(op.getWeightGrad());
  int64_t rows = wType.getDimSize(0), cols = wType.getDimSize(1);
  int64_t count = tensorType(op.getData()).getNumElements();
  Value indices = reshapeTo(b, loc, op.getData(), {count});
  Value g = reshapeTo(b, loc, op.getOutGrad(), {count, cols});
  auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto loop = b.create<scf::ForOp>(
      loc, constant(0), constant(count), constant(1), ValueRange{zeros(b, loc, wType.getShape(), wType.getElementType())},
      [&](OpBuilder &ob, Location l, Value i, ValueRange acc) {
        Value row = embeddingRow(ob, l, ob.create<tensor::ExtractOp>(l, indices, i), rows);
        auto inner = ob.create<scf::ForOp>(
            l, constant(0), constant(cols), constant(1), acc, [&](OpBuilder &ib, Location il, Value j, ValueRange acc2) {
              Value sum = add(ib, il, ib.create<tensor::ExtractOp>(il, acc2[0], ValueRange{row, j}),
                              ib.create<tensor::ExtractOp>(il, g, ValueRange{i, j}));
              ib.create<scf::YieldOp>(il, ib.create<tensor::InsertOp>(il, sum, acc2[0], ValueRange{row, j}).getResult());
            });
        ob.create<scf::YieldOp>(l, inner.getResults());
      });
  return SmallVector<Value>{loop.getResult(0)};
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
  if (op.getSampleType() != "nearest")
    return op.emitError("the CPU backend supports sample_type 'nearest' only");
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

std::optional<Lowered> lowerLayerOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::FullyConnectedOp o) { return lowerFullyConnected(b, o); })
      .Case([&](sym::DotOp o) { return lowerDot(b, o); })
      .Case([&](sym::BatchDotOp o) { return lowerBatchDot(b, o); })
      .Case([&](sym::ConvolutionOp o) { return lowerConvolution(b, o); })
      .Case([&](sym::BackwardConvolutionOp o) { return lowerConvolutionBackward(b, o); })
      .Case([&](sym::BackwardPoolingOp o) { return lowerPoolingBackward(b, o); })
      .Case([&](sym::PoolingOp o) { return lowerPooling(b, o); })
      .Case([&](sym::BatchNormOp o) { return lowerBatchNorm(b, o); })
      .Case([&](sym::BackwardBatchNormOp o) { return lowerBatchNormBackward(b, o); })
      .Case([&](sym::LRNOp o) { return lowerLRN(b, o); })
      .Case([&](sym::EmbeddingOp o) { return lowerEmbedding(b, o); })
      .Case([&](sym::BackwardEmbeddingOp o) { return lowerEmbeddingBackward(b, o); })
      .Case([&](sym::UpSamplingOp o) { return lowerUpSampling(b, o); })
      .Case([&](sym::DropoutOp o) -> Lowered {
        if (o.getMode() == "always" && o.getP() > 0)
          return o.emitError("the CPU backend does not support Dropout with mode 'always' yet "
                             "(it needs random numbers at inference)");
        return SmallVector<Value>{o.getData(), emptyLike(b, o.getLoc(), tensorType(o.getMask()))};
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
