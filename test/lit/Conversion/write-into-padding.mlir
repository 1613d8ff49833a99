// RUN: symc-opt %s --split-input-file --sym-write-into-padding | FileCheck %s

// Thread tiles of 4 rows of a (16 positions, 2 strips, 8 lanes) GEMM result,
// the positions a 4x4 image padded by one on each side: each tile writes its
// place in the padded image's interior (row iv floordiv 1, columns 0..3 of
// that row), whose border alone is filled with zeros. No tensor.pad is left.
// The tile's slice and its insert share their offsets (bufferization then
// sees the tile computed in place).

// CHECK: #[[ROW:.*]] = affine_map<(d0) -> (d0 mod 4)>
// CHECK-LABEL: func.func @tiles
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x6x6x2x8xf32>
// CHECK: %[[TOP:.*]] = linalg.fill {{.*}} -> tensor<1x1x6x2x8xf32>
// CHECK: %[[B1:.*]] = tensor.insert_slice %[[TOP]] into %[[EMPTY]][0, 0, 0, 0, 0] [1, 1, 6, 2, 8]
// CHECK: %[[BOTTOM:.*]] = linalg.fill {{.*}} -> tensor<1x1x6x2x8xf32>
// CHECK: %[[B2:.*]] = tensor.insert_slice %[[BOTTOM]] into %[[B1]][0, 5, 0, 0, 0] [1, 1, 6, 2, 8]
// CHECK: %[[LEFT:.*]] = linalg.fill {{.*}} -> tensor<1x6x1x2x8xf32>
// CHECK: %[[B3:.*]] = tensor.insert_slice %[[LEFT]] into %[[B2]][0, 0, 0, 0, 0] [1, 6, 1, 2, 8]
// CHECK: %[[RIGHT:.*]] = linalg.fill {{.*}} -> tensor<1x6x1x2x8xf32>
// CHECK: %[[B4:.*]] = tensor.insert_slice %[[RIGHT]] into %[[B3]][0, 0, 5, 0, 0] [1, 6, 1, 2, 8]
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[B4]][0, 1, 1, 0, 0] [1, 4, 4, 2, 8] [1, 1, 1, 1, 1]
// CHECK: %[[TILES:.*]] = scf.forall (%[[I:.*]], %[[J:.*]]) in (4, 2) shared_outs(%[[OUT:.*]] = %[[INTERIOR]]) -> (tensor<1x4x4x2x8xf32>)
// CHECK: %[[R:.*]] = affine.apply #[[ROW]](%[[I]])
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][0, %[[R]], 0, %[[J]], 0] [1, 1, 4, 1, 8] [1, 1, 1, 1, 1] : tensor<1x4x4x2x8xf32> to tensor<4x1x8xf32>
// CHECK: %[[DONE:.*]] = linalg.fill {{.*}} outs(%[[TILE]] : tensor<4x1x8xf32>)
// CHECK-NOT: affine.apply
// CHECK: tensor.parallel_insert_slice %[[DONE]] into %[[OUT]][0, %[[R]], 0, %[[J]], 0] [1, 1, 4, 1, 8] [1, 1, 1, 1, 1] : tensor<4x1x8xf32> into tensor<1x4x4x2x8xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[TILES]] into %[[B4]][0, 1, 1, 0, 0] [1, 4, 4, 2, 8] [1, 1, 1, 1, 1]
// CHECK: return %[[PADDED]]
func.func @tiles(%v: f32) -> tensor<1x6x6x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2x8xf32>
  %r = scf.forall (%i, %j) in (4, 2) shared_outs(%out = %e) -> (tensor<16x2x8xf32>) {
    %row = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
    %tile = tensor.extract_slice %out[%row, %j, 0] [4, 1, 8] [1, 1, 1] : tensor<16x2x8xf32> to tensor<4x1x8xf32>
    %done = linalg.fill ins(%v : f32) outs(%tile : tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %done into %out[%row, %j, 0] [4, 1, 8] [1, 1, 1] : tensor<4x1x8xf32> into tensor<16x2x8xf32>
    }
  }
  %image = tensor.expand_shape %r [[0, 1, 2], [3], [4]] output_shape [1, 4, 4, 2, 8] : tensor<16x2x8xf32> into tensor<1x4x4x2x8xf32>
  %padded = tensor.pad %image low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %f: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x2x8xf32> to tensor<1x6x6x2x8xf32>
  return %padded : tensor<1x6x6x2x8xf32>
}

// -----

// Tiles of 8 rows would straddle the image's rows of 4: they compute the
// image as before, which a copy then writes into the padded tensor's
// interior.

// CHECK-LABEL: func.func @straddling
// CHECK: %[[ROWS:.*]] = scf.forall {{.*}} -> (tensor<16x2x8xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.expand_shape %[[ROWS]]
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0, 0] [1, 4, 4, 2, 8] [1, 1, 1, 1, 1]
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[IMAGE]] : tensor<1x4x4x2x8xf32>) outs(%[[INTERIOR]] : tensor<1x4x4x2x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: tensor.pad
// CHECK: tensor.insert_slice %[[COPY]] into %{{.*}}[0, 1, 1, 0, 0] [1, 4, 4, 2, 8] [1, 1, 1, 1, 1]
func.func @straddling(%v: f32) -> tensor<1x6x6x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2x8xf32>
  %r = scf.forall (%i, %j) in (2, 2) shared_outs(%out = %e) -> (tensor<16x2x8xf32>) {
    %row = affine.apply affine_map<(d0) -> (d0 * 8)>(%i)
    %tile = tensor.extract_slice %out[%row, %j, 0] [8, 1, 8] [1, 1, 1] : tensor<16x2x8xf32> to tensor<8x1x8xf32>
    %done = linalg.fill ins(%v : f32) outs(%tile : tensor<8x1x8xf32>) -> tensor<8x1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %done into %out[%row, %j, 0] [8, 1, 8] [1, 1, 1] : tensor<8x1x8xf32> into tensor<16x2x8xf32>
    }
  }
  %image = tensor.expand_shape %r [[0, 1, 2], [3], [4]] output_shape [1, 4, 4, 2, 8] : tensor<16x2x8xf32> into tensor<1x4x4x2x8xf32>
  %padded = tensor.pad %image low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %f: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x2x8xf32> to tensor<1x6x6x2x8xf32>
  return %padded : tensor<1x6x6x2x8xf32>
}

// -----

// An elementwise op computed for the padding alone takes its interior as
// its init; the padding on the channels dim is filled too.

// CHECK-LABEL: func.func @elementwise
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x5x4x4xf32>
// CHECK: %[[LOW:.*]] = linalg.fill {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[B1:.*]] = tensor.insert_slice %[[LOW]] into %[[EMPTY]][0, 0, 0, 0] [1, 2, 4, 4]
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %[[B1]][0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[INTERIOR]] : tensor<1x3x4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %[[B1]][0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
// CHECK: return %[[PADDED]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @elementwise(%x: tensor<1x3x4x4xf32>) -> tensor<1x5x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x4x4xf32>) outs(%e : tensor<1x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x4x4xf32>
  %padded = tensor.pad %relu low[0, 2, 0, 0] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x4x4xf32> to tensor<1x5x4x4xf32>
  return %padded : tensor<1x5x4x4xf32>
}

// -----

// A pooling's image computed in 2x2 blocks (then collapsed) computes in the
// interior expanded to its blocks.

// CHECK-LABEL: func.func @blocks
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x6x8xf32> to tensor<1x4x4x8xf32>
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[INTERIOR]] {{\[}}[0], [1, 2], [3, 4], [5]] output_shape [1, 2, 2, 2, 2, 8]
// CHECK: %[[POOL:.*]] = linalg.generic {{.*}} outs(%[[BLOCKS]] : tensor<1x2x2x2x2x8xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.collapse_shape %[[POOL]]
// CHECK-NOT: tensor.pad
// CHECK: tensor.insert_slice %[[IMAGE]] into %{{.*}}[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1]
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
func.func @blocks(%x: tensor<1x2x2x2x2x8xf32>, %y: tensor<1x2x2x2x2x8xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x2x2x8xf32>
  %pool = linalg.generic {indexing_maps = [#id6, #id6, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %y : tensor<1x2x2x2x2x8xf32>, tensor<1x2x2x2x2x8xf32>) outs(%e : tensor<1x2x2x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2x2x8xf32>
  %image = tensor.collapse_shape %pool [[0], [1, 2], [3, 4], [5]] : tensor<1x2x2x2x2x8xf32> into tensor<1x4x4x8xf32>
  %padded = tensor.pad %image low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x8xf32> to tensor<1x6x6x8xf32>
  return %padded : tensor<1x6x6x8xf32>
}

// -----

// A transpose (an NCHW input going channels-last) writes into the padding.

// CHECK-LABEL: func.func @transpose
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}}[0, 3, 3, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x10x10x3xf32> to tensor<1x4x4x3xf32>
// CHECK: %[[NHWC:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x3x4x4xf32>) outs(%[[INTERIOR]] : tensor<1x4x4x3xf32>)
// CHECK-NOT: tensor.pad
// CHECK: tensor.insert_slice %[[NHWC]] into %{{.*}}[0, 3, 3, 0] [1, 4, 4, 3] [1, 1, 1, 1]
func.func @transpose(%x: tensor<1x3x4x4xf32>) -> tensor<1x10x10x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %t = linalg.transpose ins(%x : tensor<1x3x4x4xf32>) outs(%e : tensor<1x4x4x3xf32>) permutation = [0, 2, 3, 1]
  %padded = tensor.pad %t low[0, 3, 3, 0] high[0, 3, 3, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x3xf32> to tensor<1x10x10x3xf32>
  return %padded : tensor<1x10x10x3xf32>
}

// -----

// The image is read unpadded too (a training forward saves it): it is
// computed as before, then copied into the interior.

// CHECK-LABEL: func.func @shared
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}}[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 1, 1]
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[RELU]] : tensor<1x3x4x4xf32>) outs(%[[INTERIOR]] : tensor<1x3x4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %[[COPY]] into %{{.*}}[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 1, 1]
// CHECK: return %[[PADDED]], %[[RELU]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @shared(%x: tensor<1x3x4x4xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x3x4x4xf32>) outs(%e : tensor<1x3x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x4x4xf32>
  %padded = tensor.pad %relu low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x4x4xf32> to tensor<1x3x6x6xf32>
  return %padded, %relu : tensor<1x3x6x6xf32>, tensor<1x3x4x4xf32>
}

// -----

// A read of exactly the interior (a stride-1 convolution's middle tap) would
// fold into a read of the computed value after its insertion, which
// bufferization copies: the pad stays.

// CHECK-LABEL: func.func @middle_tap
// CHECK: tensor.pad
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @middle_tap(%x: tensor<1x4x4x3xf32>) -> (tensor<1x6x6x3xf32>, tensor<1x4x4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %relu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x3xf32>
  %padded = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x3xf32> to tensor<1x6x6x3xf32>
  %middle = tensor.extract_slice %padded[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x6x6x3xf32> to tensor<1x4x4x3xf32>
  return %padded, %middle : tensor<1x6x6x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// The pad's zero defined in its own region: the border's fills use a zero
// of their own.

// CHECK-LABEL: func.func @zero_in_region
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32)
// CHECK-NOT: tensor.pad
#id4z = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @zero_in_region(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x6x3xf32> {
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %neg = linalg.generic {indexing_maps = [#id4z, #id4z], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x3xf32>
  %padded = tensor.pad %neg low[0, 0, 1, 0] high[0, 0, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    %zero = arith.constant 0.0 : f32
    tensor.yield %zero : f32
  } : tensor<1x4x4x3xf32> to tensor<1x4x6x3xf32>
  return %padded : tensor<1x4x6x3xf32>
}

// -----

// A max pooling's input padded with -inf: the border is filled with -inf.

// CHECK-LABEL: func.func @lowest_padding
// CHECK: tensor.empty() : tensor<1x6x6x3xf32>
// CHECK-NEXT: %[[LOWEST:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[LOWEST]] : f32) {{.*}} -> tensor<1x1x6x3xf32>
// CHECK: linalg.fill ins(%[[LOWEST]] : f32) {{.*}} -> tensor<1x1x6x3xf32>
// CHECK: linalg.fill ins(%[[LOWEST]] : f32) {{.*}} -> tensor<1x6x1x3xf32>
// CHECK: linalg.fill ins(%[[LOWEST]] : f32) {{.*}} -> tensor<1x6x1x3xf32>
// CHECK: %[[INTERIOR:.*]] = tensor.extract_slice {{.*}}[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[INTERIOR]] : tensor<1x4x4x3xf32>)
// CHECK-NOT: tensor.pad
#id4l = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @lowest_padding(%x: tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %neg = linalg.generic {indexing_maps = [#id4l, #id4l], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x3xf32>
  %padded = tensor.pad %neg low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %lowest : f32
  } : tensor<1x4x4x3xf32> to tensor<1x6x6x3xf32>
  return %padded : tensor<1x6x6x3xf32>
}

// -----

// A linalg op that reads the padded tensor itself (a pooling's window
// reduction) keeps the pad: sym-distribute-threads pads each of its thread
// tiles' slices.

// CHECK-LABEL: func.func @padded_per_tile
// CHECK: tensor.pad
// CHECK-NOT: linalg.fill
#in3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
#win3 = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
#out3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @padded_per_tile(%x: tensor<1x4x4x3xf32>, %w: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %lowest : f32
  } : tensor<1x4x4x3xf32> to tensor<1x6x4x3xf32>
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %max = linalg.generic {indexing_maps = [#in3, #win3, #out3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%padded, %w : tensor<1x6x4x3xf32>, tensor<3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x3xf32>
  return %max : tensor<1x4x4x3xf32>
}
