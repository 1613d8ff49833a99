// RUN: symc-opt %s -sym-materialize-through-reshapes | FileCheck %s

// A result expanded from a matrix (a weight gradient) is written as that
// matrix into the output buffer collapsed at the function's entry, so that
// empty-tensor elimination can compute it there.
// CHECK-LABEL: func @expanded_result
// CHECK-NEXT: %[[VIEW:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : memref<4x2x3x3xf32> into memref<4x18xf32>
// CHECK: %[[M:.*]] = linalg.fill
// CHECK-NOT: tensor.expand_shape
// CHECK: bufferization.materialize_in_destination %[[M]] in restrict writable %[[VIEW]] : (tensor<4x18xf32>, memref<4x18xf32>)
func.func @expanded_result(%x: tensor<4x18xf32>, %out: memref<4x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x18xf32>
  %m = linalg.fill ins(%zero : f32) outs(%e : tensor<4x18xf32>) -> tensor<4x18xf32>
  %w = tensor.expand_shape %m [[0], [1, 2, 3]] output_shape [4, 2, 3, 3] : tensor<4x18xf32> into tensor<4x2x3x3xf32>
  bufferization.materialize_in_destination %w in restrict writable %out : (tensor<4x2x3x3xf32>, memref<4x2x3x3xf32>) -> ()
  return
}

// Reshapes of reshapes peel one after the other.
// CHECK-LABEL: func @chain
// CHECK-NEXT: %[[E:.*]] = memref.expand_shape %arg1 {{\[}}[0, 1, 2]] output_shape [4, 3, 3] : memref<36xf32> into memref<4x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = memref.collapse_shape %[[E]] {{\[}}[0], [1, 2]] : memref<4x3x3xf32> into memref<4x9xf32>
// CHECK: bufferization.materialize_in_destination %arg0 in restrict writable %[[C]] : (tensor<4x9xf32>, memref<4x9xf32>)
func.func @chain(%x: tensor<4x9xf32>, %out: memref<36xf32>) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 3, 3] : tensor<4x9xf32> into tensor<4x3x3xf32>
  %flat = tensor.collapse_shape %e [[0, 1, 2]] : tensor<4x3x3xf32> into tensor<36xf32>
  bufferization.materialize_in_destination %flat in restrict writable %out : (tensor<36xf32>, memref<36xf32>) -> ()
  return
}

// A saved activation that the forward goes on to read through the same
// reshape: its source is written into the output buffer all the same, the
// reshape staying for its other reader.
// CHECK-LABEL: func @reshape_read_on
// CHECK-NEXT: %[[VIEW:.*]] = memref.expand_shape %arg1 {{\[}}[0], [1, 2]] output_shape [4, 2, 32] : memref<4x64xf32> into memref<4x2x32xf32>
// CHECK: %[[M:.*]] = linalg.fill
// CHECK: %[[SAVED:.*]] = tensor.collapse_shape %[[M]]
// CHECK: bufferization.materialize_in_destination %[[M]] in restrict writable %[[VIEW]] : (tensor<4x2x32xf32>, memref<4x2x32xf32>)
// CHECK: return %[[SAVED]]
func.func @reshape_read_on(%x: tensor<4x64xf32>, %out: memref<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2x32xf32>
  %m = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
  %saved = tensor.collapse_shape %m [[0], [1, 2]] : tensor<4x2x32xf32> into tensor<4x64xf32>
  bufferization.materialize_in_destination %saved in restrict writable %out : (tensor<4x64xf32>, memref<4x64xf32>) -> ()
  return %saved : tensor<4x64xf32>
}
