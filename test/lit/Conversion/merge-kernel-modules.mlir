// RUN: symc-opt %s --sym-merge-kernel-modules --split-input-file | FileCheck %s

// Outlined kernels (each in its module, two named alike) move into one
// module under their modules' names and the MXNet node their launch
// computes (spelled as a PTX name), and the launches follow them.
// CHECK: gpu.launch_func @symc_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @symc_kernels::@f_kernel_0__stage1_conv_1 blocks
// CHECK: gpu.module @symc_kernels
// CHECK-DAG: gpu.func @f_kernel(
// CHECK-DAG: gpu.func @f_kernel_0__stage1_conv_1(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @f(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc(fused["stage1.conv-1"("f.json":1:1), "relu"])
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The global outlining copied into each module that reads it (a constant
// array) moves over once.
// CHECK-LABEL: func.func @g
// CHECK: gpu.module @symc_kernels
// CHECK: gpu.func @g_kernel(
// CHECK: memref.global "private" constant @table
// CHECK-NOT: memref.global
// CHECK: gpu.func @g_kernel_0(
// CHECK-NOT: memref.global
module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
  func.func @g(%a: memref<2xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @g_kernel::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<2xf32>)
    gpu.launch_func @g_kernel_0::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<2xf32>)
    return
  }
  gpu.module @g_kernel {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @g_kernel(%a: memref<2xf32>) kernel {
      %t = memref.get_global @table : memref<2xf32>
      memref.copy %t, %a : memref<2xf32> to memref<2xf32>
      gpu.return
    }
  }
  gpu.module @g_kernel_0 {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @g_kernel(%a: memref<2xf32>) kernel {
      %t = memref.get_global @table : memref<2xf32>
      memref.copy %t, %a : memref<2xf32> to memref<2xf32>
      gpu.return
    }
  }
}
