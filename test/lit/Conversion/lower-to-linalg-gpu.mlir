// RUN: symc-opt %s --sym-lower-to-linalg=gpu=true --split-input-file | FileCheck %s

// GPU code (the gpu option, set by the cuda pipeline): a convolution over
// a map of 196 or more positions is a stack of products sharing the weight
// (F, C*K) over each image's im2col columns (N, C*K, O), written in the
// output's own layout: sym-offload-matmuls makes it one strided-batched
// cuBLAS GEMM.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[COLS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @convolution
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}{{.*}} outs(%{{.*}} : tensor<2x8x3x3x16x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[W]], #[[COLS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: tensor<4x72xf32>, tensor<2x72x256xf32>
func.func @convolution(%x: tensor<2x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<2x4x16x16xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<2x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

// Over a 1x1 stride-1 window the images are their own columns: no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: tensor.pad
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0
// CHECK: %[[X:.*]] = tensor.expand_shape %[[FLAT]] {{.*}} into tensor<2x8x256xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<4x8xf32>, tensor<2x8x256xf32>)
func.func @pointwise(%x: tensor<2x8x16x16xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<2x4x16x16xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<2x8x16x16xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

// The weight gradient: g as (F, N*O) (a transpose of its outer dims) times
// the im2col columns (C*K, N*O) read along their rows: B transposed, which
// cuBLAS reads as it lies. The product is the weight's own layout.
// CHECK-DAG: #[[G:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[COLS_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @weight_grad
// CHECK: tensor.pad %arg1
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x256xf32>) outs(%{{.*}} : tensor<4x2x256xf32>) permutation = [1, 0, 2]
// CHECK: linalg.generic {indexing_maps = [#[[G]], #[[COLS_T]], #[[DW]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: tensor<4x512xf32>, tensor<72x512xf32>
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape {{.*}} into tensor<4x8x3x3xf32>
func.func @weight_grad(%g: tensor<2x4x16x16xf32>, %x: tensor<2x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<4x8x3x3xf32> {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<2x4x16x16xf32>, tensor<2x8x16x16xf32>, tensor<4x8x3x3xf32>) -> (tensor<2x8x16x16xf32>, tensor<4x8x3x3xf32>)
  return %dw : tensor<4x8x3x3xf32>
}

// -----

// A max pooling's gradient, gathered at each input element: the first
// largest position of each window (i64), then every element sums the
// gradients of the windows that cover it and pick it.
// CHECK-LABEL: func.func @max_pooling_grad
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x4xi64>)
// CHECK: linalg.index
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x8x8xf32>)
// CHECK: scf.for
// CHECK: tensor.extract %[[FIRST]]
// CHECK: arith.cmpi eq
func.func @max_pooling_grad(%g: tensor<1x2x4x4xf32>, %x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %0 = sym._backward_Pooling %g, %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, pool_type = "max"} : (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}
