//===- OpSignatures.cpp - MXNet op names, inputs and outputs --------------===//
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace mlir::sym;

namespace {

/// Canonical names supported by the dialect, with MXNet's registered aliases.
const llvm::StringMap<llvm::StringRef> &aliasTable() {
  static const llvm::StringMap<llvm::StringRef> table = [] {
    llvm::StringMap<llvm::StringRef> t;
    for (llvm::StringRef canonical :
         {"FullyConnected", "Convolution", "Pooling", "Activation", "LeakyReLU",
          "BatchNorm", "Dropout", "LRN", "UpSampling", "Concat", "SliceChannel",
          "Flatten", "Reshape", "transpose", "expand_dims", "SwapAxis", "slice_axis",
          "Embedding", "Cast", "_copy", "BlockGrad", "make_loss", "MakeLoss",
          "SoftmaxOutput", "SoftmaxActivation", "softmax", "log_softmax",
          "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
          "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_maximum",
          "_minimum", "broadcast_add", "broadcast_sub", "broadcast_mul",
          "broadcast_div", "broadcast_maximum", "broadcast_minimum", "_plus_scalar",
          "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
          "_rdiv_scalar", "_power_scalar", "add_n", "exp", "log", "sqrt", "square",
          "abs", "sign", "negative", "sin", "cos", "tanh", "sigmoid", "relu", "clip", "sum",
          "mean", "dot", "batch_dot", "_zeros", "_ones", "floor", "ceil", "round", "rint",
          "fix", "trunc", "rsqrt", "reciprocal", "erf", "log1p", "expm1", "log2", "log10", "tan",
          "arctan", "sinh", "cosh", "zeros_like", "ones_like", "_greater_scalar",
          "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar", "_equal_scalar",
          "_not_equal_scalar", "_maximum_scalar", "_minimum_scalar", "_greater", "_greater_equal",
          "_lesser", "_lesser_equal", "_equal", "_not_equal", "broadcast_greater",
          "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal", "broadcast_equal",
          "broadcast_not_equal", "where", "_contrib_AdaptiveAvgPooling2D", "Pad",
          "_contrib_BilinearResize2D", "Deconvolution", "LayerNorm", "slice", "stack", "broadcast_axis",
          "broadcast_to", "SequenceMask", "_contrib_arange_like", "_contrib_interleaved_matmul_selfatt_qk",
          "_contrib_interleaved_matmul_selfatt_valatt", "tile", "repeat", "reverse", "squeeze", "_arange",
          "slice_like", "L2Normalization", "_contrib_box_nms", "_contrib_box_decode", "_contrib_ROIAlign",
          "shape_array", "argsort", "gather_nd", "topk", "sort", "argmax", "argmin", "pick", "take", "one_hot",
          "broadcast_like", "RNN", "SequenceLast", "SequenceReverse", "InstanceNorm", "norm", "Crop", "ROIPooling", "_contrib_box_encode", "_contrib_MultiBoxPrior",
          "_contrib_MultiBoxDetection", "_contrib_MultiBoxTarget"})
      t[canonical] = canonical;
    const std::pair<llvm::StringRef, llvm::StringRef> aliases[] = {
        {"Convolution_v1", "Convolution"}, {"Pooling_v1", "Pooling"},
        {"BatchNorm_v1", "BatchNorm"}, {"concat", "Concat"}, {"split", "SliceChannel"},
        {"flatten", "Flatten"}, {"reshape", "Reshape"}, {"pad", "Pad"},
        {"swapaxes", "SwapAxis"}, {"cast", "Cast"}, {"identity", "_copy"},
        {"stop_gradient", "BlockGrad"}, {"Softmax", "SoftmaxOutput"},
        {"_plus", "elemwise_add"}, {"_Plus", "elemwise_add"}, {"_add", "elemwise_add"},
        {"_minus", "elemwise_sub"}, {"_Minus", "elemwise_sub"}, {"_sub", "elemwise_sub"},
        {"_mul", "elemwise_mul"}, {"_Mul", "elemwise_mul"}, {"_div", "elemwise_div"},
        {"_Div", "elemwise_div"}, {"_Maximum", "_maximum"}, {"_Minimum", "_minimum"},
        {"broadcast_plus", "broadcast_add"}, {"broadcast_minus", "broadcast_sub"},
        {"_PlusScalar", "_plus_scalar"}, {"_MinusScalar", "_minus_scalar"},
        {"_RMinusScalar", "_rminus_scalar"}, {"_MulScalar", "_mul_scalar"},
        {"_DivScalar", "_div_scalar"}, {"_RDivScalar", "_rdiv_scalar"},
        {"_PowerScalar", "_power_scalar"}, {"ElementWiseSum", "add_n"},
        {"sum_axis", "sum"}, {"_ElementWiseSum", "add_n"}, {"_GreaterScalar", "_greater_scalar"},
        {"_GreaterEqualScalar", "_greater_equal_scalar"}, {"_LesserScalar", "_lesser_scalar"},
        {"_LesserEqualScalar", "_lesser_equal_scalar"}, {"_EqualScalar", "_equal_scalar"},
        {"_NotEqualScalar", "_not_equal_scalar"}, {"_MaximumScalar", "_maximum_scalar"},
        {"_MinimumScalar", "_minimum_scalar"}, {"_Greater", "_greater"}, {"_GreaterEqual", "_greater_equal"},
        {"_Lesser", "_lesser"}, {"_LesserEqual", "_lesser_equal"}, {"_Equal", "_equal"},
        {"_Not_Equal", "_not_equal"}, {"_npx_layer_norm", "LayerNorm"}, {"crop", "slice"},
        {"_npx_slice", "slice"}, {"broadcast_axes", "broadcast_axis"}, {"_npx_sequence_mask", "SequenceMask"},
        {"_npx_arange_like", "_contrib_arange_like"}, {"flip", "reverse"}, {"_np_repeat", "repeat"},
        {"_npi_tile", "tile"}, {"_contrib_box_non_maximum_suppression", "_contrib_box_nms"},
        {"_npx_shape_array", "shape_array"}, {"_npi_argsort", "argsort"}, {"_npi_gather_nd", "gather_nd"},
        {"_npx_gather_nd", "gather_nd"}, {"_npx_topk", "topk"}, {"_npi_sort", "sort"},
        {"choose_element_0index", "pick"}, {"_npx_pick", "pick"}, {"_npi_take", "take"},
        {"_npx_one_hot", "one_hot"}, {"_sparse_norm", "norm"},
        {"_npx_roi_pooling", "ROIPooling"}, {"_npx_multibox_prior", "_contrib_MultiBoxPrior"},
        {"_npx_multibox_detection", "_contrib_MultiBoxDetection"}, {"_npx_multibox_target", "_contrib_MultiBoxTarget"},
        {"_rnn_param_concat", "_rnn_param_concat"}, {"_npi_rnn_param_concat", "_rnn_param_concat"}};
    for (auto [alias, canonical] : aliases)
      t[alias] = canonical;
    return t;
  }();
  return table;
}

bool boolParam(DictionaryAttr params, llvm::StringRef name, bool dflt) {
  if (auto attr = params ? params.getAs<BoolAttr>(name) : BoolAttr())
    return attr.getValue();
  return dflt;
}

int64_t intParam(DictionaryAttr params, llvm::StringRef name, int64_t dflt) {
  if (auto attr = params ? params.getAs<IntegerAttr>(name) : IntegerAttr())
    return attr.getInt();
  return dflt;
}

llvm::StringRef strParam(DictionaryAttr params, llvm::StringRef name, llvm::StringRef dflt) {
  if (auto attr = params ? params.getAs<StringAttr>(name) : StringAttr())
    return attr.getValue();
  return dflt;
}

llvm::SmallVector<std::string> numbered(llvm::StringRef prefix, int64_t n) {
  llvm::SmallVector<std::string> names;
  for (int64_t i = 0; i < n; ++i)
    names.push_back((prefix + llvm::Twine(i)).str());
  return names;
}

/// Ops on two equal shapes registered as binary ops (inputs lhs, rhs).
bool isElemwiseBinary(llvm::StringRef op) {
  return llvm::is_contained({"_maximum", "_minimum", "_greater", "_greater_equal", "_lesser", "_lesser_equal",
                             "_equal", "_not_equal"},
                            op);
}

llvm::SmallVector<std::string> names(std::initializer_list<const char *> list) {
  return llvm::SmallVector<std::string>(list.begin(), list.end());
}

} // namespace

llvm::StringRef mlir::sym::dialectOpName(llvm::StringRef canonical) {
  // Gluon's RNN layers concatenate their weights and biases into RNN's flat
  // parameter vector with it: Concat, with the shape rule's inference of one
  // unknown input from the output that Concat has too.
  return canonical == "_rnn_param_concat" ? "Concat" : canonical;
}

std::optional<llvm::StringRef> mlir::sym::resolveOpName(llvm::StringRef name) {
  auto it = aliasTable().find(name);
  if (it == aliasTable().end())
    return std::nullopt;
  return it->second;
}

llvm::SmallVector<llvm::StringRef> mlir::sym::getOpAliases(llvm::StringRef canonical) {
  llvm::SmallVector<llvm::StringRef> aliases;
  for (const auto &entry : aliasTable())
    if (dialectOpName(entry.second) == canonical && entry.first() != canonical)
      aliases.push_back(entry.first());
  llvm::sort(aliases);
  return aliases;
}

OpSignature mlir::sym::getOpSignature(llvm::StringRef canonical, DictionaryAttr params) {
  llvm::StringRef op = dialectOpName(canonical);
  OpSignature sig;
  sig.outputs = names({"output"});
  auto withOutputs = [&](std::initializer_list<const char *> outs, unsigned visible) {
    sig.outputs = names(outs);
    sig.numVisibleOutputs = visible;
    sig.namesOutputs = true;
  };

  if (op == "FullyConnected" || op == "Convolution" || op == "Deconvolution") {
    sig.inputs = boolParam(params, "no_bias", op == "Deconvolution") ? names({"data", "weight"})
                                                                      : names({"data", "weight", "bias"});
  } else if (op == "LeakyReLU") {
    llvm::StringRef act = strParam(params, "act_type", "leaky");
    sig.inputs = act == "prelu" ? names({"data", "gamma"}) : names({"data"});
    if (act == "rrelu")
      withOutputs({"output", "mask"}, 1);
    else
      withOutputs({"output"}, 1);
  } else if (op == "BatchNorm") {
    sig.inputs = names({"data", "gamma", "beta", "moving_mean", "moving_var"});
    sig.auxInputs = {3, 4};
    withOutputs({"output", "mean", "var"}, boolParam(params, "output_mean_var", false) ? 3 : 1);
  } else if (op == "Dropout") {
    sig.inputs = names({"data"});
    withOutputs({"output", "mask"}, 1);
  } else if (op == "LRN") {
    sig.inputs = names({"data"});
    withOutputs({"output", "tmp_norm"}, 1);
  } else if (op == "UpSampling") {
    sig.inputs = strParam(params, "sample_type", "nearest") == "bilinear"
                     ? names({"data", "weight"})
                     : numbered("arg", intParam(params, "num_args", 1));
  } else if (op == "LayerNorm") {
    sig.inputs = names({"data", "gamma", "beta"});
    withOutputs({"output", "mean", "std"}, boolParam(params, "output_mean_var", false) ? 3 : 1);
  } else if (op == "SequenceMask" || op == "SequenceLast" || op == "SequenceReverse") {
    sig.inputs = boolParam(params, "use_sequence_length", false) ? names({"data", "sequence_length"})
                                                                 : names({"data"});
  } else if (op == "_contrib_interleaved_matmul_selfatt_qk") {
    sig.inputs = names({"queries_keys_values"});
  } else if (op == "_contrib_interleaved_matmul_selfatt_valatt") {
    sig.inputs = names({"queries_keys_values", "attention"});
  } else if (op == "Concat" || op == "add_n" || op == "stack") {
    sig.inputs = numbered("arg", intParam(params, "num_args", 1));
  } else if (op == "SliceChannel") {
    sig.inputs = names({"data"});
    int64_t n = intParam(params, "num_outputs", 1);
    sig.outputs = numbered("output", n);
    sig.numVisibleOutputs = n;
    sig.namesOutputs = true;
  } else if (op == "Embedding") {
    sig.inputs = names({"data", "weight"});
  } else if (op == "SoftmaxOutput" || op == "LinearRegressionOutput" ||
             op == "LogisticRegressionOutput" || op == "MAERegressionOutput") {
    sig.inputs = names({"data", "label"});
  } else if (op == "softmax") {
    sig.inputs = boolParam(params, "use_length", false) ? names({"data", "length"})
                                                        : names({"data"});
  } else if (op == "log_softmax") { // with use_length too (refused by the op's verifier)
    sig.inputs = names({"data"});
  } else if (op == "broadcast_axis" || op == "broadcast_to") {
    sig.inputs = names({"data"});
    sig.listsInputNames = false;
  } else if (op.starts_with("elemwise_") || op.starts_with("broadcast_") || isElemwiseBinary(op) ||
             op == "dot" || op == "batch_dot") {
    sig.inputs = names({"lhs", "rhs"});
  } else if (op == "make_loss") {
    sig.inputs = names({"data"});
    sig.listsInputNames = false;
    withOutputs({"loss"}, 1);
  } else if (op == "_contrib_BilinearResize2D") {
    sig.inputs = strParam(params, "mode", "size") == "like" ? names({"data", "like"}) : names({"data"});
  } else if (op == "where") {
    sig.inputs = names({"condition", "x", "y"});
  } else if (op == "slice_like") {
    sig.inputs = names({"data", "shape_like"});
  } else if (op == "_contrib_ROIAlign") {
    sig.inputs = names({"data", "rois"});
    withOutputs({"output"}, 1);
  } else if (op == "RNN") {
    bool lstm = strParam(params, "mode", "") == "lstm";
    sig.inputs = names({"data", "parameters", "state"});
    if (lstm)
      sig.inputs.push_back("state_cell");
    if (boolParam(params, "use_sequence_length", false))
      sig.inputs.push_back("sequence_length");
    if (!boolParam(params, "state_outputs", false))
      withOutputs({"output"}, 1);
    else if (lstm)
      withOutputs({"output", "state_output", "statecell_output"}, 3);
    else
      withOutputs({"output", "state_output"}, 2);
  } else if (op == "topk") {
    sig.inputs = names({"data"});
    llvm::StringRef ret = strParam(params, "ret_typ", "indices");
    sig.outputs = ret == "value" || ret == "both" ? names({"output0", "output1"}) : names({"output"});
    sig.numVisibleOutputs = ret == "both" ? 2 : 1;
    sig.listsInputNames = false;
  } else if (op == "sort") {
    sig.inputs = names({"data"});
    sig.outputs = names({"output0", "output1"});
    sig.numVisibleOutputs = 1;
    sig.listsInputNames = false;
  } else if (op == "pick") {
    sig.inputs = names({"data", "index"});
  } else if (op == "take") {
    sig.inputs = names({"a", "indices"});
  } else if (op == "one_hot") {
    sig.inputs = names({"indices"});
  } else if (op == "gather_nd") {
    sig.inputs = names({"data", "indices"});
  } else if (op == "_contrib_box_decode") {
    sig.inputs = names({"data", "anchors"});
  } else if (op == "InstanceNorm") {
    sig.inputs = names({"data", "gamma", "beta"});
    withOutputs({"output", "mean", "var"}, 1);
  } else if (op == "ROIPooling") {
    sig.inputs = names({"data", "rois"});
    withOutputs({"output", "maxidx"}, 1);
  } else if (op == "_contrib_box_encode") {
    sig.inputs = names({"samples", "matches", "anchors", "refs", "means", "stds"});
    sig.outputs = names({"output0", "output1"}); // no FListOutputNames
    sig.numVisibleOutputs = 2;
  } else if (op == "_contrib_MultiBoxDetection") {
    sig.inputs = names({"cls_prob", "loc_pred", "anchor"});
  } else if (op == "_contrib_MultiBoxTarget") {
    sig.inputs = names({"anchor", "label", "cls_pred"});
    withOutputs({"loc_target", "loc_mask", "cls_target"}, 3);
  } else if (op == "Crop") {
    sig.inputs = numbered("arg", intParam(params, "num_args", 1));
  } else if (op == "L2Normalization") {
    sig.inputs = names({"data"});
    withOutputs({"output", "norm"}, 1);
  } else if (op == "_contrib_box_nms") {
    sig.inputs = names({"data"});
    sig.outputs = names({"output", "record"}); // no FListOutputNames: output0, output1
    sig.numVisibleOutputs = 1;
    sig.listsInputNames = false;
  } else if (op == "_zeros" || op == "_ones" || op == "_arange") {
    sig.inputs = {};
  } else {
    // Of the remaining ops, only the legacy operators register
    // FListInputNames.
    sig.inputs = names({"data"});
    sig.listsInputNames = llvm::is_contained({"Pooling", "SwapAxis", "MakeLoss", "Pad", "tile", "repeat", "reverse",
                                              "squeeze", "_contrib_MultiBoxPrior"},
                                             op);
  }
  return sig;
}

llvm::StringRef mlir::sym::getMXNetOpName(Operation *op) {
  return op->getName().stripDialect();
}

OpSignature mlir::sym::getOpSignature(Operation *op) {
  return getOpSignature(getMXNetOpName(op), op->getAttrDictionary());
}

std::string mlir::sym::getMonitorInputName(llvm::StringRef nodeName, const OpSignature &sig, unsigned index) {
  if (sig.listsInputNames && index < sig.inputs.size())
    return (nodeName + "_" + sig.inputs[index]).str();
  return (nodeName + "_input" + llvm::Twine(index)).str();
}

std::string mlir::sym::getOutputName(llvm::StringRef nodeName, const OpSignature &sig,
                                     unsigned index) {
  if (sig.namesOutputs && index < sig.outputs.size())
    return (nodeName + "_" + sig.outputs[index]).str();
  if (sig.outputs.size() == 1)
    return (nodeName + "_output").str();
  return (nodeName + "_output" + llvm::Twine(index)).str();
}

/// transpose's FGradient: the inverse permutation, printed as MXNet prints it.
static BackwardNodeLayout transposeBackward(DictionaryAttr params) {
  BackwardNodeLayout node{"transpose", "g0"};
  auto axes = params ? params.getAs<DenseI64ArrayAttr>("axes") : DenseI64ArrayAttr();
  if (!axes || axes.empty())
    return node;
  llvm::SmallVector<int64_t> inverse(axes.size());
  int64_t rank = static_cast<int64_t>(axes.size());
  for (auto [i, axis] : llvm::enumerate(axes.asArrayRef())) {
    int64_t positive = axis < 0 ? axis + rank : axis;
    if (positive < 0 || positive >= rank)
      return node; // the verifier refuses such axes
    inverse[positive] = static_cast<int64_t>(i);
  }
  std::string text = "[";
  for (auto [i, axis] : llvm::enumerate(inverse))
    text += (i ? "," : "") + std::to_string(axis);
  node.attrs = {{"axes", text + "]"}};
  return node;
}

/// batch_dot's FGradient: one batch_dot per input, transposed to fit.
static llvm::SmallVector<BackwardNodeLayout, 1> batchDotBackward(DictionaryAttr params) {
  bool ta = boolParam(params, "transpose_a", false), tb = boolParam(params, "transpose_b", false);
  auto half = [&](const char *side, unsigned of, const char *inputs, std::optional<std::pair<bool, bool>> t) {
    BackwardNodeLayout node{"batch_dot", inputs, (llvm::Twine("_backward_") + side).str(), {of}};
    if (t)
      node.attrs = {{"transpose_a", t->first ? "true" : "false"}, {"transpose_b", t->second ? "true" : "false"}};
    return node;
  };
  if (ta && tb)
    return {half("lhs", 0, "i1 g0", std::nullopt), half("rhs", 1, "g0 i0", std::nullopt)};
  if (tb)
    return {half("lhs", 0, "g0 i1", {{false, false}}), half("rhs", 1, "g0 i0", {{true, false}})};
  if (ta)
    return {half("lhs", 0, "i1 g0", {{false, true}}), half("rhs", 1, "i0 g0", {{false, false}})};
  return {half("lhs", 0, "g0 i1", {{false, true}}), half("rhs", 1, "i0 g0", {{true, false}})};
}

static BackwardNodeLayout zerosOf(unsigned input, std::string suffix) {
  BackwardNodeLayout zeros{"zeros_like", "i" + std::to_string(input), std::move(suffix), {input}};
  zeros.zeros = true;
  return zeros;
}

llvm::SmallVector<BackwardNodeLayout, 1> mlir::sym::getZeroGradNodeLayouts(Operation *op) {
  if (op->getNumOperands() == 1)
    return {zerosOf(0, "_backward")};
  llvm::SmallVector<BackwardNodeLayout, 1> all;
  for (unsigned j = 0; j < op->getNumOperands(); ++j)
    all.push_back(zerosOf(j, "_in" + std::to_string(j) + "_backward"));
  return all;
}

llvm::SmallVector<BackwardNodeLayout, 1> mlir::sym::getBackwardNodeLayouts(Operation *op) {
  StringRef name = getMXNetOpName(op);
  DictionaryAttr params = op->getAttrDictionary();
  auto node = [](std::string op, std::string inputs) { return BackwardNodeLayout{std::move(op), std::move(inputs)}; };
  // "_backward_FullyConnected", "_backward_maximum" for "_maximum".
  auto backward = [&](std::string inputs) {
    return node(((name.starts_with("_") ? "_backward" : "_backward_") + name).str(), std::move(inputs));
  };
  if (name == "elemwise_add")
    return {};
  if (name == "add_n") { // an identity per input
    llvm::SmallVector<BackwardNodeLayout, 1> copies;
    for (unsigned j = 0; j < op->getNumOperands(); ++j) {
      copies.push_back(node("_copy", "g0"));
      copies.back().gradientsOf = {j};
      copies.back().anonymous = true;
    }
    return copies;
  }
  if (name == "transpose")
    return {transposeBackward(params)};
  if (name == "batch_dot")
    return batchDotBackward(params);
  if (name == "BlockGrad" || hasZeroGradient(op))
    return getZeroGradNodeLayouts(op);
  if (name == "gather_nd") { // a scatter for the data, zeros for the indices
    BackwardNodeLayout scatter = node("_backward_gather_nd", "g0 i1");
    scatter.gradientsOf = {0};
    return {scatter, zerosOf(1, "_backward_indices")};
  }
  if (name == "pick") {
    BackwardNodeLayout picked = backward("g0 i1");
    picked.gradientsOf = {0};
    return {picked, zerosOf(1, "_index_backward")};
  }
  if (name == "broadcast_like") {
    BackwardNodeLayout reduce = node("_broadcast_backward", "g0");
    reduce.gradientsOf = {0};
    reduce.attrs = {{"keepdims", "true"}};
    reduce.forwardAttrs = false;
    return {reduce, zerosOf(1, "_rhs_backward")};
  }
  if (name == "RNN") { // RNNGrad's heads
    bool states = boolParam(params, "state_outputs", false);
    std::string inputs = states ? "i0 i1 i2 o0 g0 o1 g1" : "i0 i1 i2 o0 g0";
    if (strParam(params, "mode", "") == "lstm")
      inputs += states ? " i3 o2 g2" : " i3";
    return {node("_backward_RNN", inputs)};
  }
  if (name == "topk") {
    llvm::StringRef ret = strParam(params, "ret_typ", "indices");
    if (ret == "indices" || ret == "mask")
      return getZeroGradNodeLayouts(op);
    return {backward("g0 o0 o1")};
  }
  if (name == "sort") { // MakeNonlossGradNode with topk's attributes
    BackwardNodeLayout values = node("_backward_topk", "g0 o0 o1");
    int64_t axis = intParam(params, "axis", -1);
    values.attrs = {{"axis", axis == kNone ? "None" : std::to_string(axis)},
                    {"k", "0"},
                    {"ret_typ", "value"},
                    {"is_ascend", boolParam(params, "is_ascend", true) ? "1" : "0"}};
    values.forwardAttrs = false;
    return {values};
  }
  if (name == "where") {
    BackwardNodeLayout values = backward("g0 i0");
    values.gradientsOf = {1, 2};
    return {zerosOf(0, "_cond_backward"), values};
  }
  return {llvm::StringSwitch<std::function<BackwardNodeLayout()>>(name)
      .Case("FullyConnected", [&] { return backward("g0 i0 i1"); })
      .Cases("Convolution", "Deconvolution", "Concat", [&] { return backward("g0 i*"); })
      // oneDNN's max pooling has a second output, its workspace (the
      // indices of the maxima); its zero gradient is read too.
      .Case("Pooling", [&] { return backward(strParam(params, "pool_type", "max") == "max" ? "g0 g1 i0 o0 o1" : "g0 i0 o0"); })
      .Case("Activation", [&] { return backward(strParam(params, "act_type", "") == "relu" ? "g0 o0" : "g0 o0 i0"); })
      .Case("LeakyReLU", [&] { return backward(strParam(params, "act_type", "leaky") == "prelu" ? "g0 i0 i1 o0" : "g0 i0 o0"); })
      .Case("BatchNorm", [&] { return backward("g0 o1 o2 i*"); })
      .Case("LayerNorm", [&] { return backward("g0 i0 i1 o1 o2"); })
      .Case("L2Normalization", [&] { return backward("g0 o0 o1"); })
      .Case("InstanceNorm", [&] { return backward("g0 o1 o2 i0 i1"); })
      .Case("norm", [&] { return backward("g0 i0 o0"); })
      .Case("ROIPooling", [&] { return backward("g0 i1 o1"); })
      // Legacy operators: "_backward_" + the op's name, and by default
      // every output gradient, input and output.
      .Case("_contrib_MultiBoxPrior", [&] { return node("_backward__contrib_MultiBoxPrior", "g0 i0 o0"); })
      .Case("_contrib_MultiBoxDetection",
            [&] { return node("_backward__contrib_MultiBoxDetection", "g0 i0 i1 i2 o0"); })
      .Case("_contrib_MultiBoxTarget", [&] { return node("_backward__contrib_MultiBoxTarget", ""); })
      .Case("_contrib_box_nms", [&] { return backward("g0 g1 o0 o1"); })
      .Case("_contrib_ROIAlign", [&] { return node("_backward_ROIAlign", "g0 i1"); })
      .Cases("SequenceMask", "SequenceLast", "SequenceReverse",
             [&] { return backward(op->getNumOperands() > 1 ? "g0 i1" : "g0"); })
      .Case("_contrib_interleaved_matmul_selfatt_qk", [&] { return node("_backward_interleaved_matmul_selfatt_qk", "g0 i0"); })
      .Case("_contrib_interleaved_matmul_selfatt_valatt",
            [&] { return node("_backward_interleaved_matmul_selfatt_valatt", "g0 i0 i1"); })
      .Cases("broadcast_axis", "broadcast_to", [&] {
        BackwardNodeLayout reduce = node("_broadcast_backward", "g0");
        reduce.attrs = {{"keepdims", "true"}};
        reduce.forwardAttrs = false;
        return reduce;
      })
      .Case("LRN", [&] { return backward("g0 i0 o1"); })
      .Case("SliceChannel", [&] { return backward("g*"); })
      .Case("Flatten", [&] { return node("_backward_copy", "g0"); })
      .Cases("Reshape", "expand_dims", [&] { return node("_backward_reshape", "g0"); })
      .Case("Embedding", [&] { return backward("g0 i0"); })
      .Case("take", [&] { return backward("g0 i1"); })
      .Case("Cast", [&] { return node("_backward_cast", "g0"); })
      .Cases("_copy", "_plus_scalar", "_minus_scalar", [&] { return node("_copy", "g0"); })
      .Case("make_loss", [&] { return node("ones_like", "i0"); })
      .Case("MakeLoss", [&] { return backward(strParam(params, "normalization", "null") == "valid" ? "i0" : ""); })
      .Case("SoftmaxOutput", [&] { return backward("o0 i1"); })
      .Case("LinearRegressionOutput", [&] { return node("_backward_linear_reg_out", "i1 o0"); })
      .Case("LogisticRegressionOutput", [&] { return node("_backward_logistic_reg_out", "i1 o0"); })
      .Case("MAERegressionOutput", [&] { return node("_backward_mae_reg_out", "i1 o0"); })
      .Cases("softmax", "log_softmax", [&] { return backward(op->getNumOperands() > 1 ? "g0 i0 i1 o0" : "g0 o0"); })
      .Cases("SoftmaxActivation", "sqrt", "tanh", "sigmoid", "relu", "tan", [&] { return backward("g0 o0"); })
      .Case("elemwise_sub", [&] { return node("_backward_sub", "g0"); })
      .Case("elemwise_mul", [&] { return node("_backward_mul", "g0 i0 i1"); })
      .Case("elemwise_div", [&] { return node("_backward_div", "g0 i0 i1"); })
      .Cases("_maximum", "_minimum", "broadcast_mul", "broadcast_div", "broadcast_maximum", "broadcast_minimum",
             "dot", [&] { return backward("g0 i0 i1"); })
      .Cases("_rminus_scalar", "negative", [&] { return node("negative", "g0"); })
      .Case("exp", [&] { return node("elemwise_mul", "g0 o0"); })
      .Cases("_rdiv_scalar", "_power_scalar", "log", "square", "abs", "sin", "cos", "clip",
             [&] { return backward("g0 i0"); })
      .Cases("rsqrt", "reciprocal", "erf", "log1p", "expm1", "log2", "log10", "arctan", [&] { return backward("g0 i0"); })
      .Cases("sinh", "cosh", "_maximum_scalar", "_minimum_scalar", [&] { return backward("g0 i0"); })
      .Case("UpSampling", [&] { return backward(strParam(params, "sample_type", "") == "bilinear" ? "g0 i0 i1" : "g0"); })
      .Case("Dropout", [&] { return backward("g0 o1"); })
      .Default([&] { return backward("g0"); })()};
}

ZeroGradientCheck mlir::sym::getZeroGradientCheck(Operation *op) {
  StringRef name = getMXNetOpName(op);
  if (name == "topk" || name == "sort") // MakeNonlossGradNode on {ograds[0]}
    return ZeroGradientCheck::FirstOutput;
  // ElemwiseGradUseInOut builds with MakeGradNode.
  if (name == "softmax" || name == "log_softmax")
    return op->getNumOperands() > 1 || op->hasAttr("dtype") ? ZeroGradientCheck::None
                                                             : ZeroGradientCheck::AllOutputs;
  // MakeGradNode-based rules, the legacy OperatorProperty ops, and rules
  // that pass the gradient on (CloneGradient) or copy it (add_n).
  return llvm::is_contained({"FullyConnected", "Convolution", "Deconvolution", "BatchNorm", "LayerNorm",
                             "InstanceNorm", "L2Normalization", "LRN", "Pooling", "Activation", "LeakyReLU",
                             "Dropout", "RNN", "Concat", "SliceChannel", "SwapAxis", "Pad", "Crop", "UpSampling",
                             "SequenceMask", "SequenceLast", "SequenceReverse", "ROIPooling", "_contrib_ROIAlign",
                             "_contrib_MultiBoxPrior", "_contrib_MultiBoxDetection", "_contrib_MultiBoxTarget",
                             "gather_nd", "where", "batch_dot", "elemwise_add", "add_n"},
                            name)
             ? ZeroGradientCheck::None
             : ZeroGradientCheck::AllOutputs;
}

llvm::SmallVector<std::string> mlir::sym::getBackwardInputNames(llvm::StringRef op, unsigned numInputs) {
  if (op == "_identity_with_attr_like_rhs")
    return names({"lhs", "rhs"});
  if (op == "add_n")
    return numbered("arg", numInputs);
  // batch_dot, and the backward ops of unary math, registered as binary ops.
  if (llvm::is_contained({"batch_dot", "elemwise_mul", "_backward_log", "_backward_sqrt", "_backward_square",
                          "_backward_abs", "_backward_sin", "_backward_cos", "_backward_tanh", "_backward_sigmoid",
                          "_backward_relu", "_backward_rdiv_scalar", "_backward_power_scalar", "_backward_rsqrt",
                          "_backward_reciprocal", "_backward_erf", "_backward_log1p", "_backward_expm1",
                          "_backward_log2", "_backward_log10", "_backward_tan", "_backward_arctan",
                          "_backward_sinh", "_backward_cosh", "_backward_maximum_scalar",
                          "_backward_minimum_scalar"},
                         op))
    return names({"lhs", "rhs"});
  if (op == "_backward_gather_nd")
    return names({"data", "indices"});
  if (op == "_backward_softmax" || op == "_backward_log_softmax")
    return numInputs == 2 ? names({"ograd", "output"}) : names({"ograd", "data", "length", "output"});
  return {};
}
