// RUN: symc-opt %s --split-input-file --sym-deallocate-buffers | FileCheck %s

// Memory planning left a buffer allocated (a dynamic size): it is freed
// after its last use in its block.

// CHECK-LABEL: func.func @dynamic
// CHECK: %[[BUFFER:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.store {{.*}}, %[[BUFFER]]
// CHECK: memref.dealloc %[[BUFFER]]
func.func @dynamic(%n: index, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %buffer = memref.alloc(%n) : memref<?xf32>
  memref.store %one, %buffer[%c0] : memref<?xf32>
  %x = memref.load %buffer[%c0] : memref<?xf32>
  memref.store %x, %out[] : memref<f32>
  return
}

// -----

// No buffer left allocated: the module is unchanged.

// CHECK-LABEL: func.func @planned
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[VIEW:.*]] = memref.view
// CHECK-NEXT: memref.load %[[VIEW]]
// CHECK-NEXT: memref.store
// CHECK-NEXT: return
func.func @planned(%arena: memref<?xi8>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %view = memref.view %arena[%c0][] : memref<?xi8> to memref<4xf32>
  %x = memref.load %view[%c0] : memref<4xf32>
  memref.store %x, %out[] : memref<f32>
  return
}

// -----

// A loop that carries the buffer returns it: the copy that reads the loop's
// result is a use too, and the buffer is freed after it, not after the loop.

// CHECK-LABEL: func.func @carried
// CHECK: %[[BUFFER:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[RESULT:.*]] = scf.for
// CHECK: memref.copy %[[RESULT]]
// CHECK-NEXT: memref.dealloc %[[BUFFER]]
func.func @carried(%out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %buffer = memref.alloc() : memref<16xf32>
  %filled = scf.for %i = %c0 to %c16 step %c1 iter_args(%b = %buffer) -> (memref<16xf32>) {
    memref.store %one, %b[%i] : memref<16xf32>
    scf.yield %b : memref<16xf32>
  }
  memref.copy %filled, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A tiled tensor.pad's padded tile: an allocation from each branch of an
// scf.if, freed as the if's result after its last use.

// CHECK-LABEL: func.func @padded_tile
// CHECK: %[[TILE:.*]] = scf.if
// CHECK-NOT: memref.dealloc
// CHECK: memref.load %[[TILE]]
// CHECK-NEXT: memref.dealloc %[[TILE]]
// CHECK-NEXT: memref.store
func.func @padded_tile(%src: memref<4xf32>, %n: index, %empty: i1, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %tile = scf.if %empty -> (memref<?xf32>) {
    %a = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<?xf32>)
    scf.yield %a : memref<?xf32>
  } else {
    %b = memref.alloc(%n) : memref<?xf32>
    %view = memref.subview %b[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
    memref.copy %src, %view : memref<4xf32> to memref<4xf32, strided<[1]>>
    scf.yield %b : memref<?xf32>
  }
  %x = memref.load %tile[%c0] : memref<?xf32>
  memref.store %x, %out[] : memref<f32>
  return
}

// -----

// A buffer that escapes its block (here into a call) takes MLIR's
// ownership-based deallocation pipeline.

// CHECK-LABEL: func.func @escapes
// CHECK: %[[BUFFER:.*]] = memref.alloc
// CHECK-NEXT: call @consume(%[[BUFFER]])
// CHECK-NEXT: memref.dealloc %[[BUFFER]]
func.func private @consume(memref<?xf32>)
func.func @escapes(%n: index) {
  %buffer = memref.alloc(%n) : memref<?xf32>
  func.call @consume(%buffer) : (memref<?xf32>) -> ()
  return
}
