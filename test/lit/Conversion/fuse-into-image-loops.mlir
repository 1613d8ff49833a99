// RUN: symc-opt %s --sym-fuse-into-image-loops --canonicalize | FileCheck %s

// A batch of two images, each convolved (here: negated) in its own
// iteration and copied into the batch; then a per-channel scale over the
// whole batch. The scale moves into the loop: it reads each image's result
// as it comes out, writes a fresh tensor, and that is what the loop copies
// into the batch. The loop builds no other result.

// CHECK-LABEL: func.func @batch
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK: %[[LOOP:.*]] = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x8xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.extract_slice %[[X]][%[[N]], 0, 0] [1, 4, 8]
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[IMAGE]] : tensor<1x4x8xf32>)
// CHECK: arith.negf
// CHECK: %[[FRESH:.*]] = tensor.empty() : tensor<1x4x8xf32>
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[NEG]], %{{.*}} : tensor<1x4x8xf32>, tensor<4xf32>) outs(%[[FRESH]] : tensor<1x4x8xf32>)
// CHECK: arith.mulf
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[ACC]][%[[N]], 0, 0] [1, 4, 8]
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[SCALED]] : tensor<1x4x8xf32>) outs(%[[SLICE]] : tensor<1x4x8xf32>)
// CHECK: %[[INSERTED:.*]] = tensor.insert_slice %[[COPY]] into %[[ACC]][%[[N]], 0, 0] [1, 4, 8]
// CHECK: scf.yield %[[INSERTED]] : tensor<2x4x8xf32>
// CHECK: return %[[LOOP]]
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d1)>
func.func @batch(%x: tensor<2x4x8xf32>, %s: tensor<4xf32>) -> tensor<2x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %batch = tensor.empty() : tensor<2x4x8xf32>
  %conv = scf.for %n = %c0 to %c2 step %c1 iter_args(%acc = %batch) -> (tensor<2x4x8xf32>) {
    %image = tensor.extract_slice %x[%n, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> to tensor<1x4x8xf32>
    %e = tensor.empty() : tensor<1x4x8xf32>
    %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%image : tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.negf %a : f32
      linalg.yield %m : f32
    } -> tensor<1x4x8xf32>
    %slice = tensor.extract_slice %acc[%n, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> to tensor<1x4x8xf32>
    %copy = linalg.copy ins(%neg : tensor<1x4x8xf32>) outs(%slice : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %inserted = tensor.insert_slice %copy into %acc[%n, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<1x4x8xf32> into tensor<2x4x8xf32>
    scf.yield %inserted : tensor<2x4x8xf32>
  }
  %out = tensor.empty() : tensor<2x4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%conv, %s : tensor<2x4x8xf32>, tensor<4xf32>) outs(%out : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x4x8xf32>
  return %scaled : tensor<2x4x8xf32>
}
