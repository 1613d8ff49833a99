// RUN: symc-opt %s -sym-fuse-elementwise | FileCheck %s

// A bias add and a relu after a matmul fuse into one generic; the matmul
// keeps its named form even though a reshape sits between them.
// CHECK-LABEL: func @fuse
// CHECK: linalg.matmul
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @fuse(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<6xf32>) -> tensor<2x2x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %added = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4x6xf32>, tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%added : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %r = tensor.expand_shape %relu [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
  return %r : tensor<2x2x6xf32>
}
