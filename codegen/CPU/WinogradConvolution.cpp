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

/// A constant matrix, its values row-major, maybe read transposed.
struct Matrix {
  ArrayRef<double> values;
  int64_t rows, columns;
  bool transposed = false;

  int64_t height() const { return transposed ? columns : rows; }
  int64_t width() const { return transposed ? rows : columns; }
  double at(int64_t i, int64_t j) const { return transposed ? values[j * columns + i] : values[i * columns + j]; }
  Matrix transpose() const { return {values, rows, columns, !transposed}; }
};

/// The matrices of F(m x m, 3 x 3) from Lavin and Gray's choice of
/// interpolation points (0, +-1, +-2 and infinity for m = 4; 0, +-1 and
/// infinity for m = 2).
struct WinogradMatrices {
  int64_t m;
  Matrix inputT;  // B^T, (m + 2, m + 2)
  Matrix filter;  // G, (m + 2, 3)
  Matrix outputT; // A^T, (m, m + 2)
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
    return {4, {kInputT4, 6, 6}, {kFilter4, 6, 3}, {kOutputT4, 4, 6}};
  assert(tileSide == 2 && "F(m x m, 3 x 3) is built for m = 2 and 4");
  return {2, {kInputT2, 4, 4}, {kFilter2, 4, 3}, {kOutputT2, 2, 4}};
}

/// Column `j` of `matrix`, a constant vector.
Value matrixColumn(OpBuilder &b, Location loc, const Matrix &matrix, int64_t j, Type element) {
  SmallVector<float> values;
  for (int64_t i = 0; i < matrix.height(); ++i)
    values.push_back(float(matrix.at(i, j)));
  auto type = RankedTensorType::get({matrix.height()}, element);
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

/// M x M^T of every tile x of `padded` (N, H, W, C), channels last, for a
/// transform M of (alpha, taps): the tiles of taps x taps values from every
/// `step`-th row and column on (tileRows x tileColumns of them), as (N *
/// tiles, alpha^2, C), a row per tile, or with `pointsFirst` (alpha^2, N *
/// tiles, C), a matrix per point.
Value transformTiles(OpBuilder &b, Location loc, Value padded, const Matrix &transform, int64_t step,
                     int64_t tileRows, int64_t tileColumns, bool pointsFirst = false) {
  ArrayRef<int64_t> in = tensorType(padded).getShape();
  int64_t n = in[0], height = in[1], c = in[3], a = transform.height();
  Type element = tensorType(padded).getElementType();
  // Rows: (N, H, tile columns, nu, C), loops (n, y, x, nu, c).
  SmallVector<Value> terms, coefficients;
  for (int64_t j = 0; j < transform.width(); ++j) {
    terms.push_back(everyNth(b, loc, padded, 2, j, tileColumns, step));
    coefficients.push_back(matrixColumn(b, loc, transform, j, element));
  }
  Value rows = weightedSum(b, loc, {n, height, tileColumns, a, c}, terms, dimsMap(b, 5, {0, 1, 2, 4}), coefficients, 3);
  // Columns: (N, tile rows, tile columns, xi, nu, C), loops (n, y, x, xi,
  // nu, c), or points first (xi, nu, N, tile rows, tile columns, C).
  terms.clear(), coefficients.clear();
  for (int64_t i = 0; i < transform.width(); ++i) {
    terms.push_back(everyNth(b, loc, rows, 1, i, tileRows, step));
    coefficients.push_back(matrixColumn(b, loc, transform, i, element));
  }
  int64_t tiles = n * tileRows * tileColumns;
  if (pointsFirst)
    return reshapeTo(b, loc,
                     weightedSum(b, loc, {a, a, n, tileRows, tileColumns, c}, terms, dimsMap(b, 6, {2, 3, 4, 1, 5}),
                                 coefficients, 0),
                     {a * a, tiles, c});
  return reshapeTo(b, loc,
                   weightedSum(b, loc, {n, tileRows, tileColumns, a, a, c}, terms, dimsMap(b, 6, {0, 1, 2, 4, 5}),
                               coefficients, 3),
                   {tiles, a * a, c});
}

/// B^T d B of every input tile d of the images (N, C, H, W), or (N, H, W,
/// C) if `channelsLast`, padded by `pad` (and at the end, for the last
/// tiles' positions past the output's): (N * tiles, (m + 2)^2, C), a row
/// per tile, or points first as transformTiles lays them out.
Value transformInput(OpBuilder &b, Location loc, Value images, ArrayRef<int64_t> pad, const WinogradMatrices &t,
                     int64_t tileRows, int64_t tileColumns, bool channelsLast, bool pointsFirst = false) {
  RankedTensorType in = tensorType(images);
  unsigned rowDim = channelsLast ? 1 : 2;
  int64_t highRows = tileRows * t.m + 2 - in.getDimSize(rowDim) - pad[0],
          highColumns = tileColumns * t.m + 2 - in.getDimSize(rowDim + 1) - pad[1];
  SmallVector<int64_t> low(4, 0), high(4, 0);
  low[rowDim] = pad[0], low[rowDim + 1] = pad[1];
  high[rowDim] = highRows, high[rowDim + 1] = highColumns;
  Value padded = padConstant(b, loc, images, low, high, 0.0);
  if (!channelsLast)
    padded = transposeTo(b, loc, padded, {0, 2, 3, 1});
  return transformTiles(b, loc, padded, t.inputT, t.m, tileRows, tileColumns, pointsFirst);
}

/// outT M outT^T of the products M (tiles, alpha^2, F) of the images'
/// tiles, for the output transform outT of (m, alpha): the output (N, F,
/// H', W') of m x m tiles, written channels-first unless `channelsLast` (N,
/// H', W', F).
Value transformOutput(OpBuilder &b, Location loc, Value products, const Matrix &outT, RankedTensorType outType,
                      bool channelsLast) {
  int64_t n = outType.getDimSize(0), f = outType.getDimSize(1), a = outT.width(), m = outT.height();
  int64_t tileRows = tilesAlong(outType.getDimSize(2), m), tileColumns = tilesAlong(outType.getDimSize(3), m),
          tiles = n * tileRows * tileColumns;
  Type element = outType.getElementType();
  Value perTap = reshapeTo(b, loc, products, {tiles, a, a, f});
  // Along nu: (tiles, xi, m, F), loops (t, xi, col, f).
  SmallVector<Value> terms, coefficients;
  for (int64_t nu = 0; nu < a; ++nu) {
    terms.push_back(sliceAt(b, loc, perTap, 2, nu));
    coefficients.push_back(matrixColumn(b, loc, outT, nu, element));
  }
  Value half = weightedSum(b, loc, {tiles, a, m, f}, terms, dimsMap(b, 4, {0, 1, 3}), coefficients, 2);
  // Along xi: (N, tile rows, m, tile columns, m, F), loops (n, y, row, x,
  // col, f), channels last like every step before, so that each reads and
  // writes whole vectors; then, channels-first, one transpose.
  Value perImage = reshapeTo(b, loc, half, {n, tileRows, tileColumns, a, m, f});
  terms.clear(), coefficients.clear();
  for (int64_t xi = 0; xi < a; ++xi) {
    terms.push_back(sliceAt(b, loc, perImage, 3, xi));
    coefficients.push_back(matrixColumn(b, loc, outT, xi, element));
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
/// 14x14 map in 4x4 tiles computes 16x16 (1.31), so one image goes by F(2x2,
/// 3x3); a 7x7 one computes 8x8 either way, still 1.7 times fewer products
/// than the direct convolution by F(2x2, 3x3).
constexpr double kMostWasteOfF4 = 1.15, kMostWasteOfF2 = 1.35;
/// With at least this many tiles per GEMM, F(4x4, 3x3) computes up to
/// kMostWasteOfF2 of the output too: its 2.25 products per output position
/// (36 per 16), times 1.31 for a 14x14 map, still fewer than F(2x2, 3x3)'s 4,
/// once its GEMMs have the rows to use them (batch 16, ResNet-18 and -50:
/// 0.92 and 0.97 of the time with F(2x2, 3x3) at 14x14; one image's 16
/// tiles gained nothing).
constexpr int64_t kMinTilesForWastefulF4 = 64;
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
  for (int64_t m : {4, 2}) {
    int64_t tiles = tilesAlong(height, m) * tilesAlong(width, m);
    int64_t tilesPerGemm = winogradImagesPerGemm(n, outType, m) * tiles;
    double mostWaste = m == 2 || tilesPerGemm >= kMinTilesForWastefulF4 ? kMostWasteOfF2 : kMostWasteOfF4;
    if (tiles * m * m <= mostWaste * height * width && tilesPerGemm >= kMinTilesPerGemm)
      return m;
  }
  return std::nullopt;
}

int64_t winogradImagesPerGemm(int64_t batch, RankedTensorType outType, int64_t tileSide, int64_t channels) {
  int64_t tiles = tilesAlong(outType.getDimSize(2), tileSide) * tilesAlong(outType.getDimSize(3), tileSide);
  int64_t wantTiles = kTilesPerGemm;
  if (channels) {
    int64_t f = outType.getDimSize(1);
    wantTiles = std::max(wantTiles, 2 * f * channels / (f + channels));
  }
  int64_t want = std::max<int64_t>(1, wantTiles / tiles), group = 1;
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
  // The columns as (i, j, c, strip, lane) or (c, i, j, strip, lane): each
  // tap (i, j) a view (c, strip, lane).
  int64_t strips = f / kPackedFilters;
  SmallVector<int64_t> tapShape = channelsLast ? SmallVector<int64_t>{3, 3, c, strips, kPackedFilters}
                                               : SmallVector<int64_t>{c, 3, 3, strips, kPackedFilters};
  Value taps = reshapeTo(b, loc, columns, tapShape);
  unsigned tapDim = channelsLast ? 0 : 1;
  // U[e, strip, c, lane] = sum over taps (i, j) of G[e / a, i] G[e % a, j]
  // g[i, j, c, filter]: one elementwise op, vectorized along the lanes, each
  // tap's coefficient a vector along e: the product of G's f32 values (exact
  // in a double, rounded to f32 once by matrixColumn).
  SmallVector<double> products;
  for (int64_t e = 0; e < a * a; ++e)
    for (int64_t tap = 0; tap < 9; ++tap)
      products.push_back(double(float(t.filter.at(e / a, tap / 3))) * double(float(t.filter.at(e % a, tap % 3))));
  Matrix coefficientsByTap{products, a * a, 9};
  SmallVector<Value> terms, coefficients;
  for (int64_t tap = 0; tap < 9; ++tap) {
    terms.push_back(sliceAt(b, loc, sliceAt(b, loc, taps, tapDim, tap / 3), tapDim, tap % 3));
    coefficients.push_back(matrixColumn(b, loc, coefficientsByTap, tap, element));
  }
  // Loops (strip, c, e, lane): the taps of a (strip, c) are read once for
  // every e.
  Value result = weightedSum(b, loc, {strips, c, a * a, kPackedFilters}, terms, dimsMap(b, 4, {1, 0, 3}),
                             coefficients, 2, {2, 0, 1, 3});
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
  return transformOutput(b, loc, products, t.outputT, outType, channelsLast);
}

Value addWinogradWeightGradProducts(OpBuilder &b, Location loc, Value g, Value images, const Window &w,
                                    int64_t tileSide, Value acc) {
  WinogradMatrices t = matrices(tileSide);
  ArrayRef<int64_t> gShape = tensorType(g).getShape();
  int64_t tileRows = tilesAlong(gShape[1], t.m), tileColumns = tilesAlong(gShape[2], t.m);
  // Points first: each point's GEMM reads its tiles' rows contiguously
  // (tile-major, rows (m + 2)^2 * C apart, a power of two that maps them
  // all to one cache set).
  Value inputTiles = transformInput(b, loc, images, w.pad, t, tileRows, tileColumns, /*channelsLast=*/true,
                                    /*pointsFirst=*/true);
  // The gradient's tiles, zero past its end, by A = (A^T)^T.
  Value gPadded = padConstant(b, loc, g, {0, 0, 0, 0},
                              {0, tileRows * t.m - gShape[1], tileColumns * t.m - gShape[2], 0}, 0.0);
  Value gTiles = transformTiles(b, loc, gPadded, t.outputT.transpose(), t.m, tileRows, tileColumns,
                                /*pointsFirst=*/true);
  // acc[f, e, c] += sum over tiles of gTiles[e, tile, f] * inputTiles[e, tile, c].
  AffineExpr f, e, c, tile;
  bindDims(b.getContext(), f, e, c, tile);
  auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(4, 0, results, b.getContext()); };
  return tapContractionInto(b, loc, {gTiles, inputTiles}, acc, {map({e, tile, f}), map({e, tile, c}), map({f, e, c})},
                            {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
                             IteratorType::reduction});
}

Value winogradWeightGrad(OpBuilder &b, Location loc, Value products, int64_t tileSide) {
  ArrayRef<int64_t> shape = tensorType(products).getShape();
  // The filters stand for transformOutput's tiles, the channels for its
  // filters, and dW for one 3x3 output tile of each.
  auto outType = RankedTensorType::get({shape[0], shape[2], 3, 3}, tensorType(products).getElementType());
  return transformOutput(b, loc, products, matrices(tileSide).filter.transpose(), outType, /*channelsLast=*/true);
}

} // namespace symc::cpu
