// RUN: symc-opt %s -split-input-file -sym-artifact-abi=prefix=net -sym-chunk-batch=chunk=2 -sym-lower-to-linalg=pack-weights=1 -sym-outline-prepare=prefix=net | FileCheck %s

// Two convolutions of one weight over a 4x4 map read it packed in filter
// strips: one prepared array, computed by net_prepare from the weight (input
// 1), listed in the manifest, read by the forward from a buffer after its
// outputs, through one to_tensor shared by both contractions.
// CHECK: \22prepare\22:{\22arrays\22:[{\22dtype\22:\22float32\22,\22inputs\22:[1],\22shape\22:[1,72,32],\22what\22:\22filter strips of 32\22}],\22entry\22:\22net_prepare\22}
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-SAME: %{{.*}}: memref<1x32x4x4xf32>, %{{.*}}: memref<1x32x4x4xf32>, %[[PACKED:.*]]: memref<1x72x32xf32>, %{{.*}}: memref<4xi64> {sym.run_error}, %{{.*}}: memref<?xi8>)
// CHECK: %[[READ:.*]] = bufferization.to_tensor %[[PACKED]] restrict
// CHECK-NOT: symc.prepare
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[READ]] : tensor<16x72xf32>, tensor<1x72x32xf32>) {{.*}} attrs = {symc.tap_contraction}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[READ]] : tensor<16x72xf32>, tensor<1x72x32xf32>) {{.*}} attrs = {symc.tap_contraction}
// CHECK-LABEL: func.func private @net_prepare_impl(
// CHECK-SAME: %{{.*}}: memref<1x8x4x4xf32>, %[[W:.*]]: memref<32x8x3x3xf32>, %[[OUT:.*]]: memref<1x72x32xf32>, %{{.*}}: memref<4xi64> {sym.run_error}, %{{.*}}: memref<?xi8>)
// CHECK-SAME: symc.entry_impl
// CHECK: bufferization.to_tensor %[[W]] restrict
// CHECK: linalg.transpose {{.*}} permutation = [1, 0]
// CHECK: %[[PACK:.*]] = linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK-NOT: symc.prepare
// CHECK: bufferization.materialize_in_destination %[[PACK]] in restrict writable %[[OUT]]
// CHECK-DAG: llvm.func @net_prepare(
// CHECK-DAG: llvm.func @net_forward(
func.func @main(%x: tensor<1x8x4x4xf32> {sym.name = "x"}, %w: tensor<32x8x3x3xf32> {sym.name = "w"}) -> (tensor<1x32x4x4xf32> {sym.name = "y"}, tensor<1x32x4x4xf32> {sym.name = "z"}) {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x4x4xf32> loc("conv0")
  %1 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x4x4xf32> loc("conv1")
  return %0, %1 : tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>
}

// -----

// What the packed weight is computed from moves with it: the relu of the
// weight runs in net_prepare, not in the forward.
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-NOT: arith.maximumf
// CHECK-LABEL: func.func private @net_prepare_impl(
// CHECK: arith.maximumf
func.func @main(%x: tensor<1x8x4x4xf32> {sym.name = "x"}, %w: tensor<32x8x3x3xf32> {sym.name = "w"}) -> (tensor<1x32x4x4xf32> {sym.name = "y"}) {
  %s = sym.relu %w : (tensor<32x8x3x3xf32>) -> tensor<32x8x3x3xf32> loc("act")
  %0 = sym.Convolution %x, %s {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x4x4xf32> loc("conv0")
  return %0 : tensor<1x32x4x4xf32>
}

// -----

// A dynamic batch runs in loops over chunks of rows and single rows: the
// weight packed in each is the same array, computed once by net_prepare.
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-SAME: %[[PACKED:[a-z0-9]*]]: memref<1x72x32xf32>, %{{.*}}: memref<4xi64> {sym.run_error}
// CHECK: %[[READ:.*]] = bufferization.to_tensor %[[PACKED]] restrict
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[READ]] : tensor<16x72xf32>, tensor<1x72x32xf32>)
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[READ]] : tensor<16x72xf32>, tensor<1x72x32xf32>)
// CHECK-LABEL: func.func private @net_prepare_impl(
func.func @main(%x: tensor<?x8x4x4xf32> {sym.name = "x"}, %w: tensor<32x8x3x3xf32> {sym.name = "w"}) -> (tensor<?x32x4x4xf32> {sym.name = "y"}) {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<?x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<?x32x4x4xf32> loc("conv0")
  return %0 : tensor<?x32x4x4xf32>
}

// -----

// Without pack-weights (CUDA code) nothing is prepared: the convolution is
// an im2col GEMM and the artifact has no prepare entry.
// RUN: symc-opt %s -split-input-file -sym-artifact-abi=prefix=net -sym-chunk-batch=chunk=2 -sym-lower-to-linalg -sym-outline-prepare=prefix=net | FileCheck %s --check-prefix=UNPACKED
// UNPACKED-NOT: prepare
// UNPACKED: linalg.matmul
// UNPACKED-NOT: prepare
func.func @main(%x: tensor<1x8x4x4xf32> {sym.name = "x"}, %w: tensor<32x8x3x3xf32> {sym.name = "w"}) -> (tensor<1x32x4x4xf32> {sym.name = "y"}) {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x4x4xf32> loc("conv0")
  return %0 : tensor<1x32x4x4xf32>
}
