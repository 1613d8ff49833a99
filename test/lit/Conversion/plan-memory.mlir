// RUN: symc-opt %s -sym-plan-memory -sym-embed-manifest | FileCheck %s

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
