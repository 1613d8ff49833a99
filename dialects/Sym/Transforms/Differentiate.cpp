//===- Differentiate.cpp - MXNet's backward construction on sym ops -------===//
#include "dialects/Sym/Transforms/Differentiate.h"

#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::sym;

namespace {

template <typename OpTy> Value sameOp(OpBuilder &b, Value like, ValueRange operands) {
  return b.create<OpTy>(like.getLoc(), TypeRange{like.getType()}, operands)->getResult(0);
}

template <typename OpTy> Value scalarOp(OpBuilder &b, Value x, double scalar) {
  return b.create<OpTy>(x.getLoc(), TypeRange{x.getType()}, ValueRange{x},
                        ArrayRef<NamedAttribute>{b.getNamedAttr("scalar", b.getF64FloatAttr(scalar)),
                                                 b.getNamedAttr("is_int", b.getBoolAttr(false))})
      ->getResult(0);
}

BackwardNode makeNode(std::string name, std::string op, std::string forward = "") {
  BackwardNode node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.forward = std::move(forward);
  return node;
}

BackwardEntry forwardEntry(std::string node, unsigned index = 0, unsigned version = 0) {
  BackwardEntry entry;
  entry.node = std::move(node);
  entry.index = index;
  entry.version = version;
  return entry;
}

BackwardEntry backwardEntry(int node, unsigned index = 0) {
  BackwardEntry entry;
  entry.backwardNode = node;
  entry.index = index;
  return entry;
}

/// The operands a token of BackwardNodeLayout::inputs names ("i1", "g*").
SmallVector<unsigned> tokenIndices(StringRef token, unsigned count) {
  if (token.drop_front() == "*")
    return llvm::to_vector(llvm::seq(count));
  unsigned index = 0;
  (void)token.drop_front().getAsInteger(10, index);
  return {index};
}

} // namespace

FailureOr<Value> mlir::sym::zerosLike(OpBuilder &b, Value value, Location loc) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return failure();
  return b.create<ZerosOp>(loc, TypeRange{type}, ValueRange{},
                           ArrayRef<NamedAttribute>{
                               b.getNamedAttr("shape", b.getDenseI64ArrayAttr(type.getShape())),
                               b.getNamedAttr("dtype", TypeAttr::get(type.getElementType()))})
      ->getResult(0);
}

GradientBuilder::GradientBuilder(func::FuncOp function, BackwardGraph *graph)
    : function(function), b(function.getContext()), graph(graph) {}

void GradientBuilder::accumulate(Value value, Value grad) {
  b.setInsertionPoint(function.getBody().front().getTerminator());
  Value &slot = grads[value];
  slot = slot ? b.create<ElemwiseAddOp>(grad.getLoc(), value.getType(), slot, grad).getResult() : grad;
}

void GradientBuilder::seedHead(Value output, Value headGrad, unsigned index) {
  accumulate(output, headGrad);
  if (!graph)
    return;
  // graph_executor.cc: head gradients enter through an identity taking
  // the output's attributes, "_head_grad_<i>_id".
  std::string head = "_head_grad_" + std::to_string(index);
  BackwardNode node = makeNode(head + "_id", "_identity_with_attr_like_rhs");
  node.inputs = {forwardEntry(head), entryOf(output)};
  node.inputValues = {headGrad, output};
  node.outputs = {headGrad};
  int id = addNode(std::move(node));
  contributions[output].push_back({backwardEntry(id), headGrad});
}

LogicalResult GradientBuilder::sweep() {
  Block &body = function.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (failed(visit(op)))
      return failure();
  return success();
}

LogicalResult GradientBuilder::visit(Operation *op) {
  SmallVector<Value> resultGrads;
  for (Value result : op->getResults())
    resultGrads.push_back(gradientOf(result));
  auto rule = dyn_cast<GradientOpInterface>(op);
  bool anyGrad = llvm::any_of(resultGrads, [](Value g) { return bool(g); });
  bool lossHead = rule && llvm::none_of(llvm::seq(op->getNumResults()), [&](unsigned i) {
                    return rule.readsResultGradient(i);
                  });
  if (!anyGrad && !lossHead) { // nothing flows back through it
    if (graph)
      recordWithoutGradient(op);
    return success();
  }
  if (!rule)
    return op->emitError("no gradient rule for '") << op->getName().stripDialect() << "' yet";
  b.setInsertionPoint(function.getBody().front().getTerminator());
  SmallVector<Value> operandGrads;
  if (failed(rule.buildGradient(b, resultGrads, operandGrads)))
    return failure();
  if (graph)
    record(op, operandGrads);
  for (auto [i, operand, grad] : llvm::enumerate(op->getOperands(), operandGrads))
    if (grad)
      accumulate(operand, grad);
    else if (StringRef message = rule.refusedGradientMessage(i); !message.empty())
      refusals[operand] = {op, message};
  return success();
}

LogicalResult GradientBuilder::checkNotRefused(Value value, StringRef name) const {
  auto it = refusals.find(value);
  if (it == refusals.end())
    return success();
  it->second.first->emitError(it->second.second).attachNote()
      << "'" << name << "' needs grad_req null (symc compile --grad-req " << name << "=null)";
  return failure();
}

BackwardEntry GradientBuilder::entryOf(Value forwardValue) {
  if (auto result = dyn_cast<OpResult>(forwardValue))
    return forwardEntry(nodeName(result.getOwner()->getLoc()).str(), result.getResultNumber());
  unsigned arg = cast<BlockArgument>(forwardValue).getArgNumber();
  auto name = function.getArgAttrOfType<StringAttr>(arg, kNameAttr);
  // A backward node reads an aux state after the forward updated it.
  return forwardEntry(name ? name.str() : "", 0, function.getArgAttr(arg, kAuxAttr) ? 1 : 0);
}

/// What MXNet records for an op whose outputs receive only zeros: zeros
/// nodes, the zero gradients of labels (which symc does not compute), or
/// nothing (a "zeros_without_dtype", which is not a zeros node). Zero
/// gradient nodes where its FGradient checks for zeros nodes and finds
/// them; else its backward nodes, whose gradients are zeros.
void GradientBuilder::recordWithoutGradient(Operation *op) {
  if (!op->getNumOperands())
    return;
  if (receivesOnlyZeros(op)) {
    for (const BackwardNodeLayout &layout : getZeroGradNodeLayouts(op))
      recordNode(op, layout, SmallVector<Value>(op->getNumOperands()));
    return;
  }
  record(op, SmallVector<Value>(op->getNumOperands()));
}

/// nnvm's CheckGradAllZero on the output gradients the op's FGradient checks.
bool GradientBuilder::receivesOnlyZeros(Operation *op) const {
  ZeroGradientCheck check = getZeroGradientCheck(op);
  if (check == ZeroGradientCheck::None)
    return false;
  auto onlyZeros = [&](Value result) {
    auto it = contributions.find(result);
    return it != contributions.end() && !it->second.empty() &&
           llvm::all_of(it->second, [](const Contribution &c) { return c.zeros; });
  };
  return check == ZeroGradientCheck::FirstOutput ? onlyZeros(op->getResult(0))
                                                 : llvm::all_of(op->getResults(), onlyZeros);
}

int GradientBuilder::addNode(BackwardNode node) {
  graph->nodes.push_back(std::move(node));
  return static_cast<int>(graph->nodes.size()) - 1;
}

/// MXNet's AggregateGradient: the one contribution as it is, several summed
/// by an add_n "sum_grad" (constant zeros left out), none a zeros node.
/// (From MXNET_EXEC_INPLACE_GRAD_SUM_CAP = 8 contributions on, MXNet chains
/// "_grad_add" nodes instead; symc records the one add_n.)
GradientBuilder::Aggregate GradientBuilder::aggregate(Value value) {
  if (auto it = aggregates.find(value); it != aggregates.end())
    return it->second;
  std::vector<Contribution> terms;
  for (const Contribution &c : contributions.lookup(value))
    if (!c.zeros)
      terms.push_back(c);
  if (terms.empty() && contributions.count(value))
    terms.push_back(contributions[value].front());
  if (terms.empty())
    return aggregates[value] = zerosWithoutDtype(value);
  if (terms.size() == 1)
    return aggregates[value] = {terms.front().entry, terms.front().value, terms.front().zeros};
  BackwardNode sum = makeNode("sum_grad", "add_n");
  sum.attrs = {{"num_args", std::to_string(terms.size())}};
  for (const Contribution &term : terms) {
    sum.inputs.push_back(term.entry);
    sum.inputValues.push_back(term.value);
  }
  sum.outputs = {gradientOf(value)};
  return aggregates[value] = {backwardEntry(addNode(std::move(sum))), gradientOf(value)};
}

/// The zero gradient of `like` (null: an output symc does not have), as
/// MXNet's "zeros_without_dtype" node.
GradientBuilder::Aggregate GradientBuilder::zerosWithoutDtype(Value like) {
  BackwardNode node = makeNode("zeros_without_dtype", "_zeros_without_dtype");
  if (like) {
    b.setInsertionPoint(function.getBody().front().getTerminator());
    FailureOr<Value> zeros = zerosLike(b, like, like.getLoc());
    node.outputs = {succeeded(zeros) ? *zeros : Value()};
  } else {
    node.outputs = {Value()};
  }
  Value output = node.outputs.front();
  return {backwardEntry(addNode(std::move(node))), output};
}

void GradientBuilder::record(Operation *op, ArrayRef<Value> operandGrads) {
  SmallVector<BackwardNodeLayout, 1> layouts = getBackwardNodeLayouts(op);
  if (layouts.empty()) { // the output gradient goes on as it is
    Aggregate g = aggregate(op->getResult(0));
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      contributions[operand].push_back({g.entry, grad ? grad : g.value, g.zeros});
    return;
  }
  for (const BackwardNodeLayout &layout : layouts)
    recordNode(op, layout, operandGrads);
}

void GradientBuilder::recordNode(Operation *op, const BackwardNodeLayout &layout, ArrayRef<Value> operandGrads) {
  StringRef forward = nodeName(op->getLoc());
  BackwardNode node = layout.anonymous ? makeNode("", layout.op)
                                       : makeNode((forward + layout.suffix).str(), layout.op, forward.str());
  node.attrs.assign(layout.attrs.begin(), layout.attrs.end());
  node.forwardAttrs = !layout.zeros && layout.forwardAttrs;
  SmallVector<StringRef> tokens;
  StringRef(layout.inputs).split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    unsigned count = token.front() == 'i' ? op->getNumOperands() : op->getNumResults();
    for (unsigned k : tokenIndices(token, count)) {
      Aggregate input;
      if (token.front() == 'i')
        input = {entryOf(op->getOperand(k)), op->getOperand(k)};
      else if (k >= op->getNumResults()) // an output MXNet's kernel has and symc's not
        input = token.front() == 'g' ? zerosWithoutDtype(Value()) : Aggregate{forwardEntry(forward.str(), k), Value()};
      else
        input = token.front() == 'g' ? aggregate(op->getResult(k)) : Aggregate{entryOf(op->getResult(k)), op->getResult(k)};
      node.inputs.push_back(input.entry);
      node.inputValues.push_back(input.value);
    }
  }
  SmallVector<unsigned> gradientsOf(layout.gradientsOf.begin(), layout.gradientsOf.end());
  if (gradientsOf.empty())
    for (unsigned j = 0; j < op->getNumOperands(); ++j)
      if (!llvm::is_contained(getOpSignature(op).auxInputs, j))
        gradientsOf.push_back(j);
  b.setInsertionPoint(function.getBody().front().getTerminator());
  for (unsigned j : gradientsOf) {
    Value grad = operandGrads[j];
    if (!grad) // a label's: MXNet's node writes zeros there
      if (FailureOr<Value> zeros = zerosLike(b, op->getOperand(j), op->getLoc()); succeeded(zeros))
        grad = *zeros;
    node.outputs.push_back(grad);
  }
  int id = addNode(std::move(node));
  for (auto [k, j] : llvm::enumerate(gradientsOf))
    contributions[op->getOperand(j)].push_back({backwardEntry(id, k), graph->nodes[id].outputs[k], layout.zeros});
}

void GradientBuilder::recordGradients(ArrayRef<std::pair<std::string, Value>> arguments) {
  std::vector<std::pair<BackwardEntry, unsigned>> seen; // entry, times output
  for (const auto &[name, value] : arguments) {
    Aggregate g = aggregate(value);
    auto it = llvm::find_if(seen, [&](const auto &s) { return s.first == g.entry; });
    if (it == seen.end()) {
      seen.push_back({g.entry, 1});
      graph->gradients.push_back({name, g.entry});
      continue;
    }
    // nnvm's Gradient pass: an entry output twice is copied, "<node>_<k>_copy".
    std::string source = g.entry.backwardNode >= 0 ? graph->nodes[g.entry.backwardNode].name : g.entry.node;
    BackwardNode copy = makeNode(source + "_" + std::to_string(it->second++) + "_copy", "_copy");
    copy.inputs = {g.entry};
    copy.inputValues = {g.value};
    copy.outputs = {g.value};
    graph->gradients.push_back({name, backwardEntry(addNode(std::move(copy)))});
  }
}

LogicalResult mlir::sym::appendAuxUpdates(func::FuncOp backward, OpBuilder &b, SmallVectorImpl<Value> &results,
                                          SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  llvm::StringSet<> updated;
  WalkResult walk = backward.walk([&](BatchNormOp bn) {
    if (!runsInTraining(bn))
      return WalkResult::advance();
    double momentum = bn.getMomentum(), eps = bn.getEps();
    // The biased batch variance, recovered from the saved 1/sqrt(var + eps) as MXNet does.
    Value invStd = bn.getVar();
    Value var = scalarOp<MinusScalarOp>(b, scalarOp<RDivScalarOp>(b, sameOp<SquareOp>(b, invStd, invStd), 1.0), eps);
    for (auto [moving, batch] : {std::pair<Value, Value>{bn.getMovingMean(), bn.getMean()}, std::pair<Value, Value>{bn.getMovingVar(), var}}) {
      auto arg = dyn_cast<BlockArgument>(moving);
      if (!arg || !backward.getArgAttr(arg.getArgNumber(), kAuxAttr)) {
        bn.emitError("BatchNorm's moving statistics must be aux states to be updated");
        return WalkResult::interrupt();
      }
      auto name = backward.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kNameAttr);
      if (!updated.insert(name.getValue()).second) {
        bn.emitError("aux state '") << name.getValue() << "' is updated by two BatchNorm nodes";
        return WalkResult::interrupt();
      }
      Value kept = scalarOp<MulScalarOp>(b, moving, momentum);
      Value added = scalarOp<MulScalarOp>(b, batch, 1.0 - momentum);
      results.push_back(b.create<ElemwiseAddOp>(bn.getLoc(), moving.getType(), kept, added));
      resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kAuxUpdateOfAttr, name)));
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
