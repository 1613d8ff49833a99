// RUN: symc-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(sym-infer-shapes{shapes=data:2x3}))'

// A weight nothing determines is reported with MXNet's simple_bind text.
// expected-error @+1 {{InferShape pass cannot decide shapes for the following arguments (-1 means unknown dimensions). Please consider providing them as inputs:}}
func.func @undecided(%data: tensor<*xf32> {sym.name = "data"}, %other: tensor<*xf32> {sym.name = "other"})
    -> (tensor<*xf32>, tensor<*xf32>) {
  return %data, %other : tensor<*xf32>, tensor<*xf32>
}

// -----

// expected-error @+1 {{shape given for 'data', which is not an argument or auxiliary state}}
func.func @unknown_name(%x: tensor<*xf32> {sym.name = "x"}) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

// expected-error @+1 {{shape [2,3] given for 'data' conflicts with its declared shape [5]}}
func.func @conflict(%data: tensor<5xf32> {sym.name = "data"}) -> tensor<5xf32> {
  return %data : tensor<5xf32>
}

// -----

func.func @propagated_conflict(%data: tensor<*xf32> {sym.name = "data"}, %w: tensor<4x7xf32> {sym.name = "w"})
    -> tensor<*xf32> {
  // expected-error @+1 {{shape inconsistent for input 'weight': provided [4,7], inferred [4,3]}}
  %0 = sym.FullyConnected %data, %w {num_hidden = 4 : i64, no_bias = true} : (tensor<*xf32>, tensor<4x7xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
