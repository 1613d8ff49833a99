// RUN: symc-opt %s -split-input-file -sym-lower-to-linalg=pack-weights=1 | FileCheck %s

// The channels-last gradients, which exist only where weights are packed
// (the pipeline converts training to channels-last with them).

// Channels-last, a weight gradient over a small map multiplies g's columns
// (F, P), read across g's rows as they lie (no transposed copy), by the
// window rows, built in strips of 32 channels, (taps * C / 32, P, 32): the
// packed layout a tap contraction reads down contiguously, whose (F,
// strips, 32) result is the weight's own layout.
// CHECK-DAG: #[[G_COLUMNS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0)>
// CHECK-LABEL: func @weight_grad_strips
// CHECK-NOT: linalg.transpose ins(%{{.*}} : tensor<72x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x8x8x1x32xf32>) outs(%{{.*}} : tensor<3x3x1x2x6x6x32xf32>)
// CHECK: %[[STRIPS:.*]] = tensor.expand_shape {{.*}} output_shape [9, 72, 32]
// CHECK: linalg.generic {indexing_maps = [#[[G_COLUMNS]], {{.*}} ins(%{{.*}}, %[[STRIPS]] : tensor<72x8xf32>, tensor<9x72x32xf32>) outs(%{{.*}} : tensor<8x9x32xf32>)
func.func @weight_grad_strips(%g: tensor<2x6x6x8xf32>, %x: tensor<2x6x6x32xf32>, %w: tensor<8x3x3x32xf32>) -> tensor<8x3x3x32xf32> {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, no_bias = true, layout = "NHWC"} : (tensor<2x6x6x8xf32>, tensor<2x6x6x32xf32>, tensor<8x3x3x32xf32>) -> (tensor<2x6x6x32xf32>, tensor<8x3x3x32xf32>)
  return %dw : tensor<8x3x3x32xf32>
}

// -----

// A depthwise weight gradient: loops (n, y, x, i, j, c), each image's
// per-tap sums over its positions, the channels innermost; then the
// images' sums, laid out as the weight (C, kh, kw, 1).
// CHECK-DAG: #[[G:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>
// CHECK-DAG: #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4, d5)>
// CHECK-LABEL: func @depthwise_weight_grad
// CHECK: %[[IMAGES:.*]] = linalg.generic {indexing_maps = [#[[G]], #[[WINDOW]], #[[TAPS]]], iterator_types = ["parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%arg0, %{{.*}} : tensor<2x6x6x32xf32>, tensor<2x8x8x32xf32>) outs(%{{.*}} : tensor<2x3x3x32xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[IMAGES]] : tensor<2x3x3x32xf32>) outs(%{{.*}} : tensor<3x3x32xf32>)
// CHECK: linalg.transpose ins(%[[SUM]] : tensor<3x3x32xf32>) outs(%{{.*}} : tensor<32x3x3xf32>) permutation = [2, 0, 1]
func.func @depthwise_weight_grad(%g: tensor<2x6x6x32xf32>, %x: tensor<2x6x6x32xf32>, %w: tensor<32x3x3x1xf32>) -> tensor<32x3x3x1xf32> {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, num_group = 32 : i64, no_bias = true, layout = "NHWC"} : (tensor<2x6x6x32xf32>, tensor<2x6x6x32xf32>, tensor<32x3x3x1xf32>) -> (tensor<2x6x6x32xf32>, tensor<32x3x3x1xf32>)
  return %dw : tensor<32x3x3x1xf32>
}

// -----

// A channels-last weight gradient by Winograd, F(4x4, 3x3) as its forward:
// the input's tiles (B^T d B, 6 x 6 points) and the output gradient's (A g
// A^T, its 4 x 4 tiles), both laid out points first, one GEMM per point over
// the tiles of both images (filters by channels), then G^T P G per filter
// and channel.
// CHECK-LABEL: func @nhwc_winograd_weight_grad
// CHECK: %[[ACC:.*]] = linalg.fill {{.*}} outs(%{{.*}} : tensor<64x36x32xf32>)
// CHECK: tensor.pad %arg1 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x6x2x6x6x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<6x6x2x6x6x64xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[G:.*]], #[[D:.*]], #[[P:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<36x72x64xf32>, tensor<36x72x32xf32>) outs(%[[ACC]] : tensor<64x36x32xf32>) attrs = {symc.tap_contraction}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<64x6x3x32xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<64x1x3x1x3x32xf32>)
// CHECK: return %{{.*}} : tensor<64x3x3x32xf32>
func.func @nhwc_winograd_weight_grad(%g: tensor<2x24x24x64xf32>, %x: tensor<2x24x24x32xf32>, %w: tensor<64x3x3x32xf32>) -> tensor<64x3x3x32xf32> {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true, layout = "NHWC"} : (tensor<2x24x24x64xf32>, tensor<2x24x24x32xf32>, tensor<64x3x3x32xf32>) -> (tensor<2x24x24x32xf32>, tensor<64x3x3x32xf32>)
  return %dw : tensor<64x3x3x32xf32>
}
