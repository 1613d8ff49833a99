//===- SymbolGraph.h - a graph given as MXNet symbol JSON -------*- C++ -*-===//
//
// The artifact's manifest carries the graph as MXNet 1.9.1 saves a symbol;
// the Executor reads it for what MXNet derives from its graph: the node
// order (PartialForward, the monitor), device placement (group2ctx) and
// the texts of debug_str and get_optimized_symbol.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_CORE_SYMBOLGRAPH_H
#define SYMC_RUNTIME_CORE_SYMBOLGRAPH_H

#include "Json.h"
#include "symc/Artifact.h"

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace symc {

struct SymbolNode;
using SymbolNodePtr = std::shared_ptr<SymbolNode>;

/// Output `index` of `node`, read at variable version `version`.
struct SymbolEntry {
  SymbolNodePtr node;
  int index = 0, version = 0;
};

struct SymbolNode {
  std::string op, name;
  std::map<std::string, std::string> attrs;
  std::vector<SymbolEntry> inputs;
  std::vector<SymbolNodePtr> controlDeps;
  int numOutputs = 1;
  bool isVariable() const { return op == "null"; }
};

class SymbolGraph {
public:
  /// Throws symc::Error on a malformed graph.
  static SymbolGraph parse(const std::string &symbolJson);

  /// The nodes reachable from the heads in MXNet's execution order (nnvm's
  /// IndexedGraph: post-order DFS from the heads), variables included.
  std::vector<SymbolNodePtr> executionOrder() const;
  /// The graph with MXNet's backward graph appended (`backward`'s nodes)
  /// and, as extra heads, the gradients of the arguments in `asked`; the
  /// nodes added are stored in `added`, in `backward`'s order.
  SymbolGraph withBackward(const BackwardMonitorSpec &backward, const std::set<std::string> &asked,
                           std::vector<const SymbolNode *> &added) const;
  /// The graph as MXNet's SaveJSON writes it.
  std::string toJson() const;
  /// Executor::Print's text (Symbol::Print), closed by "Total N MB
  /// allocated" for `plannedBytes` and MXNet's constant "Total 11 TempSpace
  /// resource requested".
  std::string debugString(size_t plannedBytes) const;

  std::vector<SymbolEntry> heads;
  /// The document's own "attrs" (mxnet_version).
  json::Value attrs;
};

} // namespace symc

#endif // SYMC_RUNTIME_CORE_SYMBOLGRAPH_H
