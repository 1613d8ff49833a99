// MXNet's Reshape code table (test_operator.py::test_reshape), reverse included.
// RUN: symc-opt %s -sym-infer-shapes | FileCheck %s

// CHECK-LABEL: func @codes
func.func @codes(%a: tensor<2x3x5x5xf32>, %b: tensor<2x3x5x6xf32>, %c: tensor<64xf32>,
                 %d: tensor<64x1x2x3xf32>, %e: tensor<1x2x3x64xf32>) {
  // CHECK: sym.Reshape {{.*}}array<i64: 0, -1>{{.*}} -> tensor<2x75xf32>
  %0 = sym.Reshape %a {shape = array<i64: 0, -1>} : (tensor<2x3x5x5xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}} -> tensor<6x1x5x6xf32>
  %1 = sym.Reshape %b {shape = array<i64: 6, 1, -2>} : (tensor<2x3x5x6xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}} -> tensor<6x30xf32>
  %2 = sym.Reshape %b {shape = array<i64: -3, -1>} : (tensor<2x3x5x6xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}} -> tensor<16x4xf32>
  %3 = sym.Reshape %c {shape = array<i64: -4, 16, -1>} : (tensor<64xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}} -> tensor<16x4x1x2x3xf32>
  %4 = sym.Reshape %d {shape = array<i64: -4, 16, -1, -2>} : (tensor<64x1x2x3xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}}reverse = true{{.*}} -> tensor<5x30xf32>
  %5 = sym.Reshape %a {shape = array<i64: 0, -1>, reverse = true} : (tensor<2x3x5x5xf32>) -> tensor<*xf32>
  // CHECK: sym.Reshape {{.*}}reverse = true{{.*}} -> tensor<1x2x3x4x16xf32>
  %6 = sym.Reshape %e {shape = array<i64: -2, -1, 16, -4>, reverse = true} : (tensor<1x2x3x64xf32>) -> tensor<*xf32>
  // Legacy target_shape: 0 is the dim to infer.
  // CHECK: sym.Reshape {{.*}}target_shape{{.*}} -> tensor<2x75xf32>
  %7 = sym.Reshape %a {target_shape = array<i64: 2, 0>} : (tensor<2x3x5x5xf32>) -> tensor<*xf32>
  return
}
