// RUN: symc-opt %s -sym-schedule-matmuls=vector-bits=256 -canonicalize | FileCheck %s
// RUN: symc-opt %s -sym-schedule-matmuls=vector-bits=512 -canonicalize | FileCheck %s --check-prefix=AVX512

// AVX2: thread tiles in an scf.forall, a 256-deep k chunk, 6 x 16 register
// tiles whose accumulator (vector<6x16xf32>) is carried through the k loop,
// and FMAs on 16-wide vectors. N = 200 is padded to 208 columns.
// CHECK-LABEL: func @gemm
// CHECK: tensor.pad %arg1 low[0, 0] high[0, 8]
// CHECK: scf.forall
// CHECK: scf.for {{.*}} step %c256
// CHECK: scf.for {{.*}} -> (vector<6x16xf32>)
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0] [96, 200] [1, 1] : tensor<96x208xf32> to tensor<96x200xf32>
// AVX512-LABEL: func @gemm
// AVX512: scf.for {{.*}} -> (vector<8x32xf32>)
// AVX512: vector.fma {{.*}} : vector<32xf32>
func.func @gemm(%a: tensor<96x512xf32>, %b: tensor<512x200xf32>) -> tensor<96x200xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x200xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<96x200xf32>) -> tensor<96x200xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<96x512xf32>, tensor<512x200xf32>) outs(%init : tensor<96x200xf32>) -> tensor<96x200xf32>
  return %mm : tensor<96x200xf32>
}

// A matmul whose A is an im2col matrix (3 x 7 rows made by a generic,
// collapsed to 21): padded to 24 rows, it is built into the padded buffer
// (its generic writes the first 21 rows, the other 3 are zeroed), not copied
// there.
// CHECK-LABEL: func @im2col_built_padded
// CHECK-NOT: tensor.pad
// CHECK: %[[BUFFER:.*]] = tensor.empty() : tensor<24x64xf32>
// CHECK: %[[TAIL:.*]] = tensor.extract_slice %[[BUFFER]][21, 0] [3, 64] [1, 1]
// CHECK: linalg.fill {{.*}} outs(%[[TAIL]] : tensor<3x64xf32>)
// CHECK: %[[SLOT:.*]] = tensor.expand_shape {{.*}} : tensor<21x64xf32> into tensor<3x7x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[SLOT]] : tensor<3x7x64xf32>)
// CHECK-NOT: tensor.pad
// CHECK: vector<6x16xf32>
#cols = affine_map<(d0, d1, d2) -> (d0, d1 + d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @im2col_built_padded(%x: tensor<3x70xf32>, %g: tensor<64x32xf32>) -> tensor<21x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<3x7x64xf32>
  %c = linalg.generic {indexing_maps = [#cols, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<3x70xf32>) outs(%ce : tensor<3x7x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x7x64xf32>
  %a = tensor.collapse_shape %c [[0, 1], [2]] : tensor<3x7x64xf32> into tensor<21x64xf32>
  %e = tensor.empty() : tensor<21x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<21x32xf32>) -> tensor<21x32xf32>
  %mm = linalg.matmul ins(%a, %g : tensor<21x64xf32>, tensor<64x32xf32>) outs(%init : tensor<21x32xf32>) -> tensor<21x32xf32>
  return %mm : tensor<21x32xf32>
}

// A tap contraction (a convolution by taps): 10 rows padded to two 6 x 16
// register tiles, 960 columns in thread tiles of 6 strips; the accumulator
// is carried through the kh, kw and c loops, whose unit steps fold into an
// outer product of 6 weights by 16 image values.
// CHECK-LABEL: func @taps
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[2, 0, 0, 0]
// CHECK: scf.forall {{.*}} in (10)
// CHECK: scf.for {{.*}} -> (vector<6x16xf32>)
// CHECK: scf.for {{.*}} -> (vector<6x16xf32>)
// CHECK: scf.for {{.*}} -> (vector<6x16xf32>)
// CHECK: math.fma {{.*}} : vector<6x16xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0] [10, 960] [1, 1] : tensor<12x960xf32> to tensor<10x960xf32>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d4, d1 + d2 * 32 + d3)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
func.func @taps(%w: tensor<10x2x3x3xf32>, %x: tensor<2x1026xf32>) -> tensor<10x960xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x960xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x960xf32>) -> tensor<10x960xf32>
  %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<10x2x3x3xf32>, tensor<2x1026xf32>) outs(%init : tensor<10x960xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x960xf32>
  return %r : tensor<10x960xf32>
}

// A 17x17 map's 289 rows (a channels-last convolution's positions, times
// strips of 32 filters): padded to 294 rows, 6 thread tiles of 49 in 7-row
// register tiles (AVX-512) or 7 of 42 in 6-row ones, not to 320 rows, the
// 4 tiles of 80 that 8-row tiles would need.
// CHECK-LABEL: func @taps_rows_17x17
// CHECK: tensor.pad %arg0 low[0, 0] high[5, 0]
// CHECK: scf.forall {{.*}} in (7, 2)
// CHECK: scf.for {{.*}} -> (vector<6x16xf32>)
// AVX512-LABEL: func @taps_rows_17x17
// AVX512: tensor.pad %arg0 low[0, 0] high[5, 0]
// AVX512: scf.forall {{.*}} in (6, 2)
// AVX512: scf.for {{.*}} -> (vector<7x32xf32>)
#rows = affine_map<(p, s, l, k) -> (p, k)>
#strips = affine_map<(p, s, l, k) -> (s, k, l)>
#rowsout = affine_map<(p, s, l, k) -> (p, s, l)>
func.func @taps_rows_17x17(%rows: tensor<289x64xf32>, %packed: tensor<2x64x32xf32>) -> tensor<289x2x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<289x2x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<289x2x32xf32>) -> tensor<289x2x32xf32>
  %r = linalg.generic {indexing_maps = [#rows, #strips, #rowsout], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%rows, %packed : tensor<289x64xf32>, tensor<2x64x32xf32>) outs(%init : tensor<289x2x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %s = math.fma %x, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<289x2x32xf32>
  return %r : tensor<289x2x32xf32>
}

// A 1x1 convolution over a 14x14 map, 256 -> 1024 channels: its weight
// (1 MiB) outweighs its image (196 KiB), so the thread tiles go strips of
// filters first, each thread's run of tiles reading its half of the weight
// once (its image rows again, from its L2), not all of the weight per row tile.
// Its strip of B, 256 x 32, is 32 KiB: K is one loop, not chunked.
// AVX512-LABEL: func @taps_columns_first
// AVX512: scf.forall (%[[STRIP:.*]], %[[ROWS:.*]]) in (32, 4)
// AVX512: %[[ROW:.*]] = affine.apply {{.*}}(%[[ROWS]])
// AVX512: tensor.extract_slice %arg0[%[[ROW]], 0] [49, 256]
// AVX512: tensor.extract_slice %arg1[%[[STRIP]], 0, 0] [1, 256, 32]
// AVX512-NOT: step %c128
// AVX512: scf.for {{.*}} to %c256 step %c1 {{.*}} -> (vector<7x32xf32>)
#rows14 = affine_map<(p, s, l, k) -> (p, k)>
#strips14 = affine_map<(p, s, l, k) -> (s, k, l)>
#out14 = affine_map<(p, s, l, k) -> (p, s, l)>
func.func @taps_columns_first(%rows: tensor<196x256xf32>, %packed: tensor<32x256x32xf32>) -> tensor<196x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x32x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<196x32x32xf32>) -> tensor<196x32x32xf32>
  %r = linalg.generic {indexing_maps = [#rows14, #strips14, #out14], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%rows, %packed : tensor<196x256xf32>, tensor<32x256x32xf32>) outs(%init : tensor<196x32x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %s = math.fma %x, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<196x32x32xf32>
  return %r : tensor<196x32x32xf32>
}

// Winograd's products over a 28x28 map of 128 channels (49 tiles of F(4x4,
// 3x3), 36 points): A and B vary along the points, B alone along its 4
// strips of filters (16 KiB each). A thread tile takes a point's 4 strips and
// walks them inside each 7-row register tile, whose rows of A (a tile's
// points lie together, its rows far apart) then load into L1 once for all 4.
// AVX512-LABEL: func @taps_winograd_strips
// AVX512: scf.forall (%[[E:.*]]) in (36)
// AVX512: tensor.extract_slice %arg1[%[[E]], 0, 0, 0] [1, 4, 128, 32]
// AVX512: scf.for %{{.*}} = %c0 to %c49 step %c7
// AVX512-NEXT: scf.for %{{.*}} = %c0 to %c4 step %c1
// AVX512: scf.for {{.*}} to %c128 step %c1 {{.*}} -> (vector<7x32xf32>)
#tilesA = affine_map<(t, e, s, l, c) -> (t, e, c)>
#stripsB = affine_map<(t, e, s, l, c) -> (e, s, c, l)>
#products = affine_map<(t, e, s, l, c) -> (t, e, s, l)>
func.func @taps_winograd_strips(%tiles: tensor<49x36x128xf32>, %u: tensor<36x4x128x32xf32>) -> tensor<49x36x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<49x36x4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<49x36x4x32xf32>) -> tensor<49x36x4x32xf32>
  %r = linalg.generic {indexing_maps = [#tilesA, #stripsB, #products], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%tiles, %u : tensor<49x36x128xf32>, tensor<36x4x128x32xf32>) outs(%init : tensor<49x36x4x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %s = math.fma %x, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<49x36x4x32xf32>
  return %r : tensor<49x36x4x32xf32>
}

// A convolution's BatchNorm-like epilogue (a per-channel scale, then relu)
// read through the slices and reshapes back to (1, 10, 30, 30): it moves in
// place onto the contraction's padded (12, 960) result and runs on each
// thread tile, a row of 16 columns per vector, its per-channel operand
// padded to the 12 rows; the consumer's result is the same slices and
// reshapes of the epilogue's. The reduction is not chunked, so each register
// tile's accumulator starts as a vector of zeros: the thread tile is not
// zero-filled in memory first.
// CHECK-LABEL: func @taps_epilogue
// CHECK: %[[SCALE:.*]] = tensor.pad %arg2 low[0] high[2]
// CHECK: scf.forall {{.*}} in (10) shared_outs(%[[OUT:.*]] = {{.*}}) -> (tensor<12x960xf32>)
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]]
// CHECK-NOT: linalg.fill
// CHECK: math.fma {{.*}} : vector<6x16xf32>
// CHECK: tensor.extract_slice %[[SCALE]]
// CHECK: arith.mulf {{.*}} : vector<1x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: tensor.extract_slice {{.*}}[0, 0] [10, 960] [1, 1] : tensor<12x960xf32> to tensor<10x960xf32>
// CHECK: tensor.extract_slice {{.*}} : tensor<1x10x30x32xf32> to tensor<1x10x30x30xf32>
#c4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @taps_epilogue(%w: tensor<10x2x3x3xf32>, %x: tensor<2x1026xf32>, %scale: tensor<10xf32>) -> tensor<1x10x30x30xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x960xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x960xf32>) -> tensor<10x960xf32>
  %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<10x2x3x3xf32>, tensor<2x1026xf32>) outs(%init : tensor<10x960xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x960xf32>
  %rows = tensor.expand_shape %r [[0, 1], [2, 3]] output_shape [1, 10, 30, 32] : tensor<10x960xf32> into tensor<1x10x30x32xf32>
  %valid = tensor.extract_slice %rows[0, 0, 0, 0] [1, 10, 30, 30] [1, 1, 1, 1] : tensor<1x10x30x32xf32> to tensor<1x10x30x30xf32>
  %oe = tensor.empty() : tensor<1x10x30x30xf32>
  %y = linalg.generic {indexing_maps = [#id4, #c4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%valid, %scale : tensor<1x10x30x30xf32>, tensor<10xf32>) outs(%oe : tensor<1x10x30x30xf32>) {
  ^bb0(%v: f32, %k: f32, %out: f32):
    %m = arith.mulf %v, %k : f32
    %relu = arith.maximumf %m, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<1x10x30x30xf32>
  return %y : tensor<1x10x30x30xf32>
}

// A 1x1 convolution's residual add: the residual, laid out like the
// reshaped result, is read through the reshape undone (collapsed to the
// matmul's (64, 256)); no thread tile is partial, so the add moves onto
// the tiles.
// CHECK-LABEL: func @gemm_epilogue_residual
// CHECK: %[[RESIDUAL:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1], [2, 3]] : tensor<1x64x16x16xf32> into tensor<64x256xf32>
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[RESIDUAL]]
// CHECK: vector.fma
// CHECK: arith.addf {{.*}} : vector<1x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: tensor.expand_shape {{.*}} into tensor<1x64x16x16xf32>
func.func @gemm_epilogue_residual(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %res: tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%init : tensor<64x256xf32>) -> tensor<64x256xf32>
  %img = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 64, 16, 16] : tensor<64x256xf32> into tensor<1x64x16x16xf32>
  %oe = tensor.empty() : tensor<1x64x16x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%img, %res : tensor<1x64x16x16xf32>, tensor<1x64x16x16xf32>) outs(%oe : tensor<1x64x16x16xf32>) {
  ^bb0(%v: f32, %r: f32, %out: f32):
    %sum = arith.addf %v, %r : f32
    linalg.yield %sum : f32
  } -> tensor<1x64x16x16xf32>
  return %y : tensor<1x64x16x16xf32>
}

// A depthwise tap contraction (each row reads its own row of B) has no
// outer product to share: its register tile is one row of two vectors' columns,
// the weight of each tap broadcast from a scalar; B is padded by whole rows
// and columns.
// CHECK-LABEL: func @taps_depthwise
// CHECK: scf.forall
// CHECK: scf.for {{.*}} -> (vector<32xf32>)
// CHECK: vector.broadcast {{.*}} : f32 to vector<32xf32>
// CHECK: math.fma {{.*}} : vector<32xf32>
// AVX512-LABEL: func @taps_depthwise
// AVX512: math.fma {{.*}} : vector<64xf32>
#dw = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#dx = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d2 * 32 + d3)>
#do = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @taps_depthwise(%w: tensor<10x3x3xf32>, %x: tensor<10x1026xf32>) -> tensor<10x960xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x960xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x960xf32>) -> tensor<10x960xf32>
  %r = linalg.generic {indexing_maps = [#dw, #dx, #do], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%w, %x : tensor<10x3x3xf32>, tensor<10x1026xf32>) outs(%init : tensor<10x960xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x960xf32>
  return %r : tensor<10x960xf32>
}

// A tap contraction's A made by a zero padding, flattened (as a weight
// gradient's image): that padding grows by the two rows instead of a second
// copy of A padding them.
// CHECK-LABEL: func @taps_grow_padded_rows
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0, 0] high[0, 2, 0, 0, 2]
// CHECK-NOT: tensor.pad
// CHECK: scf.forall
func.func @taps_grow_padded_rows(%w0: tensor<1x10x2x3x1xf32>, %x: tensor<2x1026xf32>) -> tensor<10x960xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %w0 low[0, 0, 0, 0, 0] high[0, 0, 0, 0, 2] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x10x2x3x1xf32> to tensor<1x10x2x3x3xf32>
  %w = tensor.collapse_shape %p [[0, 1], [2], [3], [4]] : tensor<1x10x2x3x3xf32> into tensor<10x2x3x3xf32>
  %e = tensor.empty() : tensor<10x960xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x960xf32>) -> tensor<10x960xf32>
  %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<10x2x3x3xf32>, tensor<2x1026xf32>) outs(%init : tensor<10x960xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x960xf32>
  return %r : tensor<10x960xf32>
}

// A tap contraction reading a slice of a longer flat image (a strided data
// gradient's phase): its columns, rounded up from 952 to 960, read 8 more
// of that image through a wider slice, not a padded copy.
// CHECK-LABEL: func @taps_widen_slice
// CHECK-NOT: tensor.pad %arg1
// CHECK: tensor.extract_slice %arg1[0, 64] [2, 1026] [1, 1]
// CHECK-NOT: tensor.pad %arg1
// CHECK: scf.forall
func.func @taps_widen_slice(%w: tensor<10x2x3x3xf32>, %flat: tensor<2x1400xf32>) -> tensor<10x952xf32> {
  %zero = arith.constant 0.0 : f32
  %x = tensor.extract_slice %flat[0, 64] [2, 1018] [1, 1] : tensor<2x1400xf32> to tensor<2x1018xf32>
  %e = tensor.empty() : tensor<10x952xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x952xf32>) -> tensor<10x952xf32>
  %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<10x2x3x3xf32>, tensor<2x1018xf32>) outs(%init : tensor<10x952xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x952xf32>
  return %r : tensor<10x952xf32>
}

// A tap contraction per image of a batch: its weight, the same for every
// image, is padded to whole register tiles once, before the images' loop.
// CHECK-LABEL: func @taps_per_image
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[2, 0, 0, 0]
// CHECK: scf.for
// CHECK-NOT: tensor.pad %arg0
// CHECK: scf.forall
func.func @taps_per_image(%w: tensor<10x2x3x3xf32>, %images: tensor<4x2x1026xf32>) -> tensor<4x10x960xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %all = tensor.empty() : tensor<4x10x960xf32>
  %out = scf.for %n = %c0 to %c4 step %c1 iter_args(%acc = %all) -> (tensor<4x10x960xf32>) {
    %x = tensor.extract_slice %images[%n, 0, 0] [1, 2, 1026] [1, 1, 1] : tensor<4x2x1026xf32> to tensor<2x1026xf32>
    %e = tensor.empty() : tensor<10x960xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x960xf32>) -> tensor<10x960xf32>
    %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<10x2x3x3xf32>, tensor<2x1026xf32>) outs(%init : tensor<10x960xf32>) attrs = {symc.tap_contraction} {
    ^bb0(%a: f32, %b: f32, %s0: f32):
      %s = math.fma %a, %b, %s0 : f32
      linalg.yield %s : f32
    } -> tensor<10x960xf32>
    %next = tensor.insert_slice %r into %acc[%n, 0, 0] [1, 10, 960] [1, 1, 1] : tensor<10x960xf32> into tensor<4x10x960xf32>
    scf.yield %next : tensor<4x10x960xf32>
  }
  return %out : tensor<4x10x960xf32>
}

// A lane contraction of 2 rows by 64 rows of B: thread tiles of 32 B rows,
// register tiles of 2 x 8 rows whose 16-lane accumulators stay in
// registers across K, one vector FMA of both operands read along K per step.
// AVX512-LABEL: func @lanes
// AVX512: scf.forall {{.*}} in (2)
// AVX512: scf.for {{.*}} step %c8
// AVX512: scf.for {{.*}} -> (vector<2x8x16xf32>)
// AVX512: math.fma {{.*}} : vector<2x8x16xf32>
#lx = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#lw = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#lo = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @lanes(%x: tensor<2x4x16xf32>, %w: tensor<64x4x16xf32>) -> tensor<2x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  %r = linalg.generic {indexing_maps = [#lx, #lw, #lo], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x4x16xf32>, tensor<64x4x16xf32>) outs(%init : tensor<2x64x16xf32>) attrs = {symc.lane_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x64x16xf32>
  return %r : tensor<2x64x16xf32>
}

// A weight is padded in the block that defines it, but just before the op
// there that uses it, not at the function's start: padded weights are not
// all live at once in the workspace.
// CHECK-LABEL: func @pad_weight_at_use
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: tensor.pad %arg1
// CHECK: scf.forall
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @pad_weight_at_use(%a: tensor<8x64xf32>, %b: tensor<64x200xf32>, %x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x200xf32>) {
  %e = tensor.empty() : tensor<8x64xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8x64xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x200xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x200xf32>) -> tensor<8x200xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x200xf32>) outs(%init : tensor<8x200xf32>) -> tensor<8x200xf32>
  return %neg, %mm : tensor<8x64xf32>, tensor<8x200xf32>
}

// A depthwise tap contraction's B, a flattened zero-padded image, needs 20
// more columns for whole thread tiles: its padding grows by one image row
// and the flat image is sliced to the columns needed, instead of a second
// padded copy.
// CHECK-LABEL: func @taps_grow_flat_image
// CHECK: tensor.pad %arg1 low[0, 1, 0] high[0, 2, 0]
// CHECK: tensor.collapse_shape {{.*}} into tensor<10x1056xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0] [10, 1044] [1, 1] : tensor<10x1056xf32> to tensor<10x1044xf32>
// CHECK-NOT: tensor.pad
// CHECK: scf.forall
func.func @taps_grow_flat_image(%w: tensor<10x3x3xf32>, %image: tensor<10x30x32xf32>) -> tensor<10x940xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %image low[0, 1, 0] high[0, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index):
    tensor.yield %zero : f32
  } : tensor<10x30x32xf32> to tensor<10x32x32xf32>
  %x = tensor.collapse_shape %p [[0], [1, 2]] : tensor<10x32x32xf32> into tensor<10x1024xf32>
  %e = tensor.empty() : tensor<10x940xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<10x940xf32>) -> tensor<10x940xf32>
  %r = linalg.generic {indexing_maps = [#dw, #dx, #do], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%w, %x : tensor<10x3x3xf32>, tensor<10x1024xf32>) outs(%init : tensor<10x940xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10x940xf32>
  return %r : tensor<10x940xf32>
}

// 512 rows on AVX-512 (8-row register tiles): 8 thread tiles of 64 rows,
// not 6 of 88, which would pad A, the layer's weight, with 16 zero rows,
// a copy of the whole weight at every run.
// AVX512-LABEL: func @taps_rows_split_evenly
// AVX512-NOT: tensor.pad %arg0
// AVX512: scf.forall
// AVX512: tensor.extract_slice %arg0[{{.*}}, 0, 0, 0] [64, 2, 3, 3]
func.func @taps_rows_split_evenly(%w: tensor<512x2x3x3xf32>, %x: tensor<2x1026xf32>) -> tensor<512x960xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x960xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<512x960xf32>) -> tensor<512x960xf32>
  %r = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%w, %x : tensor<512x2x3x3xf32>, tensor<2x1026xf32>) outs(%init : tensor<512x960xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<512x960xf32>
  return %r : tensor<512x960xf32>
}

// A 1x1 channels-last convolution (196 positions of 512 channels by 16
// strips of 32 filters) whose image, relu'd, is zero-padded next: its
// thread tiles are 14-position image rows (sym-write-into-padding), two
// 7 x 32 register tiles each, strips first (B outweighs A). Two tiles share
// no chunk of B worth the round trip of their accumulators through memory:
// K = 512 is one loop per register tile, the accumulators starting from
// zeros, not chunked.
// AVX512-LABEL: func @taps_image_rows_unchunked
// AVX512: scf.forall {{.*}} in (16, 14)
// AVX512-NOT: step %c128
// AVX512: scf.for {{.*}} to %c512 step %c1 {{.*}} -> (vector<7x32xf32>)
// AVX512: scf.forall.in_parallel
#prow = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
#pstrip = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
#pout = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#pid5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @taps_image_rows_unchunked(%x: tensor<196x512xf32>, %w: tensor<16x512x32xf32>) -> tensor<1x16x16x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<196x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<196x16x32xf32>) -> tensor<196x16x32xf32>
  %r = linalg.generic {indexing_maps = [#prow, #pstrip, #pout], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<196x512xf32>, tensor<16x512x32xf32>) outs(%init : tensor<196x16x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = math.fma %a, %b, %acc : f32
    linalg.yield %s : f32
  } -> tensor<196x16x32xf32>
  %image = tensor.expand_shape %r [[0, 1, 2], [3], [4]] output_shape [1, 14, 14, 16, 32] : tensor<196x16x32xf32> into tensor<1x14x14x16x32xf32>
  %oe = tensor.empty() : tensor<1x14x14x16x32xf32>
  %relu = linalg.generic {indexing_maps = [#pid5, #pid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%image : tensor<1x14x14x16x32xf32>) outs(%oe : tensor<1x14x14x16x32xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x14x14x16x32xf32>
  %padded = tensor.pad %relu low[0, 1, 1, 0, 0] high[0, 1, 1, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
    tensor.yield %zero : f32
  } : tensor<1x14x14x16x32xf32> to tensor<1x16x16x16x32xf32>
  return %padded : tensor<1x16x16x16x32xf32>
}

// A contraction that adds to its init (a Winograd weight gradient's sum
// over groups of images): the init is padded with B's columns (40 -> 64)
// and tiled as the thread tiles' shared outputs, no zero fill fused in;
// each register tile's accumulator starts from the init's values. A reads
// across its rows (e, tile, f): rows f, B's columns c on its last dim.
// AVX512-LABEL: func @taps_into_init
// AVX512-DAG: %[[B:.*]] = tensor.pad %arg1 low[0, 0, 0] high[0, 0, 24]
// AVX512-DAG: %[[ACC:.*]] = tensor.pad %arg2 low[0, 0, 0] high[0, 0, 24]
// AVX512-NOT: linalg.fill
// AVX512: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %[[ACC]]) -> (tensor<16x4x64xf32>)
// AVX512: %[[START:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// AVX512: scf.for {{.*}} to %c50 step %c1 iter_args(%{{.*}} = %[[START]]) -> (vector<8x32xf32>)
// AVX512: tensor.extract_slice %{{.*}}[0, 0, 0] [16, 4, 40] [1, 1, 1] : tensor<16x4x64xf32> to tensor<16x4x40xf32>
#gtiles = affine_map<(f, e, c, t) -> (e, t, f)>
#dtiles = affine_map<(f, e, c, t) -> (e, t, c)>
#points = affine_map<(f, e, c, t) -> (f, e, c)>
func.func @taps_into_init(%g: tensor<4x50x16xf32>, %d: tensor<4x50x40xf32>, %acc: tensor<16x4x40xf32>) -> tensor<16x4x40xf32> {
  %r = linalg.generic {indexing_maps = [#gtiles, #dtiles, #points], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%g, %d : tensor<4x50x16xf32>, tensor<4x50x40xf32>) outs(%acc : tensor<16x4x40xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%x: f32, %y: f32, %a: f32):
    %s = math.fma %x, %y, %a : f32
    linalg.yield %s : f32
  } -> tensor<16x4x40xf32>
  return %r : tensor<16x4x40xf32>
}

// A tap contraction whose rows are a concatenation (slices inserted into an
// empty tensor: an Inception block's output), padded to whole register
// tiles (9 -> 12 rows): the concatenation is built one image row longer,
// the row zero-filled, instead of copied into a padded tensor; its other
// reader reads the slice of it that it was.
// AVX512-LABEL: func @taps_grow_concatenation
// AVX512: %[[GROWN:.*]] = tensor.empty() : tensor<1x4x3x16xf32>
// AVX512: %[[TAIL:.*]] = linalg.fill {{.*}} -> tensor<1x1x3x16xf32>
// AVX512: %[[ZEROED:.*]] = tensor.insert_slice %[[TAIL]] into %[[GROWN]][0, 3, 0, 0]
// AVX512: %[[FIRST:.*]] = tensor.insert_slice %arg0 into %[[ZEROED]][0, 0, 0, 0]
// AVX512: %[[CAT:.*]] = tensor.insert_slice %arg1 into %[[FIRST]][0, 0, 0, 8]
// AVX512: %[[OTHER:.*]] = tensor.extract_slice %[[CAT]][0, 0, 0, 0] [1, 3, 3, 16]
// AVX512: tensor.collapse_shape %[[CAT]] {{.*}} into tensor<12x16xf32>
// AVX512-NOT: tensor.pad
// AVX512: return %{{.*}}, %[[OTHER]]
#concatRows = affine_map<(p, s, l, k) -> (p, k)>
#concatStrips = affine_map<(p, s, l, k) -> (s, k, l)>
#concatOut = affine_map<(p, s, l, k) -> (p, s, l)>
func.func @taps_grow_concatenation(%a: tensor<1x3x3x8xf32>, %b: tensor<1x3x3x8xf32>, %w: tensor<1x16x32xf32>) -> (tensor<9x1x32xf32>, tensor<1x3x3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x16xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0, 0] [1, 3, 3, 8] [1, 1, 1, 1] : tensor<1x3x3x8xf32> into tensor<1x3x3x16xf32>
  %cat = tensor.insert_slice %b into %c0[0, 0, 0, 8] [1, 3, 3, 8] [1, 1, 1, 1] : tensor<1x3x3x8xf32> into tensor<1x3x3x16xf32>
  %rows = tensor.collapse_shape %cat [[0, 1, 2], [3]] : tensor<1x3x3x16xf32> into tensor<9x16xf32>
  %o = tensor.empty() : tensor<9x1x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%o : tensor<9x1x32xf32>) -> tensor<9x1x32xf32>
  %r = linalg.generic {indexing_maps = [#concatRows, #concatStrips, #concatOut], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%rows, %w : tensor<9x16xf32>, tensor<1x16x32xf32>) outs(%init : tensor<9x1x32xf32>) attrs = {symc.tap_contraction} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %s = math.fma %x, %y, %acc : f32
    linalg.yield %s : f32
  } -> tensor<9x1x32xf32>
  return %r, %cat : tensor<9x1x32xf32>, tensor<1x3x3x16xf32>
}
