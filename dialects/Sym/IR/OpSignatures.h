//===- OpSignatures.h - MXNet op names, inputs and outputs -------*- C++ -*-===//
//
// What MXNet's op registry says about each op beyond its params: the canonical
// name behind an alias, FListInputNames, FListOutputNames, FNumVisibleOutputs
// and FMutateInputs (aux states). Import, naming and the monitor use it.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_DIALECTS_SYM_IR_OPSIGNATURES_H
#define SYMC_DIALECTS_SYM_IR_OPSIGNATURES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::sym {

struct OpSignature {
  /// Input names: the op's declared arguments, which name the variables
  /// composition creates (`<node>_<input>`).
  llvm::SmallVector<std::string> inputs;
  /// Whether the op registers FListInputNames; the monitor names the inputs
  /// of ops without it input0, input1, ...
  bool listsInputNames = true;
  /// Every output, hidden ones included (Dropout's mask, LRN's tmp_norm).
  llvm::SmallVector<std::string> outputs;
  unsigned numVisibleOutputs = 1;
  /// Indices of inputs the op mutates: auxiliary states.
  llvm::SmallVector<unsigned, 2> auxInputs;
  /// True when the op names its outputs itself (FListOutputNames).
  bool namesOutputs = false;
};

/// The canonical MXNet op name for `name` (itself or an alias), if supported.
std::optional<llvm::StringRef> resolveOpName(llvm::StringRef name);

/// The dialect op that runs canonical MXNet op `canonical`: itself, or for
/// an op MXNet registers on its own with another op's semantics, that op.
/// The saved symbol and debug_str keep MXNet's name.
llvm::StringRef dialectOpName(llvm::StringRef canonical);

/// The names that import as dialect op `canonical` (MXNet's registered
/// aliases, and the ops it runs), sorted.
llvm::SmallVector<llvm::StringRef> getOpAliases(llvm::StringRef canonical);

/// The signature of canonical op `opName` given its (possibly partial) params.
OpSignature getOpSignature(llvm::StringRef opName, DictionaryAttr params);
OpSignature getOpSignature(Operation *op);

/// The name MXNet's monitor_all callback gives input `index` of node
/// `nodeName` (graph_executor.cc ExecuteMonInputCallback).
std::string getMonitorInputName(llvm::StringRef nodeName, const OpSignature &sig, unsigned index);

/// MXNet's ListOutputNames entry for output `index` of node `nodeName`.
std::string getOutputName(llvm::StringRef nodeName, const OpSignature &sig, unsigned index);

/// The MXNet op name of a sym op ("FullyConnected" for sym.FullyConnected).
llvm::StringRef getMXNetOpName(Operation *op);

/// A node that an op's FGradient adds to MXNet's backward graph: named
/// "<node><suffix>", it takes `inputs` and outputs the gradients of the
/// forward inputs `gradientsOf` (all that are not aux states when empty).
struct BackwardNodeLayout {
  std::string op;
  /// Space-separated: "g<k>" the gradient of forward output k, "i<j>"
  /// forward input j, "o<k>" forward output k; "g*" / "i*" all of them.
  std::string inputs;
  std::string suffix = "_backward";
  llvm::SmallVector<unsigned, 1> gradientsOf = {};
  /// Attributes set over the forward node's, which it otherwise repeats.
  llvm::SmallVector<std::pair<std::string, std::string>, 2> attrs = {};
  /// False where MXNet's FGradient gives the node only `attrs`
  /// (MakeNonlossGradNode's), not the forward node's.
  bool forwardAttrs = true;
  /// A constant gradient (BlockGrad's zeros_like), which MXNet leaves out
  /// of gradient sums.
  bool zeros = false;
  /// A node without name, attributes or control dependency (add_n's
  /// identities).
  bool anonymous = false;
};

/// nnvm's zero gradient nodes (MakeZeroGradNodes, and what the Gradient pass
/// makes for an op whose output gradients are all zeros): a zeros_like of
/// each input, "<node>_backward" for one input, "<node>_in<j>_backward" for
/// several.
llvm::SmallVector<BackwardNodeLayout, 1> getZeroGradNodeLayouts(Operation *op);

/// MXNet's backward nodes for `op`; none where the op's FGradient passes
/// the output gradient on to its inputs as it is (elemwise_add, add_n).
llvm::SmallVector<BackwardNodeLayout, 1> getBackwardNodeLayouts(Operation *op);

/// Which output gradients MXNet's FGradient for `op` checks before it builds
/// its backward nodes: where every one it checks is a zeros node
/// (MakeNonlossGradNode's CheckGradAllZero), it makes zero gradient nodes
/// instead. None: the FGradient builds its nodes (or passes the gradients
/// on) whatever it receives (MakeGradNode, CloneGradient, legacy ops).
enum class ZeroGradientCheck { None, AllOutputs, FirstOutput };
ZeroGradientCheck getZeroGradientCheck(Operation *op);

/// The names FListInputNames gives the inputs of backward op `op` (empty
/// where it has none and the monitor says input0, input1, ...).
llvm::SmallVector<std::string> getBackwardInputNames(llvm::StringRef op, unsigned numInputs);

} // namespace mlir::sym

#endif
