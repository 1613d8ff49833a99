//===- PlacementTest.cpp - group2ctx placement on a symbol graph ---------===//
//
// MXNet's AssignContext / PlaceDevice rules (shared/mxnet-semantics.md 1.12)
// on small hand-written graphs; test_mxnet_parity.py checks whole executors
// against MXNet 1.9.1 itself.
//
//===----------------------------------------------------------------------===//
#include "Placement.h"

#include <gtest/gtest.h>

using namespace symc;

namespace {

/// x (dev1) -> a = relu(x) (dev1) -> b = relu(a), c = relu(a) (dev2) -> d = b + c.
const char *kGraph = R"({"nodes": [
  {"op": "null", "name": "x", "attrs": {"__ctx_group__": "dev1"}, "inputs": []},
  {"op": "relu", "name": "a", "attrs": {"__ctx_group__": "dev1"}, "inputs": [[0, 0, 0]]},
  {"op": "relu", "name": "b", "attrs": {"__ctx_group__": "dev2"}, "inputs": [[1, 0, 0]]},
  {"op": "relu", "name": "c", "attrs": {"__ctx_group__": "dev2"}, "inputs": [[1, 0, 0]]},
  {"op": "elemwise_add", "name": "d", "inputs": [[2, 0, 0], [3, 0, 0]]}],
  "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3, 4, 5], "heads": [[4, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}})";

std::vector<std::string> namesInOrder(const SymbolGraph &graph) {
  std::vector<std::string> names;
  for (const SymbolNodePtr &node : graph.executionOrder())
    names.push_back(node->name);
  return names;
}

Context contextOf(const DevicePlacement &placement, const std::string &name) {
  for (const auto &[node, ctx] : placement.contexts)
    if (node->name == name)
      return ctx;
  ADD_FAILURE() << "no node " << name;
  return {};
}

TEST(Placement, OneCopyPerEntryAndDeviceSharedByItsConsumers) {
  DevicePlacement placed = placeDevices(SymbolGraph::parse(kGraph), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(2)}},
                                        {{"x", Context::cpu(1)}}, {Context::cpu(1)}, {});
  EXPECT_EQ(namesInOrder(placed.graph), (std::vector<std::string>{"x", "a", "a_0_copy", "b", "c", "d"}));
  EXPECT_EQ(contextOf(placed, "a_0_copy"), Context::cpu(2));
  EXPECT_EQ(contextOf(placed, "d"), Context::cpu(2)); // its first input's
  EXPECT_NE(placed.graph.debugString(0).find("Op:_CrossDeviceCopy, Name=a_0_copy\nInputs:\n\targ[0]=a(0)\n"),
            std::string::npos);
  // The placed graph round-trips through MXNet's JSON.
  EXPECT_EQ(namesInOrder(SymbolGraph::parse(placed.graph.toJson())), namesInOrder(placed.graph));
}

TEST(Placement, OneDeviceInsertsNoCopies) {
  DevicePlacement placed = placeDevices(SymbolGraph::parse(kGraph), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(1)}},
                                        {{"x", Context::cpu(1)}}, {Context::cpu(1)}, {});
  EXPECT_EQ(namesInOrder(placed.graph), (std::vector<std::string>{"x", "a", "b", "c", "d"}));
}

TEST(Placement, UnplacedNodesTakeTheFirstGroupsContext) {
  // No node has a group: everything lands on device 0, the context of the
  // alphabetically first group (MXNet's issue #7934), not the default ctx.
  const char *plain = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "relu", "name": "a", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})";
  DevicePlacement placed = placeDevices(SymbolGraph::parse(plain), {{"z", Context::cpu(3)}, {"b", Context::cpu(2)}},
                                        {}, {}, {});
  EXPECT_EQ(contextOf(placed, "a"), Context::cpu(2));
}

TEST(Placement, Errors) {
  try {
    placeDevices(SymbolGraph::parse(kGraph), {{"dev1", Context::cpu(1)}}, {}, {}, {});
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "The device assignment not found for group dev2");
  }
  try {
    // x is an aux state that a (dev1) updates, bound on cpu(2).
    placeDevices(SymbolGraph::parse(kGraph), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(2)}},
                 {{"x", Context::cpu(2)}}, {}, {"x"});
  } catch (const Error &e) {
    ADD_FAILURE() << "x takes its group's context, dev1: " << e.what();
  }
  const char *crossing = R"({"nodes": [{"op": "null", "name": "mean", "inputs": []},
    {"op": "BatchNorm", "name": "bn", "attrs": {"__ctx_group__": "dev2"}, "inputs": [[0, 0, 0]]}],
    "heads": [[1, 0, 0]]})";
  try {
    placeDevices(SymbolGraph::parse(crossing), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(2)}},
                 {{"mean", Context::cpu(1)}}, {Context::cpu(1)}, {"mean"});
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), " mutable state cannot go across device op=BatchNorm input_state_index=0");
  }
}

/// w (dev2) and x (dev1) -> y = fc(x, w) (dev2); y's backward node computes
/// the gradients of x (output 0) and w (output 1), heads 1 and 2.
const char *kTraining = R"({"nodes": [
  {"op": "null", "name": "x", "attrs": {"__ctx_group__": "dev1"}, "inputs": []},
  {"op": "null", "name": "w", "inputs": []},
  {"op": "FullyConnected", "name": "y", "attrs": {"__ctx_group__": "dev2"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
  {"op": "null", "name": "head", "inputs": []},
  {"op": "_backward_FullyConnected", "name": "y_backward", "inputs": [[3, 0, 0], [0, 0, 0], [1, 0, 0]],
   "control_deps": [2]}],
  "heads": [[2, 0, 0], [4, 0, 0], [4, 1, 0]]})";

TEST(Placement, BackwardNodesRunWithTheirForwardNode) {
  DevicePlacement placed = placeDevices(SymbolGraph::parse(kTraining), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(2)}},
                                        {{"w", Context::cpu(2)}}, {}, {},
                                        {{1, Context::cpu(2)}, {2, Context::cpu(2)}});
  EXPECT_EQ(contextOf(placed, "y_backward"), Context::cpu(2));
  EXPECT_EQ(namesInOrder(placed.graph),
            (std::vector<std::string>{"x", "x_0_copy", "w", "y", "head", "y_backward"}));
}

std::string gradientPlacementError(Context xGrad, Context wGrad) {
  try {
    placeDevices(SymbolGraph::parse(kTraining), {{"dev1", Context::cpu(1)}, {"dev2", Context::cpu(2)}},
                 {{"w", Context::cpu(2)}}, {}, {}, {{1, xGrad}, {2, wGrad}});
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(Placement, GradientsMustBeSavedWhereTheirNodeComputesThem) {
  // Device ids: dev1 0, dev2 1, then cpu(0) 2.
  EXPECT_EQ(gradientPlacementError(Context::cpu(0), Context::cpu(2)),
            "Check failed: device[nid] == devid (2 vs. 1) : device of same output not equal to each other");
  EXPECT_EQ(gradientPlacementError(Context::cpu(1), Context::cpu(1)),
            "Check failed: ctx == vcontext[nid]: Trying to save gradient to cpu(1) while its source node "
            "\"y_backward\" computes it on cpu(2). Check your ctx in NDArray allocation.");
}

} // namespace
