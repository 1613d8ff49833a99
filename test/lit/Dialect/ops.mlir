// Every sym op parses, verifies and prints back in its custom form.
// RUN: symc-opt %s | symc-opt | FileCheck %s

// CHECK-LABEL: func @layers
func.func @layers(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                  %m: tensor<2x12xf32>, %fw: tensor<5x12xf32>, %fb: tensor<5xf32>,
                  %c: tensor<3xf32>, %g: tensor<3xf32>) {
  // CHECK: sym.FullyConnected %{{.*}} {num_hidden = 5 : i64} : (tensor<2x12xf32>, tensor<5x12xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %0 = sym.FullyConnected %m, %fw, %fb {num_hidden = 5 : i64} : (tensor<2x12xf32>, tensor<5x12xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  // CHECK: sym.Convolution {{.*}}kernel = array<i64: 3, 3>{{.*}} -> tensor<2x4x8x8xf32>
  %1 = sym.Convolution %x, %w, %b {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1>, num_filter = 4 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: sym.Pooling {{.*}}pool_type = "avg"{{.*}} -> tensor<2x3x4x4xf32>
  %2 = sym.Pooling %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pool_type = "avg"} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  // CHECK: sym.Activation {{.*}}act_type = "softrelu"
  %3 = sym.Activation %x {act_type = "softrelu"} : (tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: sym.LeakyReLU {{.*}}act_type = "prelu"
  %4 = sym.LeakyReLU %x, %g {act_type = "prelu"} : (tensor<2x3x8x8xf32>, tensor<3xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: sym.LeakyReLU {{.*}}act_type = "rrelu"{{.*}} -> (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>)
  %5:2 = sym.LeakyReLU %x {act_type = "rrelu"} : (tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>)
  // CHECK: sym.BatchNorm {{.*}}eps = 2.000000e-05{{.*}}fix_gamma = false
  %6:3 = sym.BatchNorm %x, %g, %c, %c, %c {eps = 2.0e-5 : f64, fix_gamma = false} : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: sym.Dropout {{.*}}axes = array<i64: 2, 3>
  %7:2 = sym.Dropout %x {p = 0.25 : f64, axes = array<i64: 2, 3>} : (tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32>)
  // CHECK: sym.LRN {{.*}}nsize = 3
  %8:2 = sym.LRN %x {nsize = 3 : i64} : (tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>)
  // CHECK: sym.UpSampling {{.*}}sample_type = "nearest"
  %9 = sym.UpSampling %x {scale = 2 : i64, sample_type = "nearest", num_args = 1 : i64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x16x16xf32>
  return
}

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<2x6x4xf32>, %y: tensor<2x2x4xf32>, %i: tensor<3x5xf32>, %e: tensor<10x7xf32>) {
  // CHECK: sym.Concat {{.*}} -> tensor<2x8x4xf32>
  %0 = sym.Concat %x, %y {num_args = 2 : i64} : (tensor<2x6x4xf32>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: sym.SliceChannel {{.*}} -> (tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
  %1:3 = sym.SliceChannel %x {num_outputs = 3 : i64} : (tensor<2x6x4xf32>) -> (tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>)
  // CHECK: sym.Flatten {{.*}} -> tensor<2x24xf32>
  %2 = sym.Flatten %x : (tensor<2x6x4xf32>) -> tensor<2x24xf32>
  // CHECK: sym.Reshape {{.*}}shape = array<i64: -3, -1>
  %3 = sym.Reshape %x {shape = array<i64: -3, -1>} : (tensor<2x6x4xf32>) -> tensor<12x4xf32>
  // CHECK: sym.transpose {{.*}} -> tensor<4x2x6xf32>
  %4 = sym.transpose %x {axes = array<i64: 2, 0, 1>} : (tensor<2x6x4xf32>) -> tensor<4x2x6xf32>
  // CHECK: sym.expand_dims {{.*}} -> tensor<2x6x4x1xf32>
  %5 = sym.expand_dims %x {axis = -1 : i64} : (tensor<2x6x4xf32>) -> tensor<2x6x4x1xf32>
  // CHECK: sym.SwapAxis {{.*}} -> tensor<4x6x2xf32>
  %6 = sym.SwapAxis %x {dim1 = 0 : i64, dim2 = 2 : i64} : (tensor<2x6x4xf32>) -> tensor<4x6x2xf32>
  // CHECK: sym.slice_axis {{.*}} -> tensor<2x3x4xf32>
  %7 = sym.slice_axis %x {axis = 1 : i64, begin = 1 : i64, end = 4 : i64} : (tensor<2x6x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: sym.Embedding {{.*}} -> tensor<3x5x7xf32>
  %8 = sym.Embedding %i, %e {input_dim = 10 : i64, output_dim = 7 : i64} : (tensor<3x5xf32>, tensor<10x7xf32>) -> tensor<3x5x7xf32>
  // CHECK: sym.Cast {{.*}}dtype = f16
  %9 = sym.Cast %x {dtype = f16} : (tensor<2x6x4xf32>) -> tensor<2x6x4xf16>
  // CHECK: sym._copy
  %10 = sym._copy %x : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  // CHECK: sym.BlockGrad
  %11 = sym.BlockGrad %x : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  // CHECK: sym.make_loss
  %12 = sym.make_loss %x : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  // CHECK: sym.MakeLoss {{.*}}normalization = "batch"
  %13 = sym.MakeLoss %x {normalization = "batch"} : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  // CHECK: sym._zeros {{.*}}shape = array<i64: 0, 4>
  %14 = sym._zeros {shape = array<i64: 0, 4>} : () -> tensor<?x4xf32>
  // CHECK: sym._ones {{.*}}dtype = f64
  %15 = sym._ones {shape = array<i64: 2>, dtype = f64} : () -> tensor<2xf64>
  return
}

// CHECK-LABEL: func @heads
func.func @heads(%x: tensor<4x10xf32>, %l: tensor<4xf32>, %len: tensor<4xf32>, %r: tensor<4x10xf32>) {
  // CHECK: sym.SoftmaxOutput {{.*}}use_ignore = true
  %0 = sym.SoftmaxOutput %x, %l {use_ignore = true, ignore_label = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  // CHECK: sym.SoftmaxActivation {{.*}}mode = "channel"
  %1 = sym.SoftmaxActivation %x {mode = "channel"} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  // CHECK: sym.softmax {{.*}}temperature = 2.000000e+00
  %2 = sym.softmax %x {axis = 1 : i64, temperature = 2.0 : f64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  // CHECK: sym.softmax {{.*}}use_length = true
  %3 = sym.softmax %x, %len {use_length = true} : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  // CHECK: sym.LinearRegressionOutput
  %4 = sym.LinearRegressionOutput %x, %r : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4x10xf32>
  // CHECK: sym.LogisticRegressionOutput
  %5 = sym.LogisticRegressionOutput %x, %r {grad_scale = 2.0 : f64} : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4x10xf32>
  // CHECK: sym.MAERegressionOutput
  %6 = sym.MAERegressionOutput %x, %r : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4x10xf32>
  return
}

// CHECK-LABEL: func @arith
func.func @arith(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<3xf32>, %k: tensor<3x4xf32>,
                 %p: tensor<5x2x3xf32>, %q: tensor<5x3x4xf32>) {
  // CHECK: sym.elemwise_add
  %0 = sym.elemwise_add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.elemwise_sub
  %1 = sym.elemwise_sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.elemwise_mul
  %2 = sym.elemwise_mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.elemwise_div
  %3 = sym.elemwise_div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._maximum
  %4 = sym._maximum %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._minimum
  %5 = sym._minimum %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_add {{.*}} -> tensor<2x3xf32>
  %6 = sym.broadcast_add %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_sub
  %7 = sym.broadcast_sub %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_mul
  %8 = sym.broadcast_mul %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_div
  %9 = sym.broadcast_div %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_maximum
  %10 = sym.broadcast_maximum %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_minimum
  %11 = sym.broadcast_minimum %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._plus_scalar {{.*}}scalar = 2.000000e+00
  %12 = sym._plus_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._minus_scalar
  %13 = sym._minus_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._rminus_scalar
  %14 = sym._rminus_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._mul_scalar
  %15 = sym._mul_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._div_scalar
  %16 = sym._div_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._rdiv_scalar
  %17 = sym._rdiv_scalar %a {scalar = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._power_scalar {{.*}}is_int = false
  %18 = sym._power_scalar %a {scalar = 0.5 : f64, is_int = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.add_n {{.*}}num_args = 3
  %19 = sym.add_n %a, %b, %a {num_args = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.exp
  %20 = sym.exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.log
  %21 = sym.log %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.sqrt
  %22 = sym.sqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.square
  %23 = sym.square %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.abs
  %24 = sym.abs %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.negative
  %25 = sym.negative %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.sin
  %26 = sym.sin %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.cos
  %27 = sym.cos %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.tanh
  %28 = sym.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.sigmoid
  %29 = sym.sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.relu
  %30 = sym.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.clip {{.*}}a_max = 6.000000e+00
  %31 = sym.clip %a {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.sum {{.*}}axis = array<i64: 1>{{.*}} -> tensor<2x1xf32>
  %32 = sym.sum %a {axis = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK: sym.mean {{.*}} -> tensor<1xf32>
  %33 = sym.mean %a : (tensor<2x3xf32>) -> tensor<1xf32>
  // CHECK: sym.dot {{.*}} -> tensor<2x4xf32>
  %34 = sym.dot %a, %k : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK: sym.batch_dot {{.*}} -> tensor<5x2x4xf32>
  %35 = sym.batch_dot %p, %q : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return
}

// CHECK-LABEL: func @model_zoo_ops
func.func @model_zoo_ops(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %x: tensor<2x3x8x8xf32>,
                         %dw: tensor<3x4x3x3xf32>, %db: tensor<4xf32>, %bc: tensor<1x3xf32>,
                         %qkv: tensor<5x2x24xf32>, %boxes: tensor<2x5xf32>, %offsets: tensor<1x2x4xf32>,
                         %seq: tensor<5x2x3xf32>, %rnnw: tensor<144xf32>, %h0: tensor<1x2x4xf32>,
                         %h0b: tensor<2xf32>, %b4: tensor<4xf32>, %cls: tensor<1x3x2xf32>, %loc: tensor<1x8xf32>,
                         %labels: tensor<1x3x5xf32>, %bc2: tensor<1x2xf32>) {
  // CHECK: sym.floor %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = sym.floor %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.ceil %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = sym.ceil %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.round %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = sym.round %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.rint %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = sym.rint %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.fix %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = sym.fix %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.trunc %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = sym.trunc %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.rsqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = sym.rsqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.reciprocal %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = sym.reciprocal %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.erf %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = sym.erf %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.log1p %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = sym.log1p %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.expm1 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = sym.expm1 %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.log2 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = sym.log2 %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.log10 %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = sym.log10 %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.tan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = sym.tan %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.arctan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = sym.arctan %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.sinh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = sym.sinh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.cosh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = sym.cosh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.zeros_like %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = sym.zeros_like %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.ones_like %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %18 = sym.ones_like %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._greater_scalar {{.*}}scalar = 5.000000e-01
  %19 = sym._greater_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._greater_equal_scalar {{.*}}scalar = 5.000000e-01
  %20 = sym._greater_equal_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._lesser_scalar {{.*}}scalar = 5.000000e-01
  %21 = sym._lesser_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._lesser_equal_scalar {{.*}}scalar = 5.000000e-01
  %22 = sym._lesser_equal_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._equal_scalar {{.*}}scalar = 5.000000e-01
  %23 = sym._equal_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._not_equal_scalar {{.*}}scalar = 5.000000e-01
  %24 = sym._not_equal_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._maximum_scalar {{.*}}scalar = 5.000000e-01
  %25 = sym._maximum_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._minimum_scalar {{.*}}scalar = 5.000000e-01
  %26 = sym._minimum_scalar %a {scalar = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._greater %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %27 = sym._greater %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._greater_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %28 = sym._greater_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._lesser %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %29 = sym._lesser %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._lesser_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %30 = sym._lesser_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %31 = sym._equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._not_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %32 = sym._not_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_greater {{.*}} -> tensor<2x3xf32>
  %33 = sym.broadcast_greater %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_greater_equal {{.*}} -> tensor<2x3xf32>
  %34 = sym.broadcast_greater_equal %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_lesser {{.*}} -> tensor<2x3xf32>
  %35 = sym.broadcast_lesser %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_lesser_equal {{.*}} -> tensor<2x3xf32>
  %36 = sym.broadcast_lesser_equal %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_equal {{.*}} -> tensor<2x3xf32>
  %37 = sym.broadcast_equal %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.broadcast_not_equal {{.*}} -> tensor<2x3xf32>
  %38 = sym.broadcast_not_equal %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.where {{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %39 = sym.where %a, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._contrib_AdaptiveAvgPooling2D {{.*}}output_size = array<i64: 3, 2>{{.*}} -> tensor<2x3x3x2xf32>
  %40 = sym._contrib_AdaptiveAvgPooling2D %x {output_size = array<i64: 3, 2>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x3x2xf32>
  // CHECK: sym.Pad {{.*}}mode = "reflect"{{.*}} -> tensor<2x3x11x9xf32>
  %41 = sym.Pad %x {mode = "reflect", pad_width = array<i64: 0, 0, 0, 0, 1, 2, 0, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x11x9xf32>
  // CHECK: sym._contrib_BilinearResize2D {{.*}}height = 5{{.*}} -> tensor<2x3x5x16xf32>
  %42 = sym._contrib_BilinearResize2D %x {height = 5 : i64, width = 16 : i64} : (tensor<2x3x8x8xf32>) -> tensor<2x3x5x16xf32>
  // CHECK: sym._contrib_BilinearResize2D {{.*}}mode = "like"{{.*}} -> tensor<2x3x5x16xf32>
  %43 = sym._contrib_BilinearResize2D %x, %42 {mode = "like"} : (tensor<2x3x8x8xf32>, tensor<2x3x5x16xf32>) -> tensor<2x3x5x16xf32>
  // CHECK: sym.Deconvolution {{.*}}stride = array<i64: 2, 2>{{.*}} -> tensor<2x4x17x17xf32>
  %44 = sym.Deconvolution %x, %dw, %db {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, num_filter = 4 : i64, no_bias = false} : (tensor<2x3x8x8xf32>, tensor<3x4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x17x17xf32>
  // CHECK: sym.LayerNorm {{.*}}eps = 1.000000e-03{{.*}} -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %45:3 = sym.LayerNorm %a, %b, %b {eps = 1.0e-3 : f64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  // CHECK: sym.slice {{.*}}begin = array<i64: -9223372036854775808, 1>{{.*}} -> tensor<2x2xf32>
  %46 = sym.slice %a {begin = array<i64: -9223372036854775808, 1>, end = array<i64: -9223372036854775808, 3>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  // CHECK: sym.stack {{.*}}axis = 1{{.*}} -> tensor<2x2x3xf32>
  %47 = sym.stack %a, %a {num_args = 2 : i64, axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  // CHECK: sym.broadcast_axis {{.*}} -> tensor<4x3xf32>
  %48 = sym.broadcast_axis %bc {axis = array<i64: 0>, size = array<i64: 4>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  // CHECK: sym.broadcast_to {{.*}} -> tensor<4x3xf32>
  %49 = sym.broadcast_to %bc {shape = array<i64: 4, 0>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  // CHECK: sym.SequenceMask {{.*}}use_sequence_length = true{{.*}} -> tensor<2x3xf32>
  %50 = sym.SequenceMask %a, %b {use_sequence_length = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: sym._contrib_arange_like {{.*}}axis = 1{{.*}} -> tensor<3xf32>
  %51 = sym._contrib_arange_like %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  // CHECK: sym._contrib_interleaved_matmul_selfatt_qk {{.*}} -> tensor<4x5x5xf32>
  %52 = sym._contrib_interleaved_matmul_selfatt_qk %qkv {heads = 2 : i64} : (tensor<5x2x24xf32>) -> tensor<4x5x5xf32>
  // CHECK: sym._contrib_interleaved_matmul_selfatt_valatt {{.*}} -> tensor<5x2x8xf32>
  %53 = sym._contrib_interleaved_matmul_selfatt_valatt %qkv, %52 {heads = 2 : i64} : (tensor<5x2x24xf32>, tensor<4x5x5xf32>) -> tensor<5x2x8xf32>
  // CHECK: sym.tile {{.*}}reps = array<i64: 2, 1, 2>{{.*}} -> tensor<2x2x6xf32>
  %54 = sym.tile %a {reps = array<i64: 2, 1, 2>} : (tensor<2x3xf32>) -> tensor<2x2x6xf32>
  // CHECK: sym.repeat {{.*}}repeats = 2{{.*}} -> tensor<12xf32>
  %55 = sym.repeat %a {repeats = 2 : i64} : (tensor<2x3xf32>) -> tensor<12xf32>
  // CHECK: sym.reverse {{.*}}axis = array<i64: 1>{{.*}} -> tensor<2x3xf32>
  %56 = sym.reverse %a {axis = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.squeeze {{.*}} -> tensor<3xf32>
  %57 = sym.squeeze %bc : (tensor<1x3xf32>) -> tensor<3xf32>
  // CHECK: sym._arange {{.*}}start = 4.000000e+00{{.*}} -> tensor<4xf32>
  %58 = sym._arange {start = 4.0 : f64} : () -> tensor<4xf32>
  // CHECK: sym.slice_like {{.*}}axes = array<i64: 0>{{.*}} -> tensor<1x3xf32>
  %59 = sym.slice_like %a, %bc {axes = array<i64: 0>} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  // CHECK: sym.L2Normalization {{.*}}mode = "channel"{{.*}} -> (tensor<2x3x8x8xf32>, tensor<2x1x8x8xf32>)
  %60:2 = sym.L2Normalization %x {mode = "channel"} : (tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x1x8x8xf32>)
  // CHECK: sym._contrib_box_nms {{.*}}topk = 2{{.*}} -> (tensor<2x5xf32>, tensor<2x1xf32>)
  %61:2 = sym._contrib_box_nms %boxes {topk = 2 : i64, coord_start = 1 : i64, score_index = 0 : i64} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x1xf32>)
  // CHECK: sym._contrib_box_decode {{.*}}format = "corner"{{.*}} -> tensor<1x2x4xf32>
  %62 = sym._contrib_box_decode %offsets, %offsets {format = "corner"} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  // CHECK: sym._contrib_ROIAlign {{.*}}pooled_size = array<i64: 2, 2>{{.*}} -> tensor<2x3x2x2xf32>
  %63 = sym._contrib_ROIAlign %x, %boxes {pooled_size = array<i64: 2, 2>, spatial_scale = 0.5 : f64} : (tensor<2x3x8x8xf32>, tensor<2x5xf32>) -> tensor<2x3x2x2xf32>
  // CHECK: sym.shape_array {{.*}} -> tensor<4xi64>
  %64 = sym.shape_array %x : (tensor<2x3x8x8xf32>) -> tensor<4xi64>
  // CHECK: sym.argsort {{.*}}is_ascend = false{{.*}} -> tensor<2x3xf32>
  %65 = sym.argsort %a {is_ascend = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.gather_nd {{.*}} -> tensor<3x3xf32>
  %66 = sym.gather_nd %a, %bc : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  // CHECK: sym.topk {{.*}}ret_typ = "both"{{.*}} -> (tensor<2x2xf32>, tensor<2x2xi32>)
  %67:2 = sym.topk %a {k = 2 : i64, ret_typ = "both", dtype = i32} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  // CHECK: sym.sort {{.*}}axis = 0{{.*}} -> (tensor<2x3xf32>, tensor<2x3xi32>)
  %68:2 = sym.sort %a {axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  // CHECK: sym.argmax {{.*}}keepdims = true{{.*}} -> tensor<2x1xf32>
  %69 = sym.argmax %a {axis = 1 : i64, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK: sym.argmin {{.*}} -> tensor<1xf32>
  %70 = sym.argmin %a : (tensor<2x3xf32>) -> tensor<1xf32>
  // CHECK: sym.pick {{.*}}mode = "wrap"{{.*}} -> tensor<3xf32>
  %71 = sym.pick %a, %b {axis = 0 : i64, mode = "wrap"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: sym.take {{.*}} -> tensor<3x3xf32>
  %72 = sym.take %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  // CHECK: sym.one_hot {{.*}}depth = 4{{.*}} -> tensor<3x4xf32>
  %73 = sym.one_hot %b {depth = 4 : i64} : (tensor<3xf32>) -> tensor<3x4xf32>
  // CHECK: sym.broadcast_like {{.*}} -> tensor<2x3xf32>
  %74 = sym.broadcast_like %bc, %a : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: sym.RNN {{.*}}mode = "lstm"{{.*}} -> (tensor<5x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  %75:3 = sym.RNN %seq, %rnnw, %h0, %h0 {mode = "lstm", num_layers = 1 : i64, state_size = 4 : i64, state_outputs = true} : (tensor<5x2x3xf32>, tensor<144xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<5x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  // CHECK: sym.SequenceLast {{.*}}use_sequence_length = true{{.*}} -> tensor<2x3xf32>
  %76 = sym.SequenceLast %seq, %h0b {use_sequence_length = true} : (tensor<5x2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  // CHECK: sym.SequenceReverse {{.*}} -> tensor<5x2x3xf32>
  %77 = sym.SequenceReverse %seq : (tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  // CHECK: sym.InstanceNorm {{.*}} -> (tensor<2x3x8x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %78:3 = sym.InstanceNorm %x, %b, %b : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  // CHECK: sym.norm {{.*}}ord = 1{{.*}} -> tensor<2xf32>
  %79 = sym.norm %a {ord = 1 : i64, axis = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  // CHECK: sym.Crop {{.*}}center_crop = true{{.*}} -> tensor<2x3x4x5xf32>
  %80 = sym.Crop %x {num_args = 1 : i64, h_w = array<i64: 4, 5>, center_crop = true} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x5xf32>
  // CHECK: sym.ROIPooling {{.*}} -> (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>)
  %81:2 = sym.ROIPooling %x, %boxes {pooled_size = array<i64: 2, 2>, spatial_scale = 0.5 : f64} : (tensor<2x3x8x8xf32>, tensor<2x5xf32>) -> (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>)
  // CHECK: sym._contrib_box_encode {{.*}} -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  %82:2 = sym._contrib_box_encode %bc2, %bc2, %offsets, %offsets, %b4, %b4 : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  // CHECK: sym._contrib_MultiBoxPrior {{.*}}sizes = array<f32: 2.000000e-01, 5.000000e-01>{{.*}} -> tensor<1x192x4xf32>
  %83 = sym._contrib_MultiBoxPrior %x {sizes = array<f32: 0.2, 0.5>, ratios = array<f32: 1.0, 2.0>} : (tensor<2x3x8x8xf32>) -> tensor<1x192x4xf32>
  // CHECK: sym._contrib_MultiBoxDetection {{.*}} -> tensor<1x2x6xf32>
  %84 = sym._contrib_MultiBoxDetection %cls, %loc, %offsets : (tensor<1x3x2xf32>, tensor<1x8xf32>, tensor<1x2x4xf32>) -> tensor<1x2x6xf32>
  // CHECK: sym._contrib_MultiBoxTarget {{.*}} -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x2xf32>)
  %85:3 = sym._contrib_MultiBoxTarget %offsets, %labels, %cls : (tensor<1x2x4xf32>, tensor<1x3x5xf32>, tensor<1x3x2xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x2xf32>)
  return
}

// CHECK-LABEL: func @lstm_projection
func.func @lstm_projection(%x: tensor<5x2x3xf32>, %w: tensor<120xf32>, %h: tensor<1x2x2xf32>, %c: tensor<1x2x4xf32>) {
  // CHECK: sym.RNN {{.*}}projection_size = 2{{.*}} -> (tensor<5x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x4xf32>)
  %0:3 = sym.RNN %x, %w, %h, %c {mode = "lstm", num_layers = 1 : i64, state_size = 4 : i64, projection_size = 2 : i64, state_outputs = true} : (tensor<5x2x3xf32>, tensor<120xf32>, tensor<1x2x2xf32>, tensor<1x2x4xf32>) -> (tensor<5x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x4xf32>)
  return
}
