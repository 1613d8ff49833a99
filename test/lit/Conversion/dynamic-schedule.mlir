// RUN: symc-opt %s --sym-dynamic-schedule | FileCheck %s

// A work-sharing loop without a schedule hands its iterations out
// dynamically; one that names a schedule keeps it.

// CHECK-LABEL: func.func @unscheduled
// CHECK: omp.wsloop schedule(dynamic)
func.func @unscheduled(%m: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %m[%i] : memref<16xf32>
        omp.yield
      }
      omp.terminator
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func @scheduled
// CHECK: omp.wsloop schedule(static)
func.func @scheduled(%m: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %m[%i] : memref<16xf32>
        omp.yield
      }
      omp.terminator
    }
    omp.terminator
  }
  return
}
