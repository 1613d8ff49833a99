//===- WinogradConvolution.cpp - 3x3 convolutions by F(m x m, 3 x 3) ------===//
//
// The transforms are generics with channels (filters) innermost, so that
// they vectorize along contiguous memory: the input is transposed once into
// channels-last order, and the output once back; each transform is one 1-d
// pass (rows, then columns) that sums m + 2 (or m) strided views of its
// input, weighed by a constant column of its matrix indexed by the loop of
// the transformed dim.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/WinogradConvolution.h"
#include "codegen/Artifact/Manifest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace symc::cpu {
namespace {

using utils::IteratorType;

/// The matrices of F(m x m, 3 x 3), row-major, from Lavin and Gray's
/// choice of interpolation points (0, +-1, +-2 and infinity for m = 4;
/// 0, +-1 and infinity for m = 2).
struct WinogradMatrices {
  int64_t m;
  ArrayRef<double> inputT;  // B^T, (m + 2, m + 2)
  ArrayRef<double> filter;  // G, (m + 2, 3)
  ArrayRef<double> outputT; // A^T, (m, m + 2)
  int64_t alpha() const { return m + 2; }
};

constexpr double kInputT4[] = {4, 0, -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
                               0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
constexpr double kFilter4[] = {1.0 / 4,  0,        0,       -1.0 / 6, -1.0 / 6, -1.0 / 6,
                               -1.0 / 6, 1.0 / 6,  -1.0 / 6, 1.0 / 24, 1.0 / 12, 1.0 / 6,
                               1.0 / 24, -1.0 / 12, 1.0 / 6, 0,        0,        1};
constexpr double kOutputT4[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};
constexpr double kInputT2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
constexpr double kFilter2[] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
constexpr double kOutputT2[] = {1, 1, 1, 0, 0, 1, -1, -1};

/// Tiles of side m covering `size` output positions, the last maybe part
/// past the end.
int64_t tilesAlong(int64_t size, int64_t m) { return llvm::divideCeil(size, m); }

WinogradMatrices matrices(int64_t tileSide) {
  if (tileSide == 4)
    return {4, kInputT4, kFilter4, kOutputT4};
  assert(tileSide == 2 && "F(m x m, 3 x 3) is built for m = 2 and 4");
  return {2, kInputT2, kFilter2, kOutputT2};
}

/// Column `j` of the row-major `matrix` of `rows` rows, a constant vector.
Value matrixColumn(OpBuilder &b, Location loc, ArrayRef<double> matrix, int64_t rows, int64_t j, Type element) {
  int64_t columns = matrix.size() / rows;
  SmallVector<float> values;
  for (int64_t i = 0; i < rows; ++i)
    values.push_back(float(matrix[i * columns + j]));
  auto type = RankedTensorType::get({rows}, element);
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

/// Every `stride`-th of `count` elements of dim `dim` of `value` from
/// `offset` on, the other dims whole: a view.
Value everyNth(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t offset, int64_t count, int64_t stride) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()), strides(type.getRank(), 1);
  offsets[dim] = offset, sizes[dim] = count, strides[dim] = stride;
  return b.create<tensor::ExtractSliceOp>(loc, value, getAsIndexOpFoldResult(b.getContext(), offsets),
                                          getAsIndexOpFoldResult(b.getContext(), sizes),
                                          getAsIndexOpFoldResult(b.getContext(), strides));
}

/// `value` at `index` of dim `dim`, that dim dropped: a view.
Value sliceAt(OpBuilder &b, Location loc, Value value, unsigned dim, int64_t index) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()), strides(type.getRank(), 1);
  offsets[dim] = index, sizes[dim] = 1;
  SmallVector<int64_t> reduced(type.getShape());
  reduced.erase(reduced.begin() + dim);
  return b.create<tensor::ExtractSliceOp>(loc, RankedTensorType::get(reduced, type.getElementType()), value,
                                          getAsIndexOpFoldResult(b.getContext(), offsets),
                                          getAsIndexOpFoldResult(b.getContext(), sizes),
                                          getAsIndexOpFoldResult(b.getContext(), strides));
}

AffineMap dimsMap(OpBuilder &b, unsigned loops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(loops, 0, exprs, b.getContext());
}

/// B^T d B of every input tile d of the images (N, C, H, W), or (N, H, W,
/// C) if `channelsLast`, padded by `pad` (and at the end, for the last
/// tiles' positions past the output's): (N * tiles, (m + 2)^2, C), a row
/// per tile.
Value transformInput(OpBuilder &b, Location loc, Value images, ArrayRef<int64_t> pad, const WinogradMatrices &t,
                     int64_t tileRows, int64_t tileColumns, bool channelsLast) {
  RankedTensorType in = tensorType(images);
  unsigned rowDim = channelsLast ? 1 : 2;
  int64_t n = in.getDimSize(0), c = in.getDimSize(channelsLast ? 3 : 1), a = t.alpha();
  Type element = in.getElementType();
  int64_t highRows = tileRows * t.m + 2 - in.getDimSize(rowDim) - pad[0],
          highColumns = tileColumns * t.m + 2 - in.getDimSize(rowDim + 1) - pad[1];
  SmallVector<int64_t> low(4, 0), high(4, 0);
  low[rowDim] = pad[0], low[rowDim + 1] = pad[1];
  high[rowDim] = highRows, high[rowDim + 1] = highColumns;
  Value padded = padConstant(b, loc, images, low, high, 0.0);
  if (!channelsLast)
    padded = transposeTo(b, loc, padded, {0, 2, 3, 1});
  int64_t height = tensorType(padded).getDimSize(1);
  // Rows: (N, H, tile columns, nu, C), loops (n, y, x, nu, c).
  SmallVector<Value> terms, coefficients;
  for (int64_t j = 0; j < a; ++j) {
    terms.push_back(everyNth(b, loc, padded, 2, j, tileColumns, t.m));
    coefficients.push_back(matrixColumn(b, loc, t.inputT, a, j, element));
  }
  Value rows = weightedSum(b, loc, {n, height, tileColumns, a, c}, terms, dimsMap(b, 5, {0, 1, 2, 4}), coefficients, 3);
  // Columns: (N, tile rows, tile columns, xi, nu, C), loops (n, y, x, xi, nu, c).
  terms.clear(), coefficients.clear();
  for (int64_t i = 0; i < a; ++i) {
    terms.push_back(everyNth(b, loc, rows, 1, i, tileRows, t.m));
    coefficients.push_back(matrixColumn(b, loc, t.inputT, a, i, element));
  }
  Value tiles = weightedSum(b, loc, {n, tileRows, tileColumns, a, a, c}, terms, dimsMap(b, 6, {0, 1, 2, 4, 5}),
                            coefficients, 3);
  return reshapeTo(b, loc, tiles, {n * tileRows * tileColumns, a * a, c});
}

/// A^T M A of the products M (tiles, (m + 2)^2, F) of the images' tiles:
/// the output (N, F, H', W'), written channels-first unless `channelsLast`
/// (N, H', W', F).
Value transformOutput(OpBuilder &b, Location loc, Value products, const WinogradMatrices &t, RankedTensorType outType,
                      bool channelsLast) {
  int64_t n = outType.getDimSize(0), f = outType.getDimSize(1), a = t.alpha(), m = t.m;
  int64_t tileRows = tilesAlong(outType.getDimSize(2), m), tileColumns = tilesAlong(outType.getDimSize(3), m),
          tiles = n * tileRows * tileColumns;
  Type element = outType.getElementType();
  Value perTap = reshapeTo(b, loc, products, {tiles, a, a, f});
  // Along nu: (tiles, xi, m, F), loops (t, xi, col, f).
  SmallVector<Value> terms, coefficients;
  for (int64_t nu = 0; nu < a; ++nu) {
    terms.push_back(sliceAt(b, loc, perTap, 2, nu));
    coefficients.push_back(matrixColumn(b, loc, t.outputT, m, nu, element));
  }
  Value half = weightedSum(b, loc, {tiles, a, m, f}, terms, dimsMap(b, 4, {0, 1, 3}), coefficients, 2);
  // Along xi: (N, tile rows, m, tile columns, m, F), loops (n, y, row, x,
  // col, f), channels last like every step before, so that each reads and
  // writes whole vectors; then, channels-first, one transpose.
  Value perImage = reshapeTo(b, loc, half, {n, tileRows, tileColumns, a, m, f});
  terms.clear(), coefficients.clear();
  for (int64_t xi = 0; xi < a; ++xi) {
    terms.push_back(sliceAt(b, loc, perImage, 3, xi));
    coefficients.push_back(matrixColumn(b, loc, t.outputT, m, xi, element));
  }
  Value rows = weightedSum(b, loc, {n, tileRows, m, tileColumns, m, f}, terms, dimsMap(b, 6, {0, 1, 3, 4, 5}),
                           coefficients, 2);
  Value result = reshapeTo(b, loc, rows, {n, tileRows * m, tileColumns * m, f});
  if (tileRows * m != outType.getDimSize(2) || tileColumns * m != outType.getDimSize(3))
    result = b.create<tensor::ExtractSliceOp>(
        loc, result, getAsIndexOpFoldResult(b.getContext(), {0, 0, 0, 0}),
        getAsIndexOpFoldResult(b.getContext(), {n, outType.getDimSize(2), outType.getDimSize(3), f}),
        getAsIndexOpFoldResult(b.getContext(), {1, 1, 1, 1}));
  return channelsLast ? result : transposeTo(b, loc, result, {0, 3, 1, 2});
}

/// Tiles per Winograd GEMM worth its register and thread tiles: a 56x56
/// image's 14 x 14 of F(4 x 4, 3 x 3).
constexpr int64_t kTilesPerGemm = 196;
/// Fewer tiles would leave each GEMM's register tiles part empty while its
/// transformed weight, (m + 2)^2 / 9 times the weight's size, streams from
/// memory for them (a 4x4 map at batch 1: 4 tiles). A 7x7 map at batch 1
/// has 16 of F(2x2, 3x3), enough: ResNet-18's and -50's last stages by
/// Winograd ran 0.95 and 0.98 of their direct convolutions' time (Zen 5).
constexpr int64_t kMinTilesPerGemm = 16;
/// Positions computed past the output's, at most, as a share of its own: a
/// 14x14 map in 4x4 tiles computes 16x16 (1.31), so it goes by F(2x2,
/// 3x3); a 7x7 one computes 8x8 either way, still 1.7 times fewer products
/// than the direct convolution by F(2x2, 3x3).
constexpr double kMostWasteOfF4 = 1.15, kMostWasteOfF2 = 1.35;
/// Fewer channels give each GEMM too short a reduction for the transforms
/// to pay off (a stem over 3 colour channels).
constexpr int64_t kMinWinogradChannels = 32;

} // namespace

std::optional<int64_t> winogradTileSide(RankedTensorType dataType, const Window &w, RankedTensorType outType) {
  auto is = [](ArrayRef<int64_t> values, int64_t v) { return llvm::all_of(values, [v](int64_t x) { return x == v; }); };
  if (w.rank() != 2 || !outType.getElementType().isF32() || !is(w.kernel, 3) || !is(w.stride, 1) ||
      !is(w.dilate, 1) || outType.getDimSize(1) % kPackedFilters != 0 ||
      dataType.getDimSize(1) < kMinWinogradChannels)
    return std::nullopt;
  int64_t n = outType.getDimSize(0), height = outType.getDimSize(2), width = outType.getDimSize(3);
  for (auto [m, mostWaste] : {std::pair<int64_t, double>{4, kMostWasteOfF4}, {2, kMostWasteOfF2}}) {
    int64_t tiles = tilesAlong(height, m) * tilesAlong(width, m);
    if (tiles * m * m <= mostWaste * height * width && winogradImagesPerGemm(n, outType, m) * tiles >= kMinTilesPerGemm)
      return m;
  }
  return std::nullopt;
}

int64_t winogradImagesPerGemm(int64_t batch, RankedTensorType outType, int64_t tileSide) {
  int64_t tiles = tilesAlong(outType.getDimSize(2), tileSide) * tilesAlong(outType.getDimSize(3), tileSide);
  int64_t want = std::max<int64_t>(1, kTilesPerGemm / tiles), group = 1;
  for (int64_t g = 1; g <= std::min(batch, want); ++g)
    if (batch % g == 0)
      group = g;
  return group;
}

Value winogradWeight(OpBuilder &b, Location loc, Value columns, int64_t tileSide, bool channelsLast) {
  WinogradMatrices t = matrices(tileSide);
  RankedTensorType type = tensorType(columns);
  int64_t f = type.getDimSize(1), c = type.getDimSize(0) / 9, a = t.alpha();
  Type element = type.getElementType();
  // left[e, i] = G[e / a, i] and right[e, j] = G[e % a, j] for e = (xi, nu).
  SmallVector<float> left, right;
  for (int64_t xi = 0; xi < a; ++xi)
    for (int64_t nu = 0; nu < a; ++nu)
      for (int64_t k = 0; k < 3; ++k) {
        left.push_back(float(t.filter[xi * 3 + k]));
        right.push_back(float(t.filter[nu * 3 + k]));
      }
  auto factorType = RankedTensorType::get({a * a, 3}, element);
  Value leftFactor = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(factorType, ArrayRef<float>(left)));
  Value rightFactor = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(factorType, ArrayRef<float>(right)));
  // The columns as (i, j, c, F) or (c, i, j, F), read along the filters by
  // the loops (strip, c, e, i, j, lane): one strip's 3 x 3 taps of a channel
  // stay in cache while every e reads them.
  SmallVector<int64_t> tapShape = channelsLast ? SmallVector<int64_t>{3, 3, c, f} : SmallVector<int64_t>{c, 3, 3, f};
  Value taps = reshapeTo(b, loc, columns, tapShape);
  AffineExpr strip, channel, e, i, j, lane;
  bindDims(b.getContext(), strip, channel, e, i, j, lane);
  AffineExpr filter = strip * kPackedFilters + lane;
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(6, 0, results, b.getContext()); };
  Value result = buildGeneric(
      b, loc, {leftFactor, rightFactor, taps},
      zeros(b, loc, {a * a, f / kPackedFilters, c, kPackedFilters}, element),
      {map({e, i}), map({e, j}),
       map(channelsLast ? ArrayRef<AffineExpr>{i, j, channel, filter} : ArrayRef<AffineExpr>{channel, i, j, filter}),
       map({e, strip, channel, lane})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::parallel},
      [](OpBuilder &nb, Location l, ValueRange args) {
        return nb.create<math::FmaOp>(l, mul(nb, l, args[0], args[1]), args[2], args[3]).getResult();
      });
  std::string what = "Winograd F(" + std::to_string(tileSide) + "x" + std::to_string(tileSide) +
                     ", 3x3) filter transform, filter strips of 32";
  result.getDefiningOp()->setAttr(kPrepareAttr, b.getStringAttr(what));
  return result;
}

Value convolveByWinograd(OpBuilder &b, Location loc, Value images, Value transformed, const Window &w,
                         RankedTensorType outType, int64_t tileSide, bool channelsLast) {
  WinogradMatrices t = matrices(tileSide);
  int64_t tileRows = tilesAlong(outType.getDimSize(2), t.m), tileColumns = tilesAlong(outType.getDimSize(3), t.m);
  Value tiles = transformInput(b, loc, images, w.pad, t, tileRows, tileColumns, channelsLast);
  RankedTensorType tilesType = tensorType(tiles), weightType = tensorType(transformed);
  int64_t rows = tilesType.getDimSize(0), taps = tilesType.getDimSize(1), strips = weightType.getDimSize(1);
  // products[tile, e, strip, lane] = sum over c of tiles[tile, e, c] * U[e, strip, c, lane].
  AffineExpr tile, e, strip, lane, c;
  bindDims(b.getContext(), tile, e, strip, lane, c);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(5, 0, results, b.getContext()); };
  Value products = tapContraction(b, loc, {tiles, transformed}, {rows, taps, strips, kPackedFilters},
                                  {map({tile, e, c}), map({e, strip, c, lane}), map({tile, e, strip, lane})},
                                  {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
                                   IteratorType::parallel, IteratorType::reduction});
  return transformOutput(b, loc, products, t, outType, channelsLast);
}

} // namespace symc::cpu
