//===- ParamParser.cpp - MXNet parameter strings to attributes ------------===//
//
// dmlc::Parameter writes every param as a string: ints "3", floats "2e-05",
// bools "True", tuples "(3, 3)", optionals "None", dtypes "float16". A param's
// kind is fixed by its name across MXNet's ops, with a few per-op exceptions.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/ParamParser.h"

#include "dialects/Sym/IR/DTypes.h"
#include "dialects/Sym/IR/SymOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace {

/// NoneTuple: a tuple whose entries may be None (sym::kNone); NoneInt: an
/// integer or None (sym::kNone), where None is not the default.
enum class Kind { Int, NoneInt, Float, Bool, Tuple, NoneTuple, FloatTuple, String, DType };

struct ParamKind {
  Kind kind;
  bool optional = false; // "None" allowed
};

ParamKind kindOf(llvm::StringRef op, llvm::StringRef name) {
  if ((op == "sum" || op == "mean") && name == "axis")
    return {Kind::Tuple, true};
  if (op == "broadcast_axis" && (name == "axis" || name == "size"))
    return {Kind::Tuple};
  if ((op == "_contrib_arange_like" || op == "repeat") && name == "axis")
    return {Kind::Int, true};
  if ((op == "reverse" || op == "squeeze") && name == "axis")
    return {Kind::Tuple, op == "squeeze"};
  if (op == "slice" && (name == "begin" || name == "end" || name == "step"))
    return {Kind::NoneTuple};
  if (llvm::is_contained({"argsort", "topk", "sort", "pick"}, op) && name == "axis")
    return {Kind::NoneInt};
  if ((op == "argmax" || op == "argmin") && name == "axis")
    return {Kind::Int, true};
  if (op == "broadcast_like" && (name == "lhs_axes" || name == "rhs_axes"))
    return {Kind::Tuple, true};
  if ((op == "_contrib_MultiBoxPrior" || op == "_contrib_MultiBoxDetection") && name == "clip")
    return {Kind::Bool};
  if (op == "_contrib_MultiBoxPrior" && (name == "steps" || name == "offsets"))
    return {Kind::FloatTuple};
  if (op == "norm" && name == "axis")
    return {Kind::Tuple, true};
  if (op == "Crop" && (name == "offset" || name == "h_w"))
    return {Kind::Tuple};
  return llvm::StringSwitch<ParamKind>(name)
      .Cases("num_hidden", "num_filter", "num_group", "workspace", "num_args", {Kind::Int})
      .Cases("num_outputs", "nsize", "input_dim", "output_dim", "scale", {Kind::Int})
      .Cases("heads", "repeat", "repeats", {Kind::Int})
      .Cases("dim", "dim1", "dim2", "begin", "axis", {Kind::Int})
      .Cases("height", "width", "k", "depth", "state_size", "num_layers", {Kind::Int})
      .Case("projection_size", {Kind::Int, true})
      .Cases("lstm_state_clip_min", "lstm_state_clip_max", {Kind::Float, true})
      .Cases("scale_height", "scale_width", {Kind::Float, true})
      .Cases("p_value", "end", {Kind::Int, true})
      .Cases("slope", "lower_bound", "upper_bound", "eps", "momentum", {Kind::Float})
      .Cases("p", "alpha", "beta", "knorm", "grad_scale", {Kind::Float})
      .Cases("valid_thresh", "ignore_label", "smooth_alpha", "scalar", {Kind::Float})
      .Cases("overlap_thresh", "std0", "std1", "std2", "std3", "clip", "spatial_scale", {Kind::Float})
      .Cases("topk", "coord_start", "score_index", "id_index", "background_id", "sample_ratio", {Kind::Int})
      .Case("pooled_size", {Kind::Tuple})
      .Cases("sizes", "ratios", "variances", {Kind::FloatTuple})
      .Cases("threshold", "nms_threshold", "overlap_threshold", "negative_mining_ratio", "negative_mining_thresh",
             {Kind::Float})
      .Cases("nms_topk", "minimum_negative_samples", {Kind::Int})
      .Case("stop", {Kind::Float, true})
      .Cases("a_min", "a_max", "constant_value", "value", "start", "step", {Kind::Float})
      .Cases("on_value", "off_value", {Kind::Float})
      .Cases("temperature", "min_calib_range", "max_calib_range", {Kind::Float, true})
      .Cases("kernel", "stride", "dilate", "pad", "axes", "adj", {Kind::Tuple})
      .Cases("shape", "target_shape", "output_size", "pad_width", "reps", {Kind::Tuple})
      .Cases("count_include_pad", "cudnn_off", {Kind::Bool, true})
      .Cases("layout", "cudnn_tune", "forward_stype", {Kind::String, true})
      .Case("dtype", {Kind::DType, op == "softmax" || op == "log_softmax"})
      .Case("out_dtype", {Kind::DType, true})
      .Case("ord", {Kind::Int})
      .Cases("act_type", "pool_type", "pooling_convention", "mode", "normalization",
             {Kind::String})
      .Cases("in_format", "out_format", "format", {Kind::String})
      .Cases("sample_type", "multi_input_mode", "ctx", "ret_typ", {Kind::String})
      .Default({Kind::Bool});
}

std::optional<bool> parseBool(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<bool>>(s.trim())
      .Cases("True", "true", "1", true)
      .Cases("False", "false", "0", false)
      .Default(std::nullopt);
}

std::optional<int64_t> parseInt(llvm::StringRef s) {
  s = s.trim();
  s.consume_back("L"); // Python 2 longs in old files
  int64_t v;
  if (s.getAsInteger(10, v))
    return std::nullopt;
  return v;
}

std::optional<double> parseFloat(llvm::StringRef s) {
  double v;
  if (s.trim().getAsDouble(v))
    return std::nullopt;
  return v;
}

/// "(3, 3)", "[3,3]", "(3,)", "()" or a bare "3", each entry read by
/// `entry`.
template <typename T>
std::optional<llvm::SmallVector<T>> parseTuple(llvm::StringRef s,
                                               llvm::function_ref<std::optional<T>(llvm::StringRef)> entry) {
  s = s.trim();
  llvm::SmallVector<T> values;
  if ((s.consume_front("(") && s.consume_back(")")) || (s.consume_front("[") && s.consume_back("]"))) {
    llvm::SmallVector<llvm::StringRef> parts;
    s.split(parts, ',');
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].trim().empty() && i + 1 == parts.size())
        break; // trailing comma: "(3,)" or "()"
      std::optional<T> v = entry(parts[i]);
      if (!v)
        return std::nullopt;
      values.push_back(*v);
    }
    return values;
  }
  std::optional<T> v = entry(s);
  if (!v)
    return std::nullopt;
  values.push_back(*v);
  return values;
}

std::optional<int64_t> parseIntOrNone(llvm::StringRef s) {
  return s.trim() == "None" ? std::optional<int64_t>(sym::kNone) : parseInt(s);
}

std::optional<float> parseFloat32(llvm::StringRef s) {
  std::optional<double> v = parseFloat(s);
  return v ? std::optional<float>(static_cast<float>(*v)) : std::nullopt;
}

} // namespace


FailureOr<Attribute> symc::parseParam(MLIRContext *ctx, llvm::StringRef op, llvm::StringRef name,
                                      llvm::StringRef value, std::string &error) {
  Builder b(ctx);
  ParamKind pk = kindOf(op, name);
  if (pk.optional && value.trim() == "None")
    return Attribute();
  auto expected = [&](const char *what) -> FailureOr<Attribute> {
    error = std::string("expected ") + what;
    return failure();
  };
  switch (pk.kind) {
  case Kind::Int:
    if (auto v = parseInt(value))
      return Attribute(b.getI64IntegerAttr(*v));
    return expected("an integer");
  case Kind::NoneInt:
    if (auto v = value.trim() == "None" ? std::optional<int64_t>(sym::kNone) : parseInt(value))
      return Attribute(b.getI64IntegerAttr(*v));
    return expected("an integer or None");
  case Kind::Float:
    if (auto v = parseFloat(value))
      return Attribute(b.getF64FloatAttr(*v));
    return expected("a number");
  case Kind::Bool:
    if (auto v = parseBool(value))
      return Attribute(b.getBoolAttr(*v));
    return expected("a boolean (True/False)");
  case Kind::Tuple:
    if (auto v = parseTuple<int64_t>(value, parseInt))
      return Attribute(b.getDenseI64ArrayAttr(*v));
    return expected("a tuple of integers like (3, 3)");
  case Kind::NoneTuple:
    if (auto v = parseTuple<int64_t>(value, parseIntOrNone))
      return Attribute(b.getDenseI64ArrayAttr(*v));
    return expected("a tuple of integers or None like (0, None)");
  case Kind::FloatTuple: // mxnet::Tuple<float>
    if (auto v = parseTuple<float>(value, parseFloat32))
      return Attribute(b.getDenseF32ArrayAttr(*v));
    return expected("a tuple of numbers like (0.1, 0.2)");
  case Kind::String:
    return Attribute(b.getStringAttr(value));
  case Kind::DType:
    if (Type t = sym::parseDTypeName(ctx, value.trim()))
      return Attribute(TypeAttr::get(t));
    return expected("a dtype name like float32");
  }
  llvm_unreachable("covered switch");
}
