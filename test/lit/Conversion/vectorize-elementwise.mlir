// RUN: symc-opt %s -split-input-file -sym-vectorize-elementwise=vector-bits=512 | FileCheck %s

// A residual add and its relu over a thread's rows (a dynamic count) steps
// through each row in 16-float vectors; a per-channel vector broadcasts.
// CHECK-LABEL: func @add_relu
// CHECK-SAME: (%[[X:.*]]: memref<?x48xf32>, %[[Y:.*]]: memref<?x48xf32>, %[[B:.*]]: memref<48xf32>, %[[OUT:.*]]: memref<?x48xf32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:   scf.for %[[COLUMN:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK:     vector.transfer_read {{.*}} : memref<1x16xf32, {{.*}}>, vector<1x16xf32>
// CHECK:     vector.transfer_read {{.*}} : memref<1x16xf32, {{.*}}>, vector<1x16xf32>
// CHECK:     vector.transfer_read {{.*}} : memref<16xf32, {{.*}}>, vector<1x16xf32>
// CHECK:     arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK:     vector.transfer_write {{.*}} : vector<1x16xf32>, memref<1x16xf32, {{.*}}>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @add_relu(%x: memref<?x48xf32>, %y: memref<?x48xf32>, %b: memref<48xf32>, %out: memref<?x48xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %b : memref<?x48xf32>, memref<?x48xf32>, memref<48xf32>) outs(%out : memref<?x48xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %d : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A dim of 12 goes in vectors of 12 lanes: no step needs a mask.
// CHECK-LABEL: func @twelve
// CHECK: scf.for {{.*}} step %c12
// CHECK: vector.transfer_write {{.*}} : vector<12xf32>, memref<12xf32
#id1 = affine_map<(d0) -> (d0)>
func.func @twelve(%x: memref<24xf32>, %out: memref<24xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<24xf32>) outs(%out : memref<24xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A transposing generic would gather along its innermost dim: it stays.
// CHECK-LABEL: func @transposing
// CHECK-NOT: vector.transfer_read
// CHECK: linalg.generic
#tr = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposing(%x: memref<32x32xf32>, %out: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#tr, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// So does a reduction.
// CHECK-LABEL: func @reduction
// CHECK-NOT: vector.transfer_read
// CHECK: linalg.generic
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @reduction(%x: memref<32x32xf32>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [#id3, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x32xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A mask of i1 stays scalar: memory holds a byte per element, where a
// vector of i1 would load packed bits.
// CHECK-LABEL: func @mask
// CHECK-NOT: vector.transfer_read
// CHECK: linalg.generic
#id4 = affine_map<(d0) -> (d0)>
func.func @mask(%x: memref<32xf32>, %m: memref<32xi1>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel"]}
      ins(%x, %m : memref<32xf32>, memref<32xi1>) outs(%out : memref<32xf32>) {
  ^bb0(%a: f32, %k: i1, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.select %k, %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// So does math that becomes a libm call, for scalars only.
// CHECK-LABEL: func @tan
// CHECK-NOT: vector.transfer_read
// CHECK: math.tan
#id5 = affine_map<(d0) -> (d0)>
func.func @tan(%x: memref<32xf32>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
      ins(%x : memref<32xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tan %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An im2col copy reads a window (y + i): no projected permutation, which
// linalg does not vectorize, but each step of a copy is one vector read at
// its views' origin and one vector written.
// CHECK-LABEL: func @window_copy
// CHECK-NOT: linalg.generic
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK:   %[[ROW:.*]] = vector.transfer_read {{.*}} : memref<1x16xf32, {{.*}}>, vector<16xf32>
// CHECK:   vector.transfer_write %[[ROW]], {{.*}} : vector<16xf32>, memref<1x1x16xf32, {{.*}}>
#window = affine_map<(d0, d1, d2) -> (d1 + d0, d2)>
#taps = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @window_copy(%x: memref<6x32xf32>, %y: memref<3x4x32xf32>) {
  linalg.generic {indexing_maps = [#window, #taps], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<6x32xf32>) outs(%y : memref<3x4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A window read that computes (here, negates) stays scalar.
// CHECK-LABEL: func @window_negate
// CHECK: linalg.generic
// CHECK: arith.negf
#window = affine_map<(d0, d1, d2) -> (d1 + d0, d2)>
#taps = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @window_negate(%x: memref<6x32xf32>, %y: memref<3x4x32xf32>) {
  linalg.generic {indexing_maps = [#window, #taps], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<6x32xf32>) outs(%y : memref<3x4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A channels-last 3x3 depthwise convolution's taps (three of them here)
// over a row of 7 positions: its per-channel weights do not vary along the
// positions, so each step is all 7 positions of a 16-channel vector, each
// weight read once into a vector the rows share (broadcast), not once per
// position.
// CHECK-LABEL: func @depthwise_rows
// CHECK: scf.for {{.*}} step %c16
// CHECK-NOT: scf.for
// CHECK: vector.transfer_read {{.*}} : memref<1x7x16xf32, {{.*}}>, vector<1x7x16xf32>
// CHECK: vector.transfer_read {{.*}} : memref<16xf32, {{.*}}>, vector<1x7x16xf32>
// CHECK: math.fma {{.*}} : vector<1x7x16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x7x16xf32>, memref<1x7x16xf32
#pix = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#chan = affine_map<(d0, d1, d2) -> (d2)>
func.func @depthwise_rows(%t0: memref<1x7x64xf32>, %t1: memref<1x7x64xf32>, %t2: memref<1x7x64xf32>,
                          %w0: memref<64xf32>, %w1: memref<64xf32>, %w2: memref<64xf32>, %out: memref<1x7x64xf32>) {
  linalg.generic {indexing_maps = [#pix, #pix, #pix, #chan, #chan, #chan, #pix], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t0, %t1, %t2, %w0, %w1, %w2 : memref<1x7x64xf32>, memref<1x7x64xf32>, memref<1x7x64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>)
      outs(%out : memref<1x7x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %x: f32, %y: f32, %z: f32, %o: f32):
    %p = arith.mulf %a, %x : f32
    %q = math.fma %b, %y, %p : f32
    %r = math.fma %c, %z, %q : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A transpose block (sym-distribute-threads' 16 x 16 of two dims, the
// others unit dims) is read into registers as 16 rows, transposed there by
// shuffles and written as 16 rows: no element-by-element scatter.
// CHECK-LABEL: func @transpose_block
// CHECK: %[[IN:.*]] = memref.subview %arg0[0, 0, 0, 0] [1, 16, 1, 16] [1, 1, 1, 1] : memref<1x16x1x16xf32, strided<[4096, 256, 16, 1]>> to memref<16x16xf32, strided<[256, 1]>>
// CHECK: %[[OUT:.*]] = memref.subview %arg1[0, 0, 0, 0] [1, 1, 16, 16] [1, 1, 1, 1] : memref<1x1x16x16xf32, strided<[4096, 1024, 64, 1]>> to memref<16x16xf32, strided<[64, 1]>>
// CHECK: %[[ROWS:.*]] = vector.transfer_read %[[IN]]{{.*}} : memref<16x16xf32, strided<[256, 1]>>, vector<16x16xf32>
// CHECK-NOT: vector.transpose
// CHECK: vector.shuffle
// CHECK: vector.transfer_write %{{.*}}, %[[OUT]]{{.*}} : vector<16x16xf32>, memref<16x16xf32, strided<[64, 1]>>
// CHECK-NOT: linalg.transpose
func.func @transpose_block(%x: memref<1x16x1x16xf32, strided<[4096, 256, 16, 1]>>, %y: memref<1x1x16x16xf32, strided<[4096, 1024, 64, 1]>>) {
  linalg.transpose ins(%x : memref<1x16x1x16xf32, strided<[4096, 256, 16, 1]>>) outs(%y : memref<1x1x16x16xf32, strided<[4096, 1024, 64, 1]>>) permutation = [0, 2, 3, 1]
  return
}

// -----

// Rows of 3 channels (a stem's image going channels-last) stay scalar.
// CHECK-LABEL: func @transpose_short_rows
// CHECK: linalg.transpose
// CHECK-NOT: vector.
func.func @transpose_short_rows(%x: memref<1x3x1x16xf32, strided<[150528, 50176, 224, 1]>>, %y: memref<1x1x16x3xf32, strided<[150528, 672, 3, 1]>>) {
  linalg.transpose ins(%x : memref<1x3x1x16xf32, strided<[150528, 50176, 224, 1]>>) outs(%y : memref<1x1x16x3xf32, strided<[150528, 672, 3, 1]>>) permutation = [0, 2, 3, 1]
  return
}

// -----

// Nor does a block of i1 (a mask's bytes: a vector of i1 loads packed bits).
// CHECK-LABEL: func @transpose_mask_block
// CHECK: linalg.transpose
// CHECK-NOT: vector.
func.func @transpose_mask_block(%x: memref<1x16x1x16xi1, strided<[4096, 256, 16, 1]>>, %y: memref<1x1x16x16xi1, strided<[4096, 1024, 64, 1]>>) {
  linalg.transpose ins(%x : memref<1x16x1x16xi1, strided<[4096, 256, 16, 1]>>) outs(%y : memref<1x1x16x16xi1, strided<[4096, 1024, 64, 1]>>) permutation = [0, 2, 3, 1]
  return
}

