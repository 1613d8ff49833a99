//===- SymOps.td - sym dialect ops -------------------------*- tablegen -*-===//
//
// Attribute names, defaults and input/output names follow MXNet 1.9.1
// (shared/mxnet-semantics.md section 5.2). Shape rules live in
// ShapeInference.cpp; each op's `inferShapes` is MXNet's FInferShape.
//
//===----------------------------------------------------------------------===//
#ifndef SYM_OPS_TD
#define SYM_OPS_TD

include "dialects/Sym/IR/SymBase.td"
include "dialects/Sym/IR/SymInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Sym_Op<string mnemonic, list<Trait> traits = [], list<string> overrides = []>
    : Op<Sym_Dialect, mnemonic, !listconcat(
          [DeclareOpInterfaceMethods<Sym_ShapeInferenceOpInterface, overrides>], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Ops computing each element from their operands' at its position
// (mlir::sym::Elementwise; MLIR's own Elementwise trait would reject the
// unranked types of imported IR).
def Sym_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::mlir::sym";
}

// Ops whose inputs and outputs all share one shape (MXNet's ElemwiseShape).
class Sym_SameShapeOp<string mnemonic, list<Trait> traits = [], list<string> overrides = []>
    : Sym_Op<mnemonic, traits, overrides> {
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferSameShape(ctx);
    }
  }];
}

class Sym_UnaryOp<string mnemonic, string doc> : Sym_SameShapeOp<mnemonic, [Pure, Sym_Elementwise]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$data);
  let results = (outs AnyTensor:$output);
}

class Sym_ElemwiseBinaryOp<string mnemonic, string doc> : Sym_SameShapeOp<mnemonic, [Pure, Sym_Elementwise]> {
  let summary = doc # " of two tensors of equal shape";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$output);
}

class Sym_BroadcastBinaryOp<string mnemonic, string doc> : Sym_Op<mnemonic, [Pure]> {
  let summary = doc # " with numpy broadcasting";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferBroadcastShape(ctx);
    }
  }];
}

class Sym_ScalarOp<string mnemonic, string doc> : Sym_SameShapeOp<mnemonic, [Pure, Sym_Elementwise]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$scalar,
                   DefaultValuedAttr<BoolAttr, "true">:$is_int);
  let results = (outs AnyTensor:$output);
}

// Loss heads: identity (or sigmoid) forward, a label input, and a gradient
// that ignores the head gradient.
class Sym_RegressionOutputOp<string mnemonic, string doc> : Sym_Op<mnemonic, [Pure]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$data, AnyTensor:$label,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$grad_scale);
  let results = (outs AnyTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferRegressionOutputShape(ctx);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Neural-network layers
//===----------------------------------------------------------------------===//

def Sym_FullyConnectedOp : Sym_Op<"FullyConnected", [Pure]> {
  let summary = "out = data · weightᵀ + bias";
  let arguments = (ins AnyTensor:$data, AnyTensor:$weight, Optional<AnyTensor>:$bias,
                   Sym_PositiveIntAttr:$num_hidden,
                   DefaultValuedAttr<BoolAttr, "false">:$no_bias,
                   DefaultValuedAttr<BoolAttr, "true">:$flatten);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

/// Where a convolution's (or its gradient's) data holds the channels and
/// the spatial dims, by its layout.
defvar Sym_ConvolutionLayout = [{
    bool isChannelsLast() { return getLayout() == "NHWC"; }
    /// The dim of data (and of the output) that holds the channels.
    unsigned channelDim() { return isChannelsLast() ? getKernel().size() + 1 : 1; }
    /// The dim of data (and of the output) that holds spatial dim `i`.
    unsigned spatialDim(unsigned i) { return isChannelsLast() ? 1 + i : 2 + i; }
}];

def Sym_ConvolutionOp : Sym_Op<"Convolution", [Pure]> {
  let summary = "1-D/2-D/3-D grouped, dilated convolution (NCW/NCHW/NCDHW, or NHWC)";
  let description = [{
    Channels-first, the weight is (num_filter, C / num_group, k...). With
    layout NHWC (a 2-d kernel), data is (N, H, W, C), the weight
    (num_filter, kh, kw, C / num_group) and the output (N, H', W', num_filter),
    as MXNet lays them out; the CPU backend also picks it for layers it runs
    faster channels-last (sym-channels-last).
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$weight, Optional<AnyTensor>:$bias,
                   DenseI64ArrayAttr:$kernel,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilate,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   Sym_PositiveIntAttr:$num_filter,
                   DefaultValuedAttr<Sym_PositiveIntAttr, "1">:$num_group,
                   DefaultValuedAttr<Sym_IntAttr, "1024">:$workspace,
                   DefaultValuedAttr<BoolAttr, "false">:$no_bias,
                   OptionalAttr<Sym_StrEnumAttr<["off", "limited_workspace", "fastest"]>>:$cudnn_tune,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = Sym_ConvolutionLayout;
}

def Sym_DeconvolutionOp : Sym_Op<"Deconvolution", [Pure]> {
  let summary = "transposed convolution: Convolution's data gradient as a layer";
  let description = [{
    weight is (C, num_filter / num_group, k...) for C input channels. Each
    output dim is stride (x - 1) + dilated kernel - 2 pad + adj; a
    target_shape sets pad and adj instead.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$weight, Optional<AnyTensor>:$bias,
                   DenseI64ArrayAttr:$kernel,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilate,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$adj,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$target_shape,
                   Sym_PositiveIntAttr:$num_filter,
                   DefaultValuedAttr<Sym_PositiveIntAttr, "1">:$num_group,
                   DefaultValuedAttr<Sym_IntAttr, "512">:$workspace,
                   DefaultValuedAttr<BoolAttr, "true">:$no_bias,
                   OptionalAttr<Sym_StrEnumAttr<["off", "limited_workspace", "fastest"]>>:$cudnn_tune,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The pad and adj of each spatial dim for input spatial dims `input`.
    std::pair<llvm::SmallVector<int64_t>, llvm::SmallVector<int64_t>> getPadAndAdj(llvm::ArrayRef<int64_t> input);
  }];
}

def Sym_PoolingOp : Sym_Op<"Pooling", [Pure]> {
  let summary = "max/avg/sum/lp pooling with MXNet's size conventions";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$kernel,
                   DefaultValuedAttr<Sym_StrEnumAttr<["max", "avg", "sum", "lp"]>, "\"max\"">:$pool_type,
                   DefaultValuedAttr<BoolAttr, "false">:$global_pool,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   DefaultValuedAttr<Sym_StrEnumAttr<["valid", "full", "same"]>, "\"valid\"">:$pooling_convention,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   OptionalAttr<Sym_IntAttr>:$p_value,
                   OptionalAttr<BoolAttr>:$count_include_pad,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// NHWC: data (N, H, W, C), as MXNet's GPU build pools it.
    bool isChannelsLast() { return getLayout() == "NHWC"; }
    /// The dim of data (and of the output) that holds spatial dim `i`.
    unsigned spatialDim(unsigned i) { return isChannelsLast() ? 1 + i : 2 + i; }
  }];
}

def Sym_AdaptiveAvgPooling2DOp : Sym_Op<"_contrib_AdaptiveAvgPooling2D", [Pure]> {
  let summary = "average pooling to an output size, over bins that cover the input";
  let description = [{
    Output row o averages input rows [floor(o H / OH), ceil((o + 1) H / OH));
    likewise for columns. output_size: empty for 1x1, one value for a square.
  }];
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$output_size);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_BilinearResize2DOp : Sym_Op<"_contrib_BilinearResize2D", [Pure]> {
  let summary = "bilinear resampling of the last two dims";
  let description = [{
    The output size: height and width, or the input's scaled (mode size);
    see MXNet for the other modes; like takes a second input's size.
    align_corners maps the corner pixels onto each other, otherwise pixel
    centers are scaled.
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$like,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$height,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$width,
                   OptionalAttr<Sym_FloatAttr>:$scale_height,
                   OptionalAttr<Sym_FloatAttr>:$scale_width,
                   DefaultValuedAttr<Sym_StrEnumAttr<["size", "odd_scale", "like", "to_even_down", "to_even_up",
                                                      "to_odd_down", "to_odd_up"]>, "\"size\"">:$mode,
                   DefaultValuedAttr<BoolAttr, "true">:$align_corners);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_ActivationOp : Sym_SameShapeOp<"Activation", [Pure, Sym_Elementwise]> {
  let summary = "relu, sigmoid, tanh, softrelu or softsign";
  let arguments = (ins AnyTensor:$data,
                   Sym_StrEnumAttr<["relu", "sigmoid", "tanh", "softrelu", "softsign"]>:$act_type);
  let results = (outs AnyTensor:$output);
}

def Sym_LeakyReLUOp : Sym_Op<"LeakyReLU", [Pure]> {
  let summary = "leaky, prelu, rrelu, elu, selu or gelu";
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$gamma,
                   DefaultValuedAttr<Sym_StrEnumAttr<["rrelu", "leaky", "prelu", "elu", "selu", "gelu"]>, "\"leaky\"">:$act_type,
                   DefaultValuedAttr<Sym_FloatAttr, "0.25">:$slope,
                   DefaultValuedAttr<Sym_FloatAttr, "0.125">:$lower_bound,
                   DefaultValuedAttr<Sym_FloatAttr, "0.334">:$upper_bound);
  let results = (outs AnyTensor:$output, Optional<AnyTensor>:$mask);
  let hasVerifier = 1;
}

def Sym_BatchNormOp : Sym_Op<"BatchNorm", [Pure]> {
  let summary = "batch normalization; moving_mean/moving_var are aux states";
  let arguments = (ins AnyTensor:$data, AnyTensor:$gamma, AnyTensor:$beta,
                   AnyTensor:$moving_mean, AnyTensor:$moving_var,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-3">:$eps,
                   DefaultValuedAttr<Sym_FloatAttr, "0.9">:$momentum,
                   DefaultValuedAttr<BoolAttr, "true">:$fix_gamma,
                   DefaultValuedAttr<BoolAttr, "false">:$use_global_stats,
                   DefaultValuedAttr<BoolAttr, "false">:$output_mean_var,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_FloatAttr>:$min_calib_range,
                   OptionalAttr<Sym_FloatAttr>:$max_calib_range);
  let results = (outs AnyTensor:$output, AnyTensor:$mean, AnyTensor:$var);
}

def Sym_LayerNormOp : Sym_Op<"LayerNorm", [Pure]> {
  let summary = "normalization over `axis`, scaled by gamma and shifted by beta";
  let description = [{
    gamma and beta have the size of `axis`; the mean and std results
    (sqrt(var + eps)) have data's shape with `axis` of size 1.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$gamma, AnyTensor:$beta,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-5">:$eps,
                   DefaultValuedAttr<BoolAttr, "false">:$output_mean_var);
  let results = (outs AnyTensor:$output, AnyTensor:$mean, AnyTensor:$std);
}

def Sym_L2NormalizationOp : Sym_Op<"L2Normalization", [Pure]> {
  let summary = "data divided by its L2 norm over each instance, channel or spatial plane";
  let description = [{
    norm = sqrt(sum(data^2) + eps) over all dims but the first (instance;
    norm shape (n)), over dim 1 (channel; data's shape with 1 channel) or
    over dims 2... (spatial; norm shape (n, c)).
  }];
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-10">:$eps,
                   DefaultValuedAttr<Sym_StrEnumAttr<["instance", "spatial", "channel"]>, "\"instance\"">:$mode);
  let results = (outs AnyTensor:$output, AnyTensor:$norm);
}

def Sym_InstanceNormOp : Sym_Op<"InstanceNorm", [Pure]> {
  let summary = "normalization over each (instance, channel)'s spatial dims";
  let description = [{
    For data (n, c, ...), the mean and biased variance over the dims after
    the channel: out = gamma[c] * (x - mean) / sqrt(var + eps) + beta[c].
    mean and var, of shape (n, c), are hidden results.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$gamma, AnyTensor:$beta,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-3">:$eps);
  let results = (outs AnyTensor:$output, AnyTensor:$mean, AnyTensor:$var);
}

def Sym_DropoutOp : Sym_Op<"Dropout"> {
  let summary = "inverted dropout in training (or always); identity otherwise";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "0.5">:$p,
                   DefaultValuedAttr<Sym_StrEnumAttr<["training", "always"]>, "\"training\"">:$mode,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off);
  let results = (outs AnyTensor:$output, AnyTensor:$mask);
  let hasVerifier = 1;
}

def Sym_LRNOp : Sym_Op<"LRN", [Pure]> {
  let summary = "local response normalization across channels";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-4">:$alpha,
                   DefaultValuedAttr<Sym_FloatAttr, "0.75">:$beta,
                   DefaultValuedAttr<Sym_FloatAttr, "2.0">:$knorm,
                   Sym_PositiveIntAttr:$nsize);
  let results = (outs AnyTensor:$output, AnyTensor:$tmp_norm);
}

def Sym_UpSamplingOp : Sym_Op<"UpSampling", [Pure]> {
  let summary = "nearest (or bilinear) upsampling by an integer scale";
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                   Sym_PositiveIntAttr:$scale,
                   DefaultValuedAttr<Sym_NonNegativeIntAttr, "0">:$num_filter,
                   Sym_StrEnumAttr<["nearest", "bilinear"]>:$sample_type,
                   DefaultValuedAttr<Sym_StrEnumAttr<["concat", "sum"]>, "\"concat\"">:$multi_input_mode,
                   Sym_PositiveIntAttr:$num_args,
                   DefaultValuedAttr<Sym_IntAttr, "512">:$workspace);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bilinear upsampling is MXNet's Deconvolution by the weight input with
    /// this kernel, stride = scale, this pad and one group per channel.
    int64_t getBilinearKernel() { return 2 * getScale() - getScale() % 2; }
    int64_t getBilinearPad() { return getScale() / 2; } // ceil((scale - 1) / 2)
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Sym_PadOp : Sym_Op<"Pad", [Pure]> {
  let summary = "pads the spatial dims of a 4-d or 5-d tensor";
  let description = [{
    pad_width holds (before, after) per dim, zero for the first two dims.
    constant: constant_value; edge: the nearest element; reflect: the
    mirror image without the edge (pads smaller than the dim).
  }];
  let arguments = (ins AnyTensor:$data,
                   Sym_StrEnumAttr<["constant", "edge", "reflect"]>:$mode,
                   DenseI64ArrayAttr:$pad_width,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$constant_value);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_ConcatOp : Sym_Op<"Concat", [Pure]> {
  let summary = "concatenation along `dim`";
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                   Sym_PositiveIntAttr:$num_args,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$dim);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_SliceChannelOp : Sym_Op<"SliceChannel", [Pure]> {
  let summary = "split into `num_outputs` equal parts along `axis`";
  let arguments = (ins AnyTensor:$data,
                   Sym_PositiveIntAttr:$num_outputs,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$squeeze_axis);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let hasVerifier = 1;
}

def Sym_FlattenOp : Sym_Op<"Flatten", [Pure]> {
  let summary = "(N, ...) -> (N, prod(...))";
  let arguments = (ins AnyTensor:$data);
  let results = (outs AnyTensor:$output);
}

def Sym_ReshapeOp : Sym_Op<"Reshape", [Pure]> {
  let summary = "reshape with MXNet's special codes 0, -1, -2, -3, -4";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$target_shape,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_highest);
  let results = (outs AnyTensor:$output);
}

def Sym_TransposeOp : Sym_Op<"transpose", [Pure]> {
  let summary = "permute axes (reversed when `axes` is empty)";
  let arguments = (ins AnyTensor:$data, DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs AnyTensor:$output);
}

def Sym_ExpandDimsOp : Sym_Op<"expand_dims", [Pure]> {
  let summary = "insert a unit axis at `axis`";
  let arguments = (ins AnyTensor:$data, Sym_IntAttr:$axis);
  let results = (outs AnyTensor:$output);
}

def Sym_SwapAxisOp : Sym_Op<"SwapAxis", [Pure]> {
  let summary = "swap two axes";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$dim1,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$dim2);
  let results = (outs AnyTensor:$output);
}

def Sym_SliceAxisOp : Sym_Op<"slice_axis", [Pure]> {
  let summary = "the range [begin, end) along one axis";
  let arguments = (ins AnyTensor:$data, Sym_IntAttr:$axis, Sym_IntAttr:$begin,
                   OptionalAttr<Sym_IntAttr>:$end);
  let results = (outs AnyTensor:$output);
}

def Sym_SliceOp : Sym_Op<"slice", [Pure]> {
  let summary = "a strided region: per leading dim, [begin, end) by step";
  let description = [{
    begin, end and step have one entry per sliced dim; an entry that is
    `sym::kNone` (MXNet's None) takes numpy's default for the step's sign.
  }];
  let arguments = (ins AnyTensor:$data, DenseI64ArrayAttr:$begin, DenseI64ArrayAttr:$end,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$step);
  let results = (outs AnyTensor:$output);
}

def Sym_CropOp : Sym_Op<"Crop", [Pure]> {
  let summary = "a (h, w) window of 4-d data, of h_w's or crop_like's size";
  let description = [{
    The window starts at `offset` (y, x), or is centered with
    `center_crop`. With num_args = 2 the second input gives the size.
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$crop_like,
                   Sym_PositiveIntAttr:$num_args,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$offset,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$h_w,
                   DefaultValuedAttr<BoolAttr, "false">:$center_crop);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The window's (y, x) origin in data of `dataShape` for an output of
    /// `outShape`.
    std::pair<int64_t, int64_t> windowOrigin(::llvm::ArrayRef<int64_t> dataShape,
                                             ::llvm::ArrayRef<int64_t> outShape);
  }];
}

def Sym_SliceLikeOp : Sym_Op<"slice_like", [Pure]> {
  let summary = "data's leading region of shape_like's size along `axes` (all if empty)";
  let arguments = (ins AnyTensor:$data, AnyTensor:$shape_like,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs AnyTensor:$output);
}

def Sym_ArgsortOp : Sym_Op<"argsort", [Pure], ["inferResultElementType"]> {
  let summary = "the indices that sort data along `axis` (sym::kNone: the flattened data)";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$is_ascend,
                   OptionalAttr<Sym_DTypeAttr>:$dtype);
  let results = (outs AnyTensor:$output);
}

// RNN's parameters, which its backward op repeats.
defvar Sym_RNNParams = (ins Sym_PositiveIntAttr:$state_size,
                        Sym_PositiveIntAttr:$num_layers,
                        DefaultValuedAttr<BoolAttr, "false">:$bidirectional,
                        Sym_StrEnumAttr<["rnn_relu", "rnn_tanh", "lstm", "gru"]>:$mode,
                        DefaultValuedAttr<Sym_FloatAttr, "0.0">:$p,
                        DefaultValuedAttr<BoolAttr, "false">:$state_outputs,
                        OptionalAttr<Sym_IntAttr>:$projection_size,
                        OptionalAttr<Sym_FloatAttr>:$lstm_state_clip_min,
                        OptionalAttr<Sym_FloatAttr>:$lstm_state_clip_max,
                        DefaultValuedAttr<BoolAttr, "false">:$lstm_state_clip_nan,
                        DefaultValuedAttr<BoolAttr, "false">:$use_sequence_length);
defvar Sym_RNNHelpers = [{
    bool isLstm() { return getMode() == "lstm"; }
    int64_t numDirections() { return getBidirectional() ? 2 : 1; }
    /// The rows of each weight matrix and bias: the gates times state_size.
    int64_t gateRows() {
      int64_t gates = getMode() == "lstm" ? 4 : getMode() == "gru" ? 3 : 1;
      return gates * getStateSize();
    }
}];

def Sym_RNNOp : Sym_Op<"RNN", [Pure]> {
  let summary = "MXNet's fused multi-layer RNN, LSTM or GRU over time-major data (T, N, I)";
  let description = [{
    `parameters` is MXNet's flat vector: every layer's and direction's
    i2h then h2h weight, then every layer's and direction's i2h then h2h
    bias. `extra` holds state_cell (lstm) then sequence_length
    (use_sequence_length); the shape rule checks the count, as MXNet's
    does. Results: the output, then with state_outputs the final state and
    (lstm) the final cell state.
  }];
  let arguments = !con((ins AnyTensor:$data, AnyTensor:$parameters, AnyTensor:$state,
                            Variadic<AnyTensor>:$extra), Sym_RNNParams);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let hasVerifier = 1;
  let extraClassDeclaration = Sym_RNNHelpers # [{
    ::mlir::Value getStateCell() { return isLstm() ? getExtra()[0] : ::mlir::Value(); }
    ::mlir::Value getSequenceLength() { return getUseSequenceLength() ? getExtra().back() : ::mlir::Value(); }
  }];
}

def Sym_TopkOp : Sym_Op<"topk", [Pure], ["inferResultElementType"]> {
  let summary = "the k largest (smallest if is_ascend) along `axis` (sym::kNone: the flattened data)";
  let description = [{
    ret_typ value and both have two results, the values and the indices
    (hidden for value: int32, as MXNet's int32 index_t build has them);
    indices and mask have one. k < 1 takes the whole axis.
  }];
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$k,
                   DefaultValuedAttr<Sym_StrEnumAttr<["value", "indices", "mask", "both"]>, "\"indices\"">:$ret_typ,
                   DefaultValuedAttr<BoolAttr, "false">:$is_ascend,
                   OptionalAttr<Sym_DTypeAttr>:$dtype);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let hasVerifier = 1;
}

def Sym_SortOp : Sym_Op<"sort", [Pure], ["inferResultElementType"]> {
  let summary = "data sorted along `axis` (sym::kNone: flattened), and the hidden int32 indices";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$is_ascend);
  let results = (outs AnyTensor:$output, AnyTensor:$indices);
}

class Sym_SearchAxisOp<string mnemonic, string doc> : Sym_Op<mnemonic, [Pure]> {
  let summary = "the index of the first " # doc # " along `axis` (all elements when absent), in data's type";
  let arguments = (ins AnyTensor:$data,
                   OptionalAttr<Sym_IntAttr>:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs AnyTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferSearchAxisShape(ctx, getAxis(), getKeepdims());
    }
  }];
}
def Sym_ArgmaxOp : Sym_SearchAxisOp<"argmax", "maximum">;
def Sym_ArgminOp : Sym_SearchAxisOp<"argmin", "minimum">;

def Sym_PickOp : Sym_Op<"pick", [Pure]> {
  let summary = "out[..., ...] = data[..., index[..., ...], ...] along `axis`, clipped or wrapped";
  let arguments = (ins AnyTensor:$data, AnyTensor:$index,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims,
                   DefaultValuedAttr<Sym_StrEnumAttr<["wrap", "clip"]>, "\"clip\"">:$mode);
  let results = (outs AnyTensor:$output);
}

def Sym_TakeOp : Sym_Op<"take", [Pure]> {
  let summary = "slices of `a` along `axis` at `indices`: out shape a[:axis] + indices + a[axis+1:]";
  let description = [{
    mode raise checks the indices where it runs (sym::runTimeCheckMessage):
    the run fails with MXNet's error where one is outside [0, n).
  }];
  let arguments = (ins AnyTensor:$a, AnyTensor:$indices,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis,
                   DefaultValuedAttr<Sym_StrEnumAttr<["raise", "wrap", "clip"]>, "\"clip\"">:$mode);
  let results = (outs AnyTensor:$output);
}

def Sym_OneHotOp : Sym_Op<"one_hot", [Pure], ["inferResultElementType"]> {
  let summary = "indices + (depth,): on_value where the last index equals the (truncated) index, else off_value";
  let arguments = (ins AnyTensor:$indices,
                   Sym_IntAttr:$depth,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$on_value,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$off_value,
                   OptionalAttr<Sym_DTypeAttr>:$dtype);
  let results = (outs AnyTensor:$output);
}

def Sym_BroadcastLikeOp : Sym_Op<"broadcast_like", [Pure]> {
  let summary = "lhs broadcast to rhs's shape (or along lhs_axes to rhs's rhs_axes sizes)";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   OptionalAttr<DenseI64ArrayAttr>:$lhs_axes,
                   OptionalAttr<DenseI64ArrayAttr>:$rhs_axes);
  let results = (outs AnyTensor:$output);
}

def Sym_GatherNdOp : Sym_Op<"gather_nd", [Pure]> {
  let summary = "data at the positions indices' first dim lists: out[y...] = data[indices[:, y...], ...]";
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices);
  let results = (outs AnyTensor:$output);
}

def Sym_TileOp : Sym_Op<"tile", [Pure]> {
  let summary = "data repeated `reps` times along each dim (numpy's tile)";
  let arguments = (ins AnyTensor:$data, DenseI64ArrayAttr:$reps);
  let results = (outs AnyTensor:$output);
}

def Sym_RepeatOp : Sym_Op<"repeat", [Pure]> {
  let summary = "each element `repeats` times along `axis` (of the flattened data without)";
  let arguments = (ins AnyTensor:$data, Sym_PositiveIntAttr:$repeats, OptionalAttr<Sym_IntAttr>:$axis);
  let results = (outs AnyTensor:$output);
}

def Sym_ReverseOp : Sym_SameShapeOp<"reverse", [Pure]> {
  let summary = "the order of the elements along `axis` reversed";
  let arguments = (ins AnyTensor:$data, DenseI64ArrayAttr:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_SqueezeOp : Sym_Op<"squeeze", [Pure]> {
  let summary = "size-1 dims `axis` (all when absent) removed";
  let arguments = (ins AnyTensor:$data, OptionalAttr<DenseI64ArrayAttr>:$axis);
  let results = (outs AnyTensor:$output);
}

def Sym_StackOp : Sym_Op<"stack", [Pure]> {
  let summary = "`num_args` tensors of one shape joined along a new `axis`";
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                   Sym_PositiveIntAttr:$num_args,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_BroadcastAxisOp : Sym_Op<"broadcast_axis", [Pure]> {
  let summary = "size-1 dims `axis` repeated to `size`";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axis,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$size);
  let results = (outs AnyTensor:$output);
}

def Sym_BroadcastToOp : Sym_Op<"broadcast_to", [Pure]> {
  let summary = "size-1 dims repeated to `shape` (a 0 keeps the dim)";
  let arguments = (ins AnyTensor:$data, DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$shape);
  let results = (outs AnyTensor:$output);
}

def Sym_SequenceMaskOp : Sym_Op<"SequenceMask", [Pure]> {
  let summary = "`value` at the steps past each sequence's length";
  let description = [{
    The steps are along `axis` (0 or 1), the batch along the other of the
    two; sequence_length holds one length per batch entry.
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$sequence_length,
                   DefaultValuedAttr<BoolAttr, "false">:$use_sequence_length,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$value,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_SequenceLastOp : Sym_Op<"SequenceLast", [Pure]> {
  let summary = "each sequence's last step: along `axis` (0 or 1) at its length - 1, or the last";
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$sequence_length,
                   DefaultValuedAttr<BoolAttr, "false">:$use_sequence_length,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_SequenceReverseOp : Sym_Op<"SequenceReverse", [Pure]> {
  let summary = "each sequence's first `length` steps (all without lengths) reversed along axis 0";
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$sequence_length,
                   DefaultValuedAttr<BoolAttr, "false">:$use_sequence_length,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Lookup, casts and identities
//===----------------------------------------------------------------------===//

def Sym_EmbeddingOp : Sym_Op<"Embedding", [Pure], ["inferResultElementType"]> {
  let summary = "rows of `weight` picked by (clipped) integer indices";
  let arguments = (ins AnyTensor:$data, AnyTensor:$weight,
                   Sym_PositiveIntAttr:$input_dim,
                   Sym_PositiveIntAttr:$output_dim,
                   OptionalAttr<Sym_DTypeAttr>:$dtype,
                   DefaultValuedAttr<BoolAttr, "false">:$sparse_grad);
  let results = (outs AnyTensor:$output);
}

def Sym_CastOp : Sym_SameShapeOp<"Cast", [Pure, Sym_Elementwise], ["inferResultElementType"]> {
  let summary = "element type conversion";
  let arguments = (ins AnyTensor:$data, Sym_DTypeAttr:$dtype);
  let results = (outs AnyTensor:$output);
}

def Sym_CopyOp : Sym_UnaryOp<"_copy", "identity copy">;
def Sym_BlockGradOp : Sym_UnaryOp<"BlockGrad", "identity that stops gradients">;
def Sym_IdentityLossOp : Sym_UnaryOp<"make_loss", "identity whose gradient is ones">;

def Sym_MakeLossOp : Sym_SameShapeOp<"MakeLoss", [Pure]> {
  let summary = "identity loss head with a scaled constant gradient";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$grad_scale,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$valid_thresh,
                   DefaultValuedAttr<Sym_StrEnumAttr<["null", "batch", "valid"]>, "\"null\"">:$normalization);
  let results = (outs AnyTensor:$output);
}

//===----------------------------------------------------------------------===//
// Softmax family and loss heads
//===----------------------------------------------------------------------===//

def Sym_SoftmaxOutputOp : Sym_Op<"SoftmaxOutput", [Pure]> {
  let summary = "softmax with a cross-entropy gradient against `label`";
  let arguments = (ins AnyTensor:$data, AnyTensor:$label,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$grad_scale,
                   DefaultValuedAttr<Sym_FloatAttr, "-1.0">:$ignore_label,
                   DefaultValuedAttr<BoolAttr, "false">:$multi_output,
                   DefaultValuedAttr<BoolAttr, "false">:$use_ignore,
                   DefaultValuedAttr<BoolAttr, "false">:$preserve_shape,
                   DefaultValuedAttr<Sym_StrEnumAttr<["null", "batch", "valid"]>, "\"null\"">:$normalization,
                   DefaultValuedAttr<BoolAttr, "false">:$out_grad,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$smooth_alpha);
  let results = (outs AnyTensor:$output);
}

def Sym_SoftmaxActivationOp : Sym_SameShapeOp<"SoftmaxActivation", [Pure]> {
  let summary = "softmax over the instance (flattened) or channel axis";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_StrEnumAttr<["instance", "channel"]>, "\"instance\"">:$mode);
  let results = (outs AnyTensor:$output);
}

// log_softmax shares softmax's parameters, use_length included, but MXNet 1.9
// registers it with the one input `data`: a length is refused.
class Sym_SoftmaxLikeOp<string mnemonic, string doc, bit takesLength>
    : Sym_Op<mnemonic, [Pure], ["inferResultElementType"]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$length,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   OptionalAttr<Sym_FloatAttr>:$temperature,
                   OptionalAttr<Sym_DTypeAttr>:$dtype,
                   DefaultValuedAttr<BoolAttr, "false">:$use_length);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferSoftmaxShape(ctx, getAxis(), getUseLength());
    }
    ::mlir::Type $cppClass::inferResultElementType(unsigned, ::llvm::ArrayRef<::mlir::Type> operandTypes) {
      return getDtype() ? *getDtype() : operandTypes.front();
    }
    ::mlir::LogicalResult $cppClass::verify() {
      if (!}] # !if(takesLength, "true", "false") # [{ && (getUseLength() || getLength()))
        return emitOpError("takes no length in MXNet 1.9: use_length must be false");
      return ::mlir::sym::verifyOptionalOperand(*this, getLength(), getUseLength(), "length", "use_length = true");
    }
  }];
}
def Sym_SoftmaxOp : Sym_SoftmaxLikeOp<"softmax", "softmax along `axis`", 1>;
def Sym_LogSoftmaxOp : Sym_SoftmaxLikeOp<"log_softmax", "log of softmax along `axis`", 0>;

def Sym_LinearRegressionOutputOp
    : Sym_RegressionOutputOp<"LinearRegressionOutput", "identity with an L2 loss gradient">;
def Sym_LogisticRegressionOutputOp
    : Sym_RegressionOutputOp<"LogisticRegressionOutput", "sigmoid with a logistic loss gradient">;
def Sym_MAERegressionOutputOp
    : Sym_RegressionOutputOp<"MAERegressionOutput", "identity with an L1 loss gradient">;

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

def Sym_ElemwiseAddOp : Sym_ElemwiseBinaryOp<"elemwise_add", "sum">;
def Sym_ElemwiseSubOp : Sym_ElemwiseBinaryOp<"elemwise_sub", "difference">;
def Sym_ElemwiseMulOp : Sym_ElemwiseBinaryOp<"elemwise_mul", "product">;
def Sym_ElemwiseDivOp : Sym_ElemwiseBinaryOp<"elemwise_div", "quotient">;
def Sym_MaximumOp : Sym_ElemwiseBinaryOp<"_maximum", "elementwise maximum">;
def Sym_MinimumOp : Sym_ElemwiseBinaryOp<"_minimum", "elementwise minimum">;

def Sym_BroadcastAddOp : Sym_BroadcastBinaryOp<"broadcast_add", "sum">;
def Sym_BroadcastSubOp : Sym_BroadcastBinaryOp<"broadcast_sub", "difference">;
def Sym_BroadcastMulOp : Sym_BroadcastBinaryOp<"broadcast_mul", "product">;
def Sym_BroadcastDivOp : Sym_BroadcastBinaryOp<"broadcast_div", "quotient">;
def Sym_BroadcastMaximumOp : Sym_BroadcastBinaryOp<"broadcast_maximum", "maximum">;
def Sym_BroadcastMinimumOp : Sym_BroadcastBinaryOp<"broadcast_minimum", "minimum">;

def Sym_PlusScalarOp : Sym_ScalarOp<"_plus_scalar", "data + scalar">;
def Sym_MinusScalarOp : Sym_ScalarOp<"_minus_scalar", "data - scalar">;
def Sym_RMinusScalarOp : Sym_ScalarOp<"_rminus_scalar", "scalar - data">;
def Sym_MulScalarOp : Sym_ScalarOp<"_mul_scalar", "data * scalar">;
def Sym_DivScalarOp : Sym_ScalarOp<"_div_scalar", "data / scalar">;
def Sym_RDivScalarOp : Sym_ScalarOp<"_rdiv_scalar", "scalar / data">;
def Sym_PowerScalarOp : Sym_ScalarOp<"_power_scalar", "data ** scalar">;

def Sym_AddNOp : Sym_SameShapeOp<"add_n", [Pure, Sym_Elementwise]> {
  let summary = "sum of `num_args` tensors of equal shape";
  let arguments = (ins Variadic<AnyTensor>:$inputs, Sym_PositiveIntAttr:$num_args);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_ExpOp : Sym_UnaryOp<"exp", "e ** x">;
def Sym_LogOp : Sym_UnaryOp<"log", "natural logarithm">;
def Sym_SqrtOp : Sym_UnaryOp<"sqrt", "square root">;
def Sym_SquareOp : Sym_UnaryOp<"square", "x * x">;
def Sym_AbsOp : Sym_UnaryOp<"abs", "absolute value">;
def Sym_SignOp : Sym_UnaryOp<"sign", "-1, 0 or 1 by the sign of x">;
def Sym_NegativeOp : Sym_UnaryOp<"negative", "-x">;
def Sym_SinOp : Sym_UnaryOp<"sin", "sine">;
def Sym_CosOp : Sym_UnaryOp<"cos", "cosine">;
def Sym_TanhOp : Sym_UnaryOp<"tanh", "hyperbolic tangent">;
def Sym_SigmoidOp : Sym_UnaryOp<"sigmoid", "1 / (1 + e ** -x)">;
def Sym_ReluOp : Sym_UnaryOp<"relu", "max(x, 0)">;
def Sym_FloorOp : Sym_UnaryOp<"floor", "largest integer <= x">;
def Sym_CeilOp : Sym_UnaryOp<"ceil", "smallest integer >= x">;
def Sym_RoundOp : Sym_UnaryOp<"round", "nearest integer, halves away from zero">;
def Sym_RintOp : Sym_UnaryOp<"rint", "nearest integer, halves down">;
def Sym_FixOp : Sym_UnaryOp<"fix", "x rounded towards zero">;
def Sym_TruncOp : Sym_UnaryOp<"trunc", "x rounded towards zero">;
def Sym_RsqrtOp : Sym_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Sym_ReciprocalOp : Sym_UnaryOp<"reciprocal", "1 / x">;
def Sym_ErfOp : Sym_UnaryOp<"erf", "the Gauss error function">;
def Sym_Log1pOp : Sym_UnaryOp<"log1p", "log(1 + x)">;
def Sym_Expm1Op : Sym_UnaryOp<"expm1", "e ** x - 1">;
def Sym_Log2Op : Sym_UnaryOp<"log2", "base-2 logarithm">;
def Sym_Log10Op : Sym_UnaryOp<"log10", "base-10 logarithm">;
def Sym_TanOp : Sym_UnaryOp<"tan", "tangent">;
def Sym_ArctanOp : Sym_UnaryOp<"arctan", "inverse tangent">;
def Sym_SinhOp : Sym_UnaryOp<"sinh", "hyperbolic sine">;
def Sym_CoshOp : Sym_UnaryOp<"cosh", "hyperbolic cosine">;
def Sym_ZerosLikeOp : Sym_UnaryOp<"zeros_like", "zeros of the input's shape and type">;
def Sym_OnesLikeOp : Sym_UnaryOp<"ones_like", "ones of the input's shape and type">;

// Comparisons give 1 where they hold and 0 elsewhere, in the input's type.
def Sym_GreaterScalarOp : Sym_ScalarOp<"_greater_scalar", "data > scalar">;
def Sym_GreaterEqualScalarOp : Sym_ScalarOp<"_greater_equal_scalar", "data >= scalar">;
def Sym_LesserScalarOp : Sym_ScalarOp<"_lesser_scalar", "data < scalar">;
def Sym_LesserEqualScalarOp : Sym_ScalarOp<"_lesser_equal_scalar", "data <= scalar">;
def Sym_EqualScalarOp : Sym_ScalarOp<"_equal_scalar", "data == scalar">;
def Sym_NotEqualScalarOp : Sym_ScalarOp<"_not_equal_scalar", "data != scalar">;
def Sym_MaximumScalarOp : Sym_ScalarOp<"_maximum_scalar", "max(data, scalar)">;
def Sym_MinimumScalarOp : Sym_ScalarOp<"_minimum_scalar", "min(data, scalar)">;
def Sym_GreaterOp : Sym_ElemwiseBinaryOp<"_greater", "lhs > rhs">;
def Sym_GreaterEqualOp : Sym_ElemwiseBinaryOp<"_greater_equal", "lhs >= rhs">;
def Sym_LesserOp : Sym_ElemwiseBinaryOp<"_lesser", "lhs < rhs">;
def Sym_LesserEqualOp : Sym_ElemwiseBinaryOp<"_lesser_equal", "lhs <= rhs">;
def Sym_EqualOp : Sym_ElemwiseBinaryOp<"_equal", "lhs == rhs">;
def Sym_NotEqualOp : Sym_ElemwiseBinaryOp<"_not_equal", "lhs != rhs">;
def Sym_BroadcastGreaterOp : Sym_BroadcastBinaryOp<"broadcast_greater", "lhs > rhs">;
def Sym_BroadcastGreaterEqualOp : Sym_BroadcastBinaryOp<"broadcast_greater_equal", "lhs >= rhs">;
def Sym_BroadcastLesserOp : Sym_BroadcastBinaryOp<"broadcast_lesser", "lhs < rhs">;
def Sym_BroadcastLesserEqualOp : Sym_BroadcastBinaryOp<"broadcast_lesser_equal", "lhs <= rhs">;
def Sym_BroadcastEqualOp : Sym_BroadcastBinaryOp<"broadcast_equal", "lhs == rhs">;
def Sym_BroadcastNotEqualOp : Sym_BroadcastBinaryOp<"broadcast_not_equal", "lhs != rhs">;

def Sym_WhereOp : Sym_Op<"where", [Pure], ["inferResultElementType"]> {
  let summary = "x where condition is nonzero, else y";
  let description = [{
    condition has x's shape, or is a vector of x's first dim that picks
    whole rows.
  }];
  let arguments = (ins AnyTensor:$condition, AnyTensor:$x, AnyTensor:$y);
  let results = (outs AnyTensor:$output);
}

def Sym_ClipOp : Sym_SameShapeOp<"clip", [Pure, Sym_Elementwise]> {
  let summary = "clamp to [a_min, a_max]";
  let arguments = (ins AnyTensor:$data, Sym_FloatAttr:$a_min, Sym_FloatAttr:$a_max);
  let results = (outs AnyTensor:$output);
}

class Sym_ReduceOp<string mnemonic, string doc> : Sym_Op<mnemonic, [Pure]> {
  let summary = doc # " over `axis` (all axes when absent; the others when `exclude`)";
  let arguments = (ins AnyTensor:$data,
                   OptionalAttr<DenseI64ArrayAttr>:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude);
  let results = (outs AnyTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferReduceShape(ctx, getAxis(), getKeepdims(), getExclude());
    }
  }];
}
def Sym_SumOp : Sym_ReduceOp<"sum", "sum">;
def Sym_MeanOp : Sym_ReduceOp<"mean", "mean">;

def Sym_NormOp : Sym_Op<"norm", [Pure], ["inferResultElementType"]> {
  let summary = "the L1 or L2 norm over `axis` (all axes when absent)";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "2">:$ord,
                   OptionalAttr<DenseI64ArrayAttr>:$axis,
                   OptionalAttr<Sym_DTypeAttr>:$out_dtype,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferReduceShape(ctx, getAxis(), getKeepdims(), /*exclude=*/false);
    }
    ::mlir::Type $cppClass::inferResultElementType(unsigned, ::llvm::ArrayRef<::mlir::Type> operandTypes) {
      return getOutDtype() ? *getOutDtype() : operandTypes.front();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Sym_DotOp : Sym_Op<"dot", [Pure]> {
  let summary = "tensor dot product over lhs's last and rhs's first axis";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                   OptionalAttr<Sym_StrEnumAttr<["default", "row_sparse", "csr"]>>:$forward_stype);
  let results = (outs AnyTensor:$output);
}

def Sym_BatchDotOp : Sym_Op<"batch_dot", [Pure]> {
  let summary = "batched matrix product over the last two axes";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                   OptionalAttr<Sym_StrEnumAttr<["default", "row_sparse", "csr"]>>:$forward_stype);
  let results = (outs AnyTensor:$output);
}

def Sym_InterleavedMatmulSelfAttQKOp : Sym_Op<"_contrib_interleaved_matmul_selfatt_qk", [Pure]> {
  let summary = "multi-head self-attention scores q·kᵀ / sqrt(head_dim)";
  let description = [{
    queries_keys_values is (seq, batch, heads * 3 * head_dim), each head's
    query, key and value projections side by side; the result is
    (batch * heads, seq, seq).
  }];
  let arguments = (ins AnyTensor:$queries_keys_values, Sym_PositiveIntAttr:$heads);
  let results = (outs AnyTensor:$output);
}

def Sym_InterleavedMatmulSelfAttValAttOp : Sym_Op<"_contrib_interleaved_matmul_selfatt_valatt", [Pure]> {
  let summary = "multi-head self-attention output: attention · v per head";
  let description = [{
    attention is (batch * heads, seq, seq), the values are interleaved as
    for _contrib_interleaved_matmul_selfatt_qk; the result is
    (seq, batch, heads * head_dim).
  }];
  let arguments = (ins AnyTensor:$queries_keys_values, AnyTensor:$attention, Sym_PositiveIntAttr:$heads);
  let results = (outs AnyTensor:$output);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

class Sym_FillOp<string mnemonic, string doc>
    : Sym_Op<mnemonic, [Pure], ["inferResultElementType"]> {
  let summary = doc # "; a 0 in `shape` is a dim left to inference, dtype defaults to f32";
  let arguments = (ins DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$shape,
                   DefaultValuedAttr<StrAttr, "\"\"">:$ctx,
                   OptionalAttr<Sym_DTypeAttr>:$dtype);
  let results = (outs AnyTensor:$output);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ::mlir::sym::inferFillShape(ctx, getShape());
    }
    ::mlir::Type $cppClass::inferResultElementType(unsigned, ::llvm::ArrayRef<::mlir::Type>) {
      return ::mlir::sym::dtypeOrFloat32(getDtype(), getContext());
    }
  }];
}
def Sym_ZerosOp : Sym_FillOp<"_zeros", "a tensor of zeros">;
def Sym_OnesOp : Sym_FillOp<"_ones", "a tensor of ones">;

def Sym_ArangeOp : Sym_Op<"_arange", [Pure], ["inferResultElementType"]> {
  let summary = "start + (i / repeat) * step for ceil((stop - start) / step) * repeat elements";
  let description = [{
    Without `stop` (and infer_range false) the range is [0, start), as
    MXNet's RangeParamParser makes it; with infer_range and no stop, the
    length comes from the ops that use the result.
  }];
  let arguments = (ins Sym_FloatAttr:$start,
                   OptionalAttr<Sym_FloatAttr>:$stop,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$step,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$repeat,
                   DefaultValuedAttr<BoolAttr, "false">:$infer_range,
                   DefaultValuedAttr<StrAttr, "\"\"">:$ctx,
                   OptionalAttr<Sym_DTypeAttr>:$dtype);
  let results = (outs AnyTensor:$output);
  let extraClassDeclaration = [{
    /// The range's first value and end, after MXNet's RangeParamParser.
    double getFirst() { return getStop() || getInferRange() ? getStart() : 0.0; }
    std::optional<double> getEnd() {
      if (getStop() || getInferRange())
        return getStop();
      return getStart();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Detection
//===----------------------------------------------------------------------===//

def Sym_BoxNmsOp : Sym_Op<"_contrib_box_nms", [Pure]> {
  let summary = "non-maximum suppression of boxes, survivors first, the rest -1";
  let description = [{
    data is (..., boxes, width): each row holds a score, four coordinates
    and optionally a class id at the given indices. `record` (hidden in
    MXNet) holds each output row's input row, or -1, for the gradient.
  }];
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "0.5">:$overlap_thresh,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$valid_thresh,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$topk,
                   DefaultValuedAttr<Sym_IntAttr, "2">:$coord_start,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$score_index,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$id_index,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$background_id,
                   DefaultValuedAttr<BoolAttr, "false">:$force_suppress,
                   DefaultValuedAttr<Sym_StrEnumAttr<["corner", "center"]>, "\"corner\"">:$in_format,
                   DefaultValuedAttr<Sym_StrEnumAttr<["corner", "center"]>, "\"corner\"">:$out_format);
  let results = (outs AnyTensor:$output, AnyTensor:$record);
}

def Sym_ROIAlignOp : Sym_Op<"_contrib_ROIAlign", [Pure]> {
  let summary = "each roi's feature map region averaged from bilinear samples into pooled_size bins";
  let description = [{
    data is (batch, channels, h, w), rois (n, 5) rows of (image, x1, y1,
    x2, y2) in image coordinates, scaled by spatial_scale; the result is
    (n, channels, ph, pw), or (n, channels / (ph * pw), ph, pw) position
    sensitive.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$rois,
                   DenseI64ArrayAttr:$pooled_size,
                   Sym_FloatAttr:$spatial_scale,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$sample_ratio,
                   DefaultValuedAttr<BoolAttr, "false">:$position_sensitive,
                   DefaultValuedAttr<BoolAttr, "false">:$aligned);
  let results = (outs AnyTensor:$output);
}

def Sym_ROIPoolingOp : Sym_Op<"ROIPooling", [Pure], ["inferResultElementType"]> {
  let summary = "each roi's feature map region max-pooled into pooled_size bins";
  let description = [{
    data is (batch, channels, h, w), rois (n, 5) rows of (image, x1, y1,
    x2, y2) in image coordinates, scaled by spatial_scale and rounded; the
    result is (n, channels, ph, pw). The hidden maxidx (int32) holds each
    bin's maximum's flat position in data, -1 for an empty bin.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$rois,
                   DenseI64ArrayAttr:$pooled_size,
                   Sym_FloatAttr:$spatial_scale);
  let results = (outs AnyTensor:$output, AnyTensor:$maxidx);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::Type $cppClass::inferResultElementType(unsigned index, ::llvm::ArrayRef<::mlir::Type> operandTypes) {
      return index == 1 ? ::mlir::IntegerType::get(getContext(), 32) : operandTypes.front();
    }
  }];
}

def Sym_BoxEncodeOp : Sym_Op<"_contrib_box_encode", [Pure]> {
  let summary = "training targets of matched (B, N) anchors against their references";
  let description = [{
    Each anchor whose sample is > 0.5 gets its matched reference's center
    offset and log size ratio, less `means`, over `stds`, and a mask of 1;
    the others get zeros.
  }];
  let arguments = (ins AnyTensor:$samples, AnyTensor:$matches, AnyTensor:$anchors, AnyTensor:$refs,
                   AnyTensor:$means, AnyTensor:$stds);
  let results = (outs AnyTensor:$targets, AnyTensor:$masks);
}

def Sym_MultiBoxPriorOp : Sym_Op<"_contrib_MultiBoxPrior", [Pure]> {
  let summary = "SSD's anchor boxes for each position of data's (h, w) grid";
  let description = [{
    (1, h * w * (sizes + ratios - 1), 4) corner boxes: per position, each
    size at the first ratio, then the first size at each other ratio. They
    depend on data's shape only.
  }];
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{1.0f}">:$sizes,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{1.0f}">:$ratios,
                   DefaultValuedAttr<BoolAttr, "false">:$clip,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{-1.0f, -1.0f}">:$steps,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{0.5f, 0.5f}">:$offsets);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_MultiBoxDetectionOp : Sym_Op<"_contrib_MultiBoxDetection", [Pure]> {
  let summary = "SSD's detections: decoded boxes of the best class, sorted and suppressed";
  let description = [{
    cls_prob (B, classes, N), loc_pred (B, N * 4), anchor (1, N, 4) give
    (B, N, 6) rows (class - 1, score, xmin, ymin, xmax, ymax): the valid
    ones first, by descending score, suppressed ones with class -1, then
    rows of -1.
  }];
  let arguments = (ins AnyTensor:$cls_prob, AnyTensor:$loc_pred, AnyTensor:$anchor,
                   DefaultValuedAttr<BoolAttr, "true">:$clip,
                   DefaultValuedAttr<Sym_FloatAttr, "0.01">:$threshold,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$background_id,
                   DefaultValuedAttr<Sym_FloatAttr, "0.5">:$nms_threshold,
                   DefaultValuedAttr<BoolAttr, "false">:$force_suppress,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{0.1f, 0.1f, 0.2f, 0.2f}">:$variances,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$nms_topk);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Sym_MultiBoxTargetOp : Sym_Op<"_contrib_MultiBoxTarget", [Pure]> {
  let summary = "SSD's training targets: anchors matched to labels, with negative mining";
  let description = [{
    anchor (1, N, 4), label (B, M, >= 5) rows (class, xmin, ymin, xmax,
    ymax) ended by a row of -1, cls_pred (B, classes, N) give loc_target
    and loc_mask (B, N * 4) and cls_target (B, N).
  }];
  let arguments = (ins AnyTensor:$anchor, AnyTensor:$label, AnyTensor:$cls_pred,
                   DefaultValuedAttr<Sym_FloatAttr, "0.5">:$overlap_threshold,
                   DefaultValuedAttr<Sym_FloatAttr, "-1.0">:$ignore_label,
                   DefaultValuedAttr<Sym_FloatAttr, "-1.0">:$negative_mining_ratio,
                   DefaultValuedAttr<Sym_FloatAttr, "0.5">:$negative_mining_thresh,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$minimum_negative_samples,
                   DefaultValuedAttr<DenseF32ArrayAttr, "{0.1f, 0.1f, 0.2f, 0.2f}">:$variances);
  let results = (outs AnyTensor:$loc_target, AnyTensor:$loc_mask, AnyTensor:$cls_target);
  let hasVerifier = 1;
}

def Sym_ShapeArrayOp : Sym_Op<"shape_array", [Pure], ["inferResultElementType"]> {
  let summary = "data's shape as an int64 vector";
  let arguments = (ins AnyTensor:$data);
  let results = (outs AnyTensor:$output);
}

def Sym_BoxDecodeOp : Sym_Op<"_contrib_box_decode", [Pure]> {
  let summary = "(B, N, 4) offsets applied to N anchors, as corner boxes";
  let arguments = (ins AnyTensor:$data, AnyTensor:$anchors,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$std0,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$std1,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$std2,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$std3,
                   DefaultValuedAttr<Sym_FloatAttr, "-1.0">:$clip,
                   DefaultValuedAttr<Sym_StrEnumAttr<["corner", "center"]>, "\"center\"">:$format);
  let results = (outs AnyTensor:$output);
}

//===----------------------------------------------------------------------===//
// Backward ops: built by gradient rules (Gradients.cpp), never imported
//===----------------------------------------------------------------------===//

def Sym_BackwardReluOp : Sym_SameShapeOp<"_backward_relu", [Pure, Sym_Elementwise]> {
  let summary = "relu's gradient: out_grad where data > 0, else 0";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data);
  let results = (outs AnyTensor:$output);
}

def Sym_ArangeLikeOp : Sym_Op<"_contrib_arange_like", [Pure]> {
  let summary = "start + (i / repeat) * step over data's shape, or along its `axis`";
  let arguments = (ins AnyTensor:$data,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$start,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$step,
                   DefaultValuedAttr<Sym_PositiveIntAttr, "1">:$repeat,
                   DefaultValuedAttr<StrAttr, "\"\"">:$ctx,
                   OptionalAttr<Sym_IntAttr>:$axis);
  let results = (outs AnyTensor:$output);
}

def Sym_BackwardConvolutionOp : Sym_Op<"_backward_Convolution", [Pure]> {
  let summary = "Convolution's data and weight gradients from the output gradient";
  let description = [{
    data_grad is the transposed convolution of out_grad with the weight;
    weight_grad correlates the data with out_grad. The attributes are the
    forward op's (the bias gradient is a sum the rule builds).
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$weight,
                   DenseI64ArrayAttr:$kernel,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilate,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   Sym_PositiveIntAttr:$num_filter,
                   DefaultValuedAttr<Sym_PositiveIntAttr, "1">:$num_group,
                   DefaultValuedAttr<Sym_IntAttr, "1024">:$workspace,
                   DefaultValuedAttr<BoolAttr, "false">:$no_bias,
                   OptionalAttr<Sym_StrEnumAttr<["off", "limited_workspace", "fastest"]>>:$cudnn_tune,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$weight_grad);
  let extraClassDeclaration = Sym_ConvolutionLayout;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(1))))
        return ::mlir::failure();
      return ctx.refineOutput(1, ctx.input(2));
    }
  }];
}

def Sym_BackwardPoolingOp : Sym_Op<"_backward_Pooling", [Pure]> {
  let summary = "Pooling's data gradient";
  let description = [{
    max: each window's gradient goes to its first largest element; avg and
    sum: spread over the window (divided by MXNet's count for avg). The
    attributes are the forward op's.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$kernel,
                   DefaultValuedAttr<Sym_StrEnumAttr<["max", "avg", "sum", "lp"]>, "\"max\"">:$pool_type,
                   DefaultValuedAttr<BoolAttr, "false">:$global_pool,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   DefaultValuedAttr<Sym_StrEnumAttr<["valid", "full", "same"]>, "\"valid\"">:$pooling_convention,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   OptionalAttr<Sym_IntAttr>:$p_value,
                   OptionalAttr<BoolAttr>:$count_include_pad,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

def Sym_BackwardAdaptiveAvgPooling2DOp : Sym_Op<"_backward_contrib_AdaptiveAvgPooling2D", [Pure]> {
  let summary = "AdaptiveAvgPooling2D's data gradient: each bin's gradient spread over it";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$output_size);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

def Sym_BackwardPadOp : Sym_Op<"_backward_Pad", [Pure]> {
  let summary = "Pad's data gradient: the interior, plus what edge and reflect copied";
  let arguments = (ins AnyTensor:$out_grad,
                   Sym_StrEnumAttr<["constant", "edge", "reflect"]>:$mode,
                   DenseI64ArrayAttr:$pad_width,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$constant_value);
  let results = (outs AnyTensor:$data_grad);
}

def Sym_BackwardBilinearResize2DOp : Sym_Op<"_backward_contrib_BilinearResize2D", [Pure]> {
  let summary = "BilinearResize2D's data gradient: each output's gradient split over its four taps";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data,
                   DefaultValuedAttr<BoolAttr, "true">:$align_corners);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

def Sym_BackwardDeconvolutionOp : Sym_Op<"_backward_Deconvolution", [Pure]> {
  let summary = "Deconvolution's data and weight gradients from the output gradient";
  let description = [{
    data_grad convolves out_grad with the weight; weight_grad correlates
    out_grad with the data. The attributes are the forward op's, with pad
    resolved (no target_shape).
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$weight,
                   DenseI64ArrayAttr:$kernel,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilate,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pad,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$adj,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$target_shape,
                   Sym_PositiveIntAttr:$num_filter,
                   DefaultValuedAttr<Sym_PositiveIntAttr, "1">:$num_group,
                   DefaultValuedAttr<Sym_IntAttr, "512">:$workspace,
                   DefaultValuedAttr<BoolAttr, "true">:$no_bias,
                   OptionalAttr<Sym_StrEnumAttr<["off", "limited_workspace", "fastest"]>>:$cudnn_tune,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_StrEnumAttr<["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"]>>:$layout);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$weight_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(1))))
        return ::mlir::failure();
      return ctx.refineOutput(1, ctx.input(2));
    }
  }];
}

def Sym_BackwardSoftmaxOutputOp : Sym_Op<"_backward_SoftmaxOutput", [Pure]> {
  let summary = "SoftmaxOutput's data gradient from its output and label";
  let description = [{
    (p - onehot(label)) * grad_scale / valid_cnt with MXNet's ignore_label,
    normalization and smooth_alpha; a label of the data's shape is a
    distribution: (p - label) * grad_scale / valid_cnt. The attributes are
    the forward op's.
  }];
  let arguments = (ins AnyTensor:$output, AnyTensor:$label,
                   DefaultValuedAttr<Sym_FloatAttr, "1.0">:$grad_scale,
                   DefaultValuedAttr<Sym_FloatAttr, "-1.0">:$ignore_label,
                   DefaultValuedAttr<BoolAttr, "false">:$multi_output,
                   DefaultValuedAttr<BoolAttr, "false">:$use_ignore,
                   DefaultValuedAttr<BoolAttr, "false">:$preserve_shape,
                   DefaultValuedAttr<Sym_StrEnumAttr<["null", "batch", "valid"]>, "\"null\"">:$normalization,
                   DefaultValuedAttr<BoolAttr, "false">:$out_grad,
                   DefaultValuedAttr<Sym_FloatAttr, "0.0">:$smooth_alpha);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(0))))
        return ::mlir::failure();
      return ctx.refineInput(0, ctx.output(0));
    }
  }];
}

def Sym_BackwardBatchNormOp : Sym_Op<"_backward_BatchNorm", [Pure]> {
  let summary = "BatchNorm's data, gamma and beta gradients";
  let description = [{
    `mean` and `invstd` are the forward's second and third results: the
    batch statistics in training (`sym.is_train` without use_global_stats),
    else the moving ones. With batch statistics the data gradient also
    flows through them; fix_gamma makes gamma 1 and its gradient 0. The
    attributes are the forward op's.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$gamma,
                   AnyTensor:$mean, AnyTensor:$invstd,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-3">:$eps,
                   DefaultValuedAttr<Sym_FloatAttr, "0.9">:$momentum,
                   DefaultValuedAttr<BoolAttr, "true">:$fix_gamma,
                   DefaultValuedAttr<BoolAttr, "false">:$use_global_stats,
                   DefaultValuedAttr<BoolAttr, "false">:$output_mean_var,
                   DefaultValuedAttr<Sym_IntAttr, "1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$cudnn_off,
                   OptionalAttr<Sym_FloatAttr>:$min_calib_range,
                   OptionalAttr<Sym_FloatAttr>:$max_calib_range);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$gamma_grad, AnyTensor:$beta_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(1))) ||
          ::mlir::failed(ctx.refineOutput(1, ctx.input(2))))
        return ::mlir::failure();
      return ctx.refineOutput(2, ctx.input(2));
    }
  }];
}

def Sym_BackwardLayerNormOp : Sym_Op<"_backward_LayerNorm", [Pure]> {
  let summary = "LayerNorm's data, gamma and beta gradients";
  let description = [{
    mean and std are the forward's second and third results; the
    attributes are the forward op's.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$gamma,
                   AnyTensor:$mean, AnyTensor:$std,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-5">:$eps,
                   DefaultValuedAttr<BoolAttr, "false">:$output_mean_var);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$gamma_grad, AnyTensor:$beta_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(1))) ||
          ::mlir::failed(ctx.refineOutput(1, ctx.input(2))))
        return ::mlir::failure();
      return ctx.refineOutput(2, ctx.input(2));
    }
  }];
}

def Sym_BackwardInstanceNormOp : Sym_Op<"_backward_InstanceNorm", [Pure]> {
  let summary = "InstanceNorm's data, gamma and beta gradients";
  let description = [{
    The operands are MXNet's (DeclareBackwardDependency): the output's
    gradient, the hidden mean and var, data and gamma.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$mean, AnyTensor:$var,
                   AnyTensor:$data, AnyTensor:$gamma,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-3">:$eps);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$gamma_grad, AnyTensor:$beta_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(3))) ||
          ::mlir::failed(ctx.refineOutput(1, ctx.input(4))))
        return ::mlir::failure();
      return ctx.refineOutput(2, ctx.input(4));
    }
  }];
}

def Sym_BackwardL2NormalizationOp : Sym_Op<"_backward_L2Normalization", [Pure]> {
  let summary = "L2Normalization's data gradient from its output and norm";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$output, AnyTensor:$norm,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-10">:$eps,
                   DefaultValuedAttr<Sym_StrEnumAttr<["instance", "spatial", "channel"]>, "\"instance\"">:$mode);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(0));
    }
  }];
}

def Sym_BackwardROIPoolingOp : Sym_Op<"_backward_ROIPooling", [Pure]> {
  let summary = "ROIPooling's data gradient (each bin's gradient added at its maximum); rois get zeros";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$rois, AnyTensor:$maxidx, AnyTensor:$data,
                   DenseI64ArrayAttr:$pooled_size,
                   Sym_FloatAttr:$spatial_scale);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$rois_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(3))))
        return ::mlir::failure();
      return ctx.refineOutput(1, ctx.input(1));
    }
  }];
}

def Sym_BackwardROIAlignOp : Sym_Op<"_backward_ROIAlign", [Pure]> {
  let summary = "ROIAlign's data gradient (the samples' weights scattered back); rois get zeros";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$rois, AnyTensor:$data,
                   DenseI64ArrayAttr:$pooled_size,
                   Sym_FloatAttr:$spatial_scale,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$sample_ratio,
                   DefaultValuedAttr<BoolAttr, "false">:$position_sensitive,
                   DefaultValuedAttr<BoolAttr, "false">:$aligned);
  let results = (outs AnyTensor:$data_grad, AnyTensor:$rois_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(2))))
        return ::mlir::failure();
      return ctx.refineOutput(1, ctx.input(1));
    }
  }];
}

def Sym_BackwardGatherNdOp : Sym_Op<"_backward_gather_nd", [Pure]> {
  let summary = "gather_nd's data gradient: out_grad summed into zeros at the gathered positions";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$indices, AnyTensor:$data);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(2));
    }
  }];
}

def Sym_BackwardRNNOp : Sym_Op<"_backward_RNN", [Pure]> {
  let summary = "RNN's gradients of data, parameters, state (and state_cell), by backpropagation through time";
  let description = [{
    The inputs are MXNet's RNNGrad heads: data, parameters, state, output,
    its gradient, then with state_outputs the final state and its
    gradient, then for lstm state_cell and with state_outputs the final
    cell state and its gradient, then with use_sequence_length the lengths.
  }];
  let arguments = !con((ins Variadic<AnyTensor>:$inputs), Sym_RNNParams);
  let results = (outs Variadic<AnyTensor>:$grads);
  let extraClassDeclaration = Sym_RNNHelpers # [{
    /// Operand positions of the inputs that follow the fixed five.
    unsigned stateCellIndex() { return getStateOutputs() ? 7 : 5; }
    ::mlir::Value getStateCell() { return isLstm() ? getInputs()[stateCellIndex()] : ::mlir::Value(); }
    ::mlir::Value getOutGrad() { return getInputs()[4]; }
    ::mlir::Value getStateGrad() { return getStateOutputs() ? getInputs()[6] : ::mlir::Value(); }
    ::mlir::Value getCellGrad() {
      return isLstm() && getStateOutputs() ? getInputs()[stateCellIndex() + 2] : ::mlir::Value();
    }
    /// The forward's sequence_length, last (MXNet keeps it in the op's state).
    ::mlir::Value getSequenceLength() { return getUseSequenceLength() ? getInputs().back() : ::mlir::Value(); }
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      for (unsigned i = 0; i < getNumResults(); ++i)
        if (failed(ctx.refineOutput(i, ctx.input(i < 3 ? i : stateCellIndex()))))
          return ::mlir::failure();
      return ::mlir::success();
    }
  }];
}

def Sym_BackwardSequenceLastOp : Sym_Op<"_backward_SequenceLast", [Pure]> {
  let summary = "SequenceLast's data gradient: out_grad at each sequence's last step, zeros elsewhere";
  let arguments = (ins AnyTensor:$out_grad, Optional<AnyTensor>:$sequence_length, AnyTensor:$data,
                   DefaultValuedAttr<BoolAttr, "false">:$use_sequence_length,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(ctx.numInputs() - 1));
    }
  }];
}

def Sym_BackwardTopkOp : Sym_Op<"_backward_topk", [Pure]> {
  let summary = "topk's and sort's data gradient: out_grad written at the selected indices, zeros elsewhere";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$indices, AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(2));
    }
  }];
}

def Sym_BackwardPickOp : Sym_Op<"_backward_pick", [Pure]> {
  let summary = "pick's data gradient: out_grad at the picked positions, zeros elsewhere";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$index, AnyTensor:$data,
                   DefaultValuedAttr<Sym_IntAttr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdims,
                   DefaultValuedAttr<Sym_StrEnumAttr<["wrap", "clip"]>, "\"clip\"">:$mode);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(2));
    }
  }];
}

def Sym_BackwardTakeOp : Sym_Op<"_backward_take", [Pure]> {
  let summary = "take's data gradient: out_grad summed into zeros at the taken slices";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$indices, AnyTensor:$a,
                   DefaultValuedAttr<Sym_IntAttr, "0">:$axis,
                   DefaultValuedAttr<Sym_StrEnumAttr<["raise", "wrap", "clip"]>, "\"clip\"">:$mode);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(2));
    }
  }];
}

def Sym_BackwardBoxNmsOp : Sym_Op<"_backward_contrib_box_nms", [Pure]> {
  let summary = "box_nms's data gradient: each out_grad row back at its recorded input row";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$record);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(0));
    }
  }];
}

def Sym_BackwardSliceOp : Sym_Op<"_backward_slice", [Pure]> {
  let summary = "slice's data gradient: out_grad in zeros of data's shape";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, DenseI64ArrayAttr:$begin, DenseI64ArrayAttr:$end,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$step);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

def Sym_BackwardInterleavedMatmulSelfAttQKOp : Sym_Op<"_backward_interleaved_matmul_selfatt_qk", [Pure]> {
  let summary = "the queries' and keys' gradients of the attention scores (values' 0)";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$queries_keys_values, Sym_PositiveIntAttr:$heads);
  let results = (outs AnyTensor:$queries_keys_values_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

def Sym_BackwardInterleavedMatmulSelfAttValAttOp : Sym_Op<"_backward_interleaved_matmul_selfatt_valatt", [Pure]> {
  let summary = "the values' (queries' and keys' 0) and the attention's gradients";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$queries_keys_values, AnyTensor:$attention,
                   Sym_PositiveIntAttr:$heads);
  let results = (outs AnyTensor:$queries_keys_values_grad, AnyTensor:$attention_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      if (::mlir::failed(ctx.refineOutput(0, ctx.input(1))))
        return ::mlir::failure();
      return ctx.refineOutput(1, ctx.input(2));
    }
  }];
}

def Sym_BackwardEmbeddingOp : Sym_Op<"_backward_Embedding", [Pure]> {
  let summary = "Embedding's weight gradient: out_grad rows summed into their (clipped) index rows";
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data,
                   Sym_PositiveIntAttr:$input_dim,
                   Sym_PositiveIntAttr:$output_dim,
                   OptionalAttr<Sym_DTypeAttr>:$dtype,
                   DefaultValuedAttr<BoolAttr, "false">:$sparse_grad);
  let results = (outs AnyTensor:$weight_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ::mlir::sym::PartialShape({getInputDim(), getOutputDim()}));
    }
  }];
}

def Sym_BackwardLeakyReLUOp : Sym_Op<"_backward_LeakyReLU", [Pure]> {
  let summary = "LeakyReLU's data gradient";
  let description = [{
    `slopes` are prelu's gamma (one per channel, or one) or the slopes rrelu
    drew in training (its mask); leaky, elu and selu read the output and
    gelu the data, as MXNet's kernels do. The attributes are the forward
    op's.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$output, Optional<AnyTensor>:$slopes,
                   DefaultValuedAttr<Sym_StrEnumAttr<["rrelu", "leaky", "prelu", "elu", "selu", "gelu"]>, "\"leaky\"">:$act_type,
                   DefaultValuedAttr<Sym_FloatAttr, "0.25">:$slope,
                   DefaultValuedAttr<Sym_FloatAttr, "0.125">:$lower_bound,
                   DefaultValuedAttr<Sym_FloatAttr, "0.334">:$upper_bound);
  let results = (outs AnyTensor:$data_grad);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}
def Sym_BackwardLRNOp : Sym_Op<"_backward_LRN", [Pure]> {
  let summary = "LRN's data gradient";
  let description = [{
    With n = tmp_norm (the forward's second result) and a = alpha / nsize:
    dx_c = g_c n_c^-beta - 2 a beta x_c sum over the channel window of c of
    g_k x_k n_k^(-beta-1). The attributes are the forward op's.
  }];
  let arguments = (ins AnyTensor:$out_grad, AnyTensor:$data, AnyTensor:$tmp_norm,
                   DefaultValuedAttr<Sym_FloatAttr, "1e-4">:$alpha,
                   DefaultValuedAttr<Sym_FloatAttr, "0.75">:$beta,
                   DefaultValuedAttr<Sym_FloatAttr, "2.0">:$knorm,
                   Sym_PositiveIntAttr:$nsize);
  let results = (outs AnyTensor:$data_grad);
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferShapes(::mlir::sym::ShapeInferenceContext &ctx) {
      return ctx.refineOutput(0, ctx.input(1));
    }
  }];
}

#endif // SYM_OPS_TD
