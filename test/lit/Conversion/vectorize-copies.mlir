// RUN: symc-opt %s -split-input-file -sym-vectorize-copies | FileCheck %s

// Rows contiguous in both buffers are copied by 8-float loads and stores,
// the rest of each row as one short vector.
// CHECK-LABEL: func @rows
// CHECK-SAME: (%[[FROM:.*]]: memref<4x60xf32>, %[[TO:.*]]: memref<4x60xf32, strided<[62, 1], offset: 63>>)
// CHECK-NOT: linalg.copy
// CHECK: scf.for %[[ROW:.*]] =
// CHECK:   scf.for %[[COLUMN:.*]] = %{{.*}} to %{{.*}} step %c8
// CHECK:     %[[V:.*]] = vector.load %[[FROM]][%[[ROW]], %[[COLUMN]]] : memref<4x60xf32>, vector<8xf32>
// CHECK:     vector.store %[[V]], %[[TO]][%[[ROW]], %[[COLUMN]]] {{.*}} vector<8xf32>
// CHECK:   %[[REST:.*]] = vector.load %[[FROM]][%[[ROW]], %[[AT:c56.*]]] : memref<4x60xf32>, vector<4xf32>
// CHECK:   vector.store %[[REST]], %[[TO]][%[[ROW]], %[[AT]]] {{.*}} vector<4xf32>
func.func @rows(%from: memref<4x60xf32>, %to: memref<4x60xf32, strided<[62, 1], offset: 63>>) {
  linalg.copy ins(%from : memref<4x60xf32>) outs(%to : memref<4x60xf32, strided<[62, 1], offset: 63>>)
  return
}

// -----

// Every other column is no contiguous row: the copy stays.
// CHECK-LABEL: func @strided
// CHECK-NOT: vector.load
// CHECK: linalg.copy
func.func @strided(%from: memref<4x8xf32>, %to: memref<4x8xf32, strided<[16, 2]>>) {
  linalg.copy ins(%from : memref<4x8xf32>) outs(%to : memref<4x8xf32, strided<[16, 2]>>)
  return
}

// -----

// So does a row of dynamic length.
// CHECK-LABEL: func @dynamic
// CHECK-NOT: vector.load
// CHECK: linalg.copy
func.func @dynamic(%from: memref<4x?xf32>, %to: memref<4x?xf32>) {
  linalg.copy ins(%from : memref<4x?xf32>) outs(%to : memref<4x?xf32>)
  return
}

// -----

// A large copy outside threaded loops: the rows of its first dim of more
// than one index go in 16 runs of 4 over the threads (an scf.forall).
// CHECK-LABEL: func @threaded
// CHECK-NOT: linalg.copy
// CHECK: scf.forall (%[[PIECE:.*]]) in (16)
// CHECK:   %[[FIRST:.*]] = arith.muli %[[PIECE]], %c4
// CHECK:   %[[END:.*]] = arith.addi %[[FIRST]], %c4
// CHECK:   %[[LAST:.*]] = arith.minsi %[[END]], %c64
// CHECK:   scf.for %[[ROW:.*]] = %[[FIRST]] to %[[LAST]] step %c1
// CHECK:     scf.for %[[COLUMN:.*]] =
// CHECK:       vector.load %{{.*}}[%c0, %[[ROW]], %[[COLUMN]]] : memref<1x64x512xf32>, vector<8xf32>
func.func @threaded(%from: memref<1x64x512xf32>, %to: memref<1x64x512xf32>) {
  linalg.copy ins(%from : memref<1x64x512xf32>) outs(%to : memref<1x64x512xf32>)
  return
}

// -----

// Inside a threaded loop a copy stays on its thread.
// CHECK-LABEL: func @on_a_thread
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK: vector.load
func.func @on_a_thread(%from: memref<1x64x512xf32>, %to: memref<2x1x64x512xf32>) {
  scf.forall (%i) in (2) {
    %slot = memref.subview %to[%i, 0, 0, 0] [1, 1, 64, 512] [1, 1, 1, 1]
        : memref<2x1x64x512xf32> to memref<1x64x512xf32, strided<[32768, 512, 1], offset: ?>>
    linalg.copy ins(%from : memref<1x64x512xf32>) outs(%slot : memref<1x64x512xf32, strided<[32768, 512, 1], offset: ?>>)
  }
  return
}
