// RUN: symc-opt %s --sym-offload-matmuls | FileCheck %s

// A row-major f32 matmul becomes libsymrt_cuda's GEMM on the three buffers'
// descriptors (unranked memrefs).
// CHECK: func.func private @symcCudaGemm(memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {symc.device_runtime}
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<8x16xf32> to memref<*xf32>
// CHECK: %[[B:.*]] = memref.cast %arg1
// CHECK: %[[C:.*]] = memref.cast %arg2
// CHECK: call @symcCudaGemm(%[[A]], %[[B]], %[[C]])
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A batch of them: one strided-batched GEMM.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: call @symcCudaGemm
func.func @batch_matmul(%a: memref<2x8x16xf32>, %b: memref<2x16x4xf32>, %c: memref<2x8x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x16xf32>, memref<2x16x4xf32>) outs(%c : memref<2x8x4xf32>)
  return
}

// A column stride other than 1 (a transposed view) stays a loop nest.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.matmul
func.func @strided(%a: memref<8x16xf32, strided<[1, 8]>>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[1, 8]>>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A convolution's weight (F, C*K) times each image's columns (N, C*K, H,
// W) into (N, F, H, W): a stack of products sharing A, each operand
// collapsed to its matrices (A (F, C*K), B (N, C*K, H*W), C (N, F, H*W)).
// CHECK-LABEL: func.func @shared_weight
// CHECK: %[[B:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : memref<2x18x4x5xf32> into memref<2x18x20xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : memref<2x8x4x5xf32> into memref<2x8x20xf32>
// CHECK: memref.cast %arg0 : memref<8x18xf32> to memref<*xf32>
// CHECK: memref.cast %[[B]] : memref<2x18x20xf32> to memref<*xf32>
// CHECK: memref.cast %[[C]] : memref<2x8x20xf32> to memref<*xf32>
// CHECK: call @symcCudaGemm
// CHECK-NOT: linalg.generic
#a = affine_map<(n, f, h, w, k) -> (f, k)>
#b = affine_map<(n, f, h, w, k) -> (n, k, h, w)>
#c = affine_map<(n, f, h, w, k) -> (n, f, h, w)>
func.func @shared_weight(%a: memref<8x18xf32>, %b: memref<2x18x4x5xf32>, %c: memref<2x8x4x5xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x18xf32>, memref<2x18x4x5xf32>) outs(%c : memref<2x8x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// B with its k after its columns: each image's matrix transposed as it
// lies, a view whose rows' stride is 1.
// CHECK-LABEL: func.func @stack_of_transposed_b
// CHECK: %[[B:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2], [3]] : memref<2x4x5x18xf32> into memref<2x20x18xf32>
// CHECK: memref.transpose %[[B]] (d0, d1, d2) -> (d0, d2, d1) : memref<2x20x18xf32> to memref<2x18x20xf32, strided<[360, 1, 18]>>
// CHECK: call @symcCudaGemm
#bt = affine_map<(n, f, h, w, k) -> (n, h, w, k)>
func.func @stack_of_transposed_b(%a: memref<8x18xf32>, %b: memref<2x4x5x18xf32>, %c: memref<2x8x4x5xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x18xf32>, memref<2x4x5x18xf32>) outs(%c : memref<2x8x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// C with its rows between columns is no matrix: it stays a loop nest.
// CHECK-LABEL: func.func @rows_between_columns
// CHECK: linalg.generic
#cm = affine_map<(n, f, h, w, k) -> (n, h, f, w)>
func.func @rows_between_columns(%a: memref<8x18xf32>, %b: memref<2x18x4x5xf32>, %c: memref<2x4x8x5xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #cm], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x18xf32>, memref<2x18x4x5xf32>) outs(%c : memref<2x4x8x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A weight gradient: g (F, N*O) times the columns (C*K, N*O) transposed.
// B goes as a transposed view (its rows' stride 1), which cuBLAS reads
// transposed: no copy.
// CHECK-LABEL: func.func @transposed_b
// CHECK: %[[BT:.*]] = memref.transpose %arg1 (d0, d1) -> (d1, d0) : memref<6x20xf32> to memref<20x6xf32, strided<[1, 20]>>
// CHECK: memref.cast %[[BT]]
// CHECK: call @symcCudaGemm
// CHECK-NOT: linalg.generic
#ta = affine_map<(i, j, k) -> (i, k)>
#tb = affine_map<(i, j, k) -> (j, k)>
#tc = affine_map<(i, j, k) -> (i, j)>
func.func @transposed_b(%a: memref<4x20xf32>, %b: memref<6x20xf32>, %c: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x20xf32>, memref<6x20xf32>) outs(%c : memref<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
