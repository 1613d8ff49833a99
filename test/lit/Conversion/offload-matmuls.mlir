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
