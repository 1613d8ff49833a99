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

// A per-channel 1/sqrt(var + eps) feeding a per-pixel map stays its own
// generic, computed once per channel; the per-pixel maps still fuse.
// CHECK-LABEL: func @no_recompute
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<3xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>)
// CHECK-NOT: math.rsqrt
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#channel = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @no_recompute(%x: tensor<2x3xf32>, %var: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %ev = tensor.empty() : tensor<3xf32>
  %inv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%var : tensor<3xf32>) outs(%ev : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %eps : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %scaled = linalg.generic {indexing_maps = [#id2, #channel, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %inv : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %relu : tensor<2x3xf32>
}
