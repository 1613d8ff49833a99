//===- SymbolGraph.cpp - queries of a graph given as symbol JSON ----------===//
#include "SymbolGraph.h"

#include "Json.h"

#include <utility>
#include <vector>

namespace symc {
namespace {

struct Graph {
  const json::Value &nodes;

  const json::Value &node(size_t id) const { return nodes.array.at(id); }
  bool isVariable(size_t id) const { return node(id).at("op").string == "null"; }
  /// Inputs, then control deps: nnvm's DFS children.
  std::vector<size_t> children(size_t id) const {
    std::vector<size_t> ids;
    for (const json::Value &input : node(id).at("inputs").array)
      ids.push_back(static_cast<size_t>(input.array.at(0).number));
    if (node(id).has("control_deps"))
      for (const json::Value &dep : node(id).at("control_deps").array)
        ids.push_back(static_cast<size_t>(dep.number));
    return ids;
  }
};

/// nnvm's post-order DFS from the heads, without recursion.
std::vector<size_t> postOrder(const Graph &g, const json::Value &heads) {
  std::vector<size_t> order;
  std::vector<bool> visited(g.nodes.array.size(), false);
  for (const json::Value &head : heads.array) {
    size_t root = static_cast<size_t>(head.array.at(0).number);
    if (visited.at(root))
      continue;
    visited[root] = true;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}}; // node, next child
    while (!stack.empty()) {
      auto &[id, next] = stack.back();
      std::vector<size_t> children = g.children(id);
      if (next == children.size()) {
        order.push_back(id);
        stack.pop_back();
        continue;
      }
      size_t child = children[next++];
      if (!visited.at(child)) {
        visited[child] = true;
        stack.push_back({child, 0});
      }
    }
  }
  return order;
}

std::string entryText(const Graph &g, const json::Value &entry) {
  size_t id = static_cast<size_t>(entry.array.at(0).number);
  return g.node(id).at("name").string + "(" + std::to_string(static_cast<long long>(entry.array.at(1).number)) +
         ")";
}

void printNode(const Graph &g, size_t id, std::string &out) {
  const json::Value &node = g.node(id);
  if (g.isVariable(id)) {
    out += "Variable:" + node.at("name").string + "\n";
    return;
  }
  out += "--------------------\nOp:" + node.at("op").string + ", Name=" + node.at("name").string + "\nInputs:\n";
  const std::vector<json::Value> &inputs = node.at("inputs").array;
  for (size_t j = 0; j < inputs.size(); ++j) {
    bool fromVariable = g.isVariable(static_cast<size_t>(inputs[j].array.at(0).number));
    std::string version = inputs[j].array.size() > 2 ? std::to_string(static_cast<long long>(inputs[j].array[2].number)) : "0";
    out += "\targ[" + std::to_string(j) + "]=" + entryText(g, inputs[j]) +
           (fromVariable ? " version=" + version + "\n" : "\n");
  }
  if (node.has("attrs") && !node.at("attrs").object.empty()) {
    out += "Attrs:\n";
    for (const auto &[key, value] : node.at("attrs").object) // std::map: sorted by key
      out += "\t" + key + "=" + value.string + "\n";
  }
  if (node.has("control_deps") && !node.at("control_deps").array.empty()) {
    out += "Control deps:\n";
    const std::vector<json::Value> &deps = node.at("control_deps").array;
    for (size_t k = 0; k < deps.size(); ++k)
      out += "\tcdep[" + std::to_string(k) + "]=" + g.node(static_cast<size_t>(deps[k].number)).at("name").string +
             "\n";
  }
}

} // namespace

std::vector<GraphNode> executionOrder(const std::string &symbolJson) {
  json::Value root = json::parse(symbolJson);
  Graph g{root.at("nodes")};
  std::vector<GraphNode> order;
  for (size_t id : postOrder(g, root.at("heads")))
    order.push_back({g.node(id).at("name").string, g.isVariable(id)});
  return order;
}

std::string renderDebugString(const std::string &symbolJson, size_t plannedBytes) {
  std::string out = "Symbol Outputs:\n";
  if (!symbolJson.empty()) {
    json::Value root = json::parse(symbolJson);
    Graph g{root.at("nodes")};
    const json::Value &heads = root.at("heads");
    for (size_t i = 0; i < heads.array.size(); ++i)
      out += "\toutput[" + std::to_string(i) + "]=" + entryText(g, heads.array[i]) + "\n";
    for (size_t id : postOrder(g, heads))
      printNode(g, id, out);
  }
  out += "Total " + std::to_string(plannedBytes >> 20) + " MB allocated\n";
  return out + "Total 11 TempSpace resource requested\n";
}

} // namespace symc
