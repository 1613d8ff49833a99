// RUN: symc-opt %s -split-input-file -verify-diagnostics -sym-lower-to-linalg | FileCheck %s
// RUN: symc-opt %s -split-input-file -verify-diagnostics -sym-lower-to-linalg=pack-weights=1 | FileCheck %s --check-prefix=WINOGRAD

// FullyConnected with a weight smaller than its data is a matmul against
// the transposed weight plus a bias broadcast along dim 1; transposes are
// materialized so that every product is a plain linalg.matmul.
// CHECK-LABEL: func @fully_connected
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<5x3xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul ins(%arg0, %[[WT]] : tensor<4x3xf32>, tensor<3x5xf32>) outs(%[[ZERO]]
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %arg2 : tensor<4x5xf32>, tensor<5xf32>)
// CHECK: arith.addf
func.func @fully_connected(%x: tensor<4x3xf32>, %w: tensor<5x3xf32>, %b: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 5 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A few rows (a small batch) stream the weight as it is stored: each of 16
// lanes sums every 16th product over K (the lane contraction), then the
// lanes are summed; the K tail past the last whole 16 is a plain contraction.
// CHECK-LABEL: func @fully_connected_lanes
// CHECK-NOT: linalg.transpose
// CHECK: %[[W:.*]] = tensor.expand_shape {{.*}} {{\[}}[0], [1, 2]] output_shape [5, 2, 16] : tensor<5x32xf32> into tensor<5x2x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %[[W]] : tensor<2x2x16xf32>, tensor<5x2x16xf32>) outs(%{{.*}} : tensor<2x5x16xf32>) attrs =  {symc.lane_contraction}
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<2x5x16xf32>) outs(%{{.*}} : tensor<2x5xf32>)
// CHECK: %[[XT:.*]] = tensor.extract_slice %arg0[0, 32] [2, 8] [1, 1]
// CHECK: %[[WT:.*]] = tensor.extract_slice %arg1[0, 32] [5, 8] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XT]], %[[WT]] : tensor<2x8xf32>, tensor<5x8xf32>) outs(%[[SUM]] : tensor<2x5xf32>)
func.func @fully_connected_lanes(%x: tensor<2x40xf32>, %w: tensor<5x40xf32>) -> tensor<2x5xf32> {
  %0 = sym.FullyConnected %x, %w {num_hidden = 5 : i64, no_bias = true} : (tensor<2x40xf32>, tensor<5x40xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Many rows and a weight larger than data and output together: the weight
// stays as stored, C = (W · Xᵀ)ᵀ.
// CHECK-LABEL: func @fully_connected_transposed_product
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0 : tensor<32x64xf32>)
// CHECK: %[[CT:.*]] = linalg.matmul ins(%arg1, %[[XT]] : tensor<128x64xf32>, tensor<64x32xf32>)
// CHECK: linalg.transpose ins(%[[CT]] : tensor<128x32xf32>) {{.*}} permutation = [1, 0]
func.func @fully_connected_transposed_product(%x: tensor<32x64xf32>, %w: tensor<128x64xf32>) -> tensor<32x128xf32> {
  %0 = sym.FullyConnected %x, %w {num_hidden = 128 : i64, no_bias = true} : (tensor<32x64xf32>, tensor<128x64xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}

// -----

// A grouped convolution reads a zero-padded input through
// `o * stride + k * dilate`, grouped as (N, G, C/G, ...) and padded once
// grouped, so that the pad feeds the reduction.
// CHECK: affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6 * 2, d4 + d7)>
// CHECK-LABEL: func @grouped_convolution
// CHECK: %[[GROUPED:.*]] = tensor.expand_shape {{.*}} into tensor<1x2x2x9x9xf32>
// CHECK: %[[PADDED:.*]] = tensor.pad %[[GROUPED]] low[0, 0, 0, 1, 1] high[0, 0, 0, 1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME: ins(%[[PADDED]], %{{.*}} : tensor<1x2x2x11x11xf32>
func.func @grouped_convolution(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x9xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, stride = array<i64: 2, 1>, dilate = array<i64: 2, 1>, pad = array<i64: 1, 1>, num_filter = 6 : i64, num_group = 2 : i64, no_bias = true} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x9xf32>
  return %0 : tensor<1x6x4x9xf32>
}

// -----

// An ungrouped convolution is im2col (a copy into (C, KH, KW, N, OH, OW)
// through the window map) and one matmul with the (F, C*KH*KW) weight.
// CHECK: affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1, d5 + d2)>
// CHECK-LABEL: func @convolution
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x7x7xf32>) outs(%{{.*}} : tensor<2x3x3x1x3x5xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x18xf32>, tensor<18x15xf32>)
func.func @convolution(%x: tensor<1x2x7x7xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x5xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, stride = array<i64: 2, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<1x2x7x7xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x5xf32>
  return %0 : tensor<1x4x3x5xf32>
}

// -----

// An image of more than 4096 output positions (70 x 70) is convolved in
// blocks of 35 output rows: each block's im2col columns come from its 75
// padded input rows, one matmul each, copied into the block's rows.
// CHECK-LABEL: func @convolution_by_row_blocks
// CHECK: tensor.pad %arg0 low[0, 0, 3, 3] high[0, 0, 3, 3]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c70 step %c35
// CHECK: tensor.extract_slice {{.*}} [1, 2, 75, 146] [1, 1, 1, 1] : tensor<1x2x146x146xf32> to tensor<1x2x75x146xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x98xf32>, tensor<98x2450xf32>)
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x3x35x70xf32>)
// CHECK: scf.yield
func.func @convolution_by_row_blocks(%x: tensor<1x2x140x140xf32>, %w: tensor<3x2x7x7xf32>) -> tensor<1x3x70x70xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 7, 7>, stride = array<i64: 2, 2>, pad = array<i64: 3, 3>, num_filter = 3 : i64, no_bias = true} : (tensor<1x2x140x140xf32>, tensor<3x2x7x7xf32>) -> tensor<1x3x70x70xf32>
  return %0 : tensor<1x3x70x70xf32>
}

// -----

// A stride-1 convolution of a wide image goes by taps: the image padded in
// one copy, with a row of zeros more for the last row's taps, flattened to
// (C, 33 * 32), read at q + 32 * kh + kw by one contraction over (KH, KW, C)
// into 30 rows of 32 positions, the last 2 of each row dropped.
// CHECK: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d1 + d2 * 32 + d3)>
// CHECK-LABEL: func @tap_convolution
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 2, 1]
// CHECK-NOT: tensor.pad
// CHECK: tensor.expand_shape {{.*}} into tensor<2x1056xf32>
// CHECK: linalg.generic {indexing_maps = [#[[W]], #[[X]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1, %{{.*}} : tensor<4x2x3x3xf32>, tensor<2x1056xf32>) outs(%{{.*}} : tensor<4x960xf32>) attrs = {symc.tap_contraction}
// CHECK: math.fma
// CHECK: tensor.extract_slice {{.*}}[0, 0, 0] [4, 30, 30] [1, 1, 1] : tensor<4x30x32xf32> to tensor<4x30x30xf32>
func.func @tap_convolution(%x: tensor<1x2x30x30xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x30x30xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<1x2x30x30xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x30x30xf32>
  return %0 : tensor<1x4x30x30xf32>
}

// -----

// A depthwise convolution (a filter per channel, stride 1) is a contraction
// by taps too, each filter reading its own channel of the flat image.
// CHECK: #[[DW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK: #[[DX:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d2 * 32 + d3)>
// CHECK-LABEL: func @depthwise_convolution
// CHECK: linalg.generic {indexing_maps = [#[[DW]], #[[DX]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x3x3xf32>, tensor<8x1056xf32>) outs(%{{.*}} : tensor<8x960xf32>) attrs = {symc.tap_contraction}
// CHECK: tensor.extract_slice {{.*}}[0, 0, 0] [8, 30, 30] [1, 1, 1] : tensor<8x30x32xf32> to tensor<8x30x30xf32>
func.func @depthwise_convolution(%x: tensor<1x8x30x30xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x30x30xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 8 : i64, num_group = 8 : i64, no_bias = true} : (tensor<1x8x30x30xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x30x30xf32>
  return %0 : tensor<1x8x30x30xf32>
}

// -----

// A depthwise convolution whose flat padded image would outgrow L2 (256
// channels of 34x34 floats, over 1 MiB) stays a direct windowed reduction.
// CHECK-LABEL: func @depthwise_convolution_large_image
// CHECK-NOT: symc.tap_contraction
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
func.func @depthwise_convolution_large_image(%x: tensor<1x256x32x32xf32>, %w: tensor<256x1x3x3xf32>) -> tensor<1x256x32x32xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 256 : i64, num_group = 256 : i64, no_bias = true} : (tensor<1x256x32x32xf32>, tensor<256x1x3x3xf32>) -> tensor<1x256x32x32xf32>
  return %0 : tensor<1x256x32x32xf32>
}

// -----

// A 1x1 convolution of 1x1 images (a classifier written as a convolution)
// is the product FullyConnected computes: at batch 1, a lane contraction
// that streams the weight once.
// CHECK-LABEL: func @classifier_convolution
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x16xf32>, tensor<10x4x16xf32>) {{.*}} attrs = {symc.lane_contraction}
// CHECK: tensor.expand_shape {{.*}} into tensor<1x10x1x1xf32>
func.func @classifier_convolution(%x: tensor<1x64x1x1xf32>, %w: tensor<10x64x1x1xf32>) -> tensor<1x10x1x1xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 10 : i64, no_bias = true} : (tensor<1x64x1x1xf32>, tensor<10x64x1x1xf32>) -> tensor<1x10x1x1xf32>
  return %0 : tensor<1x10x1x1xf32>
}

// -----

// The data gradient of that convolution is one by taps too, of the output
// gradient with the flipped weight: the output gradient is padded once,
// straight into its flat layout (with room past the end for the schedule's
// whole tiles), as the image is for the weight gradient; the valid positions
// are copied into dX. The weight gradient transposes the output gradient
// straight into a buffer with the padded rows' junk columns (30 x 32
// positions by 4 filters), of which only the junk (30 x 2 x 4) is zeroed.
// CHECK-LABEL: func @tap_convolution_backward
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, {{[0-9]+}}, 1]
// CHECK-NOT: tensor.pad %arg0
// CHECK: %[[READS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 1026] [1, 1]
// CHECK: ins({{.*}}, %[[READS]] : tensor<16x4x3x3xf32>, tensor<4x1026xf32>){{.*}}symc.tap_contraction
// CHECK: linalg.copy
// CHECK: %[[BUFFER:.*]] = tensor.empty() : tensor<30x32x4xf32>
// CHECK: %[[JUNK:.*]] = tensor.extract_slice %[[BUFFER]][0, 30, 0] [30, 2, 4] [1, 1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[JUNK]] : tensor<30x2x4xf32>)
// CHECK: %[[ZEROED:.*]] = tensor.insert_slice %[[ZEROS]] into %[[BUFFER]][0, 30, 0] [30, 2, 4]
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[ZEROED]][0, 0, 0] [30, 30, 4] [1, 1, 1]
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x30x30xf32>) outs(%[[SLOT]] : tensor<30x30x4xf32>) permutation = [1, 2, 0]
// CHECK: tensor.insert_slice %[[T]] into %[[ZEROED]]
// CHECK-NOT: tensor.pad %arg0
// CHECK: tensor.pad %arg1 low[0, 0, 1, 1] high[0, 0, 2, 1]
func.func @tap_convolution_backward(%g: tensor<1x4x30x30xf32>, %x: tensor<1x16x30x30xf32>, %w: tensor<4x16x3x3xf32>) -> (tensor<1x16x30x30xf32>, tensor<4x16x3x3xf32>) {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 4 : i64, no_bias = true} : (tensor<1x4x30x30xf32>, tensor<1x16x30x30xf32>, tensor<4x16x3x3xf32>) -> (tensor<1x16x30x30xf32>, tensor<4x16x3x3xf32>)
  return %dx, %dw : tensor<1x16x30x30xf32>, tensor<4x16x3x3xf32>
}

// -----

// A strided data gradient by taps: the output gradient is padded once for
// the windows of all four stride phases (flat strides of 42); each phase's
// taps (3x3, 3x2, 2x3, 2x2 of the 5x5 kernel) read it from their window's
// start, and their valid positions go to the phase's strided slice of dX.
// CHECK-LABEL: func @strided_convolution_data_grad_by_taps
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, {{[0-9]+}}, 1]
// CHECK-NOT: tensor.pad %arg0
// CHECK: %[[R00:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 716] [1, 1]
// CHECK: ins({{.*}}, %[[R00]] : tensor<8x4x3x3xf32>, tensor<4x716xf32>){{.*}}symc.tap_contraction
// CHECK: tensor.insert_slice {{.*}}[%{{.*}}, 0, 0, 0] [1, 8, 15, 40] [1, 1, 2, 2]
// CHECK: %[[R01:.*]] = tensor.extract_slice %{{.*}}[0, 1] [4, 715] [1, 1]
// CHECK: ins({{.*}}, %[[R01]] : tensor<8x4x3x2xf32>, tensor<4x715xf32>){{.*}}symc.tap_contraction
// CHECK: tensor.insert_slice {{.*}}[%{{.*}}, 0, 0, 1] [1, 8, 15, 40] [1, 1, 2, 2]
// CHECK: %[[R10:.*]] = tensor.extract_slice %{{.*}}[0, 42] [4, 674] [1, 1]
// CHECK: ins({{.*}}, %[[R10]] : tensor<8x4x2x3xf32>, tensor<4x674xf32>){{.*}}symc.tap_contraction
// CHECK: tensor.insert_slice {{.*}}[%{{.*}}, 0, 1, 0] [1, 8, 15, 40] [1, 1, 2, 2]
// CHECK: %[[R11:.*]] = tensor.extract_slice %{{.*}}[0, 43] [4, 673] [1, 1]
// CHECK: ins({{.*}}, %[[R11]] : tensor<8x4x2x2xf32>, tensor<4x673xf32>){{.*}}symc.tap_contraction
// CHECK: tensor.insert_slice {{.*}}[%{{.*}}, 0, 1, 1] [1, 8, 15, 40] [1, 1, 2, 2]
func.func @strided_convolution_data_grad_by_taps(%g: tensor<1x4x15x40xf32>, %x: tensor<1x8x30x80xf32>, %w: tensor<4x8x5x5xf32>) -> (tensor<1x8x30x80xf32>, tensor<4x8x5x5xf32>) {
  %dx, %dw = sym._backward_Convolution %g, %x, %w {kernel = array<i64: 5, 5>, stride = array<i64: 2, 2>, pad = array<i64: 2, 2>, num_filter = 4 : i64, no_bias = true} : (tensor<1x4x15x40xf32>, tensor<1x8x30x80xf32>, tensor<4x8x5x5xf32>) -> (tensor<1x8x30x80xf32>, tensor<4x8x5x5xf32>)
  return %dx, %dw : tensor<1x8x30x80xf32>, tensor<4x8x5x5xf32>
}

// -----

// Max pooling pads with -inf; 'full' windows extend the input on the high side.
// CHECK-LABEL: func @max_pool_full
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: arith.maximumf
func.func @max_pool_full(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = sym.Pooling %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pooling_convention = "full"} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Softmax: max-reduce, exp(x - max), sum-reduce, divide.
// CHECK-LABEL: func @softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = sym.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// broadcast_add reads a size-1 dim at index 0.
// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func @broadcast_add
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[BCAST]], {{.*}}]
func.func @broadcast_add(%x: tensor<2x1x4xf32>, %y: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = sym.broadcast_add %x, %y : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Inference BatchNorm is one elementwise map with per-channel vectors.
// CHECK-LABEL: func @batch_norm
// CHECK: math.rsqrt
// CHECK: arith.subf
func.func @batch_norm(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0:3 = sym.BatchNorm %x, %g, %b, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3x4xf32>
}

// -----

// Training BatchNorm sums its batch statistics in f64, by adds that may be
// reassociated (so that LLVM vectorizes them), each sum rounded to f32 once.
// CHECK-LABEL: func @batch_norm_training
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @batch_norm_training(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0:3 = sym.BatchNorm %x, %g, %b, %m, %v {sym.is_train} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3x4xf32>
}

// -----

// Channels-last, the statistics go in two levels: each image's sums (one
// thread's block of rows, read whole), then the images' sums. One pass sums
// x and x^2 (squared in f64): the squares are read by the first level
// directly, with no reshape between, so that they fuse into it. The
// variance is mean(x^2) - mean^2, clamped at 0, rounded to f32 once.
// CHECK-LABEL: func @batch_norm_training_blocks
// CHECK: %[[SQUARES:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<16x4x4x8xf32>) outs(%{{.*}} : tensor<16x4x4x8xf64>)
// CHECK: arith.extf
// CHECK-NEXT: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%arg0, %[[SQUARES]] : tensor<16x4x4x8xf32>, tensor<16x4x4x8xf64>) outs(%{{.*}}, %{{.*}} : tensor<16x8xf64>, tensor<16x8xf64>)
// CHECK: %[[TOTALS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[SUMS]]#0, %[[SUMS]]#1 : tensor<16x8xf64>, tensor<16x8xf64>) outs(%{{.*}}, %{{.*}} : tensor<8xf64>, tensor<8xf64>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[TOTALS]]#0 : tensor<8xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[MEAN]], %[[TOTALS]]#1 : tensor<8xf64>, tensor<8xf64>)
// CHECK: arith.subf
// CHECK: arith.maximumf
// A batch of 2 has too few images: the first level takes each image's rows.
// CHECK-LABEL: func @batch_norm_training_rows
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%arg0, %{{.*}} : tensor<2x8x16x8xf32>, tensor<2x8x16x8xf64>) outs(%{{.*}}, %{{.*}} : tensor<2x8x8xf64>, tensor<2x8x8xf64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x8x8xf64>, tensor<2x8x8xf64>) outs(%{{.*}}, %{{.*}} : tensor<8xf64>, tensor<8xf64>)
func.func @batch_norm_training_blocks(%x: tensor<16x4x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<16x4x4x8xf32> {
  %0:3 = sym.BatchNorm %x, %g, %b, %m, %v {axis = 3 : i64, sym.is_train} : (tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0 : tensor<16x4x4x8xf32>
}
func.func @batch_norm_training_rows(%x: tensor<2x8x16x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8x16x8xf32> {
  %0:3 = sym.BatchNorm %x, %g, %b, %m, %v {axis = 3 : i64, sym.is_train} : (tensor<2x8x16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x16x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0 : tensor<2x8x16x8xf32>
}

// -----

// Its backward sums g and g * x^ in one pass (one generic, two sums), then
// applies them.
// CHECK-LABEL: func @batch_norm_training_backward
// CHECK: %[[GX:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg3, %arg4 : tensor<16x4x4x8xf32>, tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%arg0, %[[GX]] : tensor<16x4x4x8xf32>, tensor<16x4x4x8xf32>) outs(%{{.*}}, %{{.*}} : tensor<16x8xf64>, tensor<16x8xf64>)
// CHECK-NOT: iterator_types = ["parallel", "reduction", "reduction", "parallel"]
// CHECK: return
func.func @batch_norm_training_backward(%og: tensor<16x4x4x8xf32>, %x: tensor<16x4x4x8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %s: tensor<8xf32>) -> (tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = sym._backward_BatchNorm %og, %x, %g, %m, %s {axis = 3 : i64, fix_gamma = false, sym.is_train} : (tensor<16x4x4x8xf32>, tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<16x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{the CPU backend needs static shapes; 'relu' has a dynamic or unranked operand or result}}
  %0 = sym.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Dropout that draws random numbers gets the function a seed argument; each
// mask element hashes (seed, node, element index) and keeps its element
// with probability 1 - p, scaled by 1/(1 - p).
// CHECK-LABEL: func.func @dropout_always
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[SEED:.*]]: tensor<i64> {sym.rng_seed})
// CHECK: tensor.extract %[[SEED]][] : tensor<i64>
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.muli {{.*}} : i64
// CHECK: arith.shrui
// CHECK: arith.uitofp {{.*}} : i64 to f32
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.constant 1.4285714{{.*}} : f32
// CHECK: arith.mulf
func.func @dropout_always(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:2 = sym.Dropout %x {mode = "always", p = 0.3 : f64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----

// Outside training, Dropout is the identity and needs no seed.
// CHECK-LABEL: func.func @dropout_inference
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[X]]
func.func @dropout_inference(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:2 = sym.Dropout %x {p = 0.3 : f64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----

// Non-maximum suppression calls the kernel library on flat buffers: the
// input read-only, fresh output, record and scratch buffers, then the
// params; the module declares the kernel once.
// CHECK: func.func private @symc_box_nms_f32(memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32)
// CHECK-LABEL: func.func @box_nms
// CHECK: %[[IN:.*]] = bufferization.to_memref %{{.*}} read_only : memref<2x4x6xf32>
// CHECK: memref.collapse_shape %[[IN]] {{\[}}[0, 1, 2]]
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x6xf32>
// CHECK: %[[ORDER:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xi32>
// CHECK: call @symc_box_nms_f32(
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @box_nms(%x: tensor<2x4x6xf32>) -> tensor<2x4x6xf32> {
  %0:2 = sym._contrib_box_nms %x {topk = 3 : i64, id_index = 0 : i64} : (tensor<2x4x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x4x1xf32>)
  %1:2 = sym._contrib_box_nms %x {topk = 2 : i64} : (tensor<2x4x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x4x1xf32>)
  %2 = sym.elemwise_add %0#0, %1#0 : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  return %2 : tensor<2x4x6xf32>
}

// -----

// take with mode 'raise' checks its indices against [0, n) in their own
// type and, where one lies outside and no earlier check failed, writes its
// check number into the run error; the gather reads clamped positions.
// CHECK-LABEL: func @take_raise
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[ANY:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: %[[FIRST:.*]] = memref.load %arg2[%{{.*}}] : memref<4xi64>
// CHECK: scf.if
// CHECK: memref.store %c3_i64, %arg2[%{{.*}}] : memref<4xi64>
// CHECK: arith.maxsi
// CHECK: arith.minsi
func.func @take_raise(%a: tensor<4x2xf32>, %i: tensor<3xf32>, %error: memref<4xi64> {sym.run_error}) -> tensor<3x2xf32> {
  %0 = sym.take %a, %i {mode = "raise", sym.check = 3 : i64} : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// gather_nd reports, of the first axis with an index outside [-size, size),
// the last such index, the axis and its size.
// CHECK-LABEL: func @gather_nd_check
// CHECK-COUNT-2: scf.for {{.*}} iter_args
// CHECK: scf.if
// CHECK: memref.store %c1_i64, %arg2
// CHECK-COUNT-3: memref.store
func.func @gather_nd_check(%a: tensor<3x4xf32>, %i: tensor<2x3xf32>, %error: memref<4xi64> {sym.run_error}) -> tensor<3xf32> {
  %0 = sym.gather_nd %a, %i {sym.check = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// With weights prepared (CPU code), a 3x3 stride-1 convolution over a map
// of 24x24 (6 x 6 tiles of F(4 x 4, 3 x 3), 32 channels) goes by Winograd:
// its filters, as columns (C * 9, F), transformed in filter strips of 32 (one
// elementwise op over the 9 taps' views, marked for the prepare
// entry), the padded input transposed channels-last and transformed by rows
// then columns of its tiles, 36 GEMMs of (tiles, channels) by (channels,
// filters), then the output transform, transposed back channels-first.
// Without prepared weights, it is a contraction by taps.
// CHECK-LABEL: func @winograd
// CHECK-NOT: symc.prepare
// CHECK: symc.tap_contraction
// WINOGRAD-LABEL: func @winograd
// WINOGRAD: linalg.transpose ins(%{{.*}} : tensor<64x288xf32>) outs(%{{.*}} : tensor<288x64xf32>) permutation = [1, 0]
// WINOGRAD: %[[U:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins({{.*}} : tensor<32x2x32xf32>, {{.*}}, tensor<36xf32>) outs(%{{.*}} : tensor<36x2x32x32xf32>) attrs = {{.*}}symc.prepare = "Winograd F(4x4, 3x3) filter transform, filter strips of 32"
// WINOGRAD: linalg.transpose ins(%{{.*}} : tensor<1x32x26x26xf32>) {{.*}} permutation = [0, 2, 3, 1]
// WINOGRAD: tensor.extract_slice %{{.*}}[0, 0, 5, 0] [1, 26, 6, 32] [1, 1, 4, 1]
// WINOGRAD: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x26x6x6x32xf32>)
// WINOGRAD: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x6x6x6x32xf32>)
// WINOGRAD: linalg.generic {{.*}} ins(%{{.*}}, %[[U]] : tensor<36x36x32xf32>, tensor<36x2x32x32xf32>) {{.*}}symc.tap_contraction
// WINOGRAD: linalg.generic {{.*}} outs(%{{.*}} : tensor<36x6x4x64xf32>)
// WINOGRAD: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x4x6x4x64xf32>)
// WINOGRAD: linalg.transpose ins(%{{.*}} : tensor<1x24x24x64xf32>) {{.*}} permutation = [0, 3, 1, 2]
func.func @winograd(%x: tensor<1x32x24x24xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x24x24xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true} : (tensor<1x32x24x24xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x24x24xf32> loc("conv")
  return %0 : tensor<1x64x24x24xf32>
}

// -----

// A 7x7 map goes in 2x2 tiles that cover 8x8: the input is padded one more
// row and column at its end, and the extra outputs are dropped before the
// transpose back. Eight images share each GEMM (128 tiles).
// WINOGRAD-LABEL: func @winograd_ragged
// WINOGRAD: symc.prepare = "Winograd F(2x2, 3x3) filter transform, filter strips of 32"
// WINOGRAD: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// WINOGRAD: symc.tap_contraction
// WINOGRAD: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [8, 7, 7, 32] [1, 1, 1, 1] : tensor<8x8x8x32xf32> to tensor<8x7x7x32xf32>
// WINOGRAD: linalg.transpose ins(%{{.*}} : tensor<8x7x7x32xf32>) {{.*}} permutation = [0, 3, 1, 2]
func.func @winograd_ragged(%x: tensor<8x32x7x7xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<8x32x7x7xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<8x32x7x7xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x7x7xf32> loc("conv")
  return %0 : tensor<8x32x7x7xf32>
}

// -----

// Four 14x14 images have the tiles (64) for F(4x4, 3x3) over 16x16, 1.31
// times the map: the input is padded 3 more at its end, the outputs past
// the map dropped. One image (16 tiles) goes by F(2x2, 3x3).
// WINOGRAD-LABEL: func @winograd_f4_ragged
// WINOGRAD: symc.prepare = "Winograd F(4x4, 3x3) filter transform, filter strips of 32"
// WINOGRAD: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 3, 3]
// WINOGRAD: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [4, 14, 14, 32] [1, 1, 1, 1] : tensor<4x16x16x32xf32> to tensor<4x14x14x32xf32>
// WINOGRAD-LABEL: func @winograd_f2_one_image
// WINOGRAD: symc.prepare = "Winograd F(2x2, 3x3) filter transform, filter strips of 32"
func.func @winograd_f4_ragged(%x: tensor<4x32x14x14xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<4x32x14x14xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<4x32x14x14xf32>, tensor<32x32x3x3xf32>) -> tensor<4x32x14x14xf32> loc("conv")
  return %0 : tensor<4x32x14x14xf32>
}
func.func @winograd_f2_one_image(%x: tensor<1x32x14x14xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x32x14x14xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 32 : i64, no_bias = true} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x14x14xf32> loc("conv")
  return %0 : tensor<1x32x14x14xf32>
}

// -----

// One 7x7 image (a ResNet's last stage at batch 1) has 16 tiles of F(2x2,
// 3x3): enough for Winograd's GEMMs, which stream a transformed weight 16/9
// times the weight's size, still faster than the direct convolution.
// WINOGRAD-LABEL: func @winograd_7x7_one_image
// WINOGRAD: symc.prepare = "Winograd F(2x2, 3x3) filter transform, filter strips of 32"
// WINOGRAD: symc.tap_contraction
func.func @winograd_7x7_one_image(%x: tensor<1x64x7x7xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true} : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32> loc("conv")
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// A channels-last depthwise convolution is one elementwise op over its
// output: nine strided views of the padded input, each times a vector of
// the taps' weights (transposed once, in the prepare entry). Without
// prepared weights (CUDA code) it goes through the channels-first one.
// CHECK-LABEL: func @nhwc_depthwise
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x6x6x32xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x32x3x3xf32>) {{.*}} permutation = [0, 2, 3, 1]
// WINOGRAD-LABEL: func @nhwc_depthwise
// WINOGRAD: %[[TAPS:.*]] = linalg.transpose ins(%{{.*}} : tensor<32x9xf32>) {{.*}} permutation = [1, 0]  {symc.prepare = "depthwise taps, channels last"}
// WINOGRAD: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// WINOGRAD: tensor.extract_slice %{{.*}}[0, 2, 2, 0] [1, 3, 3, 32] [1, 2, 2, 1] : tensor<1x8x8x32xf32> to tensor<1x3x3x32xf32>
// WINOGRAD: %[[LAST:.*]] = tensor.extract_slice %[[TAPS]][8, 0] [1, 32] [1, 1] : tensor<9x32xf32> to tensor<32xf32>
// WINOGRAD: linalg.generic {{.*}} ins({{.*}}%[[LAST]] : {{.*}}) outs(%{{.*}} : tensor<1x3x3x32xf32>)
// WINOGRAD-NOT: linalg.transpose
// WINOGRAD: return
func.func @nhwc_depthwise(%x: tensor<1x6x6x32xf32>, %w: tensor<32x3x3x1xf32>) -> tensor<1x3x3x32xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, num_filter = 32 : i64, num_group = 32 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x6x6x32xf32>, tensor<32x3x3x1xf32>) -> tensor<1x3x3x32xf32>
  return %0 : tensor<1x3x3x32xf32>
}

// -----

// A channels-last pointwise convolution reads its input as the rows of the
// GEMM, the filters in strips of 32 lanes: its result (P, F / 32, 32) is
// the output as it is laid out, no transpose on either side.
// WINOGRAD-LABEL: func @nhwc_pointwise
// WINOGRAD: %[[STRIPS:.*]] = linalg.transpose ins(%{{.*}} : tensor<16x2x32xf32>) outs(%{{.*}} : tensor<2x16x32xf32>) permutation = [1, 0, 2] {symc.prepare = "filter strips of 32"}
// WINOGRAD: %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<1x4x4x16xf32> into tensor<16x16xf32>
// WINOGRAD: %[[P:.*]] = linalg.generic {{.*}} ins(%[[ROWS]], %[[STRIPS]] : tensor<16x16xf32>, tensor<2x16x32xf32>) {{.*}}symc.tap_contraction
// WINOGRAD: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3], [4]] {{.*}} into tensor<1x4x4x2x32xf32>
// WINOGRAD: tensor.collapse_shape %[[E]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x4x2x32xf32> into tensor<1x4x4x64xf32>
// WINOGRAD-NOT: linalg.transpose
// WINOGRAD: return
func.func @nhwc_pointwise(%x: tensor<1x4x4x16xf32>, %w: tensor<64x1x1x16xf32>) -> tensor<1x4x4x64xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<64x1x1x16xf32>) -> tensor<1x4x4x64xf32>
  return %0 : tensor<1x4x4x64xf32>
}

// -----

// Filters not in whole strips: the GEMM's rows times the weight as a
// (kh * kw * C, F) matrix, its window rows gathered from the padded input
// in the weight's (kh, kw, C) order.
// WINOGRAD-LABEL: func @nhwc_narrow
// WINOGRAD: %[[COLUMNS:.*]] = linalg.transpose ins(%{{.*}} : tensor<24x72xf32>) {{.*}} {symc.prepare = "filters last"}
// WINOGRAD: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// WINOGRAD: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x5x5x3x3x8xf32>)
// WINOGRAD: linalg.matmul ins(%{{.*}}, %[[COLUMNS]] : tensor<25x72xf32>, tensor<72x24xf32>)
// WINOGRAD: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] {{.*}} into tensor<1x5x5x24xf32>
func.func @nhwc_narrow(%x: tensor<1x5x5x8xf32>, %w: tensor<24x3x3x8xf32>) -> tensor<1x5x5x24xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 24 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x5x5x8xf32>, tensor<24x3x3x8xf32>) -> tensor<1x5x5x24xf32>
  return %0 : tensor<1x5x5x24xf32>
}

// -----

// Winograd channels-last: the input padded as it is, no transpose in or out.
// WINOGRAD-LABEL: func @nhwc_winograd
// WINOGRAD: symc.prepare = "Winograd F(4x4, 3x3) filter transform, filter strips of 32"
// WINOGRAD: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// WINOGRAD: symc.tap_contraction
// WINOGRAD-NOT: linalg.transpose
// WINOGRAD: return %{{.*}} : tensor<1x24x24x64xf32>
func.func @nhwc_winograd(%x: tensor<1x24x24x32xf32>, %w: tensor<64x3x3x32xf32>) -> tensor<1x24x24x64xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 64 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x24x24x32xf32>, tensor<64x3x3x32xf32>) -> tensor<1x24x24x64xf32>
  return %0 : tensor<1x24x24x64xf32>
}

// -----

// Pooling channels-last: a 3x3 max pool combines nine strided views of the
// input padded with -inf; an average divides by the window counts, a view
// per tap of a mask, broadcast along the batch and the channels; a global
// pool reduces the spatial dims.
// CHECK-LABEL: func @nhwc_pooling
// CHECK: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.extract_slice %{{.*}}[0, 2, 2, 0] [1, 4, 4, 16] [1, 2, 2, 1] : tensor<1x9x9x16xf32> to tensor<1x4x4x16xf32>
// CHECK: arith.maximumf
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 1, 0] [1, 4, 4, 1] [1, 2, 2, 1] : tensor<1x9x9x1xf32> to tensor<1x4x4x1xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[COUNT:.*]], #{{.*}}], {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x4x16xf32>, tensor<1x4x4x1xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<1x7x7x16xf32>)
func.func @nhwc_pooling(%x: tensor<1x7x7x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x1x1x16xf32>) {
  %0 = sym.Pooling %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, pool_type = "max", layout = "NHWC"} : (tensor<1x7x7x16xf32>) -> tensor<1x4x4x16xf32>
  %1 = sym.Pooling %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, pool_type = "avg", layout = "NHWC"} : (tensor<1x7x7x16xf32>) -> tensor<1x4x4x16xf32>
  %2 = sym.Pooling %x {global_pool = true, pool_type = "avg", layout = "NHWC"} : (tensor<1x7x7x16xf32>) -> tensor<1x1x1x16xf32>
  return %0, %1, %2 : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x1x1x16xf32>
}

// -----

// More filters than a strip but not whole strips: the weight is completed
// with zero filters to two strips (in the prepare entry), the extra outputs
// dropped.
// WINOGRAD-LABEL: func @nhwc_completed_strips
// WINOGRAD: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [16, 40] [1, 1] : tensor<16x40xf32> into tensor<16x64xf32>
// WINOGRAD: symc.prepare = "filter strips of 32"
// WINOGRAD: symc.tap_contraction
// WINOGRAD: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 40] [1, 1, 1, 1] : tensor<1x4x4x64xf32> to tensor<1x4x4x40xf32>
func.func @nhwc_completed_strips(%x: tensor<1x4x4x16xf32>, %w: tensor<40x1x1x16xf32>) -> tensor<1x4x4x40xf32> {
  %0 = sym.Convolution %x, %w {kernel = array<i64: 1, 1>, num_filter = 40 : i64, no_bias = true, layout = "NHWC"} : (tensor<1x4x4x16xf32>, tensor<40x1x1x16xf32>) -> tensor<1x4x4x40xf32>
  return %0 : tensor<1x4x4x40xf32>
}

// -----

// A max pooling's gradient channels-last, gathered: the first largest tap of
// each window (strict >, in row-major order over the -inf padded input),
// then one op over the input's positions split by their residues modulo the
// strides, (N, 4, 2, 4, 2, C), that adds the gradients of the 2 x 2 windows
// that can cover each position where its tap there (a constant table per
// window, -1 out of reach) is that window's first largest; the odd width's
// last column is sliced off.
// CHECK-LABEL: func @max_pooling_grad_channels_last
// CHECK: tensor.pad %arg1 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[TAPS:.*]] = linalg.generic
// CHECK-COUNT-8: arith.cmpf ogt
// CHECK: } -> tensor<2x4x4x16xf32>
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: tensor.pad %[[TAPS]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: arith.constant dense<{{\[}}[4.000000e+00, 5.000000e+00], [7.000000e+00, 8.000000e+00]]>
// CHECK: arith.constant dense<{{\[}}[-1.000000e+00, 3.000000e+00], [-1.000000e+00, 6.000000e+00]]>
// CHECK: arith.constant dense<{{\[}}[-1.000000e+00, -1.000000e+00], [1.000000e+00, 2.000000e+00]]>
// CHECK: arith.constant dense<{{\[}}[-1.000000e+00, -1.000000e+00], [-1.000000e+00, 0.000000e+00]]>
// CHECK: linalg.generic
// CHECK-COUNT-4: arith.cmpf oeq
// CHECK: } -> tensor<2x4x2x4x2x16xf32>
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0], [1, 2], [3, 4], [5]] : tensor<2x4x2x4x2x16xf32> into tensor<2x8x8x16xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0, 0, 0] [2, 8, 7, 16] [1, 1, 1, 1]
func.func @max_pooling_grad_channels_last(%g: tensor<2x4x4x16xf32>, %x: tensor<2x8x7x16xf32>) -> tensor<2x8x7x16xf32> {
  %0 = sym._backward_Pooling %g, %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1>, pool_type = "max", layout = "NHWC"} : (tensor<2x4x4x16xf32>, tensor<2x8x7x16xf32>) -> tensor<2x8x7x16xf32>
  return %0 : tensor<2x8x7x16xf32>
}
