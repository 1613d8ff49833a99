// RUN: symc-opt %s -split-input-file -pass-pipeline='builtin.module(sym-channels-last)' | FileCheck %s
// RUN: symc-opt %s -split-input-file -pass-pipeline='builtin.module(sym-channels-last{functions=main_train,main_backward})' | FileCheck %s --check-prefix=PAIR

// A pointwise convolution, its BatchNorm and clip, a depthwise convolution
// and the residual add run channels-last: one transpose in, none between
// the layers (the one after each convolution folds into the next one's),
// one transpose out. BatchNorm normalizes along the last axis.
// CHECK-LABEL: func @block
// CHECK-SAME: (%[[X:.*]]: tensor<1x32x8x8xf32>, %[[W1:.*]]: tensor<64x32x1x1xf32>, %[[W2:.*]]: tensor<64x1x3x3xf32>
// CHECK: %[[XT:.*]] = sym.transpose %[[X]] {axes = array<i64: 0, 2, 3, 1>} {{.*}} -> tensor<1x8x8x32xf32>
// CHECK: %[[W1T:.*]] = sym.transpose %[[W1]] {axes = array<i64: 0, 2, 3, 1>} {{.*}} -> tensor<64x1x1x32xf32>
// CHECK: %[[C1:.*]] = sym.Convolution %[[XT]], %[[W1T]] {{.*}}layout = "NHWC"{{.*}} -> tensor<1x8x8x64xf32>
// CHECK: %[[BN:.*]], %{{.*}}, %{{.*}} = sym.BatchNorm %[[C1]], {{.*}}axis = 3 : i64{{.*}} -> (tensor<1x8x8x64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[R:.*]] = sym.clip %[[BN]] {{.*}} -> tensor<1x8x8x64xf32>
// CHECK: %[[W2T:.*]] = sym.transpose %[[W2]] {{.*}} -> tensor<64x3x3x1xf32>
// CHECK: %[[C2:.*]] = sym.Convolution %[[R]], %[[W2T]] {{.*}}layout = "NHWC"{{.*}} -> tensor<1x8x8x64xf32>
// CHECK: %[[SUM:.*]] = sym.elemwise_add %[[C2]], %[[R]] {{.*}} -> tensor<1x8x8x64xf32>
// CHECK: %[[OUT:.*]] = sym.transpose %[[SUM]] {axes = array<i64: 0, 3, 1, 2>} {{.*}} -> tensor<1x64x8x8xf32>
// CHECK-NOT: sym.transpose
// CHECK: return %[[OUT]]
func.func @block(%x: tensor<1x32x8x8xf32>, %w1: tensor<64x32x1x1xf32>, %w2: tensor<64x1x3x3xf32>, %g: tensor<64xf32>,
                 %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<1x64x8x8xf32> {
  %0 = sym.Convolution %x, %w1 {kernel = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true} : (tensor<1x32x8x8xf32>, tensor<64x32x1x1xf32>) -> tensor<1x64x8x8xf32>
  %1:3 = sym.BatchNorm %0, %g, %b, %m, %v {fix_gamma = false} : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>)
  %2 = sym.clip %1#0 {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %3 = sym.Convolution %2, %w2 {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 64 : i64, num_group = 64 : i64, no_bias = true} : (tensor<1x64x8x8xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x8x8xf32>
  %4 = sym.elemwise_add %3, %2 : (tensor<1x64x8x8xf32>, tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %4 : tensor<1x64x8x8xf32>
}

// -----

// A pooling and a concatenation go channels-last too; a grouped (not
// depthwise) convolution has no channels-last kernel: the transpose back
// stops before it.
// CHECK-LABEL: func @pool_concat_groups
// CHECK: %[[C:.*]] = sym.Convolution {{.*}}layout = "NHWC"{{.*}} -> tensor<1x6x6x16xf32>
// CHECK: %[[R:.*]] = sym.Activation %[[C]] {{.*}} -> tensor<1x6x6x16xf32>
// CHECK: %[[P:.*]] = sym.Pooling %[[R]] {{.*}}layout = "NHWC"{{.*}} -> tensor<1x3x3x16xf32>
// CHECK: %[[Q:.*]] = sym.Pooling %[[R]] {{.*}}layout = "NHWC"{{.*}} -> tensor<1x3x3x16xf32>
// CHECK: %[[CAT:.*]] = sym.Concat %[[P]], %[[Q]] {dim = 3 : i64{{.*}} -> tensor<1x3x3x32xf32>
// CHECK: %[[BACK:.*]] = sym.transpose %[[CAT]] {axes = array<i64: 0, 3, 1, 2>} {{.*}} -> tensor<1x32x3x3xf32>
// CHECK: sym.Convolution %[[BACK]], %{{.*}}num_group = 2 : i64
// CHECK-NOT: layout
func.func @pool_concat_groups(%x: tensor<1x8x6x6xf32>, %w: tensor<16x8x3x3xf32>, %w2: tensor<32x16x1x1xf32>) -> tensor<1x32x3x3xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x6x6xf32>
  %1 = sym.Activation %0 {act_type = "relu"} : (tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %2 = sym.Pooling %1 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pool_type = "max"} : (tensor<1x16x6x6xf32>) -> tensor<1x16x3x3xf32>
  %3 = sym.Pooling %1 {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, pool_type = "avg"} : (tensor<1x16x6x6xf32>) -> tensor<1x16x3x3xf32>
  %4 = sym.Concat %2, %3 {num_args = 2 : i64} : (tensor<1x16x3x3xf32>, tensor<1x16x3x3xf32>) -> tensor<1x32x3x3xf32>
  %5 = sym.Convolution %4, %w2 {kernel = array<i64: 1, 1>, num_filter = 32 : i64, num_group = 2 : i64, no_bias = true} : (tensor<1x32x3x3xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x3x3xf32>
  return %5 : tensor<1x32x3x3xf32>
}

// -----

// A squeeze-and-excitation scale (N, C, 1, 1) is transposed to the
// channels-last one's layout, not the other way round; two small operands
// stay as they are.
// CHECK-LABEL: func @excitation
// CHECK: %[[C:.*]] = sym.Convolution {{.*}}layout = "NHWC"{{.*}} -> tensor<1x4x4x32xf32>
// CHECK: %[[S:.*]] = sym.transpose %{{.*}} {axes = array<i64: 0, 2, 3, 1>} {{.*}} -> tensor<1x1x1x32xf32>
// CHECK: %[[M:.*]] = sym.broadcast_mul %[[C]], %[[S]] {{.*}} -> tensor<1x4x4x32xf32>
// CHECK: sym.transpose %[[M]] {axes = array<i64: 0, 3, 1, 2>}
// CHECK: sym.broadcast_add %{{.*}}, %{{.*}} : (tensor<1x32x1x1xf32>, tensor<1x1x4x4xf32>) -> tensor<1x32x4x4xf32>
func.func @excitation(%x: tensor<1x16x4x4xf32>, %w: tensor<32x16x1x1xf32>, %s: tensor<1x32x1x1xf32>, %t: tensor<1x1x4x4xf32>) -> (tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>) {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x16x4x4xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32>
  %1 = sym.broadcast_mul %0, %s : (tensor<1x32x4x4xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x4x4xf32>
  %2 = sym.broadcast_add %s, %t : (tensor<1x32x1x1xf32>, tensor<1x1x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %1, %2 : tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>
}

// -----

// A function that trains keeps its layout by default: the training pair is
// converted by name, before the artifact's signatures are fixed (below).
// CHECK-LABEL: func @training
// CHECK-NOT: sym.transpose
// CHECK-NOT: NHWC
func.func @training(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8x6x6xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, no_bias = true} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  %1:3 = sym.BatchNorm %0, %g, %b, %m, %v {fix_gamma = false, sym.is_train} : (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  return %1#0 : tensor<2x8x6x6xf32>
}

// -----

// The training pair: @main_train runs the convolution, its BatchNorm and
// relu channels-last and saves the convolution's and the relu's outputs
// so; @main_backward reads them so, and the gradients of the relu, the
// BatchNorm and the convolution run channels-last with no transpose
// between them. The convolution over 4 channels stays channels-first and
// hands its output on channels-last (saved so too).
// PAIR-LABEL: func @main_train
// PAIR-SAME: -> (tensor<2x8x6x6xf32>, tensor<2x6x6x8xf32> {sym.saved = "c_output0"}, tensor<2x6x6x8xf32> {sym.saved = "r_output0"}
// PAIR-SAME: tensor<2x6x6x16xf32> {sym.saved = "c0_output0"}
// PAIR: %[[S:.*]] = sym.Convolution {{.*}}num_filter = 16 : i64{{.*}} -> tensor<2x16x6x6xf32>
// PAIR: %[[SL:.*]] = sym.transpose %[[S]] {axes = array<i64: 0, 2, 3, 1>}
// PAIR-NOT: symc.hand_on_channels_last
// PAIR: %[[C:.*]] = sym.Convolution %[[SL]], {{.*}}layout = "NHWC"{{.*}} -> tensor<2x6x6x8xf32>
// PAIR: %[[BN:.*]], %[[MEAN:.*]], %[[VAR:.*]] = sym.BatchNorm %[[C]], {{.*}}axis = 3 : i64
// PAIR: %[[R:.*]] = sym.Activation %[[BN]]
// PAIR: %[[OUT:.*]] = sym.transpose %[[R]] {axes = array<i64: 0, 3, 1, 2>}
// PAIR: return %[[OUT]], %[[C]], %[[R]], %[[MEAN]], %[[VAR]], %[[SL]] :
// PAIR-LABEL: func @main_backward
// PAIR-SAME: %[[HG:[^:]*]]: tensor<2x8x6x6xf32>, %[[SC:[^:]*]]: tensor<2x6x6x8xf32> {sym.saved = "c_output0"}, %[[SR:[^:]*]]: tensor<2x6x6x8xf32> {sym.saved = "r_output0"}
// PAIR: %[[G:.*]] = sym.transpose %[[HG]] {axes = array<i64: 0, 2, 3, 1>}
// PAIR: %[[G1:.*]] = sym._backward_relu %[[G]], %[[SR]] {{.*}} -> tensor<2x6x6x8xf32>
// PAIR-NOT: sym.transpose {{.*}} -> tensor<2x8x6x6xf32>
// PAIR: %[[G2:.*]], %{{.*}}, %{{.*}} = sym._backward_BatchNorm %[[G1]], %[[SC]], {{.*}}axis = 3 : i64
// PAIR-NOT: sym.transpose {{.*}} -> tensor<2x8x6x6xf32>
// PAIR: %[[DX:.*]], %[[DW:.*]] = sym._backward_Convolution %[[G2]], {{.*}}layout = "NHWC"{{.*}} -> (tensor<2x6x6x16xf32>, tensor<8x3x3x16xf32>)
// PAIR: sym.transpose %[[DX]] {axes = array<i64: 0, 3, 1, 2>}
// PAIR: sym.transpose %[[DW]] {axes = array<i64: 0, 3, 1, 2>}
// PAIR: sym._backward_Convolution {{.*}} -> (tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>)
// The default run leaves both as they are.
// CHECK-LABEL: func @main_train
// CHECK-NOT: NHWC
func.func @main_train(%x: tensor<2x4x6x6xf32>, %w0: tensor<16x4x3x3xf32>, %w: tensor<8x16x3x3xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>)
    -> (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32> {sym.saved = "c_output0"}, tensor<2x8x6x6xf32> {sym.saved = "r_output0"},
        tensor<8xf32> {sym.saved = "bn_output1"}, tensor<8xf32> {sym.saved = "bn_output2"}, tensor<2x16x6x6xf32> {sym.saved = "c0_output0"}) {
  %x1 = sym.Convolution %x, %w0 {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>) -> tensor<2x16x6x6xf32>
  %0 = sym.Convolution %x1, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, no_bias = true} : (tensor<2x16x6x6xf32>, tensor<8x16x3x3xf32>) -> tensor<2x8x6x6xf32>
  %1:3 = sym.BatchNorm %0, %g, %b, %m, %v {fix_gamma = false, sym.is_train} : (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  %2 = sym.Activation %1#0 {act_type = "relu"} : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  return %2, %0, %2, %1#1, %1#2, %x1 : tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x16x6x6xf32>
}
func.func @main_backward(%x: tensor<2x4x6x6xf32>, %w0: tensor<16x4x3x3xf32>, %w: tensor<8x16x3x3xf32>, %g: tensor<8xf32>, %hg: tensor<2x8x6x6xf32>,
                         %sc: tensor<2x8x6x6xf32> {sym.saved = "c_output0"}, %sr: tensor<2x8x6x6xf32> {sym.saved = "r_output0"},
                         %mean: tensor<8xf32> {sym.saved = "bn_output1"}, %invstd: tensor<8xf32> {sym.saved = "bn_output2"},
                         %x1: tensor<2x16x6x6xf32> {sym.saved = "c0_output0"}) -> (tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>, tensor<8x16x3x3xf32>) {
  %0 = sym._backward_relu %hg, %sr : (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %1:3 = sym._backward_BatchNorm %0, %sc, %g, %mean, %invstd {fix_gamma = false, sym.is_train} : (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  %2:2 = sym._backward_Convolution %1#0, %x1, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, no_bias = true} : (tensor<2x8x6x6xf32>, tensor<2x16x6x6xf32>, tensor<8x16x3x3xf32>) -> (tensor<2x16x6x6xf32>, tensor<8x16x3x3xf32>)
  %3:2 = sym._backward_Convolution %2#0, %x, %w0 {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<2x16x6x6xf32>, tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>) -> (tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>)
  return %3#0, %3#1, %2#1 : tensor<2x4x6x6xf32>, tensor<16x4x3x3xf32>, tensor<8x16x3x3xf32>
}

// -----

// A training step's stem (3 channels: channels-first) hands its output on
// channels-last: its BatchNorm, relu and max pooling run channels-last up
// to the next convolution, with one transpose after the stem, none after
// the pooling. A result that is not saved gets no transpose pair.
// PAIR-LABEL: func @main_train
// PAIR: %[[S:.*]] = sym.Convolution {{.*}} -> tensor<2x16x8x8xf32>
// PAIR-NEXT: %[[SL:.*]] = sym.transpose %[[S]] {axes = array<i64: 0, 2, 3, 1>}
// PAIR-NEXT: %[[BN:.*]], %{{.*}}, %{{.*}} = sym.BatchNorm %[[SL]], {{.*}}axis = 3 : i64
// PAIR-NEXT: %[[R:.*]] = sym.Activation %[[BN]]
// PAIR-NEXT: %[[P:.*]] = sym.Pooling %[[R]] {{.*}}layout = "NHWC"
// PAIR-NOT: sym.transpose %[[P]]
// PAIR: sym.Convolution %[[P]], {{.*}}layout = "NHWC"
// PAIR: %[[STEM2:.*]] = sym.Convolution %{{.*}} -> tensor<2x16x4x4xf32>
// PAIR-NEXT: return %[[STEM2]]
func.func @main_train(%x: tensor<2x3x8x8xf32>, %w0: tensor<16x3x3x3xf32>, %w: tensor<4x16x1x1xf32>, %w2: tensor<16x4x1x1xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  %0 = sym.Convolution %x, %w0 {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %1:3 = sym.BatchNorm %0, %g, %b, %m, %v {fix_gamma = false, sym.is_train} : (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  %2 = sym.Activation %1#0 {act_type = "relu"} : (tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %3 = sym.Pooling %2 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pool_type = "max"} : (tensor<2x16x8x8xf32>) -> tensor<2x16x4x4xf32>
  %4 = sym.Convolution %3, %w {kernel = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<2x16x4x4xf32>, tensor<4x16x1x1xf32>) -> tensor<2x4x4x4xf32>
  %5 = sym.Convolution %4, %w2 {kernel = array<i64: 1, 1>, num_filter = 16 : i64, no_bias = true} : (tensor<2x4x4x4xf32>, tensor<16x4x1x1xf32>) -> tensor<2x16x4x4xf32>
  return %5 : tensor<2x16x4x4xf32>
}
