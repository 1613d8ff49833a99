// RUN: symc-opt %s -split-input-file -sym-generate-gradients -sym-save-activations | FileCheck %s
// RUN: symc-opt %s -split-input-file -sym-generate-gradients -sym-save-activations=mirror=true | FileCheck %s --check-prefix=MIRROR

// exp's gradient reads its output: the training forward (cloned from @main,
// which stays as it was) returns it, the backward takes it and recomputes
// nothing.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<2x4xf32> {sym.name = "y"})
// CHECK-LABEL: func.func @main_train(
// CHECK-SAME: -> (tensor<2x4xf32> {sym.name = "y"}, tensor<2x4xf32> {sym.saved = "e_output0"})
// CHECK: %[[E:[a-z0-9]+]] = sym.exp
// CHECK: return %[[E]], %[[E]]
// CHECK-LABEL: func.func @main_backward(
// CHECK-SAME: %[[HEAD:[a-z0-9]+]]: tensor<2x4xf32> {sym.head_grad_of = "y"}, %[[SAVED:[a-z0-9]+]]: tensor<2x4xf32> {sym.saved = "e_output0"})
// CHECK-NOT: sym.FullyConnected
// CHECK-NOT: sym.exp
// CHECK: sym.elemwise_mul %[[HEAD]], %[[SAVED]]

// Mirroring keeps FullyConnected's output and recomputes exp from it.
// MIRROR-LABEL: func.func @main_train(
// MIRROR-SAME: tensor<2x4xf32> {sym.saved = "fc_output0"})
// MIRROR-LABEL: func.func @main_backward(
// MIRROR-SAME: %[[SAVED:[a-z0-9]+]]: tensor<2x4xf32> {sym.saved = "fc_output0"})
// MIRROR-NOT: sym.FullyConnected
// MIRROR: sym.exp %[[SAVED]]
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}, %w: tensor<4x3xf32> {sym.name = "w"}) -> (tensor<2x4xf32> {sym.name = "y"}) {
  %0 = sym.FullyConnected %x, %w {num_hidden = 4 : i64, no_bias = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32> loc("fc")
  %1 = sym.exp %0 : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("e")
  return %1 : tensor<2x4xf32>
}

// -----

// A train-sensitive forward already has @main_train: BatchNorm's batch mean
// and 1/sqrt(var + eps) are saved (for its backward and the moving-statistics
// update), even when mirroring.
// CHECK-LABEL: func.func @main_train(
// CHECK-SAME: tensor<3xf32> {sym.saved = "bn_output1"}, tensor<3xf32> {sym.saved = "bn_output2"}
// CHECK-LABEL: func.func @main_backward(
// CHECK-NOT: sym.BatchNorm
// CHECK: sym._backward_BatchNorm
// MIRROR-LABEL: func.func @main_train(
// MIRROR-SAME: tensor<3xf32> {sym.saved = "bn_output1"}, tensor<3xf32> {sym.saved = "bn_output2"}
// MIRROR-LABEL: func.func @main_backward(
// MIRROR-NOT: sym.BatchNorm
func.func @main(%x: tensor<2x3x4xf32> {sym.name = "x"}, %g: tensor<3xf32> {sym.name = "g"}, %b: tensor<3xf32> {sym.name = "b"},
                %mm: tensor<3xf32> {sym.name = "mm", sym.aux}, %mv: tensor<3xf32> {sym.name = "mv", sym.aux}) -> (tensor<2x3x4xf32> {sym.name = "y"}) {
  %0:3 = sym.BatchNorm %x, %g, %b, %mm, %mv : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) loc("bn")
  return %0#0 : tensor<2x3x4xf32>
}

