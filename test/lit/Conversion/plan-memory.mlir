// RUN: symc-opt %s -split-input-file -sym-plan-memory -sym-embed-manifest | FileCheck %s

// Buffers whose lifetimes do not overlap share workspace bytes: %a dies
// before %c is allocated, %b lives across both.
// CHECK-LABEL: func.func private @impl
// CHECK: memref.view %arg1[%c0{{.*}}][] : memref<?xi8> to memref<1024xf32>
// CHECK: memref.view %arg1[%c4096{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: memref.view %arg1[%c0{{.*}}][] : memref<?xi8> to memref<512xf32>
// CHECK-NOT: memref.alloc
// The arena size reaches the embedded manifest.
// CHECK: llvm.mlir.global internal constant @p_manifest_json({{.*}}\22workspace_bytes\22:5120
module attributes {symc.manifest = "{\"prefix\":\"p\"}"} {
  func.func private @impl(%out: memref<256xf32>, %ws: memref<?xi8>) attributes {symc.entry_impl} {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<1024xf32>)
    %b = memref.alloc() : memref<256xf32>
    %sub = memref.subview %a[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
    linalg.copy ins(%sub : memref<256xf32, strided<[1]>>) outs(%b : memref<256xf32>)
    %c = memref.alloc() : memref<512xf32>
    linalg.fill ins(%cst : f32) outs(%c : memref<512xf32>)
    %sub2 = memref.subview %c[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
    linalg.add ins(%b, %sub2 : memref<256xf32>, memref<256xf32, strided<[1]>>) outs(%out : memref<256xf32>)
    return
  }
}

// -----

// A buffer used only inside the loop over whole chunks of a dynamic batch
// (symc.batch_chunk) is placed after every other: a batch smaller than a
// chunk, which never enters that loop, runs in the workspace below it.
// CHECK-LABEL: func.func private @chunked
// CHECK: memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<64xf32>
// CHECK: memref.view %arg2[%c256{{.*}}][] : memref<?xi8> to memref<1024xf32>
// CHECK: llvm.mlir.global internal constant @q_manifest_json({{.*}}\22small_batch_workspace\22:{\22below_rows\22:16,\22bytes\22:256}{{.*}}\22workspace_bytes\22:4352
module attributes {symc.manifest = "{\"prefix\":\"q\"}"} {
  func.func private @chunked(%n: index, %out: memref<64xf32>, %ws: memref<?xi8>) attributes {symc.entry_impl} {
    %cst = arith.constant 1.0 : f32
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %rows = memref.alloc() : memref<64xf32>
    %chunk = memref.alloc() : memref<1024xf32>
    scf.for %i = %c0 to %n step %c16 {
      linalg.fill ins(%cst : f32) outs(%chunk : memref<1024xf32>)
    } {symc.batch_chunk = 16 : i64}
    linalg.fill ins(%cst : f32) outs(%rows : memref<64xf32>)
    linalg.copy ins(%rows : memref<64xf32>) outs(%out : memref<64xf32>)
    return
  }
}

// -----

// Buffers hoisted out of a loop whose uses all lie in its body share bytes
// by their positions in the body: %a and %c, each used for part of one
// iteration, take the same offset. %carried, the loop's iteration
// argument, lives through the whole loop.
// CHECK-LABEL: func.func private @hoisted
// CHECK: memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: memref.view %arg2[%c1024{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: memref.view %arg2[%c1024{{.*}}][] : memref<?xi8> to memref<256xf32>
// CHECK: llvm.mlir.global internal constant @r_manifest_json({{.*}}\22workspace_bytes\22:2048
module attributes {symc.manifest = "{\"prefix\":\"r\"}"} {
  func.func private @hoisted(%n: index, %out: memref<256xf32>, %ws: memref<?xi8>) attributes {symc.entry_impl} {
    %cst = arith.constant 1.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %carried = memref.alloc() : memref<256xf32>
    %a = memref.alloc() : memref<256xf32>
    %c = memref.alloc() : memref<256xf32>
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %carried) -> (memref<256xf32>) {
      linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
      linalg.add ins(%acc, %a : memref<256xf32>, memref<256xf32>) outs(%out : memref<256xf32>)
      linalg.fill ins(%cst : f32) outs(%c : memref<256xf32>)
      linalg.add ins(%out, %c : memref<256xf32>, memref<256xf32>) outs(%acc : memref<256xf32>)
      scf.yield %acc : memref<256xf32>
    }
    return
  }
}

// -----

// A monitor variant (symc.monitor_impl) gets a workspace of its own, in the
// manifest's monitor object: the fused entry's stays what it needs.
// CHECK-LABEL: func.func private @fused
// CHECK: llvm.mlir.global internal constant @m_manifest_json({{.*}}\22monitor\22:{\22workspace_bytes\22:4096}{{.*}}\22workspace_bytes\22:1024
module attributes {symc.manifest = "{\"prefix\":\"m\",\"monitor\":{}}"} {
  func.func private @fused(%out: memref<256xf32>, %ws: memref<?xi8>) attributes {symc.entry_impl} {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<256xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
    linalg.copy ins(%a : memref<256xf32>) outs(%out : memref<256xf32>)
    return
  }
  func.func private @monitored(%out: memref<256xf32>, %ws: memref<?xi8>) attributes {symc.entry_impl, symc.monitor_impl} {
    %cst = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%cst : f32) outs(%a : memref<1024xf32>)
    %sub = memref.subview %a[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
    linalg.copy ins(%sub : memref<256xf32, strided<[1]>>) outs(%out : memref<256xf32>)
    return
  }
}
