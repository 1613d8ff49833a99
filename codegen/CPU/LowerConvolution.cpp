//===- LowerConvolution.cpp - Convolution and its backward -> linalg ------===//
//
// Ungrouped convolutions are, where weights are prepared (CPU code), 3x3
// stride-1 ones by Winograd (WinogradConvolution.cpp) and those over small
// maps on packed weights; else contractions over the kernel taps of each
// padded, flattened image where that computes few junk columns, else GEMMs
// over im2col columns, a group of images per GEMM; grouped ones are direct
// windowed reductions. GPU code (LoweringOptions::gpu) has GEMMs
// (cuBLAS) over whole batches' im2col columns for every ungrouped
// convolution and gradient, and direct grouped ones. The backward follows
// MXNet's formulations: the weight gradient is a GEMM of the columns by the
// output gradient (or a tap contraction), the data gradient a convolution
// of the output gradient per stride phase (by taps, all phases reading one
// padded copy of each image's output gradient; or MXNet's col2im for few
// data channels).
//
//===----------------------------------------------------------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"
#include "codegen/CPU/Passes.h"
#include "codegen/CPU/WinogradConvolution.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include <numeric>

using namespace mlir;

namespace symc::cpu {
namespace {

using utils::IteratorType;

/// The kernels a convolution or its gradient may go by.
enum class Kernels {
  /// CPU code: GEMMs over im2col columns of cache-sized groups of images,
  /// contractions by taps.
  Plain,
  /// CPU code with a prepare entry: Winograd and packed filter strips too.
  Prepared,
  /// GPU code (LoweringOptions::gpu): im2col GEMMs over whole
  /// batches, direct grouped convolutions.
  DeviceGemms,
};

Kernels kernelsFor(const LoweringOptions &options) {
  if (options.gpu)
    return Kernels::DeviceGemms;
  return options.packWeights ? Kernels::Prepared : Kernels::Plain;
}

/// `kernels` but prepared weights.
Kernels unprepared(Kernels kernels) { return kernels == Kernels::Prepared ? Kernels::Plain : kernels; }

/// The im2col columns of `padded` for window `w`: (C, K..., N, O...), or
/// with `imagesFirst` (N, C, K..., O...), each image's matrix whole. The
/// loops run over exactly the columns' dims.
Value windowColumns(OpBuilder &b, Location loc, Value padded, const Window &w, ArrayRef<int64_t> outSpatial,
                    bool imagesFirst) {
  RankedTensorType in = tensorType(padded);
  unsigned d = w.rank();
  // Loop positions of the channel, first tap, image and first output dims.
  unsigned cDim = imagesFirst ? 1 : 0, kDim = cDim + 1, nDim = imagesFirst ? 0 : 1 + d, oDim = 2 + d;
  SmallVector<int64_t> shape(2 + 2 * d);
  shape[cDim] = in.getDimSize(1);
  shape[nDim] = in.getDimSize(0);
  for (unsigned i = 0; i < d; ++i) {
    shape[kDim + i] = w.kernel[i];
    shape[oDim + i] = outSpatial[i];
  }
  SmallVector<AffineExpr> inExprs{b.getAffineDimExpr(nDim), b.getAffineDimExpr(cDim)};
  for (unsigned i = 0; i < d; ++i)
    inExprs.push_back(windowExpr(b, w, i, oDim + i, kDim + i));
  auto type = RankedTensorType::get(shape, in.getElementType());
  return mapWithMaps(b, loc, type, padded, AffineMap::get(shape.size(), 0, inExprs, b.getContext()),
                     [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// The im2col matrix (C*K..., N*O...) of `padded` for window `w`.
Value imageColumns(OpBuilder &b, Location loc, Value padded, const Window &w, ArrayRef<int64_t> outSpatial) {
  Value columns = windowColumns(b, loc, padded, w, outSpatial, /*imagesFirst=*/false);
  int64_t ck = tensorType(padded).getDimSize(1) * computeProduct(w.kernel);
  return reshapeTo(b, loc, columns, {ck, tensorType(columns).getNumElements() / ck});
}

/// A 1x1, stride-1, unpadded window: its rows are the image's positions.
bool isPointwise(const Window &w) {
  auto ones = [](ArrayRef<int64_t> v) { return llvm::all_of(v, [](int64_t x) { return x == 1; }); };
  return ones(w.kernel) && ones(w.stride) && llvm::all_of(w.pad, [](int64_t p) { return p == 0; });
}

/// Whether a convolution of `groups` groups is depthwise: a filter per
/// channel.
bool isDepthwise(int64_t groups, int64_t channels, int64_t filters) {
  return groups > 1 && groups == channels && groups == filters;
}

/// out + lhs * rhs, as a mul and an add: the body linalg recognizes as a
/// contraction (sym-offload-matmuls makes such generics cuBLAS GEMMs).
Value accumulateProduct(OpBuilder &b, Location loc, ValueRange args) {
  return add(b, loc, args[2], mul(b, loc, args[0], args[1]));
}

/// Output positions per image from which a GPU convolution is a stack of
/// GEMMs sharing the weight (convolveSharingWeight). Over smaller maps,
/// cuBLAS runs one GEMM over every image's columns faster than a stack of
/// narrow ones, transposes included (H200, ResNet-50 at batch 32: 512 ->
/// 512 3x3 at 7x7 0.17 against 0.24 ms; even at 14x14).
constexpr int64_t kMinPositionsSharingWeight = 196;

/// out[n] = W (F, C*K) times image n's im2col matrix (C*K, O) for each
/// image of `padded`, as one contraction whose weight every image shares:
/// cuBLAS's strided batch with a zero stride (sym-offload-matmuls). The
/// output (N, F, O...) is laid out as the convolution's, and over a 1x1
/// stride-1 window the images are their own matrices. GPU code.
Value convolveSharingWeight(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w,
                            RankedTensorType outType) {
  RankedTensorType in = tensorType(padded);
  int64_t n = in.getDimSize(0), f = outType.getDimSize(1);
  int64_t positions = outType.getNumElements() / (n * f), ck = tensorType(weight).getNumElements() / f;
  Value columns = isPointwise(w) ? padded : windowColumns(b, loc, padded, w, outType.getShape().drop_front(2),
                                                          /*imagesFirst=*/true);
  MLIRContext *ctx = b.getContext();
  AffineExpr image, row, column, k;
  bindDims(ctx, image, row, column, k);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(4, 0, results, ctx); };
  Value product = buildGeneric(
      b, loc, {reshapeTo(b, loc, weight, {f, ck}), reshapeTo(b, loc, columns, {n, ck, positions})},
      zeros(b, loc, {n, f, positions}, outType.getElementType()),
      {map({row, k}), map({image, k, column}), map({image, row, column})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel, IteratorType::reduction},
      accumulateProduct);
  return reshapeTo(b, loc, product, outType.getShape());
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

/// Output positions per im2col GEMM: enough for full register and thread
/// tiles, without a batch- or image-sized im2col buffer.
constexpr int64_t kColumnsPerGemm = 4096;

/// The largest divisor of `n` that is at most `limit` (at least 1).
int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  int64_t d = std::clamp<int64_t>(limit, 1, n);
  while (n % d != 0)
    --d;
  return d;
}

/// The number of images one GEMM takes: about kColumnsPerGemm output
/// positions, a divisor of the batch so that every group is whole.
int64_t imagesPerGemm(int64_t batch, int64_t positionsPerImage) {
  return largestDivisorUpTo(batch, kColumnsPerGemm / positionsPerImage);
}

/// The im2col columns of one GEMM on a GPU, at most: a whole batch of 32
/// for each of ResNet-50's layers (its stem's are 236 MB), so that cuBLAS
/// gets one large GEMM per layer.
constexpr int64_t kMaxDeviceColumnsBytes = int64_t(512) << 20;

/// The images one GEMM takes, for `rows` columns rows (C*K...) of
/// `positionsPerImage` each: about kColumnsPerGemm output positions on a
/// CPU, as many as kMaxDeviceColumnsBytes holds on a GPU; a divisor of the
/// batch so that every group is whole.
int64_t imagesPerGemm(int64_t batch, int64_t rows, int64_t positionsPerImage, Type element, Kernels kernels) {
  if (kernels != Kernels::DeviceGemms)
    return imagesPerGemm(batch, positionsPerImage);
  int64_t bytesPerImage = rows * positionsPerImage * element.getIntOrFloatBitWidth() / 8;
  return largestDivisorUpTo(batch, kMaxDeviceColumnsBytes / std::max<int64_t>(bytesPerImage, 1));
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

/// `dest` with its slice at `offsets` of `sizes` (unit strides unless
/// given) replaced by `write(slice)`, a DPS op writing into that slice:
/// bufferized, the op writes in place into dest's buffer.
Value writeIntoSlice(OpBuilder &b, Location loc, Value dest, ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes,
                     llvm::function_ref<Value(Value slice)> write, ArrayRef<int64_t> sliceStrides = {}) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  for (auto [i, stride] : llvm::enumerate(sliceStrides))
    strides[i] = b.getIndexAttr(stride);
  SmallVector<OpFoldResult> sliceSizes = getAsIndexOpFoldResult(b.getContext(), sizes);
  Value slice = b.create<tensor::ExtractSliceOp>(loc, dest, offsets, sliceSizes, strides);
  return b.create<tensor::InsertSliceOp>(loc, write(slice), dest, offsets, sliceSizes, strides);
}

/// `images` (a group of them) inserted into the batch `acc` at image `first`.
/// By a linalg.copy into acc's slice: sym-distribute-threads splits that
/// over the threads, where the bare insert_slice would bufferize to a copy on
/// one thread (the others waiting) between the group's parallel loops.
Value insertImages(OpBuilder &b, Location loc, Value images, Value acc, Value first) {
  ArrayRef<int64_t> shape = tensorType(images).getShape();
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  offsets[0] = first;
  return writeIntoSlice(b, loc, acc, offsets, shape, [&](Value slice) {
    return b.create<linalg::CopyOp>(loc, images, slice).getResult(0);
  });
}

/// One image convolved by GEMMs over blocks of its output rows (the first
/// spatial dim), each over the im2col columns of its block alone: a large
/// image (ResNet's 7x7 stem at 224x224: 7.4 MB of columns) needs a buffer
/// of kColumnsPerGemm positions, not one of the whole image.
Value convolveImageByRowBlocks(OpBuilder &b, Location loc, Value padded, Value weight, const Window &w,
                               RankedTensorType outType) {
  ArrayRef<int64_t> shape = outType.getShape();
  int64_t rowSize = computeProduct(shape.drop_front(3));
  int64_t rows = largestDivisorUpTo(shape[2], kColumnsPerGemm / rowSize);
  bool pointwise = llvm::all_of(w.kernel, [](int64_t k) { return k == 1; }) &&
                   llvm::all_of(w.stride, [](int64_t s) { return s == 1; });
  if (rows == shape[2] || pointwise) // pointwise: the image is its own columns
    return convolveImages(b, loc, padded, weight, w, outType);
  SmallVector<int64_t> blockShape(shape);
  blockShape[2] = rows;
  auto blockType = RankedTensorType::get(blockShape, outType.getElementType());
  // The padded input rows one block reads.
  SmallVector<int64_t> inSizes(tensorType(padded).getShape());
  inSizes[2] = (rows - 1) * w.stride[0] + (w.kernel[0] - 1) * w.dilate[0] + 1;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value end = b.create<arith::ConstantIndexOp>(loc, shape[2]);
  Value step = b.create<arith::ConstantIndexOp>(loc, rows);
  auto loop = b.create<scf::ForOp>(
      loc, zero, end, step, ValueRange{emptyLike(b, loc, outType)},
      [&](OpBuilder &nested, Location l, Value row, ValueRange acc) {
        Value firstIn = nested.create<arith::MulIOp>(l, row, nested.create<arith::ConstantIndexOp>(l, w.stride[0]));
        SmallVector<OpFoldResult> inOffsets(inSizes.size(), nested.getIndexAttr(0)),
            unit(inSizes.size(), nested.getIndexAttr(1));
        inOffsets[2] = firstIn;
        Value input = nested.create<tensor::ExtractSliceOp>(
            l, padded, inOffsets, getAsIndexOpFoldResult(nested.getContext(), inSizes), unit);
        Value block = convolveImages(nested, l, input, weight, w, blockType);
        SmallVector<OpFoldResult> outOffsets(blockShape.size(), nested.getIndexAttr(0));
        outOffsets[2] = row;
        nested.create<scf::YieldOp>(l, writeIntoSlice(nested, l, acc[0], outOffsets, blockShape, [&](Value slice) {
                                      return nested.create<linalg::CopyOp>(l, block, slice).getResult(0);
                                    }));
      });
  return loop.getResult(0);
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

/// The window's zero padding around the spatial dims of `data` (N, C, S...).
Value padForWindow(OpBuilder &b, Location loc, Value data, const Window &w) {
  SmallVector<int64_t> low{0, 0}, high{0, 0};
  low.append(w.pad), high.append(w.pad);
  return padConstant(b, loc, data, low, high, 0.0);
}

/// The spatial sizes of `data` (N, C, S...) padded for the window.
SmallVector<int64_t> paddedSpatialSizes(RankedTensorType data, const Window &w) {
  SmallVector<int64_t> sizes;
  for (unsigned i = 0; i < w.rank(); ++i)
    sizes.push_back(data.getDimSize(2 + i) + 2 * w.pad[i]);
  return sizes;
}

/// A stride-1 convolution reads its padded image, flattened to (C, P) with
/// P the product of the padded spatial sizes, at a fixed offset per kernel
/// tap: output position o, flattened with the padded strides, reads element
/// o + tap offset. Computing every flattened position of the first O_0 rows
/// makes the convolution one contraction over (taps, C) with no im2col
/// buffer, at the cost of the junk columns between the rows' ends and the
/// padded widths. Worth it while those are few.
struct TapLayout {
  SmallVector<int64_t> paddedSpatial; // sizes
  SmallVector<int64_t> flatStrides;   // of the padded spatial dims
  int64_t positions = 0;              // flattened ones computed, junk included
  int64_t span = 0;                   // of the flat image the taps read
};

/// The tap layout of an image padded to `paddedSpatial`, read by the
/// window's taps for outputs of `outSpatial` sizes.
TapLayout tapLayout(ArrayRef<int64_t> paddedSpatial, const Window &w, ArrayRef<int64_t> outSpatial) {
  TapLayout t;
  t.paddedSpatial.assign(paddedSpatial.begin(), paddedSpatial.end());
  unsigned d = t.paddedSpatial.size();
  t.flatStrides.assign(d, 1);
  for (unsigned i = d - 1; i > 0; --i)
    t.flatStrides[i - 1] = t.flatStrides[i] * t.paddedSpatial[i];
  t.positions = outSpatial[0] * t.flatStrides[0];
  t.span = t.positions;
  for (unsigned i = 0; i < d; ++i)
    t.span += (w.kernel[i] - 1) * w.dilate[i] * t.flatStrides[i];
  return t;
}

/// The layout of `data` (N, C, S...) padded for the window, read for
/// outputs of `outSpatial` sizes.
TapLayout tapLayout(RankedTensorType data, const Window &w, ArrayRef<int64_t> outSpatial) {
  return tapLayout(paddedSpatialSizes(data, w), w, outSpatial);
}

/// Junk columns up to a tenth of the useful ones.
constexpr double kMaxTapJunk = 0.1;

bool fewJunkColumns(const TapLayout &t, ArrayRef<int64_t> outSpatial) {
  return t.positions <= (1.0 + kMaxTapJunk) * computeProduct(outSpatial);
}

/// The image (1, C, S...) padded by `low` and `high` around its spatial
/// dims and flattened to (C, P), with whole rows of zeros past the padded
/// end up to `length` flat positions: one copy of the image.
Value flatPaddedImage(OpBuilder &b, Location loc, Value image, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                      int64_t length) {
  RankedTensorType type = tensorType(image);
  SmallVector<int64_t> lowAll{0, 0}, highAll{0, 0};
  llvm::append_range(lowAll, low);
  llvm::append_range(highAll, high);
  int64_t rowLength = 1, size = 1;
  for (unsigned i = 2; i < type.getRank(); ++i) {
    int64_t padded = type.getDimSize(i) + lowAll[i] + highAll[i];
    size *= padded;
    if (i > 2)
      rowLength *= padded;
  }
  highAll[2] += llvm::divideCeil(std::max<int64_t>(0, length - size), rowLength);
  Value padded = padConstant(b, loc, image, lowAll, highAll, 0.0);
  int64_t c = type.getDimSize(1);
  return reshapeTo(b, loc, padded, {c, tensorType(padded).getNumElements() / c});
}

/// The flat position tap (k_1..k_d) reads for position q: q + sum of
/// k_i * dilation_i * flat stride_i, with q and k_i at the given loops.
AffineExpr tapPosition(OpBuilder &b, const TapLayout &t, const Window &w, unsigned qDim, unsigned firstTapDim) {
  AffineExpr position = b.getAffineDimExpr(qDim);
  for (unsigned i = 0; i < w.rank(); ++i)
    position = position + b.getAffineDimExpr(firstTapDim + i) * (w.dilate[i] * t.flatStrides[i]);
  return position;
}

bool convolvesByTaps(RankedTensorType dataType, const Window &w, RankedTensorType outType) {
  if (!outType.getElementType().isF32() || llvm::any_of(w.stride, [](int64_t s) { return s != 1; }))
    return false;
  ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
  return fewJunkColumns(tapLayout(dataType, w, outSpatial), outSpatial);
}

/// The contraction out[f, q] = sum over taps k, channels c of
/// W[f, c, k] * x[c, q + offset(k)] of the flat image x (C, >= t.span)
/// read in layout `t`, for F = `filters`: (F, t.positions), junk included.
Value convolveFlatByTaps(OpBuilder &b, Location loc, Value flat, Value weight, const Window &w, const TapLayout &t,
                         int64_t filters) {
  unsigned d = w.rank();
  // Loops: f, q (parallel), k_1..k_d, c (reduction).
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  unsigned cDim = 2 + d;
  SmallVector<AffineExpr> wExprs{dim(0), dim(cDim)};
  for (unsigned i = 0; i < d; ++i)
    wExprs.push_back(dim(2 + i));
  SmallVector<AffineMap> maps{AffineMap::get(cDim + 1, 0, wExprs, b.getContext()),
                              AffineMap::get(cDim + 1, 0, {dim(cDim), tapPosition(b, t, w, 1, 2)}, b.getContext()),
                              AffineMap::get(cDim + 1, 0, {dim(0), dim(1)}, b.getContext())};
  SmallVector<IteratorType> iterators{IteratorType::parallel, IteratorType::parallel};
  iterators.append(d + 1, IteratorType::reduction);
  return tapContraction(b, loc, {weight, flat}, {filters, t.positions}, maps, iterators);
}

/// The valid (F, O...) of a tap contraction's (F, O_0 * S_0): its junk
/// columns dropped.
Value validPositions(OpBuilder &b, Location loc, Value out, const TapLayout &t, ArrayRef<int64_t> outSpatial) {
  int64_t f = tensorType(out).getDimSize(0);
  unsigned d = outSpatial.size();
  // (F, O_0 * S_0) -> (F, O_0, P_1...) -> the valid (F, O_0, O_1...).
  SmallVector<int64_t> rows{f, outSpatial[0]};
  llvm::append_range(rows, ArrayRef(t.paddedSpatial).drop_front());
  out = reshapeTo(b, loc, out, rows);
  SmallVector<int64_t> offsets(d + 1, 0), sizes{f}, strides(d + 1, 1);
  llvm::append_range(sizes, outSpatial);
  return b.create<tensor::ExtractSliceOp>(loc, out, getAsIndexOpFoldResult(b.getContext(), offsets),
                                          getAsIndexOpFoldResult(b.getContext(), sizes),
                                          getAsIndexOpFoldResult(b.getContext(), strides));
}

/// The depthwise contraction out[f, q] = sum over taps k of W[f, k] *
/// x[f, q + offset(k)] of the flat image x (F, >= t.span), each filter
/// reading its own channel: (F, t.positions), junk included. Scheduled as
/// a tap contraction, its register tile is MR filters by NR positions.
Value convolveFlatDepthwiseByTaps(OpBuilder &b, Location loc, Value flat, Value weight, const Window &w,
                                  const TapLayout &t) {
  unsigned d = w.rank();
  int64_t f = tensorType(flat).getDimSize(0);
  SmallVector<int64_t> tapsShape{f};
  llvm::append_range(tapsShape, w.kernel);
  // Loops: f, q (parallel), k_1..k_d (reduction).
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> wExprs{dim(0)};
  for (unsigned i = 0; i < d; ++i)
    wExprs.push_back(dim(2 + i));
  SmallVector<AffineMap> maps{AffineMap::get(d + 2, 0, wExprs, b.getContext()),
                              AffineMap::get(d + 2, 0, {dim(0), tapPosition(b, t, w, 1, 2)}, b.getContext()),
                              AffineMap::get(d + 2, 0, {dim(0), dim(1)}, b.getContext())};
  SmallVector<IteratorType> iterators{IteratorType::parallel, IteratorType::parallel};
  iterators.append(d, IteratorType::reduction);
  return tapContraction(b, loc, {reshapeTo(b, loc, weight, tapsShape), flat}, {f, t.positions}, maps, iterators);
}

/// One image (1, C, S...) convolved by taps (convolveFlatByTaps, or
/// convolveFlatDepthwiseByTaps) of its padded flat copy, its junk columns
/// then dropped.
Value convolveImageByTaps(OpBuilder &b, Location loc, Value image, Value weight, const Window &w,
                          RankedTensorType outType, bool depthwise) {
  ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
  TapLayout t = tapLayout(tensorType(image), w, outSpatial);
  Value flat = flatPaddedImage(b, loc, image, w.pad, w.pad, t.span);
  Value out = depthwise ? convolveFlatDepthwiseByTaps(b, loc, flat, weight, w, t)
                        : convolveFlatByTaps(b, loc, flat, weight, w, t, outType.getDimSize(1));
  return reshapeTo(b, loc, validPositions(b, loc, out, t, outSpatial), outType.getShape());
}

/// Junk columns up to this share of the useful ones in a depthwise
/// convolution by taps: its alternative, a direct reduction, vectorizes
/// over the window's few taps.
constexpr double kMaxDepthwiseTapJunk = 0.3;

/// The largest flat padded image (all channels) a depthwise convolution
/// goes by taps from: about what L2 holds while the taps read it. Beyond,
/// copying the image costs what the vector taps save (measured on
/// MobileNet's layers, AVX-512: 0.95 MB 0.74x the direct time, 1.75 MB even,
/// 1.7 MB at 32 channels 1.3x).
constexpr int64_t kMaxDepthwiseTapImageBytes = int64_t(1) << 20;

/// Whether a grouped convolution is depthwise (a filter per channel) and
/// runs by taps: stride 1, f32, few junk columns, an image that stays in
/// cache.
bool convolvesDepthwiseByTaps(RankedTensorType dataType, const Window &w, int64_t groups,
                              RankedTensorType outType) {
  if (groups != dataType.getDimSize(1) || groups != outType.getDimSize(1) || !outType.getElementType().isF32() ||
      llvm::any_of(w.stride, [](int64_t s) { return s != 1; }))
    return false;
  ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
  TapLayout t = tapLayout(dataType, w, outSpatial);
  return t.positions <= (1.0 + kMaxDepthwiseTapJunk) * computeProduct(outSpatial) &&
         t.span * groups * 4 <= kMaxDepthwiseTapImageBytes;
}

/// Whether the convolution is a FullyConnected layer: a 1x1 window,
/// unpadded, over 1x1 images (a classifier written as a convolution).
bool isFullyConnected(RankedTensorType dataType, const Window &w, int64_t groups) {
  auto ones = [](ArrayRef<int64_t> sizes) { return llvm::all_of(sizes, [](int64_t s) { return s == 1; }); };
  auto zeros = [](ArrayRef<int64_t> sizes) { return llvm::all_of(sizes, [](int64_t s) { return s == 0; }); };
  return groups == 1 && ones(w.kernel) && zeros(w.pad) && ones(dataType.getShape().drop_front(2));
}

/// Whether an ungrouped convolution runs on packed weights, its output
/// positions the GEMM's rows (convolveImagePacked): where an image has so
/// few positions (a 7x7 or 14x14 map) that, as the GEMM's columns, they
/// would leave register tiles part empty (49 of 64 lanes), and the
/// transposes of its patch rows and of its output (with the epilogue) cost
/// less than those lanes, which they do for fewer filters than products per
/// output, at 7x7 for up to twice as many. Measured with BatchNorm and relu,
/// AVX-512, 2 threads, against the GEMM: 3x3 512 -> 512 at 7x7 0.81x the
/// time; 1x1 at 14x14: 1024 -> 256 0.89x, 384 -> 64 0.85x, 512 -> 512 1.0x
/// (in MobileNet slower), 256 -> 1024 1.1x; at 7x7: 1024 -> 1024 0.92x,
/// 512 -> 1024 0.89x, 160 -> 960 1.05x.
bool convolvesByPackedWeights(RankedTensorType dataType, const Window &w, RankedTensorType outType) {
  int64_t positions = computeProduct(outType.getShape().drop_front(2)), filters = outType.getDimSize(1);
  if (!outType.getElementType().isF32() || filters % kPackedFilters != 0 || positions > 256 ||
      isFullyConnected(dataType, w, /*groups=*/1))
    return false;
  double lanesFilled = double(positions) / llvm::alignTo(positions, kPackedFilters);
  int64_t products = dataType.getDimSize(1) * computeProduct(w.kernel);
  return filters < products || (lanesFilled <= 0.8 && filters <= 2 * products);
}

/// A weight (F, ...) as its columns, the matrix (K, F): every prepared
/// layout (packed strips, Winograd's transform) reads them along the
/// filters. One transpose in squares, where reading the weight itself
/// filter by filter would stride by K.
Value filtersLast(OpBuilder &b, Location loc, Value weight) {
  RankedTensorType type = tensorType(weight);
  int64_t f = type.getDimSize(0);
  return transposeTo(b, loc, reshapeTo(b, loc, weight, {f, type.getNumElements() / f}), {1, 0});
}

/// The weight as its columns (K, F) (filtersLast) packed in strips of
/// kPackedFilters filters, (F / 32, K, 32): a strip is one contiguous
/// panel, its rows the filters' values at one (channel, tap).
Value packWeight(OpBuilder &b, Location loc, Value columns) {
  RankedTensorType type = tensorType(columns);
  int64_t k = type.getDimSize(0), f = type.getDimSize(1);
  Value strips = reshapeTo(b, loc, columns, {k, f / kPackedFilters, kPackedFilters});
  Value result = transposeTo(b, loc, strips, {1, 0, 2});
  result.getDefiningOp()->setAttr(kPrepareAttr, b.getStringAttr("filter strips of 32"));
  return result;
}

/// The im2col matrix transposed, (N*O..., C*K...): a row of window values
/// per output position of `padded`.
Value imagePatchRows(OpBuilder &b, Location loc, Value padded, const Window &w, ArrayRef<int64_t> outSpatial) {
  RankedTensorType in = tensorType(padded);
  unsigned d = w.rank();
  int64_t c = in.getDimSize(1);
  // The rows tensor is (N, O..., C, K...); the loops run over exactly its dims.
  SmallVector<int64_t> shape{in.getDimSize(0)};
  llvm::append_range(shape, outSpatial);
  shape.push_back(c);
  llvm::append_range(shape, w.kernel);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dim(0), dim(1 + d)};
  for (unsigned i = 0; i < d; ++i)
    inExprs.push_back(windowExpr(b, w, i, 1 + i, 2 + d + i));
  auto type = RankedTensorType::get(shape, in.getElementType());
  Value rows = mapWithMaps(b, loc, type, padded, AffineMap::get(shape.size(), 0, inExprs, b.getContext()),
                           [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  int64_t ck = c * computeProduct(w.kernel);
  return reshapeTo(b, loc, rows, {type.getNumElements() / ck, ck});
}

/// A (rows (P, K), or their columns (K, P) read as they lie where
/// `columns`) times each strip of the packed weight (packWeight, (S, K,
/// 32)), added to `init` (P, S, 32): a tap contraction whose register tiles
/// hold positions by filters, the filters in the vector lanes.
Value stripsProduct(OpBuilder &b, Location loc, Value a, bool columns, Value packed, Value init) {
  AffineExpr p, strip, lane, k;
  bindDims(b.getContext(), p, strip, lane, k);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(4, 0, results, b.getContext()); };
  return tapContractionInto(b, loc, {a, packed}, init,
                            {columns ? map({k, p}) : map({p, k}), map({strip, k, lane}), map({p, strip, lane})},
                            {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
                             IteratorType::reduction});
}

/// Rows (P, K) of window values times each strip of the packed weight:
/// (P, S, 32) (stripsProduct).
Value rowsTimesStrips(OpBuilder &b, Location loc, Value rows, Value packed) {
  int64_t positions = tensorType(rows).getDimSize(0), strips = tensorType(packed).getDimSize(0);
  return stripsProduct(b, loc, rows, /*columns=*/false, packed,
                       zeros(b, loc, {positions, strips, kPackedFilters}, tensorType(rows).getElementType()));
}

/// acc (M, N) plus lhs^T rhs of lhs (K, M) and rhs (K, N), both read along
/// their rows as they lie: a tap contraction whose register tiles broadcast
/// M values of each k from contiguous memory, no transposed copy of either.
Value addTransposedProduct(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc) {
  AffineExpr m, n, k;
  bindDims(b.getContext(), m, n, k);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(3, 0, results, b.getContext()); };
  return tapContractionInto(b, loc, {lhs, rhs}, acc, {map({k, m}), map({k, n}), map({m, n})},
                            {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction});
}

/// One image (1, C, S...) convolved by the packed weight (packWeight): its
/// patch rows (P, C*K) times each strip (rowsTimesStrips), (P, F / 32, 32),
/// then transposed to (1, F, O...) by a generic, into which the elementwise
/// ops after the convolution fuse.
Value convolveImagePacked(OpBuilder &b, Location loc, Value padded, Value packed, const Window &w,
                          RankedTensorType outType) {
  Value rows = imagePatchRows(b, loc, padded, w, outType.getShape().drop_front(2));
  int64_t strips = tensorType(packed).getDimSize(0);
  Value product = rowsTimesStrips(b, loc, rows, packed);
  // (1, F / 32, 32, O...)[0, s, l, o...] = product[o flattened, s, l], then
  // (1, F, O...): maps without floordiv and mod, which tiling would get wrong.
  ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
  SmallVector<int64_t> splitShape{1, strips, kPackedFilters};
  llvm::append_range(splitShape, outSpatial);
  AffineExpr position = b.getAffineConstantExpr(0);
  for (auto [i, size] : llvm::enumerate(outSpatial))
    position = position * size + b.getAffineDimExpr(3 + i);
  AffineMap read = AffineMap::get(splitShape.size(), 0, {position, b.getAffineDimExpr(1), b.getAffineDimExpr(2)},
                                  b.getContext());
  Value split = mapWithMaps(b, loc, RankedTensorType::get(splitShape, outType.getElementType()), product, read,
                            [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  SmallVector<ReassociationIndices> filters{{0}, {1, 2}};
  for (unsigned i = 0; i < outSpatial.size(); ++i)
    filters.push_back({3 + i});
  return b.create<tensor::CollapseShapeOp>(loc, outType, split, filters);
}

/// Groups of images are convolved one after the other (one im2col buffer of
/// a group's size), each group by one parallel GEMM; by taps (always, for
/// a depthwise convolution), each image is padded on its own, in the flat
/// layout the taps read.
Value convolutionByContraction(OpBuilder &b, Location loc, Value data, Value weight, const Window &w,
                               RankedTensorType outType, bool depthwise, Kernels kernels) {
  int64_t n = outType.getDimSize(0);
  bool prepared = kernels == Kernels::Prepared && !depthwise;
  std::optional<int64_t> winograd = prepared ? winogradTileSide(tensorType(data), w, outType) : std::nullopt;
  bool packed = prepared && !winograd && convolvesByPackedWeights(tensorType(data), w, outType);
  bool byTaps = depthwise || (kernels != Kernels::DeviceGemms && !packed && !winograd &&
                              convolvesByTaps(tensorType(data), w, outType));
  int64_t columnRows = tensorType(weight).getNumElements() / outType.getDimSize(1);
  int64_t positions = outType.getNumElements() / (n * outType.getDimSize(1));
  int64_t group = winograd ? winogradImagesPerGemm(n, outType, *winograd)
                  : byTaps || packed ? 1
                                     : imagesPerGemm(n, columnRows, positions, outType.getElementType(), kernels);
  // Row blocks bound a CPU GEMM's columns to the cache.
  bool byRowBlocks = group == 1 && kernels != Kernels::DeviceGemms;
  bool sharingWeight = kernels == Kernels::DeviceGemms && positions >= kMinPositionsSharingWeight;
  SmallVector<int64_t> groupShape(outType.getShape());
  groupShape[0] = group;
  auto groupOut = RankedTensorType::get(groupShape, outType.getElementType());
  Value source = byTaps || winograd ? data : padForWindow(b, loc, data, w);
  Value preparedWeight;
  if (winograd)
    preparedWeight = winogradWeight(b, loc, filtersLast(b, loc, weight), *winograd, /*channelsLast=*/false);
  else if (packed)
    preparedWeight = packWeight(b, loc, filtersLast(b, loc, weight));
  return foldImageGroups(b, loc, source, group, emptyLike(b, loc, outType),
                         [&](OpBuilder &nested, Location l, ValueRange images, Value first, Value acc) -> Value {
                           Value result =
                               winograd ? convolveByWinograd(nested, l, images[0], preparedWeight, w, groupOut, *winograd,
                                                             /*channelsLast=*/false)
                               : byTaps ? convolveImageByTaps(nested, l, images[0], weight, w, groupOut, depthwise)
                               : packed ? convolveImagePacked(nested, l, images[0], preparedWeight, w, groupOut)
                               : sharingWeight ? convolveSharingWeight(nested, l, images[0], weight, w, groupOut)
                               : byRowBlocks ? convolveImageByRowBlocks(nested, l, images[0], weight, w, groupOut)
                                            : convolveImages(nested, l, images[0], weight, w, groupOut);
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

/// A grouped (e.g. depthwise) convolution of `data` by `weight`
/// (G*F, C/G, K...) as one direct windowed reduction. The input is padded
/// once grouped, so that the pad feeds the reduction directly and
/// sym-distribute-threads computes it in the reduction's thread tiles.
Value groupedConvolution(OpBuilder &b, Location loc, Value data, Value weight, const Window &w,
                         int64_t groups, RankedTensorType outType) {
  RankedTensorType inType = tensorType(data);
  Type element = inType.getElementType();
  unsigned d = w.rank();
  int64_t n = inType.getDimSize(0), cg = inType.getDimSize(1) / groups, fg = outType.getDimSize(1) / groups;
  SmallVector<int64_t> inShape{n, groups, cg}, low(3, 0), high(3, 0);
  llvm::append_range(inShape, inType.getShape().drop_front(2));
  low.append(w.pad), high.append(w.pad);
  Value input = padConstant(b, loc, reshapeTo(b, loc, data, inShape), low, high, 0.0);
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

//===----------------------------------------------------------------------===//
// Channels-last (NHWC) convolutions
//===----------------------------------------------------------------------===//

/// `type` (N, H, W, C) as channels-first (N, C, H, W): the shape that the
/// choices made channels-first (Winograd's) are made on.
RankedTensorType channelsFirst(RankedTensorType type) {
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[3], s[1], s[2]}, type.getElementType());
}

/// `data` (N, H, W, C) zero-padded around its spatial dims for the window.
Value padChannelsLast(OpBuilder &b, Location loc, Value data, const Window &w) {
  SmallVector<int64_t> pad{0, w.pad[0], w.pad[1], 0};
  return padConstant(b, loc, data, pad, pad, 0.0);
}

/// The depthwise weight (C, kh, kw, 1) as rows of taps (kh * kw, C), each
/// tap's weights one vector along the channels. Marked for the prepare entry.
Value depthwiseTapRows(OpBuilder &b, Location loc, Value weight) {
  RankedTensorType type = tensorType(weight);
  int64_t c = type.getDimSize(0);
  Value rows = transposeTo(b, loc, reshapeTo(b, loc, weight, {c, type.getNumElements() / c}), {1, 0});
  rows.getDefiningOp()->setAttr(kPrepareAttr, b.getStringAttr("depthwise taps, channels last"));
  return rows;
}

/// A depthwise convolution channels-last: out[n, y, x, c] = sum over taps
/// (i, j) of in[n, y s + i d, x s + j d, c] * W[c, i, j], the input padded.
/// One elementwise op over the output (weightedSum), its taps unrolled,
/// each a strided view of the input the output's shape times a vector of
/// weights along the channels; the BatchNorm and activation after it fuse
/// into it.
Value depthwiseChannelsLast(OpBuilder &b, Location loc, Value data, Value weight, const Window &w,
                            RankedTensorType outType) {
  Value taps = depthwiseTapRows(b, loc, weight);
  SmallVector<Value> views = channelsLastWindowViews(b, loc, padChannelsLast(b, loc, data, w), w, outType.getShape());
  int64_t channels = outType.getDimSize(3);
  auto vectorType = RankedTensorType::get({channels}, outType.getElementType());
  SmallVector<Value> tapWeights;
  for (int64_t t = 0; t < int64_t(views.size()); ++t)
    tapWeights.push_back(b.create<tensor::ExtractSliceOp>(loc, vectorType, taps,
                                                          getAsIndexOpFoldResult(b.getContext(), {t, 0}),
                                                          getAsIndexOpFoldResult(b.getContext(), {1, channels}),
                                                          getAsIndexOpFoldResult(b.getContext(), {1, 1})));
  return weightedSum(b, loc, outType.getShape(), views, b.getMultiDimIdentityMap(4), tapWeights, 3);
}

/// The rows of the window values of each output position of `images` (N,
/// H, W, C): (N * H' * W', kh * kw * C), in the order of the weight (F, kh,
/// kw, C)'s rows, each a run of whole channel vectors.
Value channelsLastPatchRows(OpBuilder &b, Location loc, Value images, const Window &w, RankedTensorType outType) {
  Value padded = padChannelsLast(b, loc, images, w);
  ArrayRef<int64_t> out = outType.getShape();
  int64_t c = tensorType(images).getDimSize(3);
  // Loops (n, y, x, i, j, c), the rows tensor's dims.
  SmallVector<int64_t> shape{out[0], out[1], out[2], w.kernel[0], w.kernel[1], c};
  AffineMap read = AffineMap::get(6, 0,
                                  {b.getAffineDimExpr(0), windowExpr(b, w, 0, 1, 3), windowExpr(b, w, 1, 2, 4),
                                   b.getAffineDimExpr(5)},
                                  b.getContext());
  Value rows = mapWithMaps(b, loc, RankedTensorType::get(shape, outType.getElementType()), padded, read,
                           [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  return reshapeTo(b, loc, rows, {out[0] * out[1] * out[2], w.kernel[0] * w.kernel[1] * c});
}

/// The window rows of `images` (N, H, W, C) that channelsLastPatchRows
/// builds, (P, kh * kw * C), laid out in strips of kPackedFilters columns,
/// (kh * kw * C / 32, P, 32): packWeight's layout, which a tap contraction
/// (rowsTimesStrips) reads down each strip contiguously. C is a multiple of
/// 32, so that a strip holds one tap's channels.
Value channelsLastPatchStrips(OpBuilder &b, Location loc, Value images, const Window &w, RankedTensorType outType) {
  Value padded = padChannelsLast(b, loc, images, w);
  ArrayRef<int64_t> in = tensorType(padded).getShape();
  int64_t strips = in[3] / kPackedFilters;
  Value lanes = reshapeTo(b, loc, padded, {in[0], in[1], in[2], strips, kPackedFilters});
  ArrayRef<int64_t> out = outType.getShape();
  // Loops (i, j, s, n, y, x, l), the result's dims.
  SmallVector<int64_t> shape{w.kernel[0], w.kernel[1], strips, out[0], out[1], out[2], kPackedFilters};
  AffineMap read = AffineMap::get(7, 0,
                                  {b.getAffineDimExpr(3), windowExpr(b, w, 0, 4, 0), windowExpr(b, w, 1, 5, 1),
                                   b.getAffineDimExpr(2), b.getAffineDimExpr(6)},
                                  b.getContext());
  Value result = mapWithMaps(b, loc, RankedTensorType::get(shape, outType.getElementType()), lanes, read,
                             [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  return reshapeTo(b, loc, result, {w.kernel[0] * w.kernel[1] * strips, out[0] * out[1] * out[2], kPackedFilters});
}

/// The weight as its columns (kh * kw * C, F) (filtersLast) laid out for
/// the channels-last kernels: packed in strips of filters (packWeight), the
/// last one completed with zero filters (whose outputs are dropped) where
/// more than one strip's worth is there; fewer filters as the columns
/// themselves. Marked for the prepare entry.
Value channelsLastWeight(OpBuilder &b, Location loc, Value columns) {
  RankedTensorType type = tensorType(columns);
  int64_t k = type.getDimSize(0), f = type.getDimSize(1);
  if (f % kPackedFilters == 0)
    return packWeight(b, loc, columns);
  if (f > kPackedFilters) {
    // Into zeros, not by a tensor.pad: the prepare entry takes ops with
    // their operands, not values their regions capture.
    Value completed = b.create<tensor::InsertSliceOp>(
        loc, columns, zeros(b, loc, {k, int64_t(llvm::alignTo(f, kPackedFilters))}, type.getElementType()),
        getAsIndexOpFoldResult(b.getContext(), {0, 0}), getAsIndexOpFoldResult(b.getContext(), {k, f}),
        getAsIndexOpFoldResult(b.getContext(), {1, 1}));
    return packWeight(b, loc, completed);
  }
  columns.getDefiningOp()->setAttr(kPrepareAttr, b.getStringAttr("filters last"));
  return columns;
}

/// (N, H, W, C) as the matrix of its positions' channel rows (N * H * W, C).
Value positionRows(OpBuilder &b, Location loc, Value images) {
  return b.create<tensor::CollapseShapeOp>(loc, images, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
}

/// Images (N, H, W, C) convolved by the weight as channelsLastWeight lays
/// it out: their rows (the images themselves for a pointwise window) times
/// each strip, (P, F / 32, 32), or times the matrix, (P, F), is the output
/// (N, H', W', F) as it is laid out: no transpose on either side.
Value convolveRowsChannelsLast(OpBuilder &b, Location loc, Value images, Value packed, const Window &w,
                               RankedTensorType outType) {
  Value rows = isPointwise(w) ? positionRows(b, loc, images) : channelsLastPatchRows(b, loc, images, w, outType);
  if (tensorType(packed).getRank() == 2)
    return b.create<tensor::ExpandShapeOp>(loc, outType, matmul(b, loc, rows, packed, false, false),
                                           SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
  int64_t strips = tensorType(packed).getDimSize(0);
  Value product = rowsTimesStrips(b, loc, rows, packed);
  // (P, S, 32) -> (N, H', W', S, 32) -> (N, H', W', S * 32): reshapes that
  // keep the filters' dims apart from the positions', which the epilogue's
  // per-filter operands follow (Epilogues.cpp); then the F filters of the
  // S * 32 computed, if fewer.
  ArrayRef<int64_t> out = outType.getShape();
  Type element = outType.getElementType();
  auto split = RankedTensorType::get({out[0], out[1], out[2], strips, kPackedFilters}, element);
  Value perImage = b.create<tensor::ExpandShapeOp>(loc, split, product,
                                                 SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}});
  Value all = b.create<tensor::CollapseShapeOp>(
      loc, RankedTensorType::get({out[0], out[1], out[2], strips * kPackedFilters}, element), perImage,
      SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  if (strips * kPackedFilters == out[3])
    return all;
  return b.create<tensor::ExtractSliceOp>(loc, all, getAsIndexOpFoldResult(b.getContext(), {0, 0, 0, 0}),
                                          getAsIndexOpFoldResult(b.getContext(), out),
                                          getAsIndexOpFoldResult(b.getContext(), {1, 1, 1, 1}));
}

/// An ungrouped convolution channels-last, of the weight as its columns
/// (kh * kw * C, F): by Winograd where the channels-first one would go by
/// it, else by rows of packed filters; a group of images at a time where
/// each needs a copy of its windows.
Value ungroupedChannelsLast(OpBuilder &b, Location loc, Value data, Value columns, const Window &w,
                            RankedTensorType outType) {
  int64_t n = outType.getDimSize(0);
  RankedTensorType firstOut = channelsFirst(outType);
  std::optional<int64_t> winograd = winogradTileSide(channelsFirst(tensorType(data)), w, firstOut);
  int64_t group = winograd              ? winogradImagesPerGemm(n, firstOut, *winograd)
                  : isPointwise(w)      ? n
                                        : imagesPerGemm(n, outType.getNumElements() / (n * outType.getDimSize(3)));
  Value prepared = winograd ? winogradWeight(b, loc, columns, *winograd, /*channelsLast=*/true)
                            : channelsLastWeight(b, loc, columns);
  SmallVector<int64_t> groupShape(outType.getShape());
  groupShape[0] = group;
  auto groupOut = RankedTensorType::get(groupShape, outType.getElementType());
  return foldImageGroups(b, loc, data, group, emptyLike(b, loc, outType),
                         [&](OpBuilder &nested, Location l, ValueRange images, Value first, Value acc) -> Value {
                           Value result = winograd ? convolveByWinograd(nested, l, images[0], prepared, w,
                                                                        channelsFirst(groupOut), *winograd,
                                                                        /*channelsLast=*/true)
                                                   : convolveRowsChannelsLast(nested, l, images[0], prepared, w,
                                                                              groupOut);
                           return group == n ? result : insertImages(nested, l, result, acc, first);
                         });
}

/// Ungrouped convolutions are GEMMs over im2col columns (or, over 1x1
/// images, the product FullyConnected computes, which streams the weight
/// once for few images); depthwise ones contractions by taps where they
/// can be; other grouped ones stay direct.
Value convolve(OpBuilder &b, Location loc, Value data, Value weight, const Window &w, int64_t groups,
               RankedTensorType outType, Kernels kernels) {
  RankedTensorType dataType = tensorType(data);
  if (isFullyConnected(dataType, w, groups)) {
    int64_t n = dataType.getDimSize(0), c = dataType.getDimSize(1), f = outType.getDimSize(1);
    Value product = matmulTransposedB(b, loc, reshapeTo(b, loc, data, {n, c}), reshapeTo(b, loc, weight, {f, c}));
    return reshapeTo(b, loc, product, outType.getShape());
  }
  if (groups == 1 ||
      (kernels != Kernels::DeviceGemms && convolvesDepthwiseByTaps(dataType, w, groups, outType)))
    return convolutionByContraction(b, loc, data, weight, w, outType, /*depthwise=*/groups > 1, kernels);
  return groupedConvolution(b, loc, data, weight, w, groups, outType);
}

/// A channels-last convolution through the channels-first one: data and
/// weight transposed to it, its result transposed back.
Value throughChannelsFirst(OpBuilder &b, Location loc, Value data, Value weight, const Window &w, int64_t groups,
                           RankedTensorType outType, Kernels kernels) {
  Value out = convolve(b, loc, transposeTo(b, loc, data, kToChannelsFirst), transposeTo(b, loc, weight, kToChannelsFirst),
                       w, groups, channelsFirst(outType), kernels);
  return transposeTo(b, loc, out, kToChannelsLast);
}

Value convolveChannelsLast(OpBuilder &b, Location loc, sym::ConvolutionOp op, const Window &w,
                           const LoweringOptions &options) {
  Value data = op.getData(), weight = op.getWeight();
  RankedTensorType outType = tensorType(op.getOutput());
  int64_t groups = op.getNumGroup();
  if (!options.packWeights || !hasChannelsLastKernel(op))
    return throughChannelsFirst(b, loc, data, weight, w, groups, outType, kernelsFor(options));
  return groups > 1 ? depthwiseChannelsLast(b, loc, data, weight, w, outType)
                    : ungroupedChannelsLast(b, loc, data, filtersLast(b, loc, weight), w, outType);
}

Lowered lowerConvolution(OpBuilder &b, sym::ConvolutionOp op, const LoweringOptions &options) {
  Location loc = op.getLoc();
  if (op.getLayout() && !llvm::is_contained({"NCW", "NCHW", "NCDHW", "NHWC"}, *op.getLayout()))
    return op.emitError("the CPU backend supports channel-first layouts and NHWC only, got ") << *op.getLayout();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  Value out = op.isChannelsLast() ? convolveChannelsLast(b, loc, op, w, options)
                                  : convolve(b, loc, op.getData(), op.getWeight(), w, op.getNumGroup(),
                                             tensorType(op.getOutput()), kernelsFor(options));
  if (op.getBias())
    out = addBias(b, loc, out, op.getBias(), op.channelDim());
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

/// An image's g (1, F, O...) as g^T (O_0 * P_1 * ..., F): zero junk columns
/// up to the padded widths P_i of the tap layout. The transpose writes into
/// its slot of the result, one copy of g; only the junk is zeroed.
Value transposeWithJunkColumns(OpBuilder &b, Location loc, Value g, const TapLayout &t) {
  RankedTensorType gType = tensorType(g);
  ArrayRef<int64_t> outSpatial = gType.getShape().drop_front(2);
  unsigned d = outSpatial.size();
  int64_t f = gType.getDimSize(1);
  SmallVector<int64_t> shape{outSpatial[0]}, sizes(outSpatial), permutation;
  llvm::append_range(shape, ArrayRef(t.paddedSpatial).drop_front());
  shape.push_back(f);
  sizes.push_back(f);
  for (unsigned i = 1; i <= d; ++i)
    permutation.push_back(i);
  permutation.push_back(0);
  Value image = reshapeTo(b, loc, g, gType.getShape().drop_front());
  Value zero = scalarConstant(b, loc, gType.getElementType(), 0.0);
  Value padded = emptyTensor(b, loc, shape, gType.getElementType());
  // Only the junk columns past each padded dim's outputs are zeroed.
  for (unsigned i = 1; i < d; ++i) {
    SmallVector<OpFoldResult> offsets(d + 1, b.getIndexAttr(0));
    offsets[i] = b.getIndexAttr(outSpatial[i]);
    SmallVector<int64_t> junk(shape);
    junk[i] -= outSpatial[i];
    if (junk[i] > 0)
      padded = writeIntoSlice(b, loc, padded, offsets, junk, [&](Value slice) {
        return b.create<linalg::FillOp>(loc, zero, slice).getResult(0);
      });
  }
  padded = writeIntoSlice(b, loc, padded, SmallVector<OpFoldResult>(d + 1, b.getIndexAttr(0)), sizes,
                          [&](Value slice) {
                            return b.create<linalg::TransposeOp>(loc, image, slice, permutation).getResult()[0];
                          });
  return reshapeTo(b, loc, padded, {t.positions, f});
}

/// One image's dW^T as (C, K..., F) by taps, no im2col (convolveImageByTaps):
/// dW^T[c, k, f] = sum over q of x[c, q + offset(k)] * g^T[q, f], with g
/// (1, F, O...) given zero junk columns up to the padded widths.
Value imageWeightGradByTaps(OpBuilder &b, Location loc, Value g, Value image, const Window &w) {
  RankedTensorType gType = tensorType(g);
  unsigned d = w.rank();
  int64_t f = gType.getDimSize(1), c = tensorType(image).getDimSize(1);
  ArrayRef<int64_t> outSpatial = gType.getShape().drop_front(2);
  TapLayout t = tapLayout(tensorType(image), w, outSpatial);
  Value gTransposed = transposeWithJunkColumns(b, loc, g, t);
  // Loops: c, k_1..k_d, f (parallel), q (reduction).
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  unsigned fDim = 1 + d, qDim = 2 + d;
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i <= fDim; ++i)
    outExprs.push_back(dim(i));
  SmallVector<AffineMap> maps{AffineMap::get(qDim + 1, 0, {dim(0), tapPosition(b, t, w, qDim, 1)}, b.getContext()),
                              AffineMap::get(qDim + 1, 0, {dim(qDim), dim(fDim)}, b.getContext()),
                              AffineMap::get(qDim + 1, 0, outExprs, b.getContext())};
  SmallVector<IteratorType> iterators(qDim, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  SmallVector<int64_t> shape{c};
  llvm::append_range(shape, w.kernel);
  shape.push_back(f);
  Value flat = flatPaddedImage(b, loc, image, w.pad, w.pad, t.span);
  return tapContraction(b, loc, {flat, gTransposed}, shape, maps, iterators);
}

/// Output positions per image below which a weight gradient does not go by
/// taps, one image at a time, but by GEMMs over groups of images: each
/// image's product would be too short a reduction (its accumulators loaded
/// and stored once per image). Measured at batch 16, 1x1: 11% faster at
/// 14x14 (1024 -> 256), 5% at 7x7 (512 -> 2048); even at 28x28.
constexpr int64_t kMinTapWeightGradPositions = 256;

/// dW^T (C*K, F) = sum over groups of images of the im2col matrix (C*K,
/// N*O) times g transposed (N*O, F): MXNet's formulation, transposed so
/// that the columns are built as the forward builds them (contiguous along
/// the output positions) and only g, K times smaller, is transposed. By
/// taps, each image of `data` is padded on its own.
/// A (M, K) times B (N, K) transposed, (M, N), as a contraction whose B is
/// read along its rows: GPU code, where cuBLAS reads B transposed as it is
/// laid out (sym-offload-matmuls).
Value productTransposedB(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(3, 0, results, ctx); };
  RankedTensorType l = tensorType(lhs);
  Value init = zeros(b, loc, {l.getDimSize(0), tensorType(rhs).getDimSize(0)}, l.getElementType());
  return buildGeneric(b, loc, {lhs, rhs}, init, {map({i, k}), map({j, k}), map({i, j})},
                      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction}, accumulateProduct);
}

/// dW (F, C*K) on a GPU: g as (F, N*O), the images' gradients side by side
/// (a transpose of outer dims: rows stay contiguous), times the im2col
/// columns (C*K, N*O) transposed, which cuBLAS reads as they lie. No
/// transpose of g to positions-major (a write across rows) and none of the
/// product.
Value deviceWeightGrad(OpBuilder &b, Location loc, Value g, Value data, const Window &w,
                       RankedTensorType weightType) {
  RankedTensorType gType = tensorType(g);
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(1);
  ArrayRef<int64_t> outSpatial = gType.getShape().drop_front(2);
  int64_t positions = computeProduct(outSpatial), ck = weightType.getNumElements() / f;
  Type element = gType.getElementType();
  int64_t group = imagesPerGemm(n, ck, positions, element, Kernels::DeviceGemms);
  Value sum = foldImageGroups(
      b, loc, {g, padForWindow(b, loc, data, w)}, group, zeros(b, loc, {f, ck}, element),
      [&](OpBuilder &nested, Location l, ValueRange images, Value, Value acc) -> Value {
        Value perImage = reshapeTo(nested, l, images[0], {group, f, positions});
        Value byFilter = reshapeTo(nested, l, transposeTo(nested, l, perImage, {1, 0, 2}), {f, group * positions});
        Value product = productTransposedB(nested, l, byFilter, imageColumns(nested, l, images[1], w, outSpatial));
        return group == n ? product : accumulate(nested, l, acc, product);
      });
  return reshapeTo(b, loc, sum, weightType.getShape());
}

Value convolutionWeightGrad(OpBuilder &b, Location loc, Value g, Value data, const Window &w,
                            RankedTensorType weightType, Kernels kernels) {
  if (kernels == Kernels::DeviceGemms)
    return deviceWeightGrad(b, loc, g, data, w, weightType);
  RankedTensorType gType = tensorType(g);
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(1);
  ArrayRef<int64_t> outSpatial = gType.getShape().drop_front(2);
  int64_t positions = computeProduct(outSpatial);
  bool byTaps = convolvesByTaps(tensorType(data), w, gType) && positions >= kMinTapWeightGradPositions;
  int64_t ck = weightType.getNumElements() / f;
  int64_t group = byTaps ? 1 : imagesPerGemm(n, positions);
  Value sum = zeros(b, loc, {ck, f}, gType.getElementType());
  Value source = byTaps ? data : padForWindow(b, loc, data, w);
  sum = foldImageGroups(
      b, loc, {g, source}, group, sum, [&](OpBuilder &nested, Location l, ValueRange images, Value, Value acc) -> Value {
        Value product;
        if (byTaps) {
          product = reshapeTo(nested, l, imageWeightGradByTaps(nested, l, images[0], images[1], w), {ck, f});
        } else {
          Value perImage = reshapeTo(nested, l, images[0], {group, f, positions});
          Value gTransposed = reshapeTo(nested, l, transposeTo(nested, l, perImage, {0, 2, 1}), {group * positions, f});
          product = matmul(nested, l, imageColumns(nested, l, images[1], w, outSpatial), gTransposed, false, false);
        }
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
  int64_t index, positions, first = 0, step = 1, taps = 0, offset = 0, dilation = 1;
  /// The output gradient positions the taps read: from `windowStart()`
  /// (maybe before g's first) on, `windowExtent()` of them.
  int64_t windowStart() const { return offset - dilation * (taps - 1); }
  int64_t windowExtent() const { return positions + dilation * (taps - 1); }
};

StridePhase stridePhase(int64_t phase, int64_t inputSize, int64_t kernel, int64_t stride, int64_t dilate,
                        int64_t pad) {
  StridePhase p;
  p.index = phase;
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

/// The phase's taps of `weight` (G*F, C/G, K...), flipped, with filter and
/// channel dims swapped within each group: (G*C/G, F, taps...), the weight
/// of the phase's stride-1 convolution of the output gradient.
Value flippedPhaseWeight(OpBuilder &b, Location loc, Value weight, ArrayRef<StridePhase> phases, int64_t groups) {
  RankedTensorType wType = tensorType(weight);
  unsigned d = phases.size();
  // flipped[g, c, f, j] = weight[g, f, c, first + step * (taps - 1 - j)], weight seen as (G, F, C, K...)
  int64_t fg = wType.getDimSize(0) / groups, cg = wType.getDimSize(1);
  SmallVector<int64_t> groupedShape{groups, fg, cg}, flippedShape{groups, cg, fg}, taps;
  for (const StridePhase &p : phases)
    taps.push_back(p.taps);
  llvm::append_range(groupedShape, wType.getShape().drop_front(2));
  llvm::append_range(flippedShape, taps);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> exprs{dim(0), dim(2), dim(1)};
  for (auto [i, p] : llvm::enumerate(phases))
    exprs.push_back(p.first + p.step * (p.taps - 1) - p.step * dim(3 + i));
  Value flipped =
      gatherByMap(b, loc, RankedTensorType::get(flippedShape, wType.getElementType()),
                  reshapeTo(b, loc, weight, groupedShape), AffineMap::get(3 + d, 0, exprs, b.getContext()));
  SmallVector<int64_t> flippedWeightShape{groups * cg, fg};
  llvm::append_range(flippedWeightShape, taps);
  return reshapeTo(b, loc, flipped, flippedWeightShape);
}

bool hasTaps(ArrayRef<StridePhase> phases) {
  return llvm::all_of(phases, [](const StridePhase &p) { return p.taps > 0; });
}

/// The window of the phase's taps, stride 1, unpadded.
Window tapWindow(ArrayRef<StridePhase> phases) {
  SmallVector<int64_t> taps, dilations;
  for (const StridePhase &p : phases) {
    taps.push_back(p.taps);
    dilations.push_back(p.dilation);
  }
  return Window(taps, SmallVector<int64_t>(phases.size(), 1), dilations, {});
}

/// The data gradient at one stride phase (one StridePhase per spatial dim):
/// a stride-1 convolution of the output gradient's window by the phase's
/// taps, flipped (flippedPhaseWeight), by whichever of `kernels` such a
/// forward would take.
Value phaseDataGrad(OpBuilder &b, Location loc, Value g, Value weight, ArrayRef<StridePhase> phases,
                    int64_t groups, int64_t channels, Kernels kernels) {
  RankedTensorType gType = tensorType(g);
  Type element = gType.getElementType();
  SmallVector<int64_t> outShape{gType.getDimSize(0), channels};
  for (const StridePhase &p : phases)
    outShape.push_back(p.positions);
  if (!hasTaps(phases))
    return zeros(b, loc, outShape, element);
  // The window of g the phase reads: zero outside g.
  SmallVector<int64_t> low{0, 0}, high{0, 0}, offsets{0, 0}, sizes(gType.getShape().take_front(2)),
      unitStrides(2 + phases.size(), 1);
  for (auto [i, p] : llvm::enumerate(phases)) {
    low.push_back(std::max<int64_t>(0, -p.windowStart()));
    high.push_back(std::max<int64_t>(0, p.windowStart() + p.windowExtent() - gType.getDimSize(2 + i)));
    offsets.push_back(p.windowStart() + low.back());
    sizes.push_back(p.windowExtent());
  }
  Value window = b.create<tensor::ExtractSliceOp>(
      loc, padConstant(b, loc, g, low, high, 0.0), getAsIndexOpFoldResult(b.getContext(), offsets),
      getAsIndexOpFoldResult(b.getContext(), sizes), getAsIndexOpFoldResult(b.getContext(), unitStrides));
  return convolve(b, loc, window, flippedPhaseWeight(b, loc, weight, phases, groups), tapWindow(phases), groups,
                  RankedTensorType::get(outShape, element), kernels);
}

/// Each combination of one stride phase per spatial dim of `dataType`, the
/// last dim fastest.
SmallVector<SmallVector<StridePhase>> stridePhaseCombinations(RankedTensorType dataType, const Window &w) {
  unsigned d = w.rank();
  SmallVector<SmallVector<StridePhase>> combinations;
  SmallVector<int64_t> phase(d, 0);
  while (true) {
    SmallVector<StridePhase> phases;
    for (unsigned i = 0; i < d; ++i)
      phases.push_back(stridePhase(phase[i], dataType.getDimSize(2 + i), w.kernel[i], w.stride[i], w.dilate[i],
                                   w.pad[i]));
    combinations.push_back(std::move(phases));
    unsigned i = d;
    while (i > 0 && ++phase[i - 1] == w.stride[i - 1])
      phase[--i] = 0;
    if (i == 0)
      return combinations;
  }
}

/// The sizes, offsets and strides of the slice of dX (or of a group of its
/// images from `first`) that a stride phase's gradient is.
struct PhaseSlice {
  SmallVector<OpFoldResult> offsets;
  SmallVector<int64_t> sizes, strides;
};

PhaseSlice phaseSlice(OpBuilder &b, OpFoldResult first, int64_t images, int64_t channels, ArrayRef<StridePhase> phases,
                      const Window &w) {
  PhaseSlice s{{first, b.getIndexAttr(0)}, {images, channels}, {1, 1}};
  for (auto [i, p] : llvm::enumerate(phases)) {
    s.offsets.push_back(b.getIndexAttr(p.index));
    s.sizes.push_back(p.positions);
    s.strides.push_back(w.stride[i]);
  }
  return s;
}

using PhaseGrad = llvm::function_ref<Value(ArrayRef<StridePhase> phases)>;

/// dX of `dataType`, assembled from the gradients of its stride phases
/// (`phaseGrad` of each combination of one phase per spatial dim).
Value assembleStridePhases(OpBuilder &b, Location loc, RankedTensorType dataType, const Window &w,
                           PhaseGrad phaseGrad) {
  Value dataGrad = emptyLike(b, loc, dataType);
  for (ArrayRef<StridePhase> phases : stridePhaseCombinations(dataType, w)) {
    Value part = phaseGrad(phases);
    PhaseSlice slice = phaseSlice(b, b.getIndexAttr(0), dataType.getDimSize(0), dataType.getDimSize(1), phases, w);
    SmallVector<OpFoldResult> strides = getAsIndexOpFoldResult(b.getContext(), slice.strides);
    dataGrad = b.create<tensor::InsertSliceOp>(loc, part, dataGrad, slice.offsets,
                                               getAsIndexOpFoldResult(b.getContext(), slice.sizes), strides);
  }
  return dataGrad;
}

/// How a stride phase's taps read the flat padded g of dataGradByTaps.
struct TapPhase {
  SmallVector<StridePhase> phases;
  TapLayout layout; // of g's padded spatial dims, for the phase's taps
  int64_t start = 0; // flat position of the phase's window
};

struct TapDataGrad {
  SmallVector<int64_t> low, high; // g's padding, spatial dims
  int64_t length = 0;             // of g's flat image
  SmallVector<TapPhase> phases;
};

/// Flat columns past the last phase's reads: sym-schedule-matmuls rounds
/// a contraction's columns up to whole thread tiles (up to 8 register
/// tiles of up to 32 columns), which read on.
constexpr int64_t kTapColumnSlack = 256;

/// The plan of dataGradByTaps for g of `gType`, or none where some phase's
/// taps would compute too many junk columns.
std::optional<TapDataGrad> planDataGradByTaps(RankedTensorType gType, RankedTensorType dataType, const Window &w) {
  if (!gType.getElementType().isF32())
    return std::nullopt;
  unsigned d = w.rank();
  TapDataGrad plan;
  plan.low.assign(d, 0);
  plan.high.assign(d, 0);
  SmallVector<SmallVector<StridePhase>> combinations = stridePhaseCombinations(dataType, w);
  for (ArrayRef<StridePhase> phases : combinations) {
    if (!hasTaps(phases))
      continue;
    for (auto [i, p] : llvm::enumerate(phases)) {
      plan.low[i] = std::max(plan.low[i], -p.windowStart());
      plan.high[i] = std::max(plan.high[i], p.windowStart() + p.windowExtent() - gType.getDimSize(2 + i));
    }
  }
  SmallVector<int64_t> padded;
  for (unsigned i = 0; i < d; ++i)
    padded.push_back(gType.getDimSize(2 + i) + plan.low[i] + plan.high[i]);
  for (SmallVector<StridePhase> &phases : combinations) {
    TapPhase tap{phases, {}, 0};
    if (hasTaps(phases)) {
      SmallVector<int64_t> positions;
      for (const StridePhase &p : phases)
        positions.push_back(p.positions);
      tap.layout = tapLayout(padded, tapWindow(phases), positions);
      if (!fewJunkColumns(tap.layout, positions))
        return std::nullopt;
      for (auto [i, p] : llvm::enumerate(phases))
        tap.start += (p.windowStart() + plan.low[i]) * tap.layout.flatStrides[i];
      plan.length = std::max(plan.length, tap.start + tap.layout.span + kTapColumnSlack);
    }
    plan.phases.push_back(std::move(tap));
  }
  return plan;
}

/// One image's gradient (1, C, P...) at a stride phase: the phase's flipped
/// taps `weight` (C, F, taps...) read the image's flat padded g (F, length)
/// from the phase window's start (convolveFlatByTaps), junk dropped.
Value phaseGradByTaps(OpBuilder &b, Location loc, Value flat, const TapPhase &tap, Value weight,
                      ArrayRef<int64_t> imageSizes) {
  int64_t f = tensorType(flat).getDimSize(0);
  Value reads = b.create<tensor::ExtractSliceOp>(loc, flat, getAsIndexOpFoldResult(b.getContext(), {0, tap.start}),
                                                 getAsIndexOpFoldResult(b.getContext(), {f, tap.layout.span}),
                                                 getAsIndexOpFoldResult(b.getContext(), {1, 1}));
  Value out = convolveFlatByTaps(b, loc, reads, weight, tapWindow(tap.phases), tap.layout, imageSizes[1]);
  return reshapeTo(b, loc, validPositions(b, loc, out, tap.layout, imageSizes.drop_front(2)), imageSizes);
}

/// The data gradient by taps (ungrouped, f32): each image's g is padded
/// once, flat (flatPaddedImage), for the windows of every stride phase;
/// each phase's gradient (phaseGradByTaps) is copied straight into its
/// strided slice of dX.
Value dataGradByTaps(OpBuilder &b, Location loc, Value g, Value weight, const Window &w, const TapDataGrad &plan,
                     RankedTensorType dataType) {
  int64_t c = dataType.getDimSize(1);
  Value zero = scalarConstant(b, loc, dataType.getElementType(), 0.0);
  // The phases' weights are flipped once, before the images' loop.
  SmallVector<Value> weights;
  for (const TapPhase &tap : plan.phases)
    weights.push_back(hasTaps(tap.phases) ? flippedPhaseWeight(b, loc, weight, tap.phases, 1) : Value());
  return foldImageGroups(
      b, loc, g, 1, emptyLike(b, loc, dataType),
      [&](OpBuilder &nested, Location l, ValueRange images, Value first, Value acc) -> Value {
        Value flat = flatPaddedImage(nested, l, images[0], plan.low, plan.high, plan.length);
        for (size_t i = 0; i < plan.phases.size(); ++i) {
          const TapPhase &tap = plan.phases[i];
          Value phaseWeight = weights[i];
          PhaseSlice slice = phaseSlice(nested, first, 1, c, tap.phases, w);
          auto write = [&](Value dest) -> Value {
            if (!phaseWeight)
              return nested.create<linalg::FillOp>(l, zero, dest).getResult(0);
            Value grad = phaseGradByTaps(nested, l, flat, tap, phaseWeight, slice.sizes);
            return nested.create<linalg::CopyOp>(l, grad, dest).getResult(0);
          };
          acc = writeIntoSlice(nested, l, acc, slice.offsets, slice.sizes, write, slice.strides);
        }
        return acc;
      });
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
                          RankedTensorType dataType, Kernels kernels) {
  return assembleStridePhases(b, loc, dataType, w, [&](ArrayRef<StridePhase> phases) {
    return phaseDataGrad(b, loc, g, weight, phases, groups, dataType.getDimSize(1), kernels);
  });
}

/// Whether a stride-1 data gradient, the convolution of g's window by the
/// flipped weight (phaseDataGrad), goes by prepared weights as that forward
/// would: by Winograd, or over a small map by packed filters.
bool dataGradByPreparedWeights(RankedTensorType gType, RankedTensorType dataType, const Window &w) {
  SmallVector<SmallVector<StridePhase>> combinations = stridePhaseCombinations(dataType, w);
  if (combinations.size() != 1 || !hasTaps(combinations.front()))
    return false;
  SmallVector<int64_t> windowShape(gType.getShape().take_front(2));
  for (const StridePhase &p : combinations.front())
    windowShape.push_back(p.windowExtent());
  auto windowType = RankedTensorType::get(windowShape, gType.getElementType());
  Window window = tapWindow(combinations.front());
  return winogradTileSide(windowType, window, dataType) || convolvesByPackedWeights(windowType, window, dataType);
}

/// dX by MXNet's col2im, for few data channels (an RGB stem), where the
/// sub-kernel GEMMs of convolutionDataGrad would have C rows only: the
/// columns W^T (C*K, F) · g (F, N*O) hold every tap's contribution, which
/// each stride phase gathers.
Value convolutionDataGradByColumns(OpBuilder &b, Location loc, Value g, Value weight, const Window &w,
                                   RankedTensorType dataType, Kernels kernels) {
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
  int64_t positions = computeProduct(paddedSpatial);
  int64_t ck = tensorType(weight).getNumElements() / f;
  int64_t group = imagesPerGemm(n, ck, positions, dataType.getElementType(), kernels);
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

/// Data channels from which an ungrouped convolution's data gradient goes
/// by taps: fewer leave the contractions (C rows) too few rows for a
/// register tile.
constexpr int64_t kMinTapRows = 3;

/// Data channels below which an ungrouped convolution's data gradient that
/// does not go by taps goes by col2im: the phases' GEMMs would have as few rows.
constexpr int64_t kFewChannels = 16;

/// dX of an ungrouped convolution: by prepared weights (Winograd's, or
/// packed filters over small maps) where weights may be prepared (each
/// step, inline, in training) and the forward of its shape would go by
/// them; else by taps where they compute few junk columns; else by col2im
/// for few data channels; else by GEMMs over the stride phases' im2col
/// columns.
Value ungroupedConvolutionDataGrad(OpBuilder &b, Location loc, Value g, Value weight, const Window &w,
                                   RankedTensorType dataType, Kernels kernels) {
  if (kernels == Kernels::Prepared && dataGradByPreparedWeights(tensorType(g), dataType, w))
    return convolutionDataGrad(b, loc, g, weight, w, 1, dataType, kernels);
  int64_t channels = dataType.getDimSize(1);
  if (channels >= kMinTapRows && kernels != Kernels::DeviceGemms)
    if (std::optional<TapDataGrad> plan = planDataGradByTaps(tensorType(g), dataType, w))
      return dataGradByTaps(b, loc, g, weight, w, *plan, dataType);
  if (channels < kFewChannels)
    return convolutionDataGradByColumns(b, loc, g, weight, w, dataType, kernels);
  return convolutionDataGrad(b, loc, g, weight, w, 1, dataType, unprepared(kernels));
}

/// The data gradient of a convolution with `groups`, by the fastest plan.
Value anyConvolutionDataGrad(OpBuilder &b, Location loc, Value g, Value weight, const Window &w, int64_t groups,
                             RankedTensorType dataType, Kernels kernels) {
  return groups == 1 ? ungroupedConvolutionDataGrad(b, loc, g, weight, w, dataType, kernels)
                     : convolutionDataGrad(b, loc, g, weight, w, groups, dataType, unprepared(kernels));
}

/// The weight gradient of a convolution of `data` with `groups`.
Value anyConvolutionWeightGrad(OpBuilder &b, Location loc, Value g, Value data, const Window &w, int64_t groups,
                               RankedTensorType weightType, Kernels kernels) {
  return groups == 1 ? convolutionWeightGrad(b, loc, g, data, w, weightType, kernels)
                     : groupedConvolutionWeightGrad(b, loc, g, padForWindow(b, loc, data, w), w, groups, weightType);
}

//===----------------------------------------------------------------------===//
// Channels-last (NHWC) convolution gradients
//===----------------------------------------------------------------------===//

/// The window of a stride-1 convolution's data gradient, the convolution
/// of the output gradient by the flipped weight: the same taps, over the
/// output gradient padded so that every input position meets each tap that
/// read it. None for strides, or where the forward pads beyond its window.
std::optional<Window> dataGradWindow(const Window &w) {
  SmallVector<int64_t> pad;
  for (unsigned i = 0; i < w.rank(); ++i) {
    int64_t reach = w.dilate[i] * (w.kernel[i] - 1);
    if (w.stride[i] != 1 || w.pad[i] > reach)
      return std::nullopt;
    pad.push_back(reach - w.pad[i]);
  }
  return Window(w.kernel, w.stride, w.dilate, pad);
}

/// A channels-last weight (F, kh, kw, C) with its taps reversed, tap by
/// tap: a generic reading it at kh - 1 - i would be cut into tiles wrongly
/// (linalg's tiling adds the map's constant to the tile's offset twice).
Value reversedTaps(OpBuilder &b, Location loc, Value weight) {
  RankedTensorType type = tensorType(weight);
  ArrayRef<int64_t> s = type.getShape();
  Value reversed = emptyLike(b, loc, type);
  auto indices = [&](ArrayRef<int64_t> v) { return getAsIndexOpFoldResult(b.getContext(), v); };
  for (int64_t i = 0; i < s[1]; ++i)
    for (int64_t j = 0; j < s[2]; ++j) {
      Value tap = b.create<tensor::ExtractSliceOp>(loc, weight, indices({0, s[1] - 1 - i, s[2] - 1 - j, 0}),
                                                   indices({s[0], 1, 1, s[3]}), indices({1, 1, 1, 1}));
      reversed = b.create<tensor::InsertSliceOp>(loc, tap, reversed, indices({0, i, j, 0}),
                                                 indices({s[0], 1, 1, s[3]}), indices({1, 1, 1, 1}));
    }
  return reversed;
}

/// The weight (F, kh, kw, C) of a convolution as the columns (kh * kw * F,
/// C) of the weight of its data gradient, (C, kh, kw, F) with its taps
/// reversed: [(i, j, f), c] = weight[f, kh - 1 - i, kw - 1 - j, c].
Value flippedColumns(OpBuilder &b, Location loc, Value weight) {
  ArrayRef<int64_t> s = tensorType(weight).getShape();
  Value tapsFirst = transposeTo(b, loc, reversedTaps(b, loc, weight), {1, 2, 0, 3});
  return reshapeTo(b, loc, tapsFirst, {s[1] * s[2] * s[0], s[3]});
}

/// The data gradient of a strided 1x1 convolution: g's rows times the
/// weight (F, C), written at every stride-th position of zeros.
Value stridedPointwiseDataGrad(OpBuilder &b, Location loc, Value g, Value weight, const Window &w,
                               RankedTensorType dataType) {
  RankedTensorType gType = tensorType(g);
  int64_t f = gType.getDimSize(3), c = dataType.getDimSize(3);
  Value product = matmul(b, loc, positionRows(b, loc, g), reshapeTo(b, loc, weight, {f, c}), false, false);
  SmallVector<int64_t> shape(gType.getShape());
  shape[3] = c;
  return b.create<tensor::InsertSliceOp>(loc, reshapeTo(b, loc, product, shape),
                                         zeros(b, loc, dataType.getShape(), dataType.getElementType()),
                                         getAsIndexOpFoldResult(b.getContext(), {0, 0, 0, 0}),
                                         getAsIndexOpFoldResult(b.getContext(), shape),
                                         getAsIndexOpFoldResult(b.getContext(), {1, w.stride[0], w.stride[1], 1}));
}

/// Whether a window reads each input position once, at the stride-th
/// positions: a 1x1 unpadded one.
bool isStridedPointwise(const Window &w) {
  Window unit(w.kernel, {1, 1}, w.dilate, w.pad);
  return isPointwise(unit);
}

/// The data gradient channels-last: by the forward's channels-last kernels
/// (Winograd, packed filters, depthwise taps) over g, with the flipped
/// weight, for stride 1; by one GEMM for a strided 1x1 window; else through
/// the channels-first gradient.
Value dataGradChannelsLast(OpBuilder &b, Location loc, Value g, Value weight, const Window &w, int64_t groups,
                           RankedTensorType dataType) {
  if (std::optional<Window> window = dataGradWindow(w))
    return groups > 1 ? depthwiseChannelsLast(b, loc, g, reversedTaps(b, loc, weight), *window, dataType)
                      : ungroupedChannelsLast(b, loc, g, flippedColumns(b, loc, weight), *window, dataType);
  if (groups == 1 && isStridedPointwise(w))
    return stridedPointwiseDataGrad(b, loc, g, weight, w, dataType);
  Value grad = anyConvolutionDataGrad(b, loc, transposeTo(b, loc, g, kToChannelsFirst),
                                      transposeTo(b, loc, weight, kToChannelsFirst), w, groups,
                                      channelsFirst(dataType), Kernels::Prepared);
  return transposeTo(b, loc, grad, kToChannelsLast);
}

/// The weight gradient of one image (1, H, W, C), for a stride-1 window,
/// channels-last by taps, with no window rows: dW[f, i, j, c] = sum over q
/// of g^T[f, q] x[q + offset(i, j), c], x padded and flattened to rows of
/// channels and g laid out on the same rows (zero where no output is), so
/// that each tap reads x's rows at a fixed offset. The last `reach` rows
/// hold no output: q stops before them, and the last taps read x's last
/// rows. (One image at a time: its g^T and x stay in cache while every tap
/// reads them.)
Value imageWeightGradChannelsLastByTaps(OpBuilder &b, Location loc, Value g, Value data, const Window &w) {
  RankedTensorType gType = tensorType(g), dataType = tensorType(data);
  int64_t n = dataType.getDimSize(0), c = dataType.getDimSize(3), f = gType.getDimSize(3);
  int64_t height = dataType.getDimSize(1) + 2 * w.pad[0], width = dataType.getDimSize(2) + 2 * w.pad[1];
  int64_t reach = w.dilate[0] * (w.kernel[0] - 1) * width + w.dilate[1] * (w.kernel[1] - 1);
  int64_t rows = n * height * width;
  Value x = padConstant(b, loc, data, {0, w.pad[0], w.pad[1], 0}, {0, w.pad[0], w.pad[1], 0}, 0.0);
  Value gRows = padConstant(b, loc, g, {0, 0, 0, 0},
                            {0, height - gType.getDimSize(1), width - gType.getDimSize(2), 0}, 0.0);
  Value gColumns = transposeTo(b, loc, reshapeTo(b, loc, gRows, {rows, f}), {1, 0});
  gColumns = b.create<tensor::ExtractSliceOp>(loc, gColumns, getAsIndexOpFoldResult(b.getContext(), {0, 0}),
                                              getAsIndexOpFoldResult(b.getContext(), {f, rows - reach}),
                                              getAsIndexOpFoldResult(b.getContext(), {1, 1}));
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // Loops (f, i, j, c) parallel, q reduction.
  AffineExpr offset = dim(1) * (w.dilate[0] * width) + dim(2) * w.dilate[1];
  SmallVector<AffineMap> maps{AffineMap::get(5, 0, {dim(0), dim(4)}, b.getContext()),
                              AffineMap::get(5, 0, {dim(4) + offset, dim(3)}, b.getContext()),
                              AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, b.getContext())};
  SmallVector<IteratorType> iterators(4, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  return tapContraction(b, loc, {gColumns, reshapeTo(b, loc, x, {rows, c})}, {f, w.kernel[0], w.kernel[1], c},
                        maps, iterators);
}

/// A depthwise weight gradient channels-last, dW (C, kh, kw, 1): per image,
/// the sums over its positions of g times each tap's window value, channel
/// by channel, then the images' sums. The loops run (n, y, x, i, j, c): a
/// thread takes whole images, reads each element of g once and the window
/// values around it from cache, the channels along the vectors.
Value depthwiseWeightGradChannelsLast(OpBuilder &b, Location loc, Value g, Value data, const Window &w,
                                      RankedTensorType weightType) {
  int64_t n = tensorType(g).getDimSize(0), c = tensorType(g).getDimSize(3);
  auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineMap> maps{
      AffineMap::get(6, 0, {dim(0), dim(1), dim(2), dim(5)}, b.getContext()),
      AffineMap::get(6, 0, {dim(0), windowExpr(b, w, 0, 1, 3), windowExpr(b, w, 1, 2, 4), dim(5)}, b.getContext()),
      AffineMap::get(6, 0, {dim(0), dim(3), dim(4), dim(5)}, b.getContext())};
  SmallVector<IteratorType> iterators{IteratorType::parallel, IteratorType::reduction, IteratorType::reduction,
                                      IteratorType::parallel, IteratorType::parallel, IteratorType::parallel};
  Value perImage = buildGeneric(b, loc, {g, padChannelsLast(b, loc, data, w)},
                                zeros(b, loc, {n, w.kernel[0], w.kernel[1], c}, weightType.getElementType()), maps,
                                iterators, [](OpBuilder &b, Location loc, ValueRange args) {
                                  return add(b, loc, args[2], mul(b, loc, args[0], args[1]));
                                });
  Value taps = reduce(b, loc, perImage, {0}, /*keepDims=*/false, 0.0, addFn);
  return reshapeTo(b, loc, transposeTo(b, loc, taps, {2, 0, 1}), weightType.getShape());
}

/// The weight gradient channels-last, dW (F, 3, 3, C), by Winograd
/// (addWinogradWeightGradProducts) where the forward would go by it and the
/// data channels are whole vectors (the GEMMs' columns); none otherwise.
std::optional<Value> weightGradChannelsLastByWinograd(OpBuilder &b, Location loc, Value g, Value data,
                                                      const Window &w) {
  RankedTensorType gType = tensorType(g), dataType = tensorType(data);
  int64_t c = dataType.getDimSize(3);
  std::optional<int64_t> m = winogradTileSide(channelsFirst(dataType), w, channelsFirst(gType));
  if (!m || c % kPackedFilters != 0)
    return std::nullopt;
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(3), alpha = *m + 2;
  int64_t group = winogradImagesPerGemm(n, channelsFirst(gType), *m, c);
  Value products = foldImageGroups(b, loc, {g, data}, group, zeros(b, loc, {f, alpha * alpha, c}, gType.getElementType()),
                                   [&](OpBuilder &nested, Location l, ValueRange images, Value, Value acc) {
                                     return addWinogradWeightGradProducts(nested, l, images[0], images[1], w, *m, acc);
                                   });
  return winogradWeightGrad(b, loc, products, *m);
}

/// The weight gradient channels-last, dW (F, kh * kw * C): by Winograd
/// where that applies; else image by image by taps for a stride-1 window
/// over a large enough map (not a pointwise one); else g's columns (F, P),
/// read from g's rows as they lie, times the window rows (P, kh * kw * C)
/// the forward multiplies, over every output position of a group of images
/// (of the batch, pointwise), added to the sum of the groups before: a tap
/// contraction on the rows in strips of 32 channels where C is whole strips
/// (channelsLastPatchStrips: B read contiguously, where a GEMM walks down an
/// im2col matrix's rows, 9 KiB apart for 3x3 x 256 channels, at three
/// quarters the speed), else on the rows themselves. A depthwise one by
/// depthwiseWeightGradChannelsLast, another grouped one through the
/// channels-first gradient.
Value weightGradChannelsLast(OpBuilder &b, Location loc, Value g, Value data, const Window &w, int64_t groups,
                             RankedTensorType weightType) {
  if (isDepthwise(groups, tensorType(data).getDimSize(3), weightType.getDimSize(0)))
    return depthwiseWeightGradChannelsLast(b, loc, g, data, w, weightType);
  if (groups > 1) {
    Value grad = anyConvolutionWeightGrad(b, loc, transposeTo(b, loc, g, kToChannelsFirst),
                                          transposeTo(b, loc, data, kToChannelsFirst), w, groups,
                                          channelsFirst(weightType), Kernels::Prepared);
    return transposeTo(b, loc, grad, kToChannelsLast);
  }
  if (std::optional<Value> byWinograd = weightGradChannelsLastByWinograd(b, loc, g, data, w))
    return *byWinograd;
  RankedTensorType gType = tensorType(g);
  int64_t n = gType.getDimSize(0), f = gType.getDimSize(3), positions = gType.getDimSize(1) * gType.getDimSize(2);
  bool byTaps = dataGradWindow(w) && !isPointwise(w) && positions >= kMinTapWeightGradPositions;
  bool byStrips = !byTaps && !isPointwise(w) && tensorType(data).getDimSize(3) % kPackedFilters == 0;
  // Pointwise, every position of the batch is one GEMM's reduction: its rows
  // are the images' own, no copy.
  int64_t group = byTaps ? 1 : isPointwise(w) ? n : imagesPerGemm(n, positions);
  SmallVector<int64_t> groupShape(gType.getShape());
  groupShape[0] = group;
  auto groupOut = RankedTensorType::get(groupShape, gType.getElementType());
  int64_t ck = weightType.getNumElements() / f;
  Value sum = zeros(b, loc, {f, ck}, gType.getElementType());
  sum = foldImageGroups(
      b, loc, {g, data}, group, sum, [&](OpBuilder &nested, Location l, ValueRange images, Value, Value acc) -> Value {
        if (byTaps) {
          Value product = reshapeTo(nested, l, imageWeightGradChannelsLastByTaps(nested, l, images[0], images[1], w),
                                    tensorType(acc).getShape());
          return group == n ? product : accumulate(nested, l, acc, product);
        }
        Value gRows = positionRows(nested, l, images[0]);
        if (byStrips) {
          Value strips = channelsLastPatchStrips(nested, l, images[1], w, groupOut);
          Value stripsAcc = reshapeTo(nested, l, acc, {f, ck / kPackedFilters, kPackedFilters});
          return reshapeTo(nested, l, stripsProduct(nested, l, gRows, /*columns=*/true, strips, stripsAcc), {f, ck});
        }
        Value rows = isPointwise(w) ? positionRows(nested, l, images[1])
                                    : channelsLastPatchRows(nested, l, images[1], w, groupOut);
        return addTransposedProduct(nested, l, gRows, rows, acc);
      });
  return reshapeTo(b, loc, sum, weightType.getShape());
}

/// NHWC gradients, from g (N, H', W', F), data (N, H, W, C) and the weight
/// (F, kh, kw, C / groups).
Lowered lowerConvolutionBackwardChannelsLast(OpBuilder &b, sym::BackwardConvolutionOp op) {
  Location loc = op.getLoc();
  int64_t groups = op.getNumGroup();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  return SmallVector<Value>{
      dataGradChannelsLast(b, loc, op.getOutGrad(), op.getWeight(), w, groups, tensorType(op.getDataGrad())),
      weightGradChannelsLast(b, loc, op.getOutGrad(), op.getData(), w, groups, tensorType(op.getWeightGrad()))};
}

Lowered lowerConvolutionBackward(OpBuilder &b, sym::BackwardConvolutionOp op, const LoweringOptions &options) {
  if (op.isChannelsLast()) {
    if (!options.packWeights || !hasChannelsLastKernel(op))
      return op.emitError("internal error: an NHWC convolution gradient that the CPU backend has no kernel for");
    return lowerConvolutionBackwardChannelsLast(b, op);
  }
  Location loc = op.getLoc();
  int64_t groups = op.getNumGroup();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  Value dataGrad = anyConvolutionDataGrad(b, loc, op.getOutGrad(), op.getWeight(), w, groups,
                                          tensorType(op.getDataGrad()), kernelsFor(options));
  Value weightGrad = anyConvolutionWeightGrad(b, loc, op.getOutGrad(), op.getData(), w, groups,
                                              tensorType(op.getWeightGrad()), kernelsFor(options));
  return SmallVector<Value>{dataGrad, weightGrad};
}

/// Deconvolution is the data gradient of the convolution of its output by
/// its weight; its own gradients are that convolution (data) and its
/// weight gradient with data and output gradient swapped.
Lowered lowerDeconvolution(OpBuilder &b, sym::DeconvolutionOp op, const LoweringOptions &options) {
  Location loc = op.getLoc();
  if (op.getLayout() && !llvm::is_contained({"NCW", "NCHW", "NCDHW"}, *op.getLayout()))
    return op.emitError("the CPU backend supports channel-first layouts only, got ") << *op.getLayout();
  RankedTensorType dataType = tensorType(op.getData());
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPadAndAdj(dataType.getShape().drop_front(2)).first);
  // Not by prepared weights: the flipped weight is gathered by a generic
  // whose region reads the weight, which the prepare entry cannot follow.
  Value out = anyConvolutionDataGrad(b, loc, op.getData(), op.getWeight(), w, op.getNumGroup(),
                                     tensorType(op.getOutput()), unprepared(kernelsFor(options)));
  if (op.getBias())
    out = addBias(b, loc, out, op.getBias());
  return SmallVector<Value>{out};
}

Lowered lowerDeconvolutionBackward(OpBuilder &b, sym::BackwardDeconvolutionOp op, const LoweringOptions &options) {
  Location loc = op.getLoc();
  int64_t groups = op.getNumGroup();
  Window w(op.getKernel(), op.getStride(), op.getDilate(), op.getPad());
  Kernels kernels = unprepared(kernelsFor(options));
  Value dataGrad =
      convolve(b, loc, op.getOutGrad(), op.getWeight(), w, groups, tensorType(op.getDataGrad()), kernels);
  Value weightGrad = anyConvolutionWeightGrad(b, loc, op.getData(), op.getOutGrad(), w, groups,
                                              tensorType(op.getWeightGrad()), kernels);
  return SmallVector<Value>{dataGrad, weightGrad};
}

/// Bilinear UpSampling: MXNet's Deconvolution, the data gradient of a
/// convolution of the output by the weight (C, 1, k, k), a group per channel.
Lowered lowerBilinearUpSampling(OpBuilder &b, sym::UpSamplingOp op, const LoweringOptions &options) {
  int64_t k = op.getBilinearKernel(), s = op.getScale(), p = op.getBilinearPad();
  Window w({k, k}, {s, s}, {}, {p, p});
  Value data = op.getInputs()[0], weight = op.getInputs()[1];
  int64_t channels = tensorType(data).getDimSize(1);
  Value out = convolutionDataGrad(b, op.getLoc(), data, weight, w, channels, tensorType(op.getOutput()),
                                  unprepared(kernelsFor(options)));
  return SmallVector<Value>{out};
}

/// Whether `op` (a Convolution or its gradient) has channels-last kernels.
template <typename ConvolutionLike> bool hasChannelsLastKernelFor(ConvolutionLike op) {
  auto data = dyn_cast<RankedTensorType>(op.getData().getType());
  if (op.getKernel().size() != 2 || !data || !data.hasStaticShape() || !data.getElementType().isF32())
    return false;
  int64_t channels = data.getDimSize(op.channelDim()), filters = op.getNumFilter(), groups = op.getNumGroup();
  // Over 1x1 images both layouts are one: FullyConnected's product serves.
  bool singlePosition = data.getDimSize(op.spatialDim(0)) == 1 && data.getDimSize(op.spatialDim(1)) == 1;
  return isDepthwise(groups, channels, filters) || (groups == 1 && !singlePosition);
}

} // namespace

bool hasChannelsLastKernel(sym::ConvolutionOp op) { return hasChannelsLastKernelFor(op); }

bool hasChannelsLastKernel(sym::BackwardConvolutionOp op) { return hasChannelsLastKernelFor(op); }

std::optional<Lowered> lowerConvolutionOp(Operation *op, OpBuilder &b, const LoweringOptions &options) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::ConvolutionOp o) { return lowerConvolution(b, o, options); })
      .Case([&](sym::BackwardConvolutionOp o) { return lowerConvolutionBackward(b, o, options); })
      .Case([&](sym::DeconvolutionOp o) { return lowerDeconvolution(b, o, options); })
      .Case([&](sym::BackwardDeconvolutionOp o) { return lowerDeconvolutionBackward(b, o, options); })
      .Case([&](sym::UpSamplingOp o) -> std::optional<Lowered> {
        if (o.getSampleType() != "bilinear")
          return std::nullopt;
        return lowerBilinearUpSampling(b, o, options);
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
