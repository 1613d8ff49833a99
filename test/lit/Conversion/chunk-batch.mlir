// RUN: symc-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline='builtin.module(func.func(sym-chunk-batch{chunk=8}))' | FileCheck %s
// RUN: symc-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline='builtin.module(func.func(sym-chunk-batch{chunk=8 chunk-bytes=2048}))' \
// RUN:   | FileCheck %s --check-prefix=STATIC

// The ops that see the dynamic batch run on static 8-row chunks, then on
// single rows; the weights are used whole and the results are inserted into
// a batch-sized tensor.
// CHECK-LABEL: func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<3x4xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %[[ZERO:.*]] :
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK: %[[WHOLE:.*]] = arith.subi %[[N]]
// CHECK: %[[CHUNKS:.*]] = scf.for %[[ROW:.*]] = %[[ZERO]] to %[[WHOLE]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[OUT]])
// CHECK:   %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[ROW]], 0] [8, 4] [1, 1]
// CHECK:   %[[FC:.*]] = sym.FullyConnected %[[SLICE]], %[[W]] {{.*}} -> tensor<8x3xf32>
// CHECK:   %[[RELU:.*]] = sym.relu %[[FC]] : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:   tensor.insert_slice %[[RELU]] into %[[ACC]][%[[ROW]], 0] [8, 3] [1, 1]
// CHECK: %[[REST:.*]] = scf.for %{{.*}} = %[[WHOLE]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[CHUNKS]])
// CHECK:   sym.FullyConnected {{.*}} -> tensor<1x3xf32>
// CHECK: return %[[REST]]
func.func @mlp(%x: tensor<?x4xf32>, %w: tensor<3x4xf32>) -> tensor<?x3xf32> {
  %0 = sym.FullyConnected %x, %w {num_hidden = 3 : i64, no_bias = true} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  %1 = sym.relu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

// -----

// Ops on static values stay outside the loops.
// CHECK-LABEL: func @weights_outside
// CHECK: sym._mul_scalar {{.*}} -> tensor<3x4xf32>
// CHECK: scf.for
func.func @weights_outside(%x: tensor<?x4xf32>, %w: tensor<3x4xf32>) -> tensor<?x3xf32> {
  %s = sym._mul_scalar %w {scalar = 2.0 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = sym.FullyConnected %x, %s {num_hidden = 3 : i64, no_bias = true} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @sum_over_batch(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'sum' turns the dynamic batch dim into a static one}}
  %0 = sym.sum %x {axis = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_over_batch(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'softmax' combines elements across the dynamic batch dim}}
  %0 = sym.softmax %x {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Chunks would draw the same numbers: the generator counts elements from the
// start of the tensor it fills.
func.func @dropout_over_batch(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'Dropout' draws random numbers over the dynamic batch dim}}
  %0:2 = sym.Dropout %x {p = 0.5 : f64, sym.is_train} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %0#0 : tensor<?x4xf32>
}

// -----

func.func @rows_merged(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'Reshape' combines elements across the dynamic batch dim}}
  %0 = sym.Reshape %x {shape = array<i64: -1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dynamic_inner_dim(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{the CPU backend keeps only the leading (batch) dim dynamic; 'relu' has type 'tensor<4x?xf32>'}}
  %0 = sym.relu %x : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// MXNet's RNN recurs along dim 0 (time-major data): a dynamic leading dim
// is not a batch it could run in chunks.
func.func @rnn_over_time(%x: tensor<?x2x3xf32>, %w: tensor<36xf32>, %h: tensor<1x2x4xf32>) -> tensor<?x2x4xf32> {
  // expected-error @+1 {{'RNN' combines elements across the dynamic batch dim}}
  %0 = sym.RNN %x, %w, %h {mode = "rnn_tanh", num_layers = 1 : i64, state_size = 4 : i64} : (tensor<?x2x3xf32>, tensor<36xf32>, tensor<1x2x4xf32>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// -----

// A static batch of 4 rows of 1 KB outgrows 2 KB: the ops that see it run
// on chunks of 2 rows; the scale, which is not the batch, is read whole.
// STATIC-LABEL: func @static_chunks
// STATIC-SAME: (%[[X:.*]]: tensor<4x256xf32> {sym.batch}, %[[S:.*]]: tensor<1x256xf32>)
// STATIC: %[[OUT:.*]] = tensor.empty() : tensor<4x256xf32>
// STATIC: %[[LOOP:.*]] = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %[[STEP:.*]] iter_args(%[[ACC:.*]] = %[[OUT]])
// STATIC:   %[[SLICE:.*]] = tensor.extract_slice %[[X]][%[[ROW]], 0] [2, 256] [1, 1]
// STATIC:   %[[RELU:.*]] = sym.relu %[[SLICE]] : (tensor<2x256xf32>) -> tensor<2x256xf32>
// STATIC:   %[[MUL:.*]] = sym.broadcast_mul %[[RELU]], %[[S]] : (tensor<2x256xf32>, tensor<1x256xf32>) -> tensor<2x256xf32>
// STATIC:   tensor.insert_slice %[[MUL]] into %[[ACC]][%[[ROW]], 0] [2, 256] [1, 1]
// STATIC: return %[[LOOP]]
func.func @static_chunks(%x: tensor<4x256xf32> {sym.batch}, %s: tensor<1x256xf32>) -> tensor<4x256xf32> {
  %0 = sym.relu %x : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %1 = sym.broadcast_mul %0, %s : (tensor<4x256xf32>, tensor<1x256xf32>) -> tensor<4x256xf32>
  return %1 : tensor<4x256xf32>
}

// -----

// A batch that fits stays whole.
// STATIC-LABEL: func @static_fits
// STATIC-NOT: scf.for
func.func @static_fits(%x: tensor<4x64xf32> {sym.batch}) -> tensor<4x64xf32> {
  %0 = sym.relu %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// Weights each chunk would read again, heavier than its activations.
// STATIC-LABEL: func @static_heavy_weights
// STATIC-NOT: scf.for
func.func @static_heavy_weights(%x: tensor<4x1x256xf32> {sym.batch}, %s: tensor<8x256xf32>) -> tensor<4x8x256xf32> {
  %0 = sym.broadcast_mul %x, %s : (tensor<4x1x256xf32>, tensor<8x256xf32>) -> tensor<4x8x256xf32>
  return %0 : tensor<4x8x256xf32>
}

// -----

// Arithmetic-bound: a 3x3 convolution doing 72 flops per byte it writes
// (its weights are light enough to read again per chunk).
// STATIC-LABEL: func @static_compute_bound
// STATIC-NOT: scf.for
func.func @static_compute_bound(%x: tensor<4x16x32x32xf32> {sym.batch}, %w: tensor<16x16x3x3xf32>) -> tensor<4x16x32x32xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<4x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<4x16x32x32xf32>
  return %0 : tensor<4x16x32x32xf32>
}

// -----

// An op that mixes rows leaves the function as it is.
// STATIC-LABEL: func @static_mixed_rows
// STATIC-NOT: scf.for
func.func @static_mixed_rows(%x: tensor<4x256xf32> {sym.batch}) -> tensor<4x256xf32> {
  %0 = sym.relu %x : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %1 = sym.softmax %0 {axis = 0 : i64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  return %1 : tensor<4x256xf32>
}
