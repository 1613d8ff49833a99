// RUN: symc-opt %s -split-input-file -sym-artifact-abi=prefix=net | FileCheck %s

// @main becomes a private destination-passing function over memrefs ...
// CHECK: module attributes {symc.manifest = "{
// CHECK-SAME: \22arguments\22:[{\22dtype\22:\22float32\22,\22name\22:\22x\22,\22shape\22:[2,3]}]
// CHECK-SAME: \22nodes\22:[{\22name\22:\22act\22,\22op\22:\22relu\22}]
// CHECK-SAME: \22outputs\22:[{\22dtype\22:\22float32\22,\22name\22:\22act_output\22,\22shape\22:[2,3]}]
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-SAME: %[[X:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>, %{{.*}}: memref<4xi64> {sym.run_error}, %[[WS:.*]]: memref<?xi8>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK: %[[R:.*]] = sym.relu %[[T]]
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]

// ... called from the exported C entry point with descriptors built from the
// frame's buffer pointers, the run error and the workspace pointer; the
// entry clears the run error's check and returns it.
// CHECK: llvm.func @net_forward(%[[BUFS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ARENA:.*]]: !llvm.ptr, %[[ERR:.*]]: !llvm.ptr) -> i32
// CHECK: llvm.getelementptr %[[BUFS]][0]
// CHECK: llvm.getelementptr %[[BUFS]][1]
// CHECK: llvm.insertvalue %[[ERR]]
// CHECK: llvm.insertvalue %[[ARENA]]
// CHECK: llvm.store %{{.*}}, %[[ERR]]
// CHECK: call @net_forward_impl
// CHECK: %[[CHECK:.*]] = llvm.load %[[ERR]] : !llvm.ptr -> i64
// CHECK: %[[STATUS:.*]] = llvm.trunc %[[CHECK]] : i64 to i32
// CHECK: llvm.return %[[STATUS]]
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.name = "act_output"}) {
  %0 = sym.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("act")
  return %0 : tensor<2x3xf32>
}

// -----

// Ops that draw random numbers get the function a seed argument, which keeps
// its attribute for the lowering; the entry point reads it at dims[1], and
// the frame holds only the bound arrays.
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-SAME: %{{.*}}: memref<2x3xf32>, %{{.*}}: memref<i64> {sym.rng_seed}, %{{.*}}: memref<2x3xf32>, %{{.*}}: memref<4xi64> {sym.run_error}, %{{.*}}: memref<?xi8>)
// CHECK: llvm.func @net_forward(%[[BUFS:.*]]: !llvm.ptr, %[[DIMS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK: llvm.getelementptr %[[BUFS]][0]
// CHECK: llvm.getelementptr %[[DIMS]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: llvm.getelementptr %[[BUFS]][1]
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.name = "drop_output"}) {
  %0:2 = sym.Dropout %x {mode = "always", p = 0.5 : f64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) loc("drop")
  return %0#0 : tensor<2x3xf32>
}

// -----

// Ops with a run-time check are numbered, and the manifest lists each
// check's node and MXNet's message.
// CHECK: module attributes {symc.manifest = "{
// CHECK-SAME: \22checks\22:[{\22message\22:\22Check failed: is_valid: take operator contains indices out of bound\22,\22node\22:\22tk\22}]
// CHECK: sym.take {{.*}}sym.check = 1 : i64
func.func @main(%a: tensor<4x2xf32> {sym.name = "a"}, %i: tensor<3xf32> {sym.name = "i"}) -> (tensor<3x2xf32> {sym.name = "tk_output"}) {
  %0 = sym.take %a, %i {mode = "raise"} : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32> loc("tk")
  return %0 : tensor<3x2xf32>
}
