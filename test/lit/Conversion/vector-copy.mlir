// RUN: symc-opt %s -split-input-file -sym-bufferize | FileCheck %s

// A pad's interior is copied by vector rows: 8-float loads and stores along
// the contiguous innermost dim, the rest of each row as one short vector.
// CHECK-LABEL: func @pad
// CHECK: %[[INTERIOR:.*]] = memref.subview %[[PADDED:.*]][1, 1] [4, 60] [1, 1]
// CHECK: scf.for %[[ROW:.*]] =
// CHECK:   scf.for %[[COLUMN:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK:     %[[V:.*]] = vector.load %{{.*}}[%[[ROW]], %[[COLUMN]]] : memref<4x60xf32>, vector<8xf32>
// CHECK:     vector.store %[[V]], %[[INTERIOR]][%[[ROW]], %[[COLUMN]]] {{.*}} vector<8xf32>
// CHECK:   %[[REST:.*]] = vector.load %{{.*}}[%[[ROW]], %c56] : memref<4x60xf32>, vector<4xf32>
// CHECK:   vector.store %[[REST]], %[[INTERIOR]][%[[ROW]], %c56] {{.*}} vector<4xf32>
func.func @pad(%in: memref<4x60xf32>, %out: memref<6x62xf32>) {
  %x = bufferization.to_tensor %in restrict : memref<4x60xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x60xf32> to tensor<6x62xf32>
  bufferization.materialize_in_destination %p in restrict writable %out : (tensor<6x62xf32>, memref<6x62xf32>) -> ()
  return
}

// -----

// Every other column is no contiguous row: linalg.copy.
// CHECK-LABEL: func @strided
// CHECK-NOT: vector.load
// CHECK: linalg.copy
func.func @strided(%in: memref<4x8xf32>, %out: memref<4x16xf32>) {
  %x = bufferization.to_tensor %in restrict : memref<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = tensor.insert_slice %x into %zeros[0, 0] [4, 8] [1, 2] : tensor<4x8xf32> into tensor<4x16xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x16xf32>, memref<4x16xf32>) -> ()
  return
}
