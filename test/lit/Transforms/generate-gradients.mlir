// RUN: symc-opt %s -split-input-file -verify-diagnostics -sym-generate-gradients | FileCheck %s

// MXNet's docstring example c = 2*a + b: a head gradient for the output, then
// grad a = 2 * head and grad b = head.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32> {sym.name = "a"}, %[[B:.*]]: tensor<2xf32> {sym.name = "b"}, %[[HEAD:.*]]: tensor<2xf32> {sym.head_grad_of = "c"})
// CHECK-SAME: -> (tensor<2xf32> {sym.grad_of = "a"}, tensor<2xf32> {sym.grad_of = "b"})
// CHECK: %[[GA:.*]] = sym._mul_scalar %[[HEAD]] {is_int = false, scalar = 2.0{{.*}}}
// CHECK: return %[[GA]], %[[HEAD]]
func.func @main(%a: tensor<2xf32> {sym.name = "a"}, %b: tensor<2xf32> {sym.name = "b"}) -> (tensor<2xf32> {sym.name = "c"}) {
  %0 = sym._mul_scalar %a {scalar = 2.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = sym.elemwise_add %0, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// A duplicated input accumulates: d(x*x) = g*x + g*x.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32> {sym.name = "x"}, %[[HEAD:.*]]: tensor<3xf32> {sym.head_grad_of = "y"})
// CHECK: %[[L:.*]] = sym.elemwise_mul %[[HEAD]], %[[X]]
// CHECK: %[[R:.*]] = sym.elemwise_mul %[[HEAD]], %[[X]]
// CHECK: %[[SUM:.*]] = sym.elemwise_add %[[L]], %[[R]]
// CHECK: return %[[SUM]]
func.func @main(%x: tensor<3xf32> {sym.name = "x"}) -> (tensor<3xf32> {sym.name = "y"}) {
  %0 = sym.elemwise_mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// BlockGrad stops the gradient: x gets zeros, and nothing before the block is
// differentiated (exp has a rule, but no gradient reaches it).
// CHECK-LABEL: func.func @main_backward
// CHECK-NOT: sym.elemwise_mul
// CHECK: %[[Z:.*]] = sym._zeros {dtype = f32, shape = array<i64: 3>}
// CHECK: return %[[Z]]
func.func @main(%x: tensor<3xf32> {sym.name = "x"}) -> (tensor<3xf32> {sym.name = "y"}) {
  %0 = sym.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %1 = sym.BlockGrad %0 : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

// make_loss ignores the head gradient: no head-gradient argument, and its
// gradient is ones.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%{{.*}}: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.grad_of = "x"})
// CHECK: %[[ONES:.*]] = sym._ones {dtype = f32, shape = array<i64: 2, 3>}
// CHECK: %[[G:.*]] = sym.elemwise_mul %[[ONES]]
// CHECK: return %[[G]]
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.name = "loss"}) {
  %0 = sym.square %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = sym.make_loss %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// FullyConnected: dX = g W, dW = g^T X, db = sum(g, 0); a broadcast operand's
// gradient is summed over its broadcast dims. Shapes are inferred.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: -> (tensor<4x5xf32> {sym.grad_of = "x"}, tensor<6x5xf32> {sym.grad_of = "w"}, tensor<6xf32> {sym.grad_of = "bias"}, tensor<1x6xf32> {sym.grad_of = "shift"})
// CHECK: sym.sum {{.*}} {axis = array<i64: 0>, keepdims = true} : (tensor<4x6xf32>) -> tensor<1x6xf32>
// CHECK: sym.dot {{.*}} : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK: sym.dot {{.*}} {transpose_a = true} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK: sym.sum {{.*}} {axis = array<i64: 0>} : (tensor<4x6xf32>) -> tensor<6xf32>
func.func @main(%x: tensor<4x5xf32> {sym.name = "x"}, %w: tensor<6x5xf32> {sym.name = "w"}, %bias: tensor<6xf32> {sym.name = "bias"}, %shift: tensor<1x6xf32> {sym.name = "shift"}) -> (tensor<4x6xf32> {sym.name = "y"}) {
  %0 = sym.FullyConnected %x, %w, %bias {num_hidden = 6 : i64} : (tensor<4x5xf32>, tensor<6x5xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %1 = sym.broadcast_add %0, %shift : (tensor<4x6xf32>, tensor<1x6xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// An op on the gradient path without a rule (a backward op, which no
// imported graph holds) is an error at its node.
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.name = "y"}) {
  // expected-error @+1 {{no gradient rule for '_backward_relu' yet}}
  %0 = sym._backward_relu %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A channels-last convolution (which MXNet's CPU build cannot run at all)
// has no gradient: training is for the NCHW model.
func.func @main(%x: tensor<1x4x4x2xf32> {sym.name = "x"}, %w: tensor<3x1x1x2xf32> {sym.name = "w"}) -> (tensor<1x4x4x3xf32> {sym.name = "y"}) {
  // expected-error @+1 {{Convolution with layout NHWC has no gradient in symc: train the NCHW model}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 3 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

func.func @main(%x: tensor<1x4x4x2xf32> {sym.name = "x"}) -> (tensor<1x2x2x2xf32> {sym.name = "y"}) {
  // expected-error @+1 {{Pooling with layout NHWC has no gradient in symc: train the NCHW model}}
  %0 = sym.Pooling %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, layout = "NHWC"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Ops with hidden outputs (LRN's norm, Dropout's mask, rrelu's slopes) take
// a head gradient for their first output only. LRN's gradient reads its norm;
// Dropout's multiplies by the mask it drew in training; rrelu's reads the
// slopes it drew.
// CHECK-LABEL: func.func @main_train
// CHECK: sym.Dropout {{.*}}sym.is_train
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x2x2xf32> {sym.name = "x"}, %[[G:[^:]*]]: tensor<1x3x2x2xf32> {sym.head_grad_of = "y"})
// CHECK: %[[L:[^,]*]], %[[NORM:.*]] = sym.LRN %[[X]]
// CHECK: %[[D:[^,]*]], %[[MASK:.*]] = sym.Dropout %[[L]]
// CHECK: %[[R:[^,]*]], %[[SLOPES:.*]] = sym.LeakyReLU %[[D]] {act_type = "rrelu"
// CHECK: %[[GR:.*]] = sym._backward_LeakyReLU %[[G]], %[[D]], %[[R]], %[[SLOPES]] {act_type = "rrelu"
// CHECK: %[[GD:.*]] = sym.broadcast_mul %[[GR]], %[[MASK]]
// CHECK: %[[GL:.*]] = sym._backward_LRN %[[GD]], %[[X]], %[[NORM]]
// CHECK: return %[[GL]]
func.func @main(%x: tensor<1x3x2x2xf32> {sym.name = "x"}) -> (tensor<1x3x2x2xf32> {sym.name = "y"}) {
  %0:2 = sym.LRN %x {nsize = 3 : i64} : (tensor<1x3x2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>)
  %1:2 = sym.Dropout %0#0 {p = 0.5 : f64} : (tensor<1x3x2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>)
  %2:2 = sym.LeakyReLU %1#0 {act_type = "rrelu"} : (tensor<1x3x2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>)
  return %2#0 : tensor<1x3x2x2xf32>
}

// -----

// prelu: gamma's gradient sums g * min(x, 0) over all but the channel axis;
// nearest UpSampling's sums each scale x scale block of g.
// CHECK-LABEL: func.func @main_backward
// CHECK: %[[B:.*]] = sym.Reshape %{{.*}} {shape = array<i64: 1, 3, 2, 2, 2, 2>}
// CHECK: sym.sum %[[B]] {axis = array<i64: 3, 5>} : (tensor<1x3x2x2x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK: sym._backward_LeakyReLU %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {act_type = "prelu"}
// CHECK: sym.relu
// CHECK: sym.sum {{.*}} {axis = array<i64: 0, 2, 3>, keepdims = true} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
// CHECK: sym.Reshape {{.*}} -> tensor<3xf32>
func.func @main(%x: tensor<1x3x2x2xf32> {sym.name = "x"}, %gamma: tensor<3xf32> {sym.name = "gamma"}) -> (tensor<1x3x4x4xf32> {sym.name = "y"}) {
  %0 = sym.LeakyReLU %x, %gamma {act_type = "prelu"} : (tensor<1x3x2x2xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  %1 = sym.UpSampling %0 {scale = 2 : i64, sample_type = "nearest", num_args = 1 : i64} : (tensor<1x3x2x2xf32>) -> tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// SoftmaxOutput is a loss head: no head-gradient argument; relu's gradient
// needs its own op, reading relu's output; the label gets zeros.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {sym.name = "x"}, %[[L:.*]]: tensor<2xf32> {sym.name = "label"}) ->
// CHECK: %[[R:.*]] = sym.relu %[[X]]
// CHECK: %[[P:.*]] = sym.SoftmaxOutput %[[R]], %[[L]]
// CHECK: %[[G:.*]] = sym._backward_SoftmaxOutput %[[P]], %[[L]] {grad_scale = 2.0{{.*}}}
// CHECK: %[[GX:.*]] = sym._backward_relu %[[G]], %[[R]]
// CHECK: %[[Z:.*]] = sym._zeros {dtype = f32, shape = array<i64: 2>}
// CHECK: return %[[GX]], %[[Z]]
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}, %label: tensor<2xf32> {sym.name = "label"}) -> (tensor<2x3xf32> {sym.name = "softmax_output"}) {
  %0 = sym.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = sym.SoftmaxOutput %0, %label {grad_scale = 2.0 : f64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// A loss grouped with a BlockGrad'ed output (everyday MXNet training code):
// neither needs a head gradient, so backward() takes none.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%{{.*}}: tensor<2x3xf32> {sym.name = "x"}, %{{.*}}: tensor<2xf32> {sym.name = "label"}) ->
// CHECK-NOT: head_grad_of
// CHECK: return
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}, %label: tensor<2xf32> {sym.name = "label"}) -> (tensor<2x3xf32> {sym.name = "loss_output"}, tensor<2x3xf32> {sym.name = "scores_output"}) {
  %0 = sym.SoftmaxOutput %x, %label : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  %1 = sym.BlockGrad %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Convolution: one backward op for data and weight, a sum for the bias.
// CHECK-LABEL: func.func @main_backward
// CHECK: %[[DX:.*]], %[[DW:.*]] = sym._backward_Convolution %{{.*}}, %{{.*}}, %{{.*}} {kernel = array<i64: 3, 3>, num_filter = 4 : i64, pad = array<i64: 1, 1>}
// CHECK: %[[DB:.*]] = sym.sum %{{.*}} {axis = array<i64: 0, 2, 3>} : (tensor<2x4x5x5xf32>) -> tensor<4xf32>
// CHECK: return %[[DX]], %[[DW]], %[[DB]]
func.func @main(%x: tensor<2x3x5x5xf32> {sym.name = "x"}, %w: tensor<4x3x3x3xf32> {sym.name = "w"}, %b: tensor<4xf32> {sym.name = "b"}) -> (tensor<2x4x5x5xf32> {sym.name = "y"}) {
  %0 = sym.Convolution %x, %w, %b {kernel = array<i64: 3, 3>, num_filter = 4 : i64, pad = array<i64: 1, 1>} : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// Pooling: its own backward op, with the forward's attributes.
// CHECK-LABEL: func.func @main_backward
// CHECK: %[[G:.*]] = sym._backward_Pooling %{{.*}}, %{{.*}} {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: return %[[G]]
func.func @main(%x: tensor<1x2x4x4xf32> {sym.name = "x"}) -> (tensor<1x2x2x2xf32> {sym.name = "y"}) {
  %0 = sym.Pooling %x {kernel = array<i64: 2, 2>, pool_type = "max", stride = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// BatchNorm: @main_train normalizes with batch statistics; the backward
// differentiates it, reads only the output's head gradient, and returns the
// moving statistics' MXNet-CPU update after the gradients.
// CHECK-LABEL: func.func @main_train
// CHECK: sym.BatchNorm {{.*}}sym.is_train
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: %{{.*}}: tensor<2x3x4xf32> {sym.head_grad_of = "bn_output"}) -> (tensor<2x3x4xf32> {sym.grad_of = "x"}, tensor<3xf32> {sym.grad_of = "g"}, tensor<3xf32> {sym.grad_of = "b"}, tensor<3xf32> {sym.aux_update_of = "mm"}, tensor<3xf32> {sym.aux_update_of = "mv"})
// CHECK: %{{.*}}, %[[MEAN:.*]], %[[INVSTD:.*]] = sym.BatchNorm
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = sym._backward_BatchNorm %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[INVSTD]] {{.*}}fix_gamma = false{{.*}}sym.is_train
// CHECK: %[[SQ:.*]] = sym.square %[[INVSTD]]
// CHECK: %[[INV:.*]] = sym._rdiv_scalar %[[SQ]]
// CHECK: %[[VAR:.*]] = sym._minus_scalar %[[INV]] {{.*}}scalar = 2.000000e-05
// CHECK: %[[KM:.*]] = sym._mul_scalar %{{.*}} {{.*}}scalar = 9.000000e-01
// CHECK: %[[AM:.*]] = sym._mul_scalar %[[MEAN]] {{.*}}scalar = 0.0999
// CHECK: %[[MM:.*]] = sym.elemwise_add %[[KM]], %[[AM]]
// CHECK: %[[AV:.*]] = sym._mul_scalar %[[VAR]]
// CHECK: %[[MV:.*]] = sym.elemwise_add %{{.*}}, %[[AV]]
// CHECK: return %[[DX]], %[[DG]], %[[DB]], %[[MM]], %[[MV]]
func.func @main(%x: tensor<2x3x4xf32> {sym.name = "x"}, %g: tensor<3xf32> {sym.name = "g"}, %b: tensor<3xf32> {sym.name = "b"}, %mm: tensor<3xf32> {sym.name = "mm", sym.aux}, %mv: tensor<3xf32> {sym.name = "mv", sym.aux}) -> (tensor<2x3x4xf32> {sym.name = "bn_output"}, tensor<3xf32> {sym.name = "bn_mean"}) {
  %0:3 = sym.BatchNorm %x, %g, %b, %mm, %mv {eps = 2.0e-5 : f64, fix_gamma = false, output_mean_var = true} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<2x3x4xf32>, tensor<3xf32>
}

// -----

// Bilinear UpSampling is a transposed convolution: the data's gradient is a
// convolution of g by the weight (a group per channel), the weight's the
// weight gradient of that convolution with g as its data.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x3x4x4xf32> {sym.name = "x"}, %[[W:[^:]*]]: tensor<3x1x4x4xf32> {sym.name = "w"}, %[[G:[^:]*]]: tensor<1x3x8x8xf32> {sym.head_grad_of = "y"})
// CHECK: %[[DX:.*]] = sym.Convolution %[[G]], %[[W]] {kernel = array<i64: 4, 4>, no_bias = true, num_filter = 3 : i64, num_group = 3 : i64, pad = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK: %{{.*}}, %[[DW:.*]] = sym._backward_Convolution %[[X]], %[[G]], %[[W]]
// CHECK: return %[[DX]], %[[DW]]
func.func @main(%x: tensor<1x3x4x4xf32> {sym.name = "x"}, %w: tensor<3x1x4x4xf32> {sym.name = "w"}) -> (tensor<1x3x8x8xf32> {sym.name = "y"}) {
  %0 = sym.UpSampling %x, %w {scale = 2 : i64, sample_type = "bilinear", num_filter = 3 : i64, num_args = 2 : i64} : (tensor<1x3x4x4xf32>, tensor<3x1x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}
