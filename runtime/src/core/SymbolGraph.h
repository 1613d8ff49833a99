//===- SymbolGraph.h - queries of a graph given as symbol JSON --*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_SYMBOLGRAPH_H
#define SYMC_RUNTIME_CORE_SYMBOLGRAPH_H

#include <cstddef>
#include <string>
#include <vector>

namespace symc {

struct GraphNode {
  std::string name;
  bool isVariable = false;
};
/// The nodes reachable from the heads in MXNet's execution order (nnvm's
/// IndexedGraph: post-order DFS from the heads), variables included.
std::vector<GraphNode> executionOrder(const std::string &symbolJson);

/// debug_str() of a graph given as MXNet symbol JSON (Symbol::Print's
/// format), closed by "Total N MB allocated" for `plannedBytes` and MXNet's
/// constant "Total 11 TempSpace resource requested".
std::string renderDebugString(const std::string &symbolJson, size_t plannedBytes);

} // namespace symc

#endif // SYMC_RUNTIME_CORE_SYMBOLGRAPH_H
