//===- WinogradConvolution.h - 3x3 convolutions by F(m x m, 3 x 3) -*- C++ -*-===//
//
// Winograd's minimal filtering (Lavin and Gray, 2016): an output tile of m x m
// positions of a 3x3, stride-1 convolution is A^T [(G g G^T) . (B^T d B)] A
// of the (m + 2) x (m + 2) input tile d around it, so that the products per
// tile and (filter, channel) pair fall from 9 m^2 to (m + 2)^2, a batch of
// (m + 2)^2 GEMMs over the channels. The filter transform G g G^T runs in
// the artifact's prepare entry, once per weight. The weight gradient goes by
// the same form transposed, G^T [(A g A^T) . (B^T d B)] G, its products
// summed over the tiles: (m + 2)^2 GEMMs over the tiles.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_CPU_WINOGRADCONVOLUTION_H
#define SYMC_CODEGEN_CPU_WINOGRADCONVOLUTION_H

#include "codegen/CPU/LayerUtils.h"

#include <optional>

namespace symc::cpu {

/// The output tile side m of the F(m x m, 3 x 3) that an ungrouped
/// convolution of `dataType` into `outType` runs by, if it runs by one.
std::optional<int64_t> winogradTileSide(RankedTensorType dataType, const Window &w, RankedTensorType outType);

/// Images per Winograd GEMM for a batch of `batch` images of `outType`'s
/// (F, H, W): enough tiles for full register and thread tiles. For a weight
/// gradient over `channels` data channels, whose GEMMs add their products to
/// accumulators of F x C per point, loaded and stored once per group: also
/// enough that the group's transformed tiles (F + C values per tile and
/// point) outweigh those twice.
int64_t winogradImagesPerGemm(int64_t batch, RankedTensorType outType, int64_t tileSide, int64_t channels = 0);

/// The weight as its columns (filtersLast: (C * 9, F), or (9 * C, F) if
/// `channelsLast`) transformed for F(m x m, 3 x 3), G g G^T per (filter,
/// channel), laid out ((m + 2)^2, F / 32, C, 32): for each of the GEMMs,
/// strips of 32 filters, each a contiguous panel. Marked for the prepare
/// entry.
Value winogradWeight(OpBuilder &b, Location loc, Value columns, int64_t tileSide, bool channelsLast);

/// A group of images (N, C, H, W) convolved by the transformed weight
/// (winogradWeight) into `outType` (N, F, H', W'): tiles of m x m cover
/// the output, the last ones maybe past its end (computed, then dropped).
/// With `channelsLast`, the images are (N, H, W, C) and the result (N, H',
/// W', F); `outType` stays channels-first.
Value convolveByWinograd(OpBuilder &b, Location loc, Value images, Value transformed, const Window &w,
                         RankedTensorType outType, int64_t tileSide, bool channelsLast);

/// The products for the weight gradient by F(m x m, 3 x 3) of a group of
/// images (N, H, W, C) whose convolution by `w` had the output gradient g
/// (N, H', W', F), both channels-last, added to `acc` (F, (m + 2)^2, C):
/// for each of the (m + 2)^2 points, the sum over the tiles of the
/// transformed output-gradient tile A g A^T times the transformed input tile
/// B^T d B around it, a GEMM over the tiles (F by C). Summed over every
/// group, the transform winogradWeightGrad turns them into dW.
Value addWinogradWeightGradProducts(OpBuilder &b, Location loc, Value g, Value images, const Window &w,
                                    int64_t tileSide, Value acc);

/// dW (F, 3, 3, C) of the products P (F, (m + 2)^2, C) of
/// addWinogradWeightGradProducts: G^T P G per (filter, channel), the
/// transpose of the forward's bilinear form (Lavin and Gray's F(3 x 3, m x
/// m) on the same points).
Value winogradWeightGrad(OpBuilder &b, Location loc, Value products, int64_t tileSide);

} // namespace symc::cpu

#endif // SYMC_CODEGEN_CPU_WINOGRADCONVOLUTION_H
