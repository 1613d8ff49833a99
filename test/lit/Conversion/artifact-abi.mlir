// RUN: symc-opt %s -sym-artifact-abi=prefix=net | FileCheck %s

// @main becomes a private destination-passing function over memrefs ...
// CHECK: module attributes {symc.manifest = "{
// CHECK-SAME: \22arguments\22:[{\22dtype\22:\22float32\22,\22name\22:\22x\22,\22shape\22:[2,3]}]
// CHECK-SAME: \22nodes\22:[{\22name\22:\22act\22,\22op\22:\22relu\22}]
// CHECK-SAME: \22outputs\22:[{\22dtype\22:\22float32\22,\22name\22:\22act_output\22,\22shape\22:[2,3]}]
// CHECK-LABEL: func.func private @net_forward_impl(
// CHECK-SAME: %[[X:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x3xf32>, %[[WS:.*]]: memref<?xi8>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK: %[[R:.*]] = sym.relu %[[T]]
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]

// ... called from the exported C entry point with descriptors built from the
// frame's buffer pointers and the workspace pointer.
// CHECK: llvm.func @net_forward(%[[BUFS:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ARENA:.*]]: !llvm.ptr) -> i32
// CHECK: llvm.getelementptr %[[BUFS]][0]
// CHECK: llvm.getelementptr %[[BUFS]][1]
// CHECK: llvm.insertvalue %[[ARENA]]
// CHECK: call @net_forward_impl
func.func @main(%x: tensor<2x3xf32> {sym.name = "x"}) -> (tensor<2x3xf32> {sym.name = "act_output"}) {
  %0 = sym.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("act")
  return %0 : tensor<2x3xf32>
}
