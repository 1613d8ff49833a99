//===- Artifact.h - a compiled symbol, loaded -------------------*- C++ -*-===//
//
// An artifact is what `symc compile` wrote: a shared library exporting
// `<prefix>_manifest` and one entry point per compiled variant (ABI below).
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_ARTIFACT_H
#define SYMC_RUNTIME_ARTIFACT_H

#include "symc/ArtifactABI.h"
#include "symc/NDArray.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace symc {

/// The entry-point ABI this runtime speaks (symc/ArtifactABI.h).
inline constexpr int kArtifactAbiVersion = SYMC_ARTIFACT_ABI_VERSION;

/// const uint8_t *params(int64_t *size): the embedded .params file.
using ParamsAccessor = const uint8_t *(*)(int64_t *);

using EntryPoint = SymcEntryPoint;

/// Shapes by argument or aux state name.
using ShapeDict = std::map<std::string, std::vector<int64_t>>;

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape; // -1: the dynamic batch dim
  DType dtype = DType::Float32;
  bool isDynamic() const;
  /// Whether `given` fits: a dynamic dim takes `batch`, or fixes it when
  /// it is unknown (-1).
  bool fits(const std::vector<int64_t> &given, int64_t &batch) const;
};

struct NodeSpec {
  std::string op, name;
};

/// A check the generated code makes where it runs (take's indices with mode
/// 'raise', gather_nd's): the node, and MXNet's message with {0}, {1}, {2}
/// for the values a failure reports.
struct RunTimeCheck {
  std::string node, message;
};

struct Variant {
  std::string name;
  bool isTrain = false;
  EntryPoint entry = nullptr;
};

/// The gradient entry of an artifact compiled with --train.
struct BackwardSpec {
  EntryPoint entry = nullptr;
  /// Frame order: the head gradients (named by output), the forward values
  /// the training forward saved for it (its extra outputs, in the same
  /// order), the gradients computed (named by argument), then the new values
  /// of aux states (named by aux state; BatchNorm's moving statistics,
  /// stored when is_train).
  std::vector<TensorSpec> headGradients, saved, gradients, auxUpdates;
};

/// An input of a monitored node: a bound argument or aux state (its
/// position among arguments then aux states) or a monitored value.
struct MonitorInput {
  std::string name;     // "<node>_<input name>"
  std::string variable; // the variable's name, for bound ones
  int argument = -1, value = -1;
  /// Of backward nodes: the entry read, output `index` of forward node or
  /// variable `node` or of backward node number `backwardNode`.
  std::string node;
  int backwardNode = -1, index = 0, version = 0;
};
struct MonitorNode {
  std::string name;
  std::vector<MonitorInput> inputs;
  std::vector<int> outputs; // monitored values
};
/// A node of MXNet's backward graph: `<forward>_backward` (whose control
/// dependency is `forward` and whose attributes it repeats), a gradient
/// sum, a copy or a head gradient's identity.
struct BackwardNodeSpec : MonitorNode {
  std::string op, forward;
  std::map<std::string, std::string> attrs;
  /// Whether it repeats the forward node's attributes (a zeros_like node
  /// of nnvm's Gradient pass has none).
  bool forwardAttrs = true;
};
/// The entry MXNet's backward graph outputs as an argument's gradient.
struct GradientEntry {
  std::string argument, node;
  int backwardNode = -1, index = 0;
};
/// The instrumented backward: its buffers are the backward's without the
/// saved values (it recomputes the forward), then `values`, the arrays the
/// nodes of MXNet's backward graph read and write.
struct BackwardMonitorSpec {
  EntryPoint entry = nullptr;
  std::vector<TensorSpec> values;
  std::vector<BackwardNodeSpec> nodes;
  std::vector<GradientEntry> gradients;
};
/// The instrumented forward (symc compile without --no-monitor): its
/// buffers are the forward's, then `values`, every node's outputs.
struct MonitorSpec {
  std::vector<Variant> variants;
  std::vector<TensorSpec> values;
  std::vector<MonitorNode> nodes;
  /// Compiled for training: the instrumented backward.
  std::optional<BackwardMonitorSpec> backward;
  /// The workspace the instrumented entries run in; 0: the artifact's own.
  size_t workspaceBytes = 0;
};

/// An array the prepare entry computes from inputs alone (a convolution's
/// weight packed into its kernel's layout), which the inference forward reads.
struct PreparedArraySpec {
  TensorSpec spec;
  /// The inputs it is computed from: positions among the arguments, then
  /// the aux states.
  std::vector<int> inputs;
  std::string what;
};
/// `<prefix>_prepare`: buffers are the arguments, the aux states, then the
/// prepared arrays it writes; the inference forward (and its monitor
/// variant) take those arrays after their outputs (and monitored values).
struct PrepareSpec {
  EntryPoint entry = nullptr;
  std::vector<PreparedArraySpec> arrays;
};

struct Manifest {
  int abiVersion = 0;
  std::string prefix;
  std::vector<TensorSpec> arguments, auxStates, outputs;
  std::vector<NodeSpec> nodes;
  /// Nodes whose forward depends on is_train (Dropout, BatchNorm, ...).
  std::vector<std::string> trainSensitiveNodes;
  /// Arguments only loss heads read, as labels: inference needs no value for
  /// them (absent from manifests written before symc 0.2).
  std::vector<std::string> labels;
  /// The graph as MXNet 1.9.1 symbol JSON (empty in manifests before symc 0.2).
  std::string symbolJson;
  /// Arguments forward writes 1 into (gammas of fix_gamma BatchNorms).
  std::vector<std::string> fixedGammas;
  /// Numbered from 1 by SymcRunError::check.
  std::vector<RunTimeCheck> checks;
  /// The error a failed run raises: its kind (MXNet's Python exception: a
  /// message "IndexError: ..." raises IndexError, others MXNetError) and the
  /// check's node and message with its values filled in.
  std::pair<std::string, std::string> describeFailure(const SymcRunError &error) const;
  size_t workspaceBytes = 0;
  /// A dynamic batch of fewer rows than a chunk (symc compile --batch-chunk)
  /// runs in a smaller workspace.
  int64_t smallBatchRows = 0;
  size_t smallBatchWorkspaceBytes = 0;
  /// The workspace a run at `batch` rows of the dynamic batch needs.
  size_t workspaceFor(int64_t batch) const {
    return batch >= 0 && batch < smallBatchRows ? smallBatchWorkspaceBytes : workspaceBytes;
  }
  /// CPU features the code was compiled for; checked when loading.
  std::vector<std::string> cpuFeatures;
  /// Where the code runs: "cpu", or "cuda:sm_90" (kernels in PTX for that
  /// architecture, every buffer in the memory of the GPU bound).
  std::string device = "cpu";
  bool runsOnGpu() const { return device != "cpu"; }
  std::vector<Variant> variants;
  /// Whether `symc compile --embed-params` put a .params file in the artifact.
  bool embeddedParams = false;
  std::optional<BackwardSpec> backward;
  std::optional<MonitorSpec> monitor;
  /// Present where the inference forward reads prepared arrays.
  std::optional<PrepareSpec> prepare;
  /// The prefixes of the same symbol compiled for other shapes into the
  /// same file (`symc compile --shape data=?,3,224|320,224|320`).
  std::vector<std::string> shapeVariants;
  /// Whether the arguments and aux states `shapes` names fit their compiled
  /// shapes, with one batch size for all dynamic dims (a 0 dim, simple_bind's
  /// unknown one, fits any).
  bool fits(const ShapeDict &shapes) const;
};

class Artifact {
public:
  /// Checks `path`'s seal (ArtifactSeal.h), and with `sha256` (hex) that the
  /// seal holds that digest, then dlopen()s it (privately: several artifacts
  /// coexist) and reads its manifest. Throws symc::Error. The seal alone
  /// catches corruption; only a pinned digest stops a file whose seal was
  /// rewritten on purpose, since anyone can compute a SHA-256.
  static std::shared_ptr<const Artifact> load(const std::string &path, const std::string &prefix = "symc",
                                              const std::string &sha256 = "");
  /// The functions of an artifact linked into the program (`symc compile
  /// --emit=obj`): `<prefix>_forward`, and where the manifest lists them
  /// `<prefix>_prepare`, `<prefix>_forward_train`, `<prefix>_backward`,
  /// `<prefix>_params` and the monitor entries.
  struct LinkedEntryPoints {
    EntryPoint forward = nullptr, trainingForward = nullptr, backward = nullptr;
    /// `<prefix>_prepare`, which the manifest lists where the forward needs it.
    EntryPoint prepare = nullptr;
    /// `<prefix>_forward_monitor` / `_forward_train_monitor` / `_backward_monitor`; without them the
    /// linked-in artifact has no monitor.
    EntryPoint monitor = nullptr, trainingMonitor = nullptr, backwardMonitor = nullptr;
    ParamsAccessor params = nullptr;
  };
  static std::shared_ptr<const Artifact> fromEntryPoints(const char *manifestJson,
                                                         const LinkedEntryPoints &entries);

  const Manifest &manifest() const { return manifest_; }
  /// The artifacts of the manifest's shape variants, in its order.
  const std::vector<std::shared_ptr<const Artifact>> &shapeVariants() const { return shapeVariants_; }
  /// `artifact` or the first of its shape variants that fits `shapes`
  /// (Manifest::fits); null when none does.
  static std::shared_ptr<const Artifact> forShapes(const std::shared_ptr<const Artifact> &artifact,
                                                   const ShapeDict &shapes);
  /// The embedded parameters, or null when none were embedded.
  const ParamsFile *embeddedParams() const { return params_ ? &*params_ : nullptr; }

private:
  Artifact() = default;
  /// The artifact under `prefix` in an opened `library` (from `path`).
  static std::shared_ptr<Artifact> fromLibrary(std::shared_ptr<void> library, const std::string &path,
                                               const std::string &prefix);
  std::shared_ptr<void> library_; // dlclose()d with the last artifact of the file
  std::vector<std::shared_ptr<const Artifact>> shapeVariants_;
  Manifest manifest_;
  std::optional<ParamsFile> params_;
};

} // namespace symc

#endif
