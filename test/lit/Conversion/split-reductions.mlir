// RUN: symc-opt %s --sym-split-reductions --split-input-file | FileCheck %s

// BatchNorm's per-channel sum over (n, h, w), accumulated in f64, 65536
// values per channel: n (32) stays serial, h and w (the contiguous dim)
// become parallel, so that neighbouring threads read neighbouring elements
// at each step; partial sums go to a zero-filled (c, h, w) tensor. Their
// sum over (h, w), 4096 per channel, is split again: h serial, w parallel
// into (c, w) partials; then the last sum over w runs into the original
// init. Each generic has its parallel dims first: the first reads x at
// (n, c, h, w) with n, its serial dim, last.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batch_statistics
// CHECK-SAME: (%[[X:.*]]: tensor<32x16x64x64xf32>, %[[INIT:.*]]: tensor<16xf64>)
// CHECK: %[[ZERO:.*]] = arith.constant {{-?}}0.000000e+00 : f64
// CHECK: %[[P1:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<16x64x64xf64>)
// CHECK: %[[S1:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<32x16x64x64xf32>) outs(%[[P1]] : tensor<16x64x64xf64>)
// CHECK: arith.extf
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: %[[P2:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<16x64xf64>)
// CHECK: %[[S2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[S1]] : tensor<16x64x64xf64>) outs(%[[P2]] : tensor<16x64xf64>)
// CHECK: %[[S3:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[S2]] : tensor<16x64xf64>) outs(%[[INIT]] : tensor<16xf64>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: return %[[S3]]
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
func.func @batch_statistics(%x: tensor<32x16x64x64xf32>, %init: tensor<16xf64>) -> tensor<16xf64> {
  %sum = linalg.generic {indexing_maps = [#x, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x16x64x64xf32>) outs(%init : tensor<16xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %wide = arith.extf %in : f32 to f64
    %next = arith.addf %acc, %wide fastmath<reassoc> : f64
    linalg.yield %next : f64
  } -> tensor<16xf64>
  return %sum : tensor<16xf64>
}

// -----

// A max over 1024 values per row of 8 rows, in two dims: the outer (4)
// serial, the contiguous one parallel; partial maxima start at the
// combiner's neutral element (-inf for maximumf).
// CHECK-LABEL: func.func @row_max
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<8x256xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
#r3 = affine_map<(i, j, k) -> (i, j, k)>
#r1 = affine_map<(i, j, k) -> (i)>
func.func @row_max(%x: tensor<8x4x256xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %max = linalg.generic {indexing_maps = [#r3, #r1], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<8x4x256xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %next = arith.maximumf %acc, %in : f32
    linalg.yield %next : f32
  } -> tensor<8xf32>
  return %max : tensor<8xf32>
}

// -----

// Short reductions and ones with threads enough are not split; a leading
// reduction dim still moves after the parallel ones.
// CHECK-LABEL: func.func @short
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[IN:.*]], #[[OUT:.*]]], iterator_types = ["parallel", "reduction"]}
// CHECK-NOT: linalg.generic
#t = affine_map<(n, f) -> (n, f)>
#f = affine_map<(n, f) -> (f)>
func.func @short(%x: tensor<32x10xf32>, %init: tensor<10xf32>) -> tensor<10xf32> {
  %sum = linalg.generic {indexing_maps = [#t, #f], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<32x10xf32>) outs(%init : tensor<10xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %next = arith.addf %acc, %in : f32
    linalg.yield %next : f32
  } -> tensor<10xf32>
  return %sum : tensor<10xf32>
}
