// Verifier and shape-rule errors name what is wrong.
// RUN: symc-opt %s -split-input-file -verify-diagnostics

func.func @fc_bias_flag(%x: tensor<2x12xf32>, %w: tensor<5x12xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{takes a 'bias' input only when no_bias = false}}
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 5 : i64, no_bias = true} : (tensor<2x12xf32>, tensor<5x12xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @fc_weight(%x: tensor<2x12xf32>, %w: tensor<5x11xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{shape inconsistent for input 'weight': provided [5,11], inferred [5,12]}}
  %0 = sym.FullyConnected %x, %w, %b {num_hidden = 5 : i64} : (tensor<2x12xf32>, tensor<5x11xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @fc_num_hidden(%x: tensor<2x12xf32>, %w: tensor<5x12xf32>) {
  // expected-error @+1 {{attribute 'num_hidden' failed to satisfy constraint: 64-bit integer attribute whose value is positive}}
  %0 = sym.FullyConnected %x, %w {num_hidden = 0 : i64, no_bias = true} : (tensor<2x12xf32>, tensor<5x12xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @fc_missing(%x: tensor<2x12xf32>, %w: tensor<5x12xf32>) {
  // expected-error @+1 {{requires attribute 'num_hidden'}}
  %0 = sym.FullyConnected %x, %w {no_bias = true} : (tensor<2x12xf32>, tensor<5x12xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{stride has 1 values but the kernel has 2 dims}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, stride = array<i64: 2>, num_filter = 4 : i64, no_bias = true} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{input num_filter must divide group size}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, num_filter = 4 : i64, num_group = 2 : i64, no_bias = true} : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{kernel size exceeds input: dilated kernel 3 > padded input 2}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3>, num_filter = 4 : i64, no_bias = true} : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_layout(%x: tensor<*xf32>, %w: tensor<*xf32>) {
  // expected-error @+1 {{layout NDHWC is not supported (NCW, NCHW, NCDHW, NHWC are)}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3, 3, 3>, num_filter = 4 : i64, no_bias = true, layout = "NDHWC"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_nhwc_rank(%x: tensor<*xf32>, %w: tensor<*xf32>) {
  // expected-error @+1 {{layout NHWC needs a 2-d kernel, got 1 dims}}
  %0 = sym.Convolution %x, %w {kernel = array<i64: 3>, num_filter = 4 : i64, no_bias = true, layout = "NHWC"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @deconv_layout(%x: tensor<*xf32>, %w: tensor<*xf32>) {
  // expected-error @+1 {{layout NHWC is not supported (NCW, NCHW, NCDHW are)}}
  %0 = sym.Deconvolution %x, %w {kernel = array<i64: 3, 3>, num_filter = 4 : i64, layout = "NHWC"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel size (9) exceeds input (8 padded to 8)}}
  %0 = sym.Pooling %x {kernel = array<i64: 9, 9>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_type(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{attribute 'pool_type' failed to satisfy constraint: string attribute, one of: max, avg, sum, lp}}
  %0 = sym.Pooling %x {kernel = array<i64: 2, 2>, pool_type = "median"} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_output(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{shape inconsistent for output 0: provided [1,3,5,5], inferred [1,3,4,4]}}
  %0 = sym.Pooling %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x5xf32>
  return
}

// -----

func.func @activation(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{attribute 'act_type' failed to satisfy constraint}}
  %0 = sym.Activation %x {act_type = "swish"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @prelu_gamma(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires a 'gamma' input when act_type = prelu}}
  %0 = sym.LeakyReLU %x {act_type = "prelu"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @batchnorm_channels(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{shape inconsistent for input 'gamma': provided [4], inferred [3]}}
  %0:3 = sym.BatchNorm %x, %g, %c, %c, %c : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @batchnorm_axis(%x: tensor<2x3xf32>, %c: tensor<*xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a 2-d input}}
  %0:3 = sym.BatchNorm %x, %c, %c, %c, %c {axis = 2 : i64} : (tensor<2x3xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @dropout_p(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{p must be in [0, 1], got 1.5}}
  %0:2 = sym.Dropout %x {p = 1.5 : f64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return
}

// -----

func.func @lrn_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input data should be 4D in batch-channel-y-x, got [2,3]}}
  %0:2 = sym.LRN %x {nsize = 3 : i64} : (tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @upsampling_args(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{has 1 inputs but num_args is 2}}
  %0 = sym.UpSampling %x {scale = 2 : i64, sample_type = "nearest", num_args = 2 : i64} : (tensor<1x3x4x4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @concat_args(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{has 1 inputs but num_args is 2}}
  %0 = sym.Concat %x {num_args = 2 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @concat_mismatch(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{incompatible input shape: expected [2,-1], got [4,5]}}
  %0 = sym.Concat %x, %y {num_args = 2 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @split_uneven(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{does not evenly divide 5}}
  %0:2 = sym.SliceChannel %x {num_outputs = 2 : i64} : (tensor<2x5xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_results(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{has 3 results but num_outputs is 2}}
  %0:3 = sym.SliceChannel %x {num_outputs = 2 : i64} : (tensor<2x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @flatten_output(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{provided [2,11], inferred [2,12]}}
  %0 = sym.Flatten %x : (tensor<2x3x4xf32>) -> tensor<2x11xf32>
  return
}

// -----

func.func @reshape_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{target shape size is different to source. Target: [4,2] Source: [2,3]}}
  %0 = sym.Reshape %x {shape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_two_infer(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{One and only one dim can be inferred}}
  %0 = sym.Reshape %x {shape = array<i64: -1, -1>} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @reshape_split(%x: tensor<6xf32>) {
  // expected-error @+1 {{Split dims 4, 2 do not divide original dim 6}}
  %0 = sym.Reshape %x {shape = array<i64: -4, 4, 2>} : (tensor<6xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axes [0,0,1] are not a permutation}}
  %0 = sym.transpose %x {axes = array<i64: 0, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 4 is out of bounds for a 2-d input}}
  %0 = sym.expand_dims %x {axis = 4 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @swapaxis_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{dim2 5 is out of range for a 2-d input}}
  %0 = sym.SwapAxis %x {dim1 = 0 : i64, dim2 = 5 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @slice_axis_end(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{invalid end for end=7 as axis_size is 3}}
  %0 = sym.slice_axis %x {axis = 1 : i64, begin = 0 : i64, end = 7 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @embedding_weight(%x: tensor<4xf32>, %w: tensor<9x6xf32>) {
  // expected-error @+1 {{shape inconsistent for input 'weight': provided [9,6], inferred [10,6]}}
  %0 = sym.Embedding %x, %w {input_dim = 10 : i64, output_dim = 6 : i64} : (tensor<4xf32>, tensor<9x6xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @cast_dtype(%x: tensor<2xf32>) {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint}}
  %0 = sym.Cast %x {dtype = complex<f32>} : (tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @identity_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{shape inconsistent for output 0: provided [3,2], inferred [2,3]}}
  %0 = sym._copy %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @softmax_label(%x: tensor<4x10xf32>, %l: tensor<5xf32>) {
  // expected-error @+1 {{shape inconsistent for input 'label': provided [5], inferred [4]}}
  %0 = sym.SoftmaxOutput %x, %l : (tensor<4x10xf32>, tensor<5xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @softmax_length(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{requires a 'length' input when use_length = true}}
  %0 = sym.softmax %x {use_length = true} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @regression_label(%x: tensor<4x3xf32>, %l: tensor<4x2xf32>) {
  // expected-error @+1 {{shape inconsistent, provided [4,2], inferred shape [4,3]}}
  %0 = sym.LinearRegressionOutput %x, %l : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @elemwise_shapes(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{shape inconsistent for input 'rhs': provided [3,2], inferred [2,3]}}
  %0 = sym.elemwise_add %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @broadcast_shapes(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operands could not be broadcast together with shapes [2,3] [4]}}
  %0 = sym.broadcast_mul %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @add_n_args(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{has 2 inputs but num_args is 3}}
  %0 = sym.add_n %a, %a {num_args = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @reduce_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction axis exceeds input dimensions [2,3]}}
  %0 = sym.sum %a {axis = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @reduce_duplicate(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction axes have duplicates}}
  %0 = sym.mean %a {axis = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @dot_shapes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{dot shape error: [2,3] X [4,5]}}
  %0 = sym.dot %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @batch_dot_rank(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{batch_dot currently only support N-D*N-D array (N >= 3)}}
  %0 = sym.batch_dot %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @zeros_shape() {
  // expected-error @+1 {{shape inconsistent for output 0: provided [3,4], inferred [-1,5]}}
  %0 = sym._zeros {shape = array<i64: 0, 5>} : () -> tensor<3x4xf32>
  return
}

// -----

func.func @topk_results(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{ret_typ indices has 1 results, got 2}}
  %0:2 = sym.topk %a {k = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @pick_without_axis(%a: tensor<2x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{axis=None is not supported by pick yet. Must specify an axis.}}
  %0 = sym.pick %a, %i {axis = -9223372036854775808 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @rnn_without_cell(%x: tensor<5x2x3xf32>, %w: tensor<144xf32>, %h: tensor<1x2x4xf32>) {
  // expected-error @+1 {{Input shape mismatch. Expected 4 input parameters but got 3.}}
  %0 = sym.RNN %x, %w, %h {mode = "lstm", num_layers = 1 : i64, state_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<144xf32>, tensor<1x2x4xf32>) -> tensor<5x2x4xf32>
  return
}

// -----

func.func @gru_projection(%x: tensor<5x2x3xf32>, %w: tensor<92xf32>, %h: tensor<1x2x2xf32>) {
  // expected-error @+1 {{Projection is only supported for LSTM.}}
  %0 = sym.RNN %x, %w, %h {mode = "gru", num_layers = 1 : i64, state_size = 4 : i64, projection_size = 2 : i64} : (tensor<5x2x3xf32>, tensor<92xf32>, tensor<1x2x2xf32>) -> tensor<5x2x2xf32>
  return
}

// -----

func.func @lstm_clip_min_only(%x: tensor<5x2x3xf32>, %w: tensor<144xf32>, %h: tensor<1x2x4xf32>) {
  // expected-error @+1 {{lstm_state_clip_min and lstm_state_clip_max must be specified together.}}
  %0 = sym.RNN %x, %w, %h, %h {mode = "lstm", num_layers = 1 : i64, state_size = 4 : i64, lstm_state_clip_min = -1.0 : f64} : (tensor<5x2x3xf32>, tensor<144xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<5x2x4xf32>
  return
}

// -----

func.func @log_softmax_with_length(%a: tensor<2x3xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{takes no length in MXNet 1.9: use_length must be false}}
  %0 = sym.log_softmax %a, %l {use_length = true} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @crop_outside(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{offset[1] should be less than the residual space of width}}
  %0 = sym.Crop %x {num_args = 1 : i64, h_w = array<i64: 4, 4>, offset = array<i64: 1, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @norm_ord3(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{norm only supports ord=1 and ord=2, got ord=3}}
  %0 = sym.norm %a {ord = 3 : i64} : (tensor<2x3xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @pool_nhwc_rank(%x: tensor<*xf32>) {
  // expected-error @+1 {{layout NHWC needs a 2-d kernel, got 3 dims}}
  %0 = sym.Pooling %x {kernel = array<i64: 2, 2, 2>, layout = "NHWC"} : (tensor<*xf32>) -> tensor<*xf32>
  return
}
