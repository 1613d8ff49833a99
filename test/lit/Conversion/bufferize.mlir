// RUN: symc-opt %s -sym-bufferize | FileCheck %s

// A thread's tile computed in place in its loop's output needs no copy
// back: bufferization "copies" it onto itself through a twin subview, which
// the pipeline drops. A pad's interior is a real copy, by vector rows.

// CHECK-LABEL: func @in_place_tiles
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK-NOT: vector.load
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @in_place_tiles(%in: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %x = bufferization.to_tensor %in restrict : memref<4x64xf32>
  %empty = tensor.empty() : tensor<4x64xf32>
  %r = scf.forall (%i) in (4) shared_outs(%acc = %empty) -> (tensor<4x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %dst = tensor.extract_slice %acc[%i, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
    %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%row : tensor<1x64xf32>) outs(%dst : tensor<1x64xf32>) {
    ^bb0(%a: f32, %b: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %neg into %acc[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<4x64xf32>
    }
  }
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x64xf32>, memref<4x64xf32>) -> ()
  return
}

// CHECK-LABEL: func @pad
// CHECK: %[[INTERIOR:.*]] = memref.subview %{{.*}}[1, 1] [4, 60] [1, 1]
// CHECK: scf.for
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK:     %[[V:.*]] = vector.load %{{.*}} : memref<4x60xf32>, vector<8xf32>
// CHECK:     vector.store %[[V]], %[[INTERIOR]]
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
