// RUN: symc-opt %s --sym-outline-kernels | FileCheck %s

// Two threaded loops doing the same work on different buffers of one type
// call one outlined function; the constant they use is cloned into it. A
// loop over a differently shaped buffer gets its own. A loop around a
// threaded loop is searched rather than outlined, and a loop that yields a
// value stays in place. Buffers of static layout cross into a kernel as
// their aligned pointer, rebuilt into a memref inside; others as memrefs.

// CHECK: func.func private @[[SCALE16:entry_kernel[_0-9]*]](%[[P:.*]]: !llvm.ptr) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[P]], %{{.*}}[1]
// CHECK: %[[D2:.*]] = llvm.insertvalue %{{.*}}, %[[D1]][2]
// CHECK: %[[D3:.*]] = llvm.insertvalue %{{.*}}, %[[D2]][3, 0]
// CHECK: %[[D4:.*]] = llvm.insertvalue %{{.*}}, %[[D3]][4, 0]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %[[D4]] : {{.*}} to memref<16xf32>
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: scf.forall
// CHECK: memref.load %[[M]]
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: func.func private @[[SCALE8:entry_kernel[_0-9]*]](%{{.*}}: !llvm.ptr)
// CHECK: to memref<8xf32>
// CHECK: func.func private @[[ROW:entry_kernel[_0-9]*]](%{{.*}}: !llvm.ptr, %{{.*}}: index)
// CHECK: func.func private @[[DYN:entry_kernel[_0-9]*]](%{{.*}}: index, %{{.*}}: memref<?xf32>)
// CHECK-NOT: func.func private

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[A:[^:]*]]: memref<16xf32>, %[[B:[^:]*]]: memref<16xf32>, %[[C:[^:]*]]: memref<8xf32>, %[[N:[^:]*]]: index, %[[V:[^:]*]]: memref<?xf32>)
// CHECK: %[[AD:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<16xf32> to !llvm.struct
// CHECK: %[[AP:.*]] = llvm.extractvalue %[[AD]][1]
// CHECK: call @[[SCALE16]](%[[AP]]) : (!llvm.ptr) -> ()
// CHECK: builtin.unrealized_conversion_cast %[[B]]
// CHECK: call @[[SCALE16]](%{{.*}}) : (!llvm.ptr) -> ()
// CHECK: builtin.unrealized_conversion_cast %[[C]]
// CHECK: call @[[SCALE8]](%{{.*}}) : (!llvm.ptr) -> ()
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: call @[[ROW]](%{{.*}}, %[[I]]) : (!llvm.ptr, index) -> ()
// CHECK: call @[[DYN]](%[[N]], %[[V]]) : (index, memref<?xf32>) -> ()
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args
// CHECK: return %[[SUM]]
func.func @entry(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<8xf32>, %n: index, %v: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (16) {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<16xf32>
  }
  scf.forall (%i) in (16) {
    %x = memref.load %b[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<16xf32>
  }
  scf.forall (%i) in (8) {
    %x = memref.load %c[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<8xf32>
  }
  scf.for %row = %c0 to %n step %c1 {
    scf.forall (%i) in (16) {
      memref.store %zero, %a[%row] : memref<16xf32>
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %v[%i] : memref<?xf32>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<16xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  return %sum : f32
}
