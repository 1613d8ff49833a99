// RUN: symc-opt %s -sym-fuse-elementwise | FileCheck %s

// A bias add and a relu after a matmul fuse into one generic; the matmul
// keeps its named form even though a reshape sits between them.
// CHECK-LABEL: func @fuse
// CHECK: linalg.matmul
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @fuse(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %bias: tensor<6xf32>) -> tensor<2x2x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %added = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4x6xf32>, tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%added : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %r = tensor.expand_shape %relu [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
  return %r : tensor<2x2x6xf32>
}

// A per-channel 1/sqrt(var + eps) feeding a per-pixel map stays its own
// generic, computed once per channel; the per-pixel maps still fuse.
// CHECK-LABEL: func @no_recompute
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<3xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>)
// CHECK-NOT: math.rsqrt
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#channel = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @no_recompute(%x: tensor<2x3xf32>, %var: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %ev = tensor.empty() : tensor<3xf32>
  %inv = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%var : tensor<3xf32>) outs(%ev : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %eps : f32
    %r = math.rsqrt %s : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %scaled = linalg.generic {indexing_maps = [#id2, #channel, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %inv : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %relu = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %relu : tensor<2x3xf32>
}

// A pointwise convolution's 24 filters computed in a strip of 32 (a tap
// contraction), sliced back to 24, then BatchNorm-like work and the zero
// pad a depthwise convolution's taps read: the work runs on all 32 columns
// (its per-channel vector padded with zeros), the pad pads all 32 too, and
// the taps slice the 24 from it; nothing between the contraction and the
// pad but the work, which can become its epilogue.
// CHECK-LABEL: func @columns_slice_sinks_below_pad
// CHECK: %[[GEMM:.*]] = linalg.generic {{.*}} attrs = {symc.tap_contraction}
// CHECK: %[[SCALE:.*]] = tensor.pad %arg2 low[0] high[8]
// CHECK: %[[WORK:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x4x1x32xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<1x4x4x1x32xf32>)
// CHECK: %[[PADDED:.*]] = tensor.pad %[[WORK]] low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0]
// CHECK: %[[IMAGE:.*]] = tensor.collapse_shape %[[PADDED]] {{.*}} into tensor<1x6x6x32xf32>
// CHECK: tensor.extract_slice %[[IMAGE]][0, 0, 0, 0] [1, 4, 4, 24] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[IMAGE]][0, 2, 2, 0] [1, 4, 4, 24] [1, 1, 1, 1]
#gemmRows = affine_map<(p, s, l, k) -> (p, k)>
#gemmStrips = affine_map<(p, s, l, k) -> (s, k, l)>
#gemmOut = affine_map<(p, s, l, k) -> (p, s, l)>
#filtersNHWC = affine_map<(n, h, w, c) -> (n, h, w, c)>
#perFilter = affine_map<(n, h, w, c) -> (c)>
func.func @columns_slice_sinks_below_pad(%x: tensor<16x8xf32>, %w: tensor<1x8x32xf32>, %scale: tensor<24xf32>) -> (tensor<1x4x4x24xf32>, tensor<1x4x4x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1x32xf32>) -> tensor<16x1x32xf32>
  %gemm = linalg.generic {indexing_maps = [#gemmRows, #gemmStrips, #gemmOut], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<16x8xf32>, tensor<1x8x32xf32>) outs(%init : tensor<16x1x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16x1x32xf32>
  %image = tensor.expand_shape %gemm [[0, 1, 2], [3], [4]] output_shape [1, 4, 4, 1, 32] : tensor<16x1x32xf32> into tensor<1x4x4x1x32xf32>
  %columns = tensor.collapse_shape %image [[0], [1], [2], [3, 4]] : tensor<1x4x4x1x32xf32> into tensor<1x4x4x32xf32>
  %filters = tensor.extract_slice %columns[0, 0, 0, 0] [1, 4, 4, 24] [1, 1, 1, 1] : tensor<1x4x4x32xf32> to tensor<1x4x4x24xf32>
  %e2 = tensor.empty() : tensor<1x4x4x24xf32>
  %work = linalg.generic {indexing_maps = [#filtersNHWC, #perFilter, #filtersNHWC], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%filters, %scale : tensor<1x4x4x24xf32>, tensor<24xf32>) outs(%e2 : tensor<1x4x4x24xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %m = arith.mulf %v, %c : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x24xf32>
  %padded = tensor.pad %work low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x24xf32> to tensor<1x6x6x24xf32>
  %tap0 = tensor.extract_slice %padded[0, 0, 0, 0] [1, 4, 4, 24] [1, 1, 1, 1] : tensor<1x6x6x24xf32> to tensor<1x4x4x24xf32>
  %tap8 = tensor.extract_slice %padded[0, 2, 2, 0] [1, 4, 4, 24] [1, 1, 1, 1] : tensor<1x6x6x24xf32> to tensor<1x4x4x24xf32>
  return %tap0, %tap8 : tensor<1x4x4x24xf32>, tensor<1x4x4x24xf32>
}
