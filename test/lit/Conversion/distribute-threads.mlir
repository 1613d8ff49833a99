// RUN: symc-opt %s -sym-distribute-threads="chunks=4 min-iterations=1" | FileCheck %s
// RUN: symc-opt %s -sym-distribute-threads=chunks=4 | FileCheck %s --check-prefix=SMALL

// By default, ops this small stay on one thread.
// SMALL-NOT: scf.forall

// The leading parallel dim is cut into 4 chunks of an scf.forall; the
// reduction dim stays whole inside.
// CHECK-LABEL: func @rows
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (16)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<16xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: tensor<64x32xf32>, %acc: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// Per-channel sums (BatchNorm's): the channel dim is cut, the batch and
// spatial dims around it stay whole.
// CHECK-LABEL: func @channels
// CHECK: scf.forall (%{{.*}}) = (0) to (8) step (2)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x2x6xf32>) outs(%{{.*}} : tensor<2xf32>)
#nch = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d1)>
func.func @channels(%x: tensor<4x8x6xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#nch, #ch], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<4x8x6xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// A batch of one moves on to the next dim.
// CHECK-LABEL: func @unit_batch
// CHECK: scf.forall (%{{.*}}) = (0) to (8) step (2)
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @unit_batch(%x: tensor<1x8x5xf32>) -> tensor<1x8x5xf32> {
  %e = tensor.empty() : tensor<1x8x5xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x5xf32>) outs(%e : tensor<1x8x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x8x5xf32>
  return %r : tensor<1x8x5xf32>
}

// A pad, a serial copy once bufferized, is split too.
// CHECK-LABEL: func @pad
// CHECK: scf.forall (%{{.*}}) = (0) to (8) step (2)
// CHECK: tensor.pad
func.func @pad(%x: tensor<8x5xf32>) -> tensor<8x7xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x5xf32> to tensor<8x7xf32>
  return %p : tensor<8x7xf32>
}

// A reversed dim (a flipped kernel) would get wrong slices: the op stays whole.
// CHECK-LABEL: func @reversed
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
#flip = affine_map<(d0, d1) -> (d0, -d1 + 7)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @reversed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#flip, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// A constant term (a shifted window) would be added twice, by the slice
// offset and by the tiled map: the op stays whole.
// CHECK-LABEL: func @shifted
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
#shift = affine_map<(d0, d1) -> (d0, d1 + 2)>
func.func @shifted(%x: tensor<8x10xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#shift, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x10xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// A transpose of the innermost dim walks each thread's rows in 16 x 16
// squares of the two dims it swaps, the leading dim one at a time.
// CHECK-LABEL: func @transpose
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x16x16xf32>) outs(%{{.*}} : tensor<1x16x16xf32>) permutation = [0, 2, 1]
func.func @transpose(%x: tensor<4x64x32xf32>) -> tensor<4x32x64xf32> {
  %e = tensor.empty() : tensor<4x32x64xf32>
  %t = linalg.transpose ins(%x : tensor<4x64x32xf32>) outs(%e : tensor<4x32x64xf32>) permutation = [0, 2, 1]
  return %t : tensor<4x32x64xf32>
}

// Blocks divide the dims they cut, by powers of two where they can: a
// 56-wide row in 8s (whole blocks, static, rather than 16, 16, 16 and 8),
// 3 channels whole.
// CHECK-LABEL: func @transpose_ragged
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x3x1x8xf32>) outs(%{{.*}} : tensor<1x1x8x3xf32>) permutation = [0, 2, 3, 1]
func.func @transpose_ragged(%x: tensor<4x3x2x56xf32>) -> tensor<4x2x56x3xf32> {
  %e = tensor.empty() : tensor<4x2x56x3xf32>
  %t = linalg.transpose ins(%x : tensor<4x3x2x56xf32>) outs(%e : tensor<4x2x56x3xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<4x2x56x3xf32>
}

// One that keeps the innermost dim in place copies whole rows: no squares.
// CHECK-LABEL: func @rows_moved
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: linalg.transpose
func.func @rows_moved(%x: tensor<4x64x32xf32>) -> tensor<64x4x32xf32> {
  %e = tensor.empty() : tensor<64x4x32xf32>
  %t = linalg.transpose ins(%x : tensor<4x64x32xf32>) outs(%e : tensor<64x4x32xf32>) permutation = [1, 0, 2]
  return %t : tensor<64x4x32xf32>
}

// A chain (the fill, the row sums it starts, their elementwise use) runs in
// one scf.forall, each tile computing its rows of every op in turn.
// CHECK-LABEL: func @chain
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (16)
// CHECK: linalg.fill {{.*}} -> tensor<16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: math.sqrt
// CHECK-NOT: scf.forall (
#r2 = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<64x32xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel"]}
      ins(%sum : tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.sqrt %a : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// A producer the consumer broadcasts along the dim threads split would be
// recomputed by every tile, and one with a second use would be computed
// twice: both keep threads of their own.
// CHECK-LABEL: func @unfused
// CHECK: scf.forall
// CHECK: arith.negf
// CHECK: scf.forall
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: scf.forall
// CHECK: math.absf
#col = affine_map<(d0, d1) -> (d1, d0)>
func.func @unfused(%x: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32x64xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<32x64xf32>
  %t = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg : tensor<64x32xf32>) outs(%e2 : tensor<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<32x64xf32>
  %e3 = tensor.empty() : tensor<64x32xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg : tensor<64x32xf32>) outs(%e3 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.absf %a : f32
    linalg.yield %m : f32
  } -> tensor<64x32xf32>
  return %abs, %t : tensor<64x32xf32>, tensor<32x64xf32>
}

// A windowed reduction's zero-padded input, padded along the dims the
// threads do not split, is padded tile by tile: each tile pads its own
// rows of the source, in the loop of the reduction and its consumer.
// CHECK-LABEL: func @padded_window
// CHECK: scf.forall (%[[I:.*]]) = (0) to (8) step (2)
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %arg0[%[[I]], 0] [2, 6] [1, 1]
// CHECK: %[[PADDED:.*]] = tensor.pad %[[ROWS]] low[0, 1] high[0, 1]
// CHECK: linalg.generic {{.*}} ins(%[[PADDED]], %{{.*}} : tensor<2x8xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x6xf32>)
// CHECK: math.sqrt
// CHECK-NOT: scf.forall (
#win = affine_map<(d0, d1, d2) -> (d0, d1 + d2)>
#tap = affine_map<(d0, d1, d2) -> (d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @padded_window(%x: tensor<8x6xf32>, %w: tensor<3xf32>) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x6xf32> to tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %sum = linalg.generic {indexing_maps = [#win, #tap, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %w : tensor<8x8xf32>, tensor<3xf32>) outs(%init : tensor<8x6xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<8x6xf32>
  %e2 = tensor.empty() : tensor<8x6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<8x6xf32>) outs(%e2 : tensor<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.sqrt %a : f32
    linalg.yield %q : f32
  } -> tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// A sum in two levels (per block of rows, then over the blocks) keeps its
// first level on threads of its own, split by blocks: computed in the
// second level's tiles, split by channels, every thread would read every
// row for a few channels.
// CHECK-LABEL: func @two_level_sum
// CHECK: scf.forall (%{{.*}}) = (0) to (32) step (8)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (4)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<32x4xf32>) outs(%{{.*}} : tensor<4xf32>)
#blocks = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#block_sums = affine_map<(d0, d1, d2) -> (d0, d2)>
#col_in = affine_map<(d0, d1) -> (d0, d1)>
#col_out = affine_map<(d0, d1) -> (d1)>
func.func @two_level_sum(%x: tensor<32x16x16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %partial = linalg.generic {indexing_maps = [#blocks, #block_sums], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<32x16x16xf32>) outs(%init : tensor<32x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["reduction", "parallel"]}
      ins(%partial : tensor<32x16xf32>) outs(%init2 : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %sum : tensor<16xf32>
}

// Elementwise work over a 7x7 map of 256 channels (a depthwise
// convolution's, 49 positions) is cut along the channels alone, in whole
// vectors: no ragged thirds of rows.
// CHECK-LABEL: func @few_positions_many_channels
// CHECK: scf.forall (%{{.*}}) = (0) to (256) step (64)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x7x7x64xf32>) outs(%{{.*}} : tensor<1x7x7x64xf32>)
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
func.func @few_positions_many_channels(%x: tensor<1x7x7x256xf32>) -> tensor<1x7x7x256xf32> {
  %e = tensor.empty() : tensor<1x7x7x256xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #nhwc], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x7x7x256xf32>) outs(%e : tensor<1x7x7x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x7x7x256xf32>
  return %r : tensor<1x7x7x256xf32>
}
