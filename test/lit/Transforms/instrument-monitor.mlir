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
