// RUN: symc-opt %s -split-input-file --sym-outline-parallel-loops | FileCheck %s

// An outermost parallel loop becomes a call to libsymrt's symcParallelFor
// with a function that runs a range of its linearized iterations: the
// buffer it uses from above (as its aligned pointer: its type knows the rest
// of its descriptor) and its inner dim's count (a bound known at run time
// only) travel in a context struct allocated at the caller's entry,
// constants are cloned into the function, and a 2-d loop's indices are
// split from the linear one (the last fastest).
// A loop nested in it stays a parallel loop inside; a loop with reductions
// stays where it is.

// CHECK: llvm.func @symcParallelFor(!llvm.ptr, !llvm.ptr, i64)

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[A:.*]]: memref<6x8xf32>, %[[N:.*]]: index)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, i64)>
// CHECK-NOT: scf.parallel
// CHECK: %[[AD:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<6x8xf32> to !llvm.struct
// CHECK: %[[AP:.*]] = llvm.extractvalue %[[AD]][1]
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: llvm.store %[[AP]], %[[S0]]
// CHECK: %[[N64:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: llvm.store %[[N64]], %[[S1]]
// CHECK: %[[F:.*]] = constant @[[BODY:entry_parallel[_0-9]*]]
// CHECK: %[[FP:.*]] = builtin.unrealized_conversion_cast %[[F]] : {{.*}} to !llvm.ptr
// CHECK: %[[COUNT:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: llvm.call @symcParallelFor(%[[FP]], %[[CTX]], %[[COUNT]])
// CHECK: scf.parallel {{.*}} init
// CHECK: return

// CHECK: func.func private @[[BODY]](%[[C:.*]]: !llvm.ptr, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[C]][0, 0]
// CHECK: %[[P:.*]] = llvm.load %[[F0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[1]
// CHECK: llvm.insertvalue %{{.*}}[2]
// CHECK: %[[S:.*]] = llvm.mlir.constant(6 : index)
// CHECK: llvm.insertvalue %[[S]], %{{.*}}[3, 0]
// CHECK: %[[D:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %[[D]] : {{.*}} to memref<6x8xf32>
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[C]][0, 1]
// CHECK: %[[B64:.*]] = llvm.load %[[F1]] : !llvm.ptr -> i64
// CHECK: %[[COLS:.*]] = arith.index_cast %[[B64]] : i64 to index
// CHECK: %[[TWO:.*]] = arith.constant 2.0
// CHECK: scf.for %[[L:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: arith.remui %[[L]], %[[COLS]]
// CHECK: arith.divui %[[L]], %[[COLS]]
// CHECK: scf.parallel
// CHECK: memref.load %[[M]]
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: return
func.func @entry(%a: memref<6x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c6, %n) step (%c1, %c2) {
    scf.parallel (%k) = (%c0) to (%c2) step (%c1) {
      %jk = arith.addi %j, %k : index
      %v = memref.load %a[%i, %jk] : memref<6x8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %a[%i, %jk] : memref<6x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c6) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i, %c0] : memref<6x8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %a[%c0, %c0] : memref<6x8xf32>
  return
}

// -----

// A view at a dynamic offset travels as its pointer and that offset; a
// buffer of dynamic size as its whole descriptor.
// CHECK-LABEL: func.func @views
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, ptr, i64)>
// CHECK: func.func private @views_parallel
// CHECK: %[[WHOLE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: builtin.unrealized_conversion_cast %[[WHOLE]] {{.*}} to memref<?xf32>
// CHECK: %[[OFF:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.insertvalue %[[OFF]], %{{.*}}[2]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32, strided<[1], offset: ?>>
func.func @views(%a: memref<16xf32>, %b: memref<?xf32>, %at: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %view = memref.subview %a[%at] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %b[%i] : memref<?xf32>
    memref.store %v, %view[%i] : memref<4xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  return
}
