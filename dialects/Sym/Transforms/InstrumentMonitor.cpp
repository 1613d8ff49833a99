//===- InstrumentMonitor.cpp - the forward that materializes every node ---===//
//
// MXNet's monitor callback sees every node's outputs; the compiled forward
// fuses them away. @main_monitor is @main returning, after its outputs,
// every op's outputs in node order, hidden ones included (LRN's tmp_norm,
// BatchNorm's mean and var, Dropout's mask), named by `sym.monitor`, so
// the runtime can call back with MXNet's names while @main stays fused.
// @main_train_monitor is the same in training mode, where the artifact is
// compiled for training (@main_train) and @main has train-sensitive ops.
// @main_backward_monitor is @main_backward that recomputes the training
// forward (its step seed makes Dropout draw the same masks) and returns,
// after the gradients and aux updates, the outputs of every node of the
// backward graph MXNet builds, and the arrays they read; that graph is
// described in its `sym.backward_graph` attribute.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"
#include "dialects/Sym/Transforms/Differentiate.h"
#include "dialects/Sym/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::sym {
#define GEN_PASS_DEF_SYMINSTRUMENTMONITOR
#include "dialects/Sym/Transforms/Passes.h.inc"
} // namespace mlir::sym

using namespace mlir;
using namespace mlir::sym;

namespace {

bool hasDynamicDim(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

/// A static value computed from dynamic-batch operands (BatchNorm's mean and
/// var over a '?' batch): a reduction over the batch, which the chunked CPU
/// backend cannot return. The monitor leaves those out.
bool reducesDynamicBatch(Operation *op, Value result) {
  return !hasDynamicDim(result.getType()) && llvm::any_of(op->getOperandTypes(), hasDynamicDim);
}

/// Appends every sym op's outputs to `monitor`'s results.
void returnEveryNodeOutput(func::FuncOp monitor) {
  auto ret = cast<func::ReturnOp>(monitor.getBody().front().getTerminator());
  OpBuilder b(ret);
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < monitor.getNumResults(); ++i)
    attrs.push_back(monitor.getResultAttrDict(i));
  monitor.walk([&](Operation *op) {
    if (!isa<SymDialect>(op->getDialect()))
      return;
    OpSignature sig = getOpSignature(op);
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      if (reducesDynamicBatch(op, op->getResult(i)))
        continue;
      results.push_back(op->getResult(i));
      attrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(kMonitorAttr, b.getStringAttr(getOutputName(nodeName(op->getLoc()), sig, i)))));
    }
  });
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  monitor.setType(b.getFunctionType(monitor.getArgumentTypes(), ValueRange(results).getTypes()));
  monitor.setAllResultAttrs(attrs);
}

/// The results of @main_backward_monitor past its gradients and aux
/// updates: the arrays the backward graph's nodes read and write, each once.
class MonitorResults {
public:
  MonitorResults(func::FuncOp function, SmallVectorImpl<Value> &results, SmallVectorImpl<DictionaryAttr> &attrs)
      : function(function), b(function.getContext()), results(results), attrs(attrs), first(results.size()) {}

  /// The index among the monitor results of `value`, named `name` if new;
  /// -1 for none.
  int64_t indexOf(Value value, StringRef name) {
    if (!value)
      return -1;
    auto [it, inserted] = index.try_emplace(value, static_cast<int64_t>(results.size() - first));
    if (inserted) {
      results.push_back(value);
      attrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kMonitorAttr, b.getStringAttr(name))));
    }
    return it->second;
  }
  /// A bound argument or aux state (not a head gradient), by position.
  std::optional<unsigned> argumentOf(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || !function.getArgAttr(arg.getArgNumber(), kNameAttr))
      return std::nullopt;
    return arg.getArgNumber();
  }

private:
  func::FuncOp function;
  Builder b;
  SmallVectorImpl<Value> &results;
  SmallVectorImpl<DictionaryAttr> &attrs;
  size_t first;
  DenseMap<Value, int64_t> index;
};

/// "<node>_output" for a one-output node, else "<node>_output<i>".
std::string outputName(const BackwardNode &node, unsigned i) {
  return node.name + "_output" + (node.outputs.size() == 1 ? "" : std::to_string(i));
}

/// What a backward node's input is called among the monitor results: the
/// name of the node output (or head gradient) it is.
std::string arrayName(const BackwardGraph &graph, const BackwardEntry &entry, Value value) {
  if (entry.backwardNode >= 0)
    return outputName(graph.nodes[entry.backwardNode], entry.index);
  if (auto result = dyn_cast<OpResult>(value))
    return getOutputName(entry.node, getOpSignature(result.getOwner()), entry.index);
  return entry.node;
}

NamedAttribute entryAttr(Builder &b, const BackwardEntry &entry) {
  return entry.backwardNode >= 0 ? b.getNamedAttr("backward", b.getI64IntegerAttr(entry.backwardNode))
                                 : b.getNamedAttr("node", b.getStringAttr(entry.node));
}

/// One input of a backward node: its entry, the monitor_all callback name,
/// and where its array is (a bound argument or a monitor result).
DictionaryAttr describeInput(Builder &b, const BackwardGraph &graph, const BackwardNode &node, unsigned j,
                             MonitorResults &values) {
  const BackwardEntry &entry = node.inputs[j];
  SmallVector<std::string> names = getBackwardInputNames(node.op, node.inputs.size());
  std::string name = node.name + "_" + (j < names.size() ? names[j] : "input" + std::to_string(j));
  SmallVector<NamedAttribute> attrs{entryAttr(b, entry), b.getNamedAttr("index", b.getI64IntegerAttr(entry.index)),
                                    b.getNamedAttr("version", b.getI64IntegerAttr(entry.version)),
                                    b.getNamedAttr("name", b.getStringAttr(name))};
  Value value = node.inputValues[j];
  if (entry.backwardNode < 0 && isa_and_nonnull<BlockArgument>(value))
    attrs.push_back(b.getNamedAttr("variable", b.getStringAttr(entry.node)));
  if (!value) // an output of MXNet's kernel that symc's has not
    attrs.push_back(b.getNamedAttr("value", b.getI64IntegerAttr(-1)));
  else if (std::optional<unsigned> arg = values.argumentOf(value))
    attrs.push_back(b.getNamedAttr("argument", b.getI64IntegerAttr(*arg)));
  else
    attrs.push_back(b.getNamedAttr("value", b.getI64IntegerAttr(values.indexOf(value, arrayName(graph, entry, value)))));
  return b.getDictionaryAttr(attrs);
}

/// `graph` as the `sym.backward_graph` attribute, its arrays added to `values`.
DictionaryAttr describeGraph(Builder &b, const BackwardGraph &graph, MonitorResults &values) {
  SmallVector<Attribute> nodes, gradients;
  for (const BackwardNode &node : graph.nodes) {
    SmallVector<Attribute> inputs, outputs;
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      inputs.push_back(describeInput(b, graph, node, j, values));
    for (auto [i, output] : llvm::enumerate(node.outputs))
      outputs.push_back(b.getI64IntegerAttr(values.indexOf(output, outputName(node, i))));
    SmallVector<NamedAttribute> attrs;
    for (const auto &[key, value] : node.attrs)
      attrs.push_back(b.getNamedAttr(key, b.getStringAttr(value)));
    nodes.push_back(b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(node.name)),
                                         b.getNamedAttr("op", b.getStringAttr(node.op)),
                                         b.getNamedAttr("forward", b.getStringAttr(node.forward)),
                                         b.getNamedAttr("forward_attrs", b.getBoolAttr(node.forwardAttrs)),
                                         b.getNamedAttr("attrs", b.getDictionaryAttr(attrs)),
                                         b.getNamedAttr("inputs", b.getArrayAttr(inputs)),
                                         b.getNamedAttr("outputs", b.getArrayAttr(outputs))}));
  }
  for (const auto &[argument, entry] : graph.gradients)
    gradients.push_back(b.getDictionaryAttr({b.getNamedAttr("argument", b.getStringAttr(argument)), entryAttr(b, entry),
                                             b.getNamedAttr("index", b.getI64IntegerAttr(entry.index))}));
  return b.getDictionaryAttr(
      {b.getNamedAttr("nodes", b.getArrayAttr(nodes)), b.getNamedAttr("gradients", b.getArrayAttr(gradients))});
}

struct SymInstrumentMonitorPass : sym::impl::SymInstrumentMonitorBase<SymInstrumentMonitorPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("no @main function to instrument");
      return signalPassFailure();
    }
    OpBuilder b(main);
    b.setInsertionPointAfter(main);
    auto monitor = cast<func::FuncOp>(b.clone(*main));
    monitor.setName("main_monitor");
    // A training-mode monitor where the artifact trains (sym-generate-gradients
    // made @main_train): an inference artifact runs only in inference mode.
    if (module.lookupSymbol("main_train"))
      if (func::FuncOp train = cloneInTrainingMode(main, "main_train_monitor"))
        returnEveryNodeOutput(train);
    returnEveryNodeOutput(monitor);
    if (auto backward = module.lookupSymbol<func::FuncOp>("main_backward"))
      if (failed(buildBackwardMonitor(main, backward)))
        return signalPassFailure();
  }

  /// @main_backward_monitor: the training forward, differentiated again
  /// with the heads and gradients of @main_backward (in its frame order),
  /// recording MXNet's backward graph.
  LogicalResult buildBackwardMonitor(func::FuncOp main, func::FuncOp backward) {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>("main_train");
    OpBuilder b(backward);
    b.setInsertionPointAfter(backward);
    auto function = cast<func::FuncOp>(b.clone(*(train ? train : main)));
    function.setName("main_backward_monitor");
    Block &body = function.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Value> outputs(ret.getOperands().take_front(main.getNumResults()));
    BackwardGraph graph;
    GradientBuilder builder(function, &graph);
    for (unsigned i = 0; i < backward.getNumArguments(); ++i) {
      auto head = backward.getArgAttrOfType<StringAttr>(i, kHeadGradAttr);
      if (!head)
        continue;
      unsigned output = 0;
      while (output < main.getNumResults() && main.getResultAttrOfType<StringAttr>(output, kNameAttr) != head)
        ++output;
      if (output == main.getNumResults())
        return backward.emitError("head gradient of '") << head.getValue() << "', which @main does not output";
      unsigned position = function.getNumArguments();
      function.insertArgument(position, backward.getArgument(i).getType(), backward.getArgAttrDict(i),
                              backward.getArgument(i).getLoc());
      builder.seedHead(outputs[output], body.getArgument(position), output);
    }
    if (failed(builder.sweep()))
      return failure();
    b.setInsertionPoint(ret);
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> attrs;
    SmallVector<std::pair<std::string, Value>> gradientArgs;
    for (unsigned r = 0; r < backward.getNumResults(); ++r) {
      auto name = backward.getResultAttrOfType<StringAttr>(r, kGradOfAttr);
      if (!name)
        continue;
      unsigned arg = 0;
      while (arg < main.getNumArguments() &&
             (function.getArgAttrOfType<StringAttr>(arg, kNameAttr) != name || function.getArgAttr(arg, kAuxAttr)))
        ++arg;
      if (arg == main.getNumArguments())
        return backward.emitError("gradient of '") << name.getValue() << "', which is not an argument of @main";
      Value grad = builder.gradientOf(body.getArgument(arg));
      if (!grad)
        grad = *zerosLike(b, body.getArgument(arg), ret.getLoc()); // @main_backward made sure it is static
      results.push_back(grad);
      attrs.push_back(backward.getResultAttrDict(r));
      gradientArgs.push_back({name.str(), body.getArgument(arg)});
    }
    builder.recordGradients(gradientArgs);
    if (failed(appendAuxUpdates(function, b, results, attrs)))
      return failure();
    MonitorResults values(function, results, attrs);
    function->setAttr(kBackwardGraphAttr, describeGraph(b, graph, values));
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    function.setAllResultAttrs(attrs);
    OpPassManager pm(func::FuncOp::getOperationName());
    pm.addPass(createSymInferShapes());
    if (failed(runPipeline(pm, function)))
      return failure();
    function.setType(b.getFunctionType(function.getArgumentTypes(), body.getTerminator()->getOperandTypes()));
    return success();
  }
};

} // namespace
