//===- Manifest.cpp - what an artifact tells the runtime about itself -----===//
#include "codegen/Artifact/Manifest.h"

#include "dialects/Sym/IR/DTypes.h"
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace symc {
namespace {

llvm::json::Object describeValue(Type type, StringAttr name) {
  auto tensor = cast<TensorType>(type);
  llvm::json::Value shape = nullptr;
  if (tensor.hasRank()) {
    llvm::json::Array dims;
    for (int64_t d : tensor.getShape())
      dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
    shape = std::move(dims);
  }
  return llvm::json::Object{{"name", name ? name.getValue() : ""},
                            {"shape", std::move(shape)},
                            {"dtype", sym::dtypeName(tensor.getElementType())}};
}

llvm::json::Array describeNodes(func::FuncOp main) {
  llvm::json::Array nodes;
  main.walk([&](Operation *op) {
    if (isa<sym::SymDialect>(op->getDialect()))
      nodes.push_back(llvm::json::Object{{"op", op->getName().stripDialect()},
                                         {"name", sym::nodeName(op->getLoc())}});
  });
  return nodes;
}

/// Whether `use` is the `label` input of a loss head (an op whose gradient
/// ignores its head gradient): its forward does not read it.
bool isLossLabel(OpOperand &use) {
  Operation *op = use.getOwner();
  auto rule = dyn_cast<sym::GradientOpInterface>(op);
  sym::OpSignature sig = sym::getOpSignature(op);
  return rule && !rule.readsResultGradient(0) && use.getOperandNumber() < sig.inputs.size() &&
         sig.inputs[use.getOperandNumber()] == "label";
}

/// Arguments only loss heads read, as labels: inference needs no value for them.
llvm::json::Array labelArguments(func::FuncOp main) {
  llvm::json::Array names;
  for (BlockArgument arg : main.getArguments())
    if (!arg.use_empty() && llvm::all_of(arg.getUses(), isLossLabel))
      if (auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(), sym::kNameAttr))
        names.push_back(name.getValue());
  return names;
}

llvm::json::Array trainSensitiveNodes(func::FuncOp main) {
  llvm::json::Array names;
  main.walk([&](Operation *op) {
    if (sym::isTrainSensitive(op))
      names.push_back(sym::nodeName(op->getLoc()));
  });
  return names;
}

/// Arguments that are the gamma of a fix_gamma BatchNorm: MXNet's forward
/// writes 1 into them.
llvm::json::Array fixedGammas(func::FuncOp main) {
  llvm::json::Array names;
  main.walk([&](sym::BatchNormOp bn) {
    auto arg = dyn_cast<BlockArgument>(bn.getGamma());
    if (bn.getFixGamma() && arg)
      if (auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(), sym::kNameAttr))
        names.push_back(name.getValue());
  });
  return names;
}

} // namespace

llvm::json::Object describeInterface(func::FuncOp main) {
  llvm::json::Array args, aux, outputs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    if (main.getArgAttr(i, sym::kRngSeedAttr))
      continue; // read from dims[1], not a bound array
    auto entry = describeValue(main.getArgument(i).getType(),
                               main.getArgAttrOfType<StringAttr>(i, sym::kNameAttr));
    (main.getArgAttr(i, sym::kAuxAttr) ? aux : args).push_back(std::move(entry));
  }
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    outputs.push_back(describeValue(main.getResultTypes()[i],
                                    main.getResultAttrOfType<StringAttr>(i, sym::kNameAttr)));
  return llvm::json::Object{{"arguments", std::move(args)},
                            {"aux_states", std::move(aux)},
                            {"outputs", std::move(outputs)}};
}

/// The backward entry: its head gradients (named by output), the forward
/// values the training forward saves for it, and the gradients it computes
/// (named by argument), in frame order.
static llvm::json::Object describeBackward(func::FuncOp backward, StringRef prefix) {
  llvm::json::Array heads, saved, grads, auxUpdates;
  for (unsigned i = 0; i < backward.getNumArguments(); ++i) {
    Type type = backward.getArgument(i).getType();
    if (auto output = backward.getArgAttrOfType<StringAttr>(i, sym::kHeadGradAttr))
      heads.push_back(describeValue(type, output));
    else if (auto value = backward.getArgAttrOfType<StringAttr>(i, sym::kSavedAttr))
      saved.push_back(describeValue(type, value));
  }
  for (unsigned i = 0; i < backward.getNumResults(); ++i) {
    Type type = backward.getResultTypes()[i];
    if (auto grad = backward.getResultAttrOfType<StringAttr>(i, sym::kGradOfAttr))
      grads.push_back(describeValue(type, grad));
    else
      auxUpdates.push_back(describeValue(type, backward.getResultAttrOfType<StringAttr>(i, sym::kAuxUpdateOfAttr)));
  }
  return llvm::json::Object{{"entry", backwardEntryName(prefix)},
                            {"head_gradients", std::move(heads)},
                            {"saved", std::move(saved)},
                            {"gradients", std::move(grads)},
                            {"aux_updates", std::move(auxUpdates)}};
}

static llvm::json::Object describeVariant(StringRef name, std::string entry, bool isTrain) {
  return llvm::json::Object{{"name", name}, {"entry", std::move(entry)}, {"is_train", isTrain}};
}

/// An attribute of strings, booleans, integers, arrays and dictionaries as JSON.
static llvm::json::Value toJson(Attribute attr) {
  if (auto str = dyn_cast<StringAttr>(attr))
    return str.getValue();
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return flag.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getInt();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute element : array)
      out.push_back(toJson(element));
    return out;
  }
  llvm::json::Object out;
  for (NamedAttribute member : cast<DictionaryAttr>(attr))
    out[member.getName().getValue()] = toJson(member.getValue());
  return out;
}

/// @main_backward_monitor: its extra results (after the gradients and aux
/// updates) and MXNet's backward graph, whose nodes' arrays they are.
static llvm::json::Object describeBackwardMonitor(func::FuncOp monitor, StringRef prefix) {
  llvm::json::Array values;
  for (unsigned i = 0; i < monitor.getNumResults(); ++i)
    if (auto name = monitor.getResultAttrOfType<StringAttr>(i, sym::kMonitorAttr))
      values.push_back(describeValue(monitor.getResultTypes()[i], name));
  llvm::json::Object graph = *toJson(monitor->getAttr(sym::kBackwardGraphAttr)).getAsObject();
  graph["entry"] = backwardMonitorEntryName(prefix);
  graph["values"] = std::move(values);
  return graph;
}

/// The monitor variants' extra results and, per node in MXNet's order, the
/// callback names of its inputs (with monitor_all) and outputs: inputs name
/// a bound argument ("argument", its position among arguments and aux
/// states) or an earlier node's output ("value", a monitored result).
static llvm::json::Object describeMonitor(func::FuncOp monitor, func::FuncOp train, unsigned numOutputs,
                                          StringRef prefix) {
  auto ret = cast<func::ReturnOp>(monitor.getBody().front().getTerminator());
  llvm::json::Array values, nodes;
  llvm::DenseMap<Value, int64_t> valueIndex;
  for (unsigned i = numOutputs; i < monitor.getNumResults(); ++i) {
    valueIndex.try_emplace(ret.getOperand(i), i - numOutputs);
    values.push_back(describeValue(monitor.getResultTypes()[i],
                                   monitor.getResultAttrOfType<StringAttr>(i, sym::kMonitorAttr)));
  }
  monitor.walk([&](Operation *op) {
    if (!isa<sym::SymDialect>(op->getDialect()))
      return;
    StringRef node = sym::nodeName(op->getLoc());
    sym::OpSignature sig = sym::getOpSignature(op);
    llvm::json::Array inputs, outputs;
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned k = operand.getOperandNumber();
      llvm::json::Object input{{"name", sym::getMonitorInputName(node, sig, k)}};
      if (auto arg = dyn_cast<BlockArgument>(operand.get())) {
        input["argument"] = arg.getArgNumber();
        input["variable"] = monitor.getArgAttrOfType<StringAttr>(arg.getArgNumber(), sym::kNameAttr).getValue();
      } else {
        auto it = valueIndex.find(operand.get());
        input["value"] = it == valueIndex.end() ? -1 : it->second;
      }
      inputs.push_back(std::move(input));
    }
    for (Value result : op->getResults())
      if (auto it = valueIndex.find(result); it != valueIndex.end())
        outputs.push_back(it->second);
    nodes.push_back(llvm::json::Object{{"name", node}, {"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}});
  });
  llvm::json::Array variants{describeVariant("monitor", monitorEntryName(prefix, false), false)};
  if (train)
    variants.push_back(describeVariant("training monitor", monitorEntryName(prefix, true), true));
  llvm::json::Object description{{"variants", std::move(variants)}, {"values", std::move(values)}, {"nodes", std::move(nodes)}};
  if (auto backward = monitor->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>("main_backward_monitor"))
    description["backward"] = describeBackwardMonitor(backward, prefix);
  return description;
}

llvm::json::Object buildManifest(func::FuncOp main, func::FuncOp train, func::FuncOp backward,
                                 StringRef prefix) {
  llvm::json::Object manifest = describeInterface(main);
  manifest["abi_version"] = kArtifactAbiVersion;
  manifest["prefix"] = prefix;
  manifest["nodes"] = describeNodes(main);
  manifest["train_sensitive_nodes"] = trainSensitiveNodes(main);
  manifest["labels"] = labelArguments(main);
  auto module = main->getParentOfType<ModuleOp>();
  if (auto symbol = module->getAttrOfType<StringAttr>(sym::kSymbolAttr))
    manifest["symbol"] = symbol.getValue();
  if (auto monitor = module.lookupSymbol<func::FuncOp>("main_monitor"))
    manifest["monitor"] = describeMonitor(monitor, module.lookupSymbol<func::FuncOp>("main_train_monitor"),
                                          main.getNumResults(), prefix);
  manifest["fixed_gammas"] = fixedGammas(main);
  llvm::json::Array variants{describeVariant("inference", forwardEntryName(prefix), false)};
  if (train)
    variants.push_back(describeVariant("training", trainingForwardEntryName(prefix), true));
  manifest["variants"] = std::move(variants);
  manifest["backward"] = backward ? llvm::json::Value(describeBackward(backward, prefix)) : nullptr;
  return manifest;
}

std::string forwardEntryName(StringRef prefix) { return (prefix + "_forward").str(); }
std::string trainingForwardEntryName(StringRef prefix) { return (prefix + "_forward_train").str(); }
std::string backwardEntryName(StringRef prefix) { return (prefix + "_backward").str(); }
std::string monitorEntryName(StringRef prefix, bool isTrain) {
  return (prefix + (isTrain ? "_forward_train_monitor" : "_forward_monitor")).str();
}
std::string backwardMonitorEntryName(StringRef prefix) { return (prefix + "_backward_monitor").str(); }
std::string prepareEntryName(StringRef prefix) { return (prefix + "_prepare").str(); }
std::string manifestEntryName(StringRef prefix) { return (prefix + "_manifest").str(); }
std::string paramsEntryName(StringRef prefix) { return (prefix + "_params").str(); }
std::string manifestGlobalName(StringRef prefix) { return manifestEntryName(prefix) + "_json"; }

namespace {

int64_t dtypeBytes(StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases("float64", "int64", 8)
      .Cases("float32", "int32", 4)
      .Cases("float16", "bfloat16", 2)
      .Default(1);
}

/// Bytes of the specs in `list`: a fixed part and a part per batch row.
struct Footprint {
  int64_t fixed = 0, perRow = 0;
  size_t count = 0;
};

Footprint footprintOf(const llvm::json::Array *list) {
  Footprint f;
  for (const llvm::json::Value &spec : list ? *list : llvm::json::Array()) {
    const llvm::json::Object *object = spec.getAsObject();
    const llvm::json::Array *shape = object ? object->getArray("shape") : nullptr;
    if (!shape)
      continue;
    int64_t bytes = dtypeBytes(object->getString("dtype").value_or(""));
    bool batched = false;
    for (const llvm::json::Value &dim : *shape) {
      int64_t d = dim.getAsInteger().value_or(0);
      batched |= d < 0;
      bytes *= d < 0 ? 1 : d;
    }
    (batched ? f.perRow : f.fixed) += bytes;
    ++f.count;
  }
  return f;
}

std::string formatBytes(int64_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double value = bytes;
  const char *unit = "KiB";
  for (const char *next : {"MiB", "GiB"}) {
    if (value < 1024 * 1024)
      break;
    value /= 1024;
    unit = next;
  }
  return llvm::formatv("{0:F1} {1}", value / 1024, unit).str();
}

std::string formatFootprint(const Footprint &f) {
  std::string text = formatBytes(f.fixed);
  if (f.perRow)
    text += " + " + formatBytes(f.perRow) + " per batch row";
  return text;
}

} // namespace

std::string describeMemoryPlan(const llvm::json::Object &manifest) {
  std::string text = "arguments " + formatFootprint(footprintOf(manifest.getArray("arguments"))) +
                     ", aux states " + formatFootprint(footprintOf(manifest.getArray("aux_states"))) +
                     ", outputs " + formatFootprint(footprintOf(manifest.getArray("outputs"))) + ", workspace " +
                     formatBytes(manifest.getInteger("workspace_bytes").value_or(0));
  if (const llvm::json::Object *small = manifest.getObject("small_batch_workspace"))
    text += " (" + formatBytes(small->getInteger("bytes").value_or(0)) + " below " +
            std::to_string(small->getInteger("below_rows").value_or(0)) + " rows)";
  if (const llvm::json::Object *monitor = manifest.getObject("monitor"))
    if (std::optional<int64_t> bytes = monitor->getInteger("workspace_bytes");
        bytes && *bytes > manifest.getInteger("workspace_bytes").value_or(0))
      text += " (" + formatBytes(*bytes) + " with a monitor callback)";
  if (const llvm::json::Object *prepare = manifest.getObject("prepare"))
    text += ", prepared (packed weights) " + formatFootprint(footprintOf(prepare->getArray("arrays")));
  const llvm::json::Object *backward = manifest.getObject("backward");
  if (!backward)
    return text;
  Footprint saved = footprintOf(backward->getArray("saved"));
  return text + ", saved activations " + formatFootprint(saved) + " in " + std::to_string(saved.count) +
         " values, gradients " + formatFootprint(footprintOf(backward->getArray("gradients"))) +
         ", head gradients " + formatFootprint(footprintOf(backward->getArray("head_gradients")));
}

} // namespace symc
