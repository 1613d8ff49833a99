// RUN: symc-opt %s -split-input-file -sym-lower-to-linalg=pack-weights=1 | FileCheck %s

// The channels-last gradients, which exist only where weights are packed
// (the pipeline converts training to channels-last with them).

// Channels-last, a weight gradient over a small map multiplies g's columns
// (F, P) by the window rows, built in strips of 32 channels, (taps * C /
// 32, P, 32): the packed layout a tap contraction reads down contiguously,
// whose (F, strips, 32) result is the weight's own layout.
// CHECK-LABEL: func @weight_grad_strips
// CHECK: %[[COLUMNS:.*]] = linalg.transpose ins(%{{.*}} : tensor<72x8xf32>) outs(%{{.*}} : tensor<8x72xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x8x8x1x32xf32>) outs(%{{.*}} : tensor<3x3x1x2x6x6x32xf32>)
// CHECK: %[[STRIPS:.*]] = tensor.expand_shape {{.*}} output_shape [9, 72, 32]
// CHECK: linalg.generic {{.*}} ins(%[[COLUMNS]], %[[STRIPS]] : tensor<8x72xf32>, tensor<9x72x32xf32>) outs(%{{.*}} : tensor<8x9x32xf32>)
func.func @weight_grad_strips(%g: tensor<2x6x6x8xf32>, %x: tensor<2x6x6x32xf32>, %w: tensor<8x3x3x32xf32>) -> tensor<8x3x3x32xf32> {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, no_bias = true, layout = "NHWC"} : (tensor<2x6x6x8xf32>, tensor<2x6x6x32xf32>, tensor<8x3x3x32xf32>) -> (tensor<2x6x6x32xf32>, tensor<8x3x3x32xf32>)
  return %dw : tensor<8x3x3x32xf32>
}
