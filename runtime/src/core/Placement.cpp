//===- Placement.cpp - group2ctx: MXNet's device placement ----------------===//
#include "Placement.h"

#include <algorithm>
#include <tuple>

namespace symc {
namespace {

/// MXNet's device ids: the groups' contexts in key order, then those of the
/// bound arrays, each numbered once.
class DeviceIds {
public:
  int idOf(Context ctx) {
    auto it = std::find(contexts.begin(), contexts.end(), ctx);
    if (it != contexts.end())
      return static_cast<int>(it - contexts.begin());
    contexts.push_back(ctx);
    return static_cast<int>(contexts.size() - 1);
  }
  std::vector<Context> contexts;
};

using Devices = std::map<const SymbolNode *, int>;

/// nnvm's TIsBackward: the `_backward_*` ops.
bool isBackwardOp(const SymbolNode &node) { return node.op.rfind("_backward_", 0) == 0; }

/// PlaceDevice's sweeps: a node's group, else (forward) a backward op's
/// forward node's device or a node's first placed input's, else (backward)
/// a consumer's device, else device 0. Variables keep the device they were
/// given.
void assignDevices(const std::vector<SymbolNodePtr> &order, const std::map<std::string, int> &groupIds,
                   Devices &device) {
  for (const SymbolNodePtr &node : order) {
    auto group = node->attrs.find(kCtxGroupAttr);
    if (group != node->attrs.end()) {
      auto id = groupIds.find(group->second);
      if (id == groupIds.end())
        throw Error("MXNetError", "The device assignment not found for group " + group->second);
      device[node.get()] = id->second;
      continue;
    }
    if (isBackwardOp(*node)) {
      if (!node->controlDeps.empty() && device.count(node->controlDeps[0].get()))
        device[node.get()] = device[node->controlDeps[0].get()];
      continue;
    }
    for (const SymbolEntry &input : node->inputs)
      if (device.count(input.node.get())) {
        device[node.get()] = device[input.node.get()];
        break;
      }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!device.count(it->get()))
      continue;
    for (const SymbolEntry &input : (*it)->inputs)
      device.try_emplace(input.node.get(), device[it->get()]);
  }
  for (const SymbolNodePtr &node : order)
    device.try_emplace(node.get(), 0);
}

/// Reroutes every input that crosses devices through a `_CrossDeviceCopy`
/// node, one per (producer entry, device), shared by its consumers there.
void insertCopies(const std::vector<SymbolNodePtr> &order, const std::set<std::string> &mutableInputs,
                  Devices &device) {
  std::map<std::tuple<const SymbolNode *, int, int>, SymbolNodePtr> copies;
  for (const SymbolNodePtr &node : order) {
    int dev = device.at(node.get());
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      SymbolEntry &input = node->inputs[i];
      if (device.at(input.node.get()) == dev)
        continue;
      if (input.node->isVariable() && mutableInputs.count(input.node->name))
        throw Error("MXNetError", " mutable state cannot go across device op=" + node->op +
                                      " input_state_index=" + std::to_string(i));
      SymbolNodePtr &copy = copies[{input.node.get(), input.index, dev}];
      if (!copy) {
        copy = std::make_shared<SymbolNode>();
        copy->op = "_CrossDeviceCopy";
        copy->name = input.node->name + "_" + std::to_string(input.index) + "_copy";
        copy->inputs.push_back(input);
        device[copy.get()] = dev;
      }
      input = {copy, 0, 0};
    }
  }
}

/// AssignContext's check before placing: the outputs of one node are
/// saved on one device.
void presetGradientDevices(const SymbolGraph &graph, const std::vector<GradientHead> &gradients, DeviceIds &ids,
                           Devices &device) {
  for (const GradientHead &gradient : gradients) {
    const SymbolNode *node = graph.heads.at(gradient.head).node.get();
    int id = ids.idOf(gradient.ctx);
    auto [preset, inserted] = device.emplace(node, id);
    if (!inserted && preset->second != id)
      throw Error("MXNetError", "Check failed: device[nid] == devid (" + std::to_string(preset->second) + " vs. " +
                                    std::to_string(id) + ") : device of same output not equal to each other");
  }
}

/// AssignContext's check after placing: each gradient is computed where it
/// is saved.
void checkGradientDevices(const DevicePlacement &placement, const std::vector<GradientHead> &gradients) {
  for (const GradientHead &gradient : gradients) {
    const SymbolNode *node = placement.graph.heads.at(gradient.head).node.get();
    Context computed = placement.contexts.at(node);
    if (computed != gradient.ctx)
      throw Error("MXNetError", "Check failed: ctx == vcontext[nid]: Trying to save gradient to " +
                                    gradient.ctx.str() + " while its source node \"" + node->name +
                                    "\" computes it on " + computed.str() + ". Check your ctx in NDArray allocation.");
  }
}

} // namespace

DevicePlacement placeDevices(SymbolGraph graph, const std::map<std::string, Context> &groups,
                             const std::map<std::string, Context> &variables, const std::vector<Context> &boundOrder,
                             const std::set<std::string> &mutableInputs, const std::vector<GradientHead> &gradients) {
  DeviceIds ids;
  std::map<std::string, int> groupIds;
  for (const auto &[group, ctx] : groups)
    groupIds[group] = ids.idOf(ctx);
  for (Context ctx : boundOrder)
    ids.idOf(ctx);
  std::vector<SymbolNodePtr> order = graph.executionOrder();
  Devices device;
  for (const SymbolNodePtr &node : order)
    if (auto it = variables.find(node->name); node->isVariable() && it != variables.end())
      device[node.get()] = ids.idOf(it->second);
  presetGradientDevices(graph, gradients, ids, device);
  assignDevices(order, groupIds, device);
  insertCopies(order, mutableInputs, device);
  DevicePlacement placement{std::move(graph), {}};
  for (const SymbolNodePtr &node : placement.graph.executionOrder())
    placement.contexts[node.get()] = ids.contexts.at(device.at(node.get()));
  checkGradientDevices(placement, gradients);
  return placement;
}

} // namespace symc
