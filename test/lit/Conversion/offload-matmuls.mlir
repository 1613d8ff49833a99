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

// Read in another order (B's k after its columns), it stays a loop nest.
// CHECK-LABEL: func.func @columns_before_k
// CHECK: linalg.generic
#bt = affine_map<(n, f, h, w, k) -> (n, h, w, k)>
func.func @columns_before_k(%a: memref<8x18xf32>, %b: memref<2x4x5x18xf32>, %c: memref<2x8x4x5xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x18xf32>, memref<2x4x5x18xf32>) outs(%c : memref<2x8x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
