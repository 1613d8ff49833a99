// RUN: symc-opt %s --split-input-file --sym-deallocate-buffers | FileCheck %s

// Memory planning left a buffer allocated (a dynamic size): it is freed
// after its last use.

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
