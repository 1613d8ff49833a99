//===- Executor.h - MXNet's Executor over a compiled artifact ---*- C++ -*-===//
//
// Mirrors mxnet.executor.Executor and Symbol.bind/simple_bind (MXNet 1.9):
// the same checks, in the same order, with the same messages
// (shared/mxnet-semantics.md section 1). The artifact plays the symbol.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_EXECUTOR_H
#define SYMC_RUNTIME_EXECUTOR_H

#include "symc/Artifact.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace symc {

class DeviceStream;

enum class GradReq { Null = 0, Write = 1, Add = 3 };

/// bind's array arguments: a list in manifest order or a dict by name.
using ArrayList = std::vector<NDArray>;
using ArrayDict = std::map<std::string, NDArray>;
using Arrays = std::variant<ArrayList, ArrayDict>;
/// grad_req: one string for all, a list in argument order, or a dict.
using GradReqSpec = std::variant<std::string, std::vector<std::string>,
                                 std::map<std::string, std::string>>;

/// A .params file's arrays as copy_params_from takes them: "arg:" and "aux:"
/// prefixes split off (a bare name is an argument).
struct ParamArrays {
  ArrayDict args, aux;
};
ParamArrays splitParams(const ParamsFile &file);
/// `array` as a .params record named `name`; a none array is saved as MXNet
/// saves an empty NDArray.
NDArrayRecord toRecord(const std::string &name, const NDArray &array);

/// mx.random.seed: reseeds the generator that Dropout and rrelu draw from.
/// Every forward takes the next step seed from it, so a sequence of runs
/// repeats after the same seed (and differs from run to run otherwise).
void seedRandom(uint64_t seed);

class Executor;
class SymbolGraph;
struct SymbolNode;
struct DevicePlacement;

/// group2ctx: the context of each `__ctx_group__` (model parallelism,
/// shared/mxnet-semantics.md 1.12).
using GroupContexts = std::map<std::string, Context>;

/// simple_bind's sharing with another executor (bucketing, executor groups;
/// shared/mxnet-semantics.md 1.3 and 1.13).
struct SharedMemory {
  /// shared_exec: its intermediate memory is reused where large enough, and
  /// its aux states are this executor's.
  const Executor *exec = nullptr;
  /// shared_arg_names: arguments taking shared_exec's arrays and gradients.
  std::vector<std::string> argNames;
  /// shared_buffer: the other arguments' arrays by name (gradients as
  /// "grad of NAME"), reused where large enough; what is allocated is put in.
  ArrayDict *buffer = nullptr;
};

class Executor {
public:
  /// Symbol.bind: the arrays are used as they are, never copied.
  static Executor bind(std::shared_ptr<const Artifact> artifact, Context ctx, const Arrays &args,
                       const std::optional<Arrays> &argsGrad = std::nullopt,
                       const GradReqSpec &gradReq = std::string("write"),
                       const std::optional<Arrays> &auxStates = std::nullopt,
                       const Executor *sharedExec = nullptr, const GroupContexts &group2ctx = {});
  /// Symbol.simple_bind: zero-filled arrays of the given (or compiled) shapes,
  /// each in its group's context (group2ctx) or `ctx`; parameters embedded
  /// in the artifact (--embed-params) are copied in (unless shared from
  /// another executor).
  static Executor simpleBind(std::shared_ptr<const Artifact> artifact, Context ctx,
                             const std::map<std::string, std::vector<int64_t>> &shapes = {},
                             const GradReqSpec &gradReq = std::string("write"),
                             const std::map<std::string, DType> &typeDict = {},
                             const SharedMemory &shared = {}, const GroupContexts &group2ctx = {});

  /// Copies each keyword input into its bound argument, then runs forward.
  const std::vector<NDArray> &forward(bool isTrain = false, const ArrayDict &kwargs = {});

  /// executor.backward(out_grads): `outGrads` by output position; an output
  /// whose gradient the backward reads needs one (none elsewhere). Each
  /// gradient is written, added or skipped as its grad_req says.
  void backward(const std::vector<NDArray> &outGrads = {}, bool isTrain = true);
  /// executor.backward with a dict: one head gradient per output name
  /// (KeyError for a missing one, as MXNet's list comprehension raises).
  void backward(const ArrayDict &outGrads, bool isTrain = true);

  /// executor.reshape(partial_shaping, allow_up_sizing, **shapes): a new
  /// executor of the same artifact, no recompilation, with MXNet's rules
  /// and texts (shared/mxnet-semantics.md 1.9): arguments, gradients and aux
  /// states no larger than before are views of this executor's arrays,
  /// larger ones are new (allow_up_sizing); outputs and intermediate memory
  /// are this executor's (so the two must not run concurrently). The
  /// artifact's dynamic ('?') batch can change, and the other dims to those
  /// of one of its shape variants (`symc compile --shape 'data=?,3,224|320,
  /// 224|320'`), which then runs; other shapes are an error naming the
  /// `symc compile --shape` that would allow them. `target`, an artifact of
  /// the same symbol, is chosen from instead of the one bound.
  Executor reshape(bool partialShaping, bool allowUpSizing,
                   const std::map<std::string, std::vector<int64_t>> &shapes,
                   std::shared_ptr<const Artifact> target = nullptr) const;

  /// One array per visible output; the same buffers after every forward.
  const std::vector<NDArray> &outputs() const { return outputs_; }
  const std::vector<NDArray> &argArrays() const { return args_; }
  /// None arrays where no gradient is kept.
  const std::vector<NDArray> &gradArrays() const { return grads_; }
  const std::vector<NDArray> &auxArrays() const { return aux_; }
  const std::vector<GradReq> &gradReqs() const { return gradReqs_; }

  /// Names zipped with arrays, as Python's arg_dict: a duplicated name raises
  /// MXNet's ValueError("Duplicate names detected, [...]").
  ArrayDict argMap() const;
  ArrayDict gradMap() const;
  ArrayDict auxMap() const;
  ArrayDict outputMap() const;

  /// executor.copy_params_from.
  void copyParamsFrom(const ArrayDict &argParams, const std::optional<ArrayDict> &auxParams = std::nullopt,
                      bool allowExtraParams = false);

  /// executor.debug_str(): the graph in MXNet's Symbol::Print format (the
  /// forward nodes; the compiled backward has no MXNet node structure to
  /// print), ending "Total N MB allocated" with the memory this executor
  /// planned (outputs, workspace, saved values, head and computed gradients).
  std::string debugStr() const;
  /// The bytes counted by debugStr's "Total N MB allocated".
  size_t plannedBytes() const;
  /// executor.get_optimized_symbol(): the graph as symbol JSON MXNet 1.9.1
  /// loads and runs to the same outputs. symc fuses while lowering, below
  /// the graph, so this is the imported graph (legacy files upgraded), with
  /// group2ctx's copy nodes.
  const std::string &optimizedSymbol() const {
    return optimizedSymbol_.empty() ? manifest().symbolJson : optimizedSymbol_;
  }

  /// The monitor callback: an array's MXNet name and the array (valid
  /// during the call).
  using MonitorCallback = std::function<void(const std::string &name, const NDArray &array)>;
  /// executor.set_monitor_callback(callback, monitor_all): after each forward
  /// the callback sees every node's outputs, in MXNet's node order with
  /// MXNet's names (and with monitorAll each node's inputs first). The
  /// forward then runs the artifact's instrumented variant, which keeps every
  /// node's output; without a callback it runs the fused one. A null
  /// callback uninstalls it.
  void setMonitorCallback(MonitorCallback callback, bool monitorAll = false);

  /// Executor::PartialForward(is_train, step, &step_left) (MXPredPartialForward;
  /// shared/mxnet-semantics.md 1.16): the steps are the graph's nodes in
  /// MXNet's order, variables included; returns step_left, 0 past the last
  /// step. The compiled forward is not split by node: step 0 runs it whole
  /// (the instrumented variant while a monitor callback is installed), so
  /// the outputs are complete after it; each step then calls the monitor
  /// back for its node, as MXNet's RunOps does.
  int partialForward(bool isTrain, int step);

  /// Threads the generated code uses (0: OMP_NUM_THREADS where set, else the
  /// CPUs this process may run on).
  void setNumThreads(int threads) { numThreads_ = threads; }
  int numThreads() const { return numThreads_; }

  const Artifact &artifact() const { return *artifact_; }
  const Manifest &manifest() const { return artifact_->manifest(); }
  std::vector<std::string> listArguments() const;
  std::vector<std::string> listAuxiliaryStates() const;
  std::vector<std::string> listOutputs() const;

private:
  Executor(std::shared_ptr<const Artifact> artifact, Context ctx);
  /// An executor of `artifact`, or of its shape variant that fits `shapes`.
  static Executor forShapes(const std::shared_ptr<const Artifact> &artifact, Context ctx, const ShapeDict &shapes);
  /// MXNet's context, shape and dtype checks of a bound array; its dynamic
  /// dims fix the batch size.
  void checkArray(const TensorSpec &spec, const NDArray &array, const char *what);
  void copyEmbeddedParams(const ParamsFile &file);
  /// The gradients asked for must have been compiled (--train, --grad-req).
  void checkCompiledGradients() const;
  /// Copies the head gradients in, with MXNet's checks.
  void setHeadGradients(const std::vector<NDArray> &outGrads);
  /// Allocates outputs and workspace and builds the entry frames; with
  /// `shared`, its buffers are reused where they are large enough.
  void finishBinding(const Executor *shared = nullptr);
  /// The graph: the manifest's, placed by group2ctx when given.
  const SymbolGraph &graph() const;
  /// graph() with MXNet's backward nodes and gradient outputs when a
  /// gradient is asked for and the artifact describes them (its monitor
  /// variants): what debug_str prints and the backward monitor walks.
  const SymbolGraph &fullGraph() const;
  /// Whether fullGraph() has backward nodes: a gradient is asked for and
  /// the artifact describes MXNet's backward graph.
  bool describesBackward() const;
  /// The arguments whose grad_req is not null.
  std::set<std::string> askedGradients() const;
  /// `full` as fullGraph(), `added` its backward nodes in the manifest's order.
  void setFullGraph(std::shared_ptr<const SymbolGraph> full, const std::vector<const SymbolNode *> &added) const;
  /// Runs the instrumented backward (set_monitor_callback) if compiled and a
  /// callback is installed; returns whether it ran.
  bool runMonitoredBackward();
  /// reshape's artifact: `loaded` (reshape's target, or loaded_) or one
  /// of its shape variants.
  std::shared_ptr<const Artifact> artifactForReshape(const std::shared_ptr<const Artifact> &loaded,
                                                    const ShapeDict &shapes) const;
  /// The monitor callbacks of the backward nodes, in MXNet's order.
  void reportBackwardToMonitor() const;
  /// The contexts group2ctx gives the variables that carry a group.
  std::map<std::string, Context> groupedVariableContexts() const;
  /// With group2ctx: MXNet's placement for the bound arrays' contexts.
  void placeDevices();
  /// What MXNet's RunOps walks through: each node of the graph in order.
  struct Step {
    int monitorNode = -1;               // an op node: its entry in the manifest's monitor
    const SymbolNode *copy = nullptr;   // a _CrossDeviceCopy node of group2ctx
  };
  const std::vector<Step> &steps() const;
  /// The array a copy node copies (as monitor values), or null.
  const NDArray *copiedArray(const SymbolNode &copy) const;
  void reportCopy(const SymbolNode &copy) const;
  /// The batch size the given shapes bind the dynamic dims to (-1 where
  /// they do not say), checking them against the compiled static dims.
  int64_t reshapedBatch(const std::map<std::string, std::vector<int64_t>> &shapes) const;
  /// Runs the forward variant for `isTrain` (the instrumented one if asked
  /// for and compiled), with the next step seed unless `newSeed` is false.
  /// Returns whether the instrumented variant ran.
  bool runForward(bool isTrain, bool newSeed, bool instrumented);
  /// Writes 1 into the gammas of fix_gamma BatchNorms, as MXNet's forward does.
  void fixGammas();
  void reportToMonitor() const;
  void reportForwardNode(const MonitorNode &node) const;
  /// A node's callbacks: with monitorAll each input (a variable by its
  /// name, then as "<node>_<input>"), then every output as outputName(i).
  void reportToMonitor(const MonitorNode &node, const std::vector<NDArray> &values,
                       const std::function<std::string(size_t)> &outputName) const;

  /// The artifact as loaded, and the one that runs: loaded_ itself or the
  /// shape variant of it that fits the bound shapes (reshape chooses again).
  std::shared_ptr<const Artifact> loaded_, artifact_;
  Context ctx_;
  std::vector<NDArray> args_, grads_, aux_, outputs_;
  std::vector<GradReq> gradReqs_;
  /// The inference forward's frame: arguments, aux states, outputs, then
  /// the prepared arrays.
  std::vector<void *> frame_;
  /// The training forward's frame: arguments, aux states, outputs, then the
  /// saved values.
  std::vector<void *> trainingFrame_;
  /// What the prepare entry computes from inputs alone (packed weights), its
  /// frame (arguments, aux states, then these), the inputs they read
  /// (positions among arguments then aux states) and those inputs'
  /// versions when they were computed (empty: not yet).
  std::vector<NDArray> prepared_;
  std::vector<void *> prepareFrame_;
  std::vector<size_t> preparedInputs_;
  std::vector<uint64_t> preparedVersions_;
  /// Runs the prepare entry where an input it reads changed since it last ran.
  void prepareIfStale();
  void bindPrepared();
  /// The backward entry's frame: arguments, aux states, head gradients,
  /// saved values, the computed gradients (then written or added to grads_)
  /// and the aux updates.
  std::vector<void *> backwardFrame_;
  std::vector<NDArray> headGrads_, saved_, computedGrads_, auxUpdates_;
  /// Whether saved_ holds the values of a training forward (backward runs
  /// one first otherwise).
  bool savedFromTraining_ = false;
  /// The entry's dims: the batch size, for the manifest's -1 dims, and the
  /// step seed of the last forward (its backward recomputes the same draws).
  std::vector<int64_t> dims_;
  int64_t batch_ = -1;
  NDArray workspace_; // the planned arena for intermediate buffers, 64-byte aligned
  /// On a GPU, the stream the runs' kernels go to.
  std::shared_ptr<DeviceStream> stream_;
  int numThreads_ = 0;
  /// Runs `entry` on `frame`, in the monitor variants' workspace when
  /// `monitored`; a failed run-time check raises its error.
  void call(EntryPoint entry, void *const *frame, bool monitored = false);
  MonitorCallback monitorCallback_;
  bool monitorAll_ = false;
  /// Every node's outputs, and the monitored forward's frame: arguments, aux
  /// states, outputs, these, then the prepared arrays.
  std::vector<NDArray> monitorValues_;
  std::vector<void *> monitorFrame_;
  /// The instrumented backward's arrays and frame: the backward's without
  /// the saved values, then these.
  std::vector<NDArray> backwardMonitorValues_;
  std::vector<void *> backwardMonitorFrame_;
  /// The monitor variants' workspace, where they need more than workspace_.
  NDArray monitorWorkspace_;
  /// Whether partialForward's step 0 has run since binding.
  bool partialRan_ = false;
  GroupContexts group2ctx_;
  std::shared_ptr<const DevicePlacement> placement_;
  std::string optimizedSymbol_; // with copy nodes; empty without them
  mutable std::shared_ptr<const SymbolGraph> graph_, fullGraph_;
  /// fullGraph_'s backward nodes in MXNet's order, as indices into the
  /// manifest's backward monitor nodes.
  mutable std::vector<size_t> backwardOrder_;
  mutable std::vector<Step> steps_;
  mutable bool stepsBuilt_ = false;
};

} // namespace symc

#endif
