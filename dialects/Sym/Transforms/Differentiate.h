//===- Differentiate.h - MXNet's backward construction on sym ops -*- C++ -*-===//
//
// What sym-generate-gradients and sym-instrument-monitor share: nnvm's
// Gradient pass on a function of sym ops (each op's gradient rule, last op
// first, contributions to one value summed) and, for the monitor, a record
// of the backward graph MXNet builds for the same forward, node by node,
// with the value symc computes for each node output.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_DIALECTS_SYM_TRANSFORMS_DIFFERENTIATE_H
#define SYMC_DIALECTS_SYM_TRANSFORMS_DIFFERENTIATE_H

#include "dialects/Sym/IR/OpSignatures.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sym {

/// Output `index` of a forward node or variable (`node`), or of backward
/// node number `backwardNode` of the recorded graph.
struct BackwardEntry {
  std::string node;
  int backwardNode = -1;
  unsigned index = 0, version = 0;
  bool operator==(const BackwardEntry &o) const {
    return node == o.node && backwardNode == o.backwardNode && index == o.index;
  }
};

struct BackwardNode {
  std::string name, op;
  /// The forward node it differentiates: its control dependency, whose
  /// attributes it repeats; empty for sums, copies and head gradients.
  std::string forward;
  bool forwardAttrs = true;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<BackwardEntry> inputs;
  std::vector<Value> inputValues; // the arrays behind `inputs`
  std::vector<Value> outputs;     // null where symc computes none
};

/// MXNet's backward graph for a forward: its nodes, and the entry holding
/// each requested gradient (the graph's extra outputs).
struct BackwardGraph {
  std::vector<BackwardNode> nodes;
  std::vector<std::pair<std::string, BackwardEntry>> gradients; // by argument name
};

class GradientBuilder {
public:
  /// Differentiates `function`, building gradient ops before its
  /// terminator; with `graph`, records MXNet's backward graph there.
  explicit GradientBuilder(func::FuncOp function, BackwardGraph *graph = nullptr);

  /// Starts the sweep at forward output `index` (`output`) with its head
  /// gradient `headGrad`.
  void seedHead(Value output, Value headGrad, unsigned index);
  /// Asks every op, last first, for its operands' gradients.
  LogicalResult sweep();
  Value gradientOf(Value value) const { return grads.lookup(value); }
  /// Records the entries MXNet outputs as the gradients of `arguments`
  /// (named), copying an entry that two of them share, as nnvm does.
  void recordGradients(ArrayRef<std::pair<std::string, Value>> arguments);
  /// Fails at the op when `value`'s gradient is one that op refuses to compute.
  LogicalResult checkNotRefused(Value value, StringRef name) const;

private:
  struct Contribution {
    BackwardEntry entry;
    Value value;
    bool zeros = false;
  };
  struct Aggregate {
    BackwardEntry entry;
    Value value;
    bool zeros = false;
  };

  void accumulate(Value value, Value grad);
  LogicalResult visit(Operation *op);
  void record(Operation *op, ArrayRef<Value> operandGrads);
  void recordWithoutGradient(Operation *op);
  bool receivesOnlyZeros(Operation *op) const;
  void recordNode(Operation *op, const BackwardNodeLayout &layout, ArrayRef<Value> operandGrads);
  Aggregate aggregate(Value value);
  Aggregate zerosWithoutDtype(Value like);
  BackwardEntry entryOf(Value forwardValue);
  int addNode(BackwardNode node);

  func::FuncOp function;
  OpBuilder b;
  DenseMap<Value, Value> grads;
  DenseMap<Value, std::pair<Operation *, StringRef>> refusals;
  BackwardGraph *graph;
  DenseMap<Value, std::vector<Contribution>> contributions;
  DenseMap<Value, Aggregate> aggregates;
};

/// A zero tensor like `value` (which must have a static shape).
FailureOr<Value> zerosLike(OpBuilder &b, Value value, Location loc);

/// MXNet's CPU BatchNorm updates its moving statistics in backward:
/// appends the new moving mean and var of every training BatchNorm of
/// `backward` to `results`, named by aux state.
LogicalResult appendAuxUpdates(func::FuncOp backward, OpBuilder &b, SmallVectorImpl<Value> &results,
                               SmallVectorImpl<DictionaryAttr> &resultAttrs);

} // namespace mlir::sym

#endif // SYMC_DIALECTS_SYM_TRANSFORMS_DIFFERENTIATE_H
