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

// expected-error @+1 {{grad_req for 'b', which is not an argument of the symbol}}
func.func @main(%a: tensor<2xf32> {sym.name = "a"}) -> (tensor<2xf32> {sym.name = "c"}) {
  return %a : tensor<2xf32>
}

// -----

// expected-error @+1 {{argument 0 has no sym.name: gradients are named by it}}
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32> {sym.name = "c"}) {
  return %a : tensor<2xf32>
}
