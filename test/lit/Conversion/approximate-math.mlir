// RUN: symc-opt %s -sym-approximate-math | FileCheck %s

// f32 exp and tanh become polynomial arithmetic; f64 keeps the math op.
// CHECK-LABEL: func @approximate
// CHECK-NOT: math.exp {{.*}} : f32
// CHECK-NOT: math.tanh {{.*}} : f32
// CHECK: math.fma
// CHECK: math.exp {{.*}} : f64
func.func @approximate(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.exp %x : f32
  %1 = math.tanh %0 : f32
  %2 = math.exp %y : f64
  return %1, %2 : f32, f64
}
