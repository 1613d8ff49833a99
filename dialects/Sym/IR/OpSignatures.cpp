//===- OpSignatures.cpp - MXNet op names, inputs and outputs --------------===//
#include "dialects/Sym/IR/OpSignatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

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
          "mean", "dot", "batch_dot", "_zeros", "_ones"})
      t[canonical] = canonical;
    const std::pair<llvm::StringRef, llvm::StringRef> aliases[] = {
        {"Convolution_v1", "Convolution"}, {"Pooling_v1", "Pooling"},
        {"BatchNorm_v1", "BatchNorm"}, {"concat", "Concat"}, {"split", "SliceChannel"},
        {"flatten", "Flatten"}, {"reshape", "Reshape"},
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
        {"sum_axis", "sum"}, {"_ElementWiseSum", "add_n"}};
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

llvm::SmallVector<std::string> names(std::initializer_list<const char *> list) {
  return llvm::SmallVector<std::string>(list.begin(), list.end());
}

} // namespace

std::optional<llvm::StringRef> mlir::sym::resolveOpName(llvm::StringRef name) {
  auto it = aliasTable().find(name);
  if (it == aliasTable().end())
    return std::nullopt;
  return it->second;
}

OpSignature mlir::sym::getOpSignature(llvm::StringRef op, DictionaryAttr params) {
  OpSignature sig;
  sig.outputs = names({"output"});
  auto withOutputs = [&](std::initializer_list<const char *> outs, unsigned visible) {
    sig.outputs = names(outs);
    sig.numVisibleOutputs = visible;
    sig.namesOutputs = true;
  };

  if (op == "FullyConnected" || op == "Convolution") {
    sig.inputs = boolParam(params, "no_bias", false) ? names({"data", "weight"})
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
  } else if (op == "Concat" || op == "add_n") {
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
  } else if (op == "softmax" || op == "log_softmax") {
    sig.inputs = boolParam(params, "use_length", false) ? names({"data", "length"})
                                                        : names({"data"});
  } else if (op.starts_with("elemwise_") || op.starts_with("broadcast_") ||
             op == "_maximum" || op == "_minimum" || op == "dot" || op == "batch_dot") {
    sig.inputs = names({"lhs", "rhs"});
  } else if (op == "make_loss") {
    sig.inputs = names({"data"});
    sig.listsInputNames = false;
    withOutputs({"loss"}, 1);
  } else if (op == "_zeros" || op == "_ones") {
    sig.inputs = {};
  } else {
    // Of the remaining ops, only the legacy operators register
    // FListInputNames.
    sig.inputs = names({"data"});
    sig.listsInputNames = op == "Pooling" || op == "SwapAxis" || op == "MakeLoss";
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
