//===- Driver.h - the library behind the symc CLI ---------------*- C++ -*-===//
#ifndef SYMC_COMPILER_DRIVER_DRIVER_H
#define SYMC_COMPILER_DRIVER_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <string>
#include <vector>

namespace symc {

struct CompileOptions {
  std::string symbolPath;
  /// `name=d0,d1,...` as given on the command line ('?' keeps a dim dynamic).
  std::vector<std::string> shapes;
  /// Compile the backward too (`--train`), with these grad_reqs (NAME=REQ).
  bool train = false;
  std::vector<std::string> gradReqs;
  /// Recompute cheap forward values in the backward (`--mirror`) rather
  /// than keep them all.
  bool mirror = false;
  /// Node names whose `<name>_output` replace the symbol's heads (`--outputs`).
  std::vector<std::string> outputs;
  /// Run the frontend pipeline (shape inference, gradients); without it the
  /// module is the imported graph, its names and orders only.
  bool runFrontend = true;
};

/// What `symc compile` produces.
enum class EmitKind { Sym, Interface, Linalg, LLVMIR, PTX, Object, SharedLibrary };

struct ArtifactOptions {
  EmitKind emit = EmitKind::SharedLibrary;
  std::string outputPath;
  /// Prefix of the exported symbols.
  std::string prefix = "symc";
  /// LLVM CPU name or "native".
  std::string cpu = "native";
  /// Prints each phase and its time to stderr.
  bool printPhases = true;
  /// Batch rows per step of the loops over a dynamic batch dim.
  int64_t batchChunk = 16;
  /// Where a static batch runs in chunks (CPUOptions::batchChunkBytes when
  /// not given).
  std::optional<int64_t> batchChunkBytes;
  /// A .params file to embed in the artifact (none when empty).
  std::string embeddedParams;
  /// Compile the monitor variants (set_monitor_callback) too.
  bool monitor = true;
  /// Prefixes of shape variants listed in the manifest, and the objects
  /// holding them, linked into the shared library (emitShapeVariants).
  std::vector<std::string> shapeVariants, linkedObjects;
  /// The device the artifact runs on: "cpu", or "cuda:<arch>" (sm_80,
  /// sm_90, ...) for PTX kernels launched from host code.
  std::string target = "cpu";
  /// Verifies the IR after every pass of the lowering, not only at its end
  /// (on a training artifact that takes longer than the passes themselves).
  bool verifyEachPass = false;
};

/// The GPU architecture of a `--target` ("cuda" alone: sm_90), or nullopt
/// for the CPU; reports an error and sets `invalid` for a target symc does
/// not know.
std::optional<std::string> cudaArchOf(const std::string &target, bool &invalid);

/// Registers the dialects symc's IR uses with `ctx`.
void loadDialects(mlir::MLIRContext &ctx);

/// Prints diagnostics as `file: node 'name': error: message` while alive.
class NodeDiagnosticPrinter {
public:
  NodeDiagnosticPrinter(mlir::MLIRContext &ctx, llvm::raw_ostream &os);
  ~NodeDiagnosticPrinter();

private:
  mlir::MLIRContext &ctx;
  mlir::DiagnosticEngine::HandlerID id;
};

/// Import + frontend pipeline: the shape-inferred sym module, or null.
mlir::OwningOpRef<mlir::ModuleOp> compileToSym(mlir::MLIRContext &ctx,
                                               const CompileOptions &options);

/// Lowers a shape-inferred sym module and writes what `options.emit` asks
/// for. Returns false after reporting an error.
bool emitArtifact(mlir::ModuleOp module, const ArtifactOptions &options);

/// The most shape variants one artifact holds (each is a whole compile).
inline constexpr size_t kMaxShapeVariants = 16;

/// `--shape` values whose dims may list sizes (`data=?,3,224|320,224|320`),
/// expanded into one list of plain values per combination of sizes, the
/// first sizes first. Reports an error and returns nothing past
/// kMaxShapeVariants combinations.
std::optional<std::vector<std::vector<std::string>>> expandShapeVariants(const std::vector<std::string> &shapes);

/// Compiles the symbol once per shape set of `shapeSets` (from
/// expandShapeVariants) into one shared library: `primary` (compiled to sym
/// for the first set) under `options.prefix`, each other set under
/// `<prefix>_shape<N>`, listed in the first one's manifest as its shape
/// variants.
bool emitShapeVariants(mlir::ModuleOp primary, CompileOptions compile,
                       const std::vector<std::vector<std::string>> &shapeSets, const ArtifactOptions &options);

/// Where the predict API (MXPredCreate*) looks for the artifact of this
/// symbol file, shapes and outputs: `dir`/<key>.so (symc/ArtifactKey.h).
/// Empty after reporting an error.
std::string predictArtifactPath(const CompileOptions &options, const std::string &dir);

/// Checks a .params file against the symbol: every argument and aux state it
/// names exists (as `arg:NAME` / `aux:NAME`) with the inferred shape.
bool checkParams(mlir::ModuleOp module, const std::string &paramsPath);

/// The symbol's interface as JSON: arguments, aux states and outputs with
/// their names, shapes (-1 for dynamic dims) and dtypes, in MXNet's orders.
void printInterface(mlir::ModuleOp module, llvm::raw_ostream &os);

/// `symc ops`: every MXNet op symc compiles, with its inputs, parameters
/// (defaults after '='), and aliases, from the sym dialect's definitions.
void printOpCatalogue(mlir::MLIRContext &ctx, llvm::raw_ostream &os);

} // namespace symc

#endif
