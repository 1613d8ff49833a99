// RUN: symc-opt %s -split-input-file -verify-diagnostics -sym-generate-gradients='grad-req=b=null' | FileCheck %s

// grad_req null drops a gradient; aux states never get one.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: -> (tensor<2xf32> {sym.grad_of = "a"})
func.func @main(%a: tensor<2xf32> {sym.name = "a"}, %b: tensor<2xf32> {sym.name = "b"}, %m: tensor<2xf32> {sym.name = "m", sym.aux}) -> (tensor<2xf32> {sym.name = "c"}) {
  %0 = sym.elemwise_mul %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = sym.elemwise_add %0, %m : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// Only b's gradient reads d's head gradient and exp's value: with b null,
// neither is kept (no head-gradient argument, no gradient op of b; the
// forward clone stays for sym-save-activations, which then saves nothing),
// so the plan keeps what MXNet's grad_req null plan keeps.
// CHECK-LABEL: func.func @main_backward
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32> {sym.name = "a"}, %[[B:.*]]: tensor<2xf32> {sym.name = "b"}, %[[HEAD:.*]]: tensor<2xf32> {sym.head_grad_of = "c"})
// CHECK-SAME: -> (tensor<2xf32> {sym.grad_of = "a"})
// CHECK-NOT: head_grad_of = "d"
// CHECK: sym.exp %[[B]]
// CHECK-NEXT: sym.sin
// CHECK-NEXT: return %[[HEAD]]
func.func @main(%a: tensor<2xf32> {sym.name = "a"}, %b: tensor<2xf32> {sym.name = "b"}) -> (tensor<2xf32> {sym.name = "c"}, tensor<2xf32> {sym.name = "d"}) {
  %0 = sym.exp %b : (tensor<2xf32>) -> tensor<2xf32>
  %1 = sym.sin %0 : (tensor<2xf32>) -> tensor<2xf32>
  return %a, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{grad_req for 'b', which is not an argument of the symbol}}
func.func @main(%a: tensor<2xf32> {sym.name = "a"}) -> (tensor<2xf32> {sym.name = "c"}) {
  return %a : tensor<2xf32>
}

// -----

// expected-error @+1 {{argument 0 has no sym.name: gradients are named by it}}
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32> {sym.name = "c"}) {
  return %a : tensor<2xf32>
}
