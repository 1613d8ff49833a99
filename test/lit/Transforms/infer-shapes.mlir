// RUN: symc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(sym-infer-shapes{shapes=data:4x3x8x8}))' | FileCheck %s
// RUN: symc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(sym-infer-shapes{shapes=data:?x3x8x8}))' | FileCheck %s --check-prefix=DYN

// Weights are recovered from the data shape; the batch stays dynamic under '?'.
// CHECK-LABEL: func @weights_from_data
// CHECK-SAME: tensor<4x3x8x8xf32>
// CHECK-SAME: tensor<16x3x3x3xf32>
// CHECK-SAME: tensor<16xf32>
// CHECK-SAME: tensor<10x256xf32>
// CHECK-SAME: -> tensor<4x10xf32>
// DYN-LABEL: func @weights_from_data
// DYN-SAME: tensor<?x3x8x8xf32>
// DYN-SAME: tensor<10x256xf32>
// DYN-SAME: -> tensor<?x10xf32>
func.func @weights_from_data(%data: tensor<*xf32> {sym.name = "data"}, %w: tensor<*xf32> {sym.name = "w"},
                             %b: tensor<*xf32> {sym.name = "b"}, %fw: tensor<*xf32> {sym.name = "fw"})
    -> tensor<*xf32> {
  %0 = sym.Convolution %data, %w, %b {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64} : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %1 = sym.Pooling %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<*xf32>) -> tensor<*xf32>
  %2 = sym.FullyConnected %1, %fw {num_hidden = 10 : i64, no_bias = true} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %2 : tensor<*xf32>
}

// -----

// Backward inference: _zeros(shape=(0, 8)) takes its batch from the data path.
// CHECK-LABEL: func @state_from_consumer
// CHECK: sym._zeros {{.*}} -> tensor<4x8xf32>
// CHECK: sym.elemwise_add {{.*}} -> tensor<4x8xf32>
func.func @state_from_consumer(%data: tensor<*xf32> {sym.name = "data"}, %w: tensor<*xf32> {sym.name = "w"})
    -> tensor<*xf32> {
  %0 = sym.FullyConnected %data, %w {num_hidden = 8 : i64, no_bias = true} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %1 = sym._zeros {shape = array<i64: 0, 8>} : () -> tensor<*xf32>
  %2 = sym.elemwise_add %0, %1 : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %2 : tensor<*xf32>
}

// -----

// An unknown input dim is recovered from a known output (ReverseReshapeInferShape).
// CHECK-LABEL: func @reshape_backward
// CHECK-SAME: %{{.*}}: tensor<4x3x8x8xf32>
// CHECK-SAME: %{{.*}}: tensor<6x4xf32>
func.func @reshape_backward(%data: tensor<*xf32> {sym.name = "data"}, %x: tensor<?x4xf32> {sym.name = "x"})
    -> tensor<*xf32> {
  %0 = sym.Reshape %x {shape = array<i64: 2, 12>} : (tensor<?x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// The arguments that carry the batch are marked: inferring again with the
// given leading dims unknown leaves theirs unknown, the label's too (only
// the loss ties it to the data). A dynamic batch marks none.
// CHECK-LABEL: func @batch_arguments
// CHECK-SAME: {sym.batch, sym.name = "data"}
// CHECK-SAME: %{{[^:]*}}: tensor<4x192xf32> {sym.name = "w"}
// CHECK-SAME: {sym.batch, sym.name = "label"}
// DYN-LABEL: func @batch_arguments
// DYN-NOT: sym.batch
// DYN: return
func.func @batch_arguments(%data: tensor<*xf32> {sym.name = "data"}, %w: tensor<*xf32> {sym.name = "w"},
                           %label: tensor<*xf32> {sym.name = "label"}) -> tensor<*xf32> {
  %0 = sym.FullyConnected %data, %w {num_hidden = 4 : i64, no_bias = true} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %1 = sym.SoftmaxOutput %0, %label : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// Reshape codes keep a dynamic batch dynamic instead of failing.
// CHECK-LABEL: func @reshape_codes
// CHECK: sym.Reshape {{.*}} -> tensor<4x192xf32>
// CHECK: sym.Reshape {{.*}} -> tensor<96x8xf32>
// DYN-LABEL: func @reshape_codes
// DYN: sym.Reshape {{.*}} -> tensor<?x192xf32>
// DYN: sym.Reshape {{.*}} -> tensor<?x8xf32>
func.func @reshape_codes(%data: tensor<*xf32> {sym.name = "data"}) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = sym.Reshape %data {shape = array<i64: 0, -1>} : (tensor<*xf32>) -> tensor<*xf32>
  %1 = sym.Reshape %data {shape = array<i64: -1, 8>} : (tensor<*xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Channels-last: data (N, H, W, C) = 4x3x8x8 read as 3x8 images of 8
// channels; the weight (F, kh, kw, C / G) and the output (N, H', W', F).
// CHECK-LABEL: func @nhwc
// CHECK-SAME: tensor<4x3x8x8xf32>
// CHECK-SAME: tensor<6x3x3x4xf32>
// CHECK-SAME: -> tensor<4x2x4x6xf32>
func.func @nhwc(%data: tensor<*xf32> {sym.name = "data"}, %w: tensor<*xf32> {sym.name = "w"}) -> tensor<*xf32> {
  %0 = sym.Convolution %data, %w {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, num_filter = 6 : i64, num_group = 2 : i64, no_bias = true, layout = "NHWC"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
