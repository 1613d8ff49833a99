// RUN: symc-opt %s --sym-merge-kernel-modules | FileCheck %s

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
