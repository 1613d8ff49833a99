//===- Placement.h - group2ctx: MXNet's device placement --------*- C++ -*-===//
//
// MXNet's AssignContext and nnvm's PlaceDevice pass (shared/mxnet-semantics.md
// 1.12) on the artifact's graph: every node gets a context from its
// `__ctx_group__`, its inputs or its consumers, and each edge between
// contexts gets a `_CrossDeviceCopy` node `<producer>_<index>_copy`. On
// CPU contexts the compiled code runs as it is (they share one memory); the
// placement decides where arrays are, what debug_str, get_optimized_symbol
// and the monitor show, and MXNet's errors.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_CORE_PLACEMENT_H
#define SYMC_RUNTIME_CORE_PLACEMENT_H

#include "SymbolGraph.h"

#include "symc/NDArray.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace symc {

struct DevicePlacement {
  /// The graph with its copy nodes.
  SymbolGraph graph;
  std::map<const SymbolNode *, Context> contexts;
};

/// A gradient the graph outputs (its head `head`) and the context of the
/// array it is saved to.
struct GradientHead {
  size_t head;
  Context ctx;
};

/// Places `graph` (modified: consumers read through copy nodes) for
/// `groups` (group2ctx, not empty). `variables` holds the context of each
/// bound array by variable name, `boundOrder` the contexts of the bound
/// arguments, aux states and gradients in order (MXNet numbers devices in
/// that order after the groups'); `mutableInputs` names the variables ops
/// update in place (aux states), which cannot cross contexts. The nodes
/// computing `gradients` must compute them where their arrays are, with
/// MXNet's checks before and after placing.
DevicePlacement placeDevices(SymbolGraph graph, const std::map<std::string, Context> &groups,
                             const std::map<std::string, Context> &variables, const std::vector<Context> &boundOrder,
                             const std::set<std::string> &mutableInputs,
                             const std::vector<GradientHead> &gradients = {});

/// The `__ctx_group__` attribute that marks a node's group.
inline constexpr const char *kCtxGroupAttr = "__ctx_group__";

} // namespace symc

#endif // SYMC_RUNTIME_CORE_PLACEMENT_H
