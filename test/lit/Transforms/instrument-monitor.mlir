// RUN: symc-opt %s -split-input-file -sym-instrument-monitor | FileCheck %s

// @main stays as it is; @main_monitor also returns every node's outputs in
// node order, hidden ones included, under MXNet's monitor names.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<2x4xf32> {sym.name = "act_output"})
// CHECK-NOT: sym.monitor
// CHECK: return
// Dropout behaves differently in training, and the module trains: a
// training-mode monitor too.
// CHECK-LABEL: func.func @main_train_monitor(
// CHECK: sym.Dropout {{.*}}{sym.is_train}
// CHECK-LABEL: func.func @main_monitor(
// CHECK-SAME: -> (tensor<2x4xf32> {sym.name = "act_output"}, tensor<2x4xf32> {sym.monitor = "fc_output"}, tensor<2x4xf32> {sym.monitor = "act_output"}, tensor<2x4xf32> {sym.monitor = "drop_output"}, tensor<2x4xf32> {sym.monitor = "drop_mask"})
// CHECK: %[[FC:.*]] = sym.FullyConnected
// CHECK: %[[ACT:.*]] = sym.relu %[[FC]]
// CHECK: %[[OUT:.*]], %[[MASK:.*]] = sym.Dropout %[[ACT]] :
// CHECK: return %[[ACT]], %[[FC]], %[[ACT]], %[[OUT]], %[[MASK]]
func.func @main(%x: tensor<2x3xf32> {sym.name = "data"}, %w: tensor<4x3xf32> {sym.name = "fc_weight"}, %b: tensor<4xf32> {sym.name = "fc_bias"}) -> (tensor<2x4xf32> {sym.name = "act_output"}) {
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 4 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("fc")
  %1 = sym.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("act")
  %2:2 = sym.Dropout %1 {p = 5.000000e-01 : f64} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) loc("drop")
  return %1 : tensor<2x4xf32>
}
func.func @main_train(%x: tensor<2x3xf32> {sym.name = "data"}) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

// An inference module gets no training-mode monitor.
// CHECK-LABEL: func.func @main(
// CHECK-NOT: @main_train_monitor
// CHECK-LABEL: func.func @main_monitor(
// CHECK-NOT: @main_train_monitor
func.func @main(%x: tensor<2x4xf32> {sym.name = "data"}) -> (tensor<2x4xf32> {sym.name = "drop_output"}) {
  %0:2 = sym.Dropout %x {p = 5.000000e-01 : f64} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) loc("drop")
  return %0#0 : tensor<2x4xf32>
}

// -----

// A training module also gets @main_backward_monitor: the forward
// differentiated again with @main_backward's head gradients and gradients,
// returning after them the arrays of MXNet's backward graph, which its
// sym.backward_graph attribute describes: the head gradient's identity, then
// "<node>_backward" nodes (MXNet's op names, their inputs, the results that
// hold their outputs), and the node output holding each gradient.
// CHECK-LABEL: func.func @main_backward_monitor(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<2x4xf32> {sym.head_grad_of = "act_output"})
// CHECK-SAME: -> (tensor<4x3xf32> {sym.grad_of = "fc_weight"}, tensor<2x4xf32> {sym.monitor = "_head_grad_0"}, tensor<2x4xf32> {sym.monitor = "act_output"}, tensor<2x4xf32> {sym.monitor = "act_backward_output"}, tensor<2x3xf32> {sym.monitor = "fc_backward_output0"}, tensor<4x3xf32> {sym.monitor = "fc_backward_output1"}, tensor<4xf32> {sym.monitor = "fc_backward_output2"})
// CHECK-SAME: sym.backward_graph = {gradients = [{argument = "fc_weight", backward = 2 : i64, index = 1 : i64}]
// CHECK-SAME: name = "_head_grad_0_id_lhs", node = "_head_grad_0", value = 0 : i64, variable = "_head_grad_0"
// CHECK-SAME: name = "_head_grad_0_id", op = "_identity_with_attr_like_rhs", outputs = [0]
// CHECK-SAME: forward = "act", forward_attrs = true, inputs = [{backward = 0 : i64, index = 0 : i64, name = "act_backward_lhs", value = 0 : i64
// CHECK-SAME: name = "act_backward", op = "_backward_relu", outputs = [2]
// CHECK-SAME: {argument = 1 : i64, index = 0 : i64, name = "fc_backward_input2", node = "fc_weight", variable = "fc_weight"
// CHECK-SAME: name = "fc_backward", op = "_backward_FullyConnected", outputs = [3, 4, 5]
// CHECK: %[[FC:.*]] = sym.FullyConnected
// CHECK: %[[ACT:.*]] = sym.relu %[[FC]]
// CHECK: %[[DACT:.*]] = sym._backward_relu %[[H]], %[[ACT]]
// CHECK: return %[[DW:.*]], %[[H]], %[[ACT]], %[[DACT]], %{{.*}}, %[[DW]], %{{.*}} :
func.func @main(%x: tensor<2x3xf32> {sym.name = "data"}, %w: tensor<4x3xf32> {sym.name = "fc_weight"}, %b: tensor<4xf32> {sym.name = "fc_bias"}) -> (tensor<2x4xf32> {sym.name = "act_output"}) {
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 4 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("fc")
  %1 = sym.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("act")
  return %1 : tensor<2x4xf32>
}
// What sym-instrument-monitor reads of @main_backward: its head gradients
// and the gradients it computes.
func.func @main_backward(%x: tensor<2x3xf32> {sym.name = "data"}, %w: tensor<4x3xf32> {sym.name = "fc_weight"}, %b: tensor<4xf32> {sym.name = "fc_bias"}, %h: tensor<2x4xf32> {sym.head_grad_of = "act_output"}) -> (tensor<4x3xf32> {sym.grad_of = "fc_weight"}) {
  return %w : tensor<4x3xf32>
}

// -----

// Only zeros reach the ops behind a BlockGrad: relu's FGradient
// (MakeNonlossGradNode) turns them into a zeros_like node, FullyConnected's
// (MakeGradNode) builds its backward node on them all the same.
// CHECK-LABEL: func.func @main_backward_monitor(
// CHECK-SAME: sym.backward_graph = {gradients = [{argument = "fc_weight", backward = 3 : i64, index = 1 : i64}]
// CHECK-SAME: name = "blk_backward", op = "zeros_like"
// CHECK-SAME: forward = "act", forward_attrs = false, inputs = [{index = 0 : i64, name = "act_backward_input0", node = "fc"
// CHECK-SAME: name = "act_backward", op = "zeros_like", outputs = [5]
// CHECK-SAME: inputs = [{backward = 2 : i64, index = 0 : i64, name = "fc_backward_input0", value = 5 : i64
// CHECK-SAME: name = "fc_backward", op = "_backward_FullyConnected", outputs = [6, 7, 8]
func.func @main(%x: tensor<2x3xf32> {sym.name = "data"}, %w: tensor<4x3xf32> {sym.name = "fc_weight"}, %b: tensor<4xf32> {sym.name = "fc_bias"}) -> (tensor<2x4xf32> {sym.name = "blk_output"}) {
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 4 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("fc")
  %1 = sym.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("act")
  %2 = sym.BlockGrad %1 : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("blk")
  return %2 : tensor<2x4xf32>
}
func.func @main_backward(%x: tensor<2x3xf32> {sym.name = "data"}, %w: tensor<4x3xf32> {sym.name = "fc_weight"}, %b: tensor<4xf32> {sym.name = "fc_bias"}, %h: tensor<2x4xf32> {sym.head_grad_of = "blk_output"}) -> (tensor<4x3xf32> {sym.grad_of = "fc_weight"}) {
  return %w : tensor<4x3xf32>
}
