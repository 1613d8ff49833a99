//===- Pipelines.cpp - symc's pass pipelines ------------------------------===//
#include "compiler/Pipelines/Pipelines.h"

#include "codegen/Artifact/Passes.h"
#include "codegen/CPU/Passes.h"
#include "codegen/CUDA/Passes.h"
#include "dialects/Sym/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  Option<std::string> prefix{*this, "prefix", llvm::cl::desc("exported symbol prefix"),
                             llvm::cl::init("symc")};
  Option<unsigned> vectorBits{*this, "vector-bits", llvm::cl::desc("vector register width"),
                              llvm::cl::init(256)};
  Option<bool> monitor{*this, "monitor", llvm::cl::desc("compile the monitor variants too"),
                       llvm::cl::init(symc::CPUOptions().monitor)};
};

struct CUDAPipelineOptions : public PassPipelineOptions<CUDAPipelineOptions> {
  Option<std::string> prefix{*this, "prefix", llvm::cl::desc("exported symbol prefix"),
                             llvm::cl::init("symc")};
  Option<std::string> arch{*this, "arch", llvm::cl::desc("GPU architecture (sm_80, sm_90)"),
                           llvm::cl::init(symc::CUDAOptions().arch)};
};

struct FrontendPipelineOptions : public PassPipelineOptions<FrontendPipelineOptions> {
  ListOption<std::string> shapes{*this, "shapes",
                                 llvm::cl::desc("input shapes as name:d0xd1x...")};
};
} // namespace

void symc::buildFrontendPipeline(OpPassManager &pm, const FrontendOptions &options) {
  sym::SymInferShapesOptions inferOptions;
  inferOptions.shapes = options.shapes;
  pm.addNestedPass<func::FuncOp>(sym::createSymInferShapes(inferOptions));
  if (!options.train)
    return;
  sym::SymGenerateGradientsOptions gradients;
  gradients.gradReq = options.gradReqs;
  pm.addPass(sym::createSymGenerateGradients(gradients));
  sym::SymSaveActivationsOptions saving;
  saving.mirror = options.mirror;
  pm.addPass(sym::createSymSaveActivations(saving));
}

/// Lowers to linalg on tensors; `preparePrefix`, given for CPU code, lets
/// convolutions read packed weights, packed by the artifact's prepare entry,
/// and run channels-last where the CPU has kernels for that; `gpu` picks
/// the lowerings GPU kernels want (LoweringOptions::gpu).
static void addTensorPasses(OpPassManager &pm, int64_t batchChunk, int64_t batchChunkBytes,
                            std::optional<std::string> preparePrefix = std::nullopt, bool gpu = false) {
  symc::cpu::SymChunkBatchOptions chunking;
  chunking.chunk = batchChunk;
  chunking.chunkBytes = batchChunkBytes;
  pm.addNestedPass<func::FuncOp>(symc::cpu::createSymChunkBatch(chunking));
  if (preparePrefix)
    pm.addPass(symc::cpu::createSymChannelsLast());
  symc::cpu::SymLowerToLinalgOptions lowering;
  lowering.packWeights = preparePrefix.has_value();
  lowering.gpu = gpu;
  pm.addPass(symc::cpu::createSymLowerToLinalg(lowering));
  if (preparePrefix) {
    symc::SymOutlinePrepareOptions prepare;
    prepare.prefix = *preparePrefix;
    pm.addPass(symc::createSymOutlinePrepare(prepare));
  }
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createCanonicalizerPass());
  func.addPass(symc::cpu::createSymFuseElementwise());
  func.addPass(symc::cpu::createSymApproximateMath());
  // No CSE here: merged tensor.empty ops shared by two results would make
  // empty-tensor elimination write both into one output buffer.
  func.addPass(createCanonicalizerPass());
  func.addPass(symc::cpu::createSymFuseIntoImageLoops());
  func.addPass(createCanonicalizerPass());
}

/// Bufferizes into the caller's buffers and the planned workspace; with
/// `vectorizeCopies`, copies become vector transfers (CPU code).
static void addBufferizationPasses(OpPassManager &pm, bool vectorizeCopies = true) {
  pm.addNestedPass<func::FuncOp>(symc::createSymMaterializeThroughReshapes());
  // Passes that see one function at a time run on every function at once.
  pm.addNestedPass<func::FuncOp>(bufferization::createEmptyTensorEliminationPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createEmptyTensorToAllocTensorPass());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  // Copies are linalg.copy: the default memref.copy calls memrefCopy from
  // MLIR's runner utils, which an artifact must not need.
  bufferization.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Intermediate buffers live in the workspace arena, not in malloc'd memory
  // (fresh pages on every forward cost more than many kernels).
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  pm.addPass(symc::createSymPlanMemory());
  pm.addPass(symc::createSymDeallocateBuffers());
  pm.addPass(createBufferizationToMemRefPass());
  // A tile written in place is "copied" onto itself, from a twin subview:
  // CSE makes the two one and the canonicalizer drops the copy.
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  if (vectorizeCopies)
    pm.addNestedPass<func::FuncOp>(symc::cpu::createSymVectorizeCopies());
}

// The order matters in MLIR 19 (shared/TOOLCHAIN.md): parallel loops are
// outlined while they are scf.parallel (from scf.forall); memref lowering
// comes before scf-to-cf and affine lowering after expand-strided-metadata.
static void addLLVMPasses(OpPassManager &pm, const symc::SymEmbedManifestOptions &manifest) {
  pm.addPass(symc::createSymEmbedManifest(manifest));
  pm.addPass(symc::cpu::createSymOutlineKernels());
  // Threads come only from scf.forall (sym-schedule-matmuls,
  // sym-distribute-threads); the loops inside stay sequential for LLVM's
  // vectorizer.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  // n-d vector transfers (from vectorized linalg) become unrolled 1-d ones.
  pm.addNestedPass<func::FuncOp>(
      createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(symc::cpu::createSymOutlineParallelLoops());
  // The conversions that need no module-level declarations run on every
  // function at once, like the passes above.
  pm.addNestedPass<func::FuncOp>(memref::createExpandStridedMetadataPass());
  pm.addNestedPass<func::FuncOp>(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createConvertSCFToCFPass());
  pm.addNestedPass<func::FuncOp>(createConvertVectorToLLVMPass());
  // Vector lowering leaves memref.load/store (of transfers it scalarizes).
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addNestedPass<func::FuncOp>(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void symc::buildCPUPipeline(OpPassManager &pm, const CPUOptions &options) {
  if (options.monitor)
    pm.addPass(sym::createSymInstrumentMonitor());
  // The training functions before the ABI: the saved activations' layout is
  // part of their entries' signatures. Their monitor variants too: run
  // channels-first, they shared no kernel with the training pair and were
  // half of a training artifact's code.
  static const std::string kTrainingFunctions[] = {"main_train", "main_backward", "main_train_monitor",
                                                   "main_backward_monitor"};
  cpu::SymChannelsLastOptions training;
  training.functions = kTrainingFunctions;
  pm.addPass(cpu::createSymChannelsLast(training));
  SymArtifactABIOptions abi;
  abi.prefix = options.prefix;
  pm.addPass(createSymArtifactABI(abi));
  addTensorPasses(pm, options.batchChunk, options.batchChunkBytes, options.prefix);
  cpu::SymScheduleMatmulsOptions schedule;
  schedule.vectorBits = options.vectorBits;
  pm.addPass(cpu::createSymScheduleMatmuls(schedule));
  pm.addNestedPass<func::FuncOp>(cpu::createSymWriteIntoPadding());
  pm.addNestedPass<func::FuncOp>(cpu::createSymDistributeThreads());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  if (options.stopAtLinalg)
    return;
  addBufferizationPasses(pm);
  cpu::SymVectorizeElementwiseOptions vectorize;
  vectorize.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(cpu::createSymVectorizeElementwise(vectorize));
  symc::SymEmbedManifestOptions manifest;
  manifest.cpuFeatures = options.cpuFeatures; // copied by the pass constructor
  manifest.paramsFile = options.embeddedParams;
  manifest.shapeVariants = options.shapeVariants;
  addLLVMPasses(pm, manifest);
}

/// Kernels go through NVVM to PTX, embedded in the artifact as a gpu.binary
/// (scalar host code between them stays on the host); then the host side,
/// launches included, goes to LLVM.
static void addCUDALLVMPasses(OpPassManager &pm, const symc::CUDAOptions &options) {
  pm.addPass(symc::cuda::createSymOffloadMatmuls());
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createForallToParallelLoopPass());
  func.addPass(createConvertLinalgToParallelLoopsPass());
  func.addPass(createCanonicalizerPass());
  func.addPass(symc::cuda::createSymMapToGPU());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(symc::cuda::createSymMergeKernelModules());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.arch;
  target.features = "+ptx80";
  target.optLevel = 3;
  std::vector<std::string> libdevice{options.libdevice};
  target.linkLibs = libdevice;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  // What libdevice does not cover (math.fma from sym-approximate-math)
  // becomes LLVM intrinsics NVPTX selects.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void symc::buildCUDAPipeline(OpPassManager &pm, const CUDAOptions &options) {
  SymArtifactABIOptions abi;
  abi.prefix = options.prefix;
  pm.addPass(createSymArtifactABI(abi));
  addTensorPasses(pm, options.batchChunk, /*batchChunkBytes=*/0, /*preparePrefix=*/std::nullopt, /*gpu=*/true);
  pm.addNestedPass<func::FuncOp>(symc::cuda::createSymSplitReductions());
  if (options.stopAtLinalg)
    return;
  addBufferizationPasses(pm, /*vectorizeCopies=*/false);
  symc::SymEmbedManifestOptions manifest;
  manifest.device = "cuda:" + options.arch;
  manifest.paramsFile = options.embeddedParams;
  manifest.shapeVariants = options.shapeVariants;
  pm.addPass(symc::createSymEmbedManifest(manifest));
  addCUDALLVMPasses(pm, options);
}

void symc::registerPassesAndPipelines() {
  PassPipelineRegistration<>("sym-bufferize", "Bufferize scheduled linalg-on-tensors IR into planned buffers",
                             [](OpPassManager &pm) { addBufferizationPasses(pm); });
  PassPipelineRegistration<>(
      "sym-cpu-to-llvm", "Bufferize scheduled linalg-on-tensors IR and lower it to the LLVM dialect",
      [](OpPassManager &pm) {
        addBufferizationPasses(pm);
        addLLVMPasses(pm, {});
      });
  sym::registerSymPasses();
  cpu::registerSymCPUPasses();
  cuda::registerSymCUDAPasses();
  registerSymArtifactPasses();
  PassPipelineRegistration<CPUPipelineOptions>(
      "sym-cpu", "Lower shape-inferred sym IR to the LLVM dialect with the artifact ABI",
      [](OpPassManager &pm, const CPUPipelineOptions &opts) {
        CPUOptions options;
        options.prefix = opts.prefix;
        options.vectorBits = opts.vectorBits;
        options.monitor = opts.monitor;
        buildCPUPipeline(pm, options);
      });
  PassPipelineRegistration<CUDAPipelineOptions>(
      "sym-cuda", "Lower shape-inferred sym IR to GPU kernels (PTX) and host code with the artifact ABI",
      [](OpPassManager &pm, const CUDAPipelineOptions &opts) {
        CUDAOptions options;
        options.prefix = opts.prefix;
        options.arch = opts.arch;
        buildCUDAPipeline(pm, options);
      });
  PassPipelineRegistration<FrontendPipelineOptions>(
      "sym-frontend", "Shape-infer imported sym IR",
      [](OpPassManager &pm, const FrontendPipelineOptions &opts) {
        FrontendOptions options;
        options.shapes.assign(opts.shapes.begin(), opts.shapes.end());
        buildFrontendPipeline(pm, options);
      });
}
