// RUN: symc-opt %s --sym-map-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// A host-level parallel loop becomes a launch of one thread per iteration:
// the space linearized, 256 threads a block, each thread delinearizing its
// index (in 32 bits: the space is static and small enough); a nested
// parallel loop runs sequentially in the thread. The constants the kernel
// uses are built into it (a division by a constant is a multiplication).
// CHECK-LABEL: func.func @parallel_loop
// CHECK: %[[TOTAL:.*]] = arith.constant 15 : index
// CHECK: %[[GRID:.*]] = arith.ceildivsi %[[TOTAL]], %[[BLOCK:c256]] : index
// CHECK: arith.cmpi sgt, %[[TOTAL]]
// CHECK: scf.if
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[BLOCK]],
// CHECK-DAG: %[[INNER_TOTAL:.*]] = arith.constant 15 : index
// CHECK-DAG: %[[ROW:.*]] = arith.constant 5 : index
// CHECK: %[[INDEX:.*]] = arith.addi {{.*}} : i32
// CHECK: %[[TOTAL32:.*]] = arith.index_castui %[[INNER_TOTAL]] : index to i32
// CHECK: arith.cmpi ult, %[[INDEX]], %[[TOTAL32]] : i32
// CHECK: %[[ROW32:.*]] = arith.index_castui %[[ROW]] : index to i32
// CHECK: arith.remui %[[INDEX]], %[[ROW32]] : i32
// CHECK: arith.divui %[[INDEX]], %[[ROW32]] : i32
// CHECK: memref.load
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.terminator
func.func @parallel_loop(%a: memref<3x5xf32>, %b: memref<3x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c5) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<3x5xf32>
    scf.parallel (%k) = (%c0) to (%c3) step (%c1) {
      memref.store %v, %b[%k, %j] : memref<3x5xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A large loop whose body has no loops: each thread runs 4 iterations a
// quarter of the space apart (1M threads), their ops interleaved so that
// the loads are in flight together.
// CHECK-LABEL: func.func @coarsened
// CHECK: %[[THREADS:.*]] = arith.constant 1048576 : index
// CHECK: arith.ceildivsi %[[THREADS]], %c256
// CHECK: gpu.launch
// CHECK-COUNT-4: memref.load %arg0
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: memref.store
func.func @coarsened(%a: memref<2048x2048xf32>, %b: memref<2048x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2048, %c2048) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<2048x2048xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%i, %j] : memref<2048x2048xf32>
    scf.reduce
  }
  return
}

// -----

// A fill followed by a loop over the same space that touches the filled
// buffer only at its own position (a reduction into it): one launch, whose
// threads store the fill value first.
// CHECK-LABEL: func.func @fill_then_reduce
// CHECK: gpu.launch
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: memref.store %[[ZERO]], %arg1
// CHECK: scf.for
// CHECK: memref.load %arg1
// CHECK: memref.store {{.*}}, %arg1
// CHECK-NOT: gpu.launch
func.func @fill_then_reduce(%a: memref<8x64xf32>, %sum: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %sum[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %a[%i, %k] : memref<8x64xf32>
      %acc = memref.load %sum[%i] : memref<8xf32>
      %next = arith.addf %acc, %v : f32
      memref.store %next, %sum[%i] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A loop that reads the filled buffer elsewhere than at its own position
// (through a view) keeps the fill its own launch.
// CHECK-LABEL: func.func @fill_then_read_elsewhere
// CHECK: gpu.launch
// CHECK: gpu.launch
func.func @fill_then_read_elsewhere(%buf: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %buf[%i] : memref<8xf32>
    scf.reduce
  }
  %view = memref.subview %buf[0] [8] [1] : memref<8xf32> to memref<8xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %j = arith.subi %c7, %i : index
    %v = memref.load %view[%j] : memref<8xf32, strided<[1]>>
    memref.store %v, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A dynamic space delinearizes in index arithmetic.
// CHECK-LABEL: func.func @dynamic_space
// CHECK: gpu.launch
// CHECK-NOT: i32
// CHECK: %[[INDEX:.*]] = arith.addi {{.*}} : index
// CHECK: arith.cmpi ult, %[[INDEX]], {{.*}} : index
// CHECK: memref.store
func.func @dynamic_space(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Serial host code that touches memory (a 0-d op: load, math, store) runs
// on one thread, in one launch.
// CHECK-LABEL: func.func @scalar
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:.*]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[ONE]],
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.terminator
func.func @scalar(%a: memref<f32>, %b: memref<f32>) {
  %v = memref.load %a[] : memref<f32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %b[] : memref<f32>
  return
}

// -----

// The step's seed lives in host memory: it is read once, on the host.
// CHECK-LABEL: func.func @seed
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[SEED:.*]] = memref.load %arg0[%[[ZERO]]]
// CHECK: gpu.launch
// CHECK: arith.addi %[[SEED]]
func.func @seed(%seed: memref<1xi64> {sym.rng_seed}, %out: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %s = memref.load %seed[%c0] : memref<1xi64>
    %j = arith.index_cast %i : index to i64
    %v = arith.addi %s, %j : i64
    memref.store %v, %out[%i] : memref<4xi64>
    scf.reduce
  }
  return
}

// -----

// Loops that launch kernels stay on the host.
// CHECK-LABEL: func.func @host_loop
// CHECK: scf.for
// CHECK: gpu.launch
func.func @host_loop(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %a[%i, %j] : memref<4x8xf32>
      scf.reduce
    }
  }
  return
}

// -----

func.func private @symc_kernel_nms(memref<4xf32>)

func.func @library_call(%a: memref<4xf32>) {
  // expected-error @+1 {{calls 'symc_kernel_nms' of symc's CPU kernel library: this op has no cuda lowering yet}}
  func.call @symc_kernel_nms(%a) : (memref<4xf32>) -> ()
  return
}

// -----

func.func @steer_host(%a: memref<f32>, %b: memref<4xf32>) {
  // expected-error @+1 {{reads device memory to steer host code}}
  %v = memref.load %a[] : memref<f32>
  %n = arith.fptosi %v : f32 to i64
  %i = arith.index_cast %n : i64 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %i step %c1 {
    %c4 = arith.constant 4 : index
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      memref.store %v, %b[%j] : memref<4xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A run-time check writes the host's error record: not from a kernel.
func.func @run_check(%error: memref<4xi64> {sym.run_error}, %a: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{has a run-time check, which the cuda target does not support yet}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %a[%i] : memref<4xi64>
    memref.store %v, %error[%c0] : memref<4xi64>
    scf.reduce
  }
  return
}
