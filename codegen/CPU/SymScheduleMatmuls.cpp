//===- SymScheduleMatmuls.cpp - the sym-schedule-matmuls pass -------------===//
//
// Matmuls are scheduled by a transform-dialect script generated per op from
// its static shape (tile sizes, which loops need peeling), then interpreted
// in place. The recipe (shared/TOOLCHAIN.md, "GEMM codegen"): tile on tensors,
// keep the register tile's accumulator in registers across k, lower the
// contraction to outer products.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMSCHEDULEMATMULS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

constexpr llvm::StringLiteral kMarker = "symc.matmul";

struct MicroKernel {
  int64_t mr, nr;
};

/// Register tiles that keep MR x NR/lanes accumulators plus operands within
/// the register file: 16 zmm accumulators on AVX-512, 12 ymm on AVX2.
MicroKernel microKernel(unsigned vectorBits) {
  return vectorBits >= 512 ? MicroKernel{8, 32} : MicroKernel{6, 16};
}

struct Tiling {
  unsigned batchDims;
  int64_t mt, nt, kt, mr, nr;
  bool peelI, peelJ, chunkK;
};

Tiling chooseTiling(linalg::LinalgOp op, MicroKernel kernel) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned batch = ranges.size() - 3;
  int64_t m = ranges[batch], n = ranges[batch + 1], k = ranges[batch + 2];
  Tiling t;
  t.batchDims = batch;
  t.mr = std::min(kernel.mr, m);
  t.nr = kernel.nr;
  // Thread tiles: whole register tiles, about 96 x 128 (A and B panels in L2).
  t.mt = std::min<int64_t>(t.mr * (96 / kernel.mr), llvm::alignTo(m, t.mr));
  t.nt = std::min<int64_t>(128, llvm::alignTo(n, t.nr));
  t.kt = 256;
  t.chunkK = k > t.kt;
  t.peelI = m % t.mt != 0 || t.mt % t.mr != 0;
  t.peelJ = n % t.nt != 0 || t.nt % t.nr != 0;
  return t;
}

std::string sizes(unsigned batchDims, std::initializer_list<int64_t> rest, int64_t batchValue) {
  SmallVector<std::string> parts(batchDims, std::to_string(batchValue));
  for (int64_t v : rest)
    parts.push_back(std::to_string(v));
  return "[" + llvm::join(parts, ", ") + "]";
}

/// The script fragment that tiles matmul `id`.
std::string tileScript(int64_t id, const Tiling &t) {
  std::string s = llvm::formatv(R"(
    %op{0} = transform.structured.match attributes{{{1} = {0} : i64} in %root : (!transform.any_op) -> !transform.any_op
    %init{0} = transform.get_producer_of_operand %op{0}[2] : (!transform.any_op) -> !transform.any_op
    %thread{0}, %forall{0} = transform.structured.tile_using_forall %op{0} tile_sizes {2} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fused{0}, %forall{0}b = transform.structured.fuse_into_containing_op %init{0} into %forall{0} : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                                id, kMarker, sizes(t.batchDims, {t.mt, t.nt}, 1));
  std::string chunk = "%thread" + std::to_string(id);
  if (t.chunkK) {
    s += llvm::formatv(R"(
    %chunk{0}, %kloop{0} = transform.structured.tile_using_for %thread{0} tile_sizes {1} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                       id, sizes(t.batchDims, {0, 0, t.kt}, 0));
    chunk = "%chunk" + std::to_string(id);
  }
  s += llvm::formatv(R"(
    %reg{0}, %iloop{0}, %jloop{0} = transform.structured.tile_using_for {1} tile_sizes {2} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %step{0}, %kstep{0} = transform.structured.tile_using_for %reg{0} tile_sizes {3} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
)",
                     id, chunk, sizes(t.batchDims, {t.mr, t.nr}, 0),
                     sizes(t.batchDims, {0, 0, 1}, 0));
  auto peel = [&](const char *loop) {
    return llvm::formatv(R"(
    %{0}{1}for = transform.cast %{0}{1} : !transform.any_op to !transform.op<"scf.for">
    %{0}{1}main, %{0}{1}rest = transform.loop.peel %{0}{1}for : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
)",
                         loop, id)
        .str();
  };
  if (t.peelJ)
    s += peel("jloop");
  if (t.peelI)
    s += peel("iloop");
  return s;
}

/// Vectorizes every matmul, all register-sized by now (tiling does not keep
/// the marker attribute), and lowers the contractions.
std::string finishScript(MicroKernel kernel) {
  return llvm::formatv(R"(
    %func = transform.structured.match ops{{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {{
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %tiles = transform.structured.match ops{{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %tiles : !transform.any_op {{
    ^bb0(%tile: !transform.any_op):
      transform.structured.vectorize %tile vector_sizes {0} : !transform.any_op
    }
    %batchTiles = transform.structured.match ops{{["linalg.batch_matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %batchTiles : !transform.any_op {{
    ^bb0(%tile: !transform.any_op):
      transform.structured.vectorize %tile vector_sizes {1} : !transform.any_op
    }
    transform.apply_patterns to %func {{
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %func {{
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {{
    ^bb0(%loop: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
    }
)",
                       sizes(0, {kernel.mr, kernel.nr, 1}, 1),
                       sizes(1, {kernel.mr, kernel.nr, 1}, 1));
}

struct SymScheduleMatmulsPass : impl::SymScheduleMatmulsBase<SymScheduleMatmulsPass> {
  using SymScheduleMatmulsBase::SymScheduleMatmulsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MicroKernel kernel = microKernel(vectorBits);
    std::string body;
    int64_t id = 0;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) || !op.hasPureTensorSemantics() ||
          op.hasDynamicShape())
        return;
      op->setAttr(kMarker, IntegerAttr::get(IntegerType::get(&getContext(), 64), id));
      Tiling tiling = chooseTiling(op, kernel);
      body += tileScript(id++, tiling);
    });
    if (id == 0)
      return;
    if (failed(applyScript(body, kernel)))
      return signalPassFailure();
    module.walk([](Operation *op) { op->removeAttr(kMarker); });
  }

  LogicalResult applyScript(const std::string &body, MicroKernel kernel) {
    ModuleOp module = getOperation();
    std::string script = "module attributes {transform.with_named_sequence} {\n"
                         "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n" +
                         body + finishScript(kernel) +
                         "    transform.yield\n  }\n}\n";
    ParserConfig config(&getContext());
    OwningOpRef<ModuleOp> transforms = parseSourceString<ModuleOp>(script, config);
    if (!transforms)
      return module.emitError("internal error: the generated matmul schedule does not parse:\n") << script;
    Operation *entry = transform::detail::findTransformEntryPoint(module, *transforms);
    return transform::applyTransformNamedSequence(module, entry, *transforms,
                                                  transform::TransformOptions());
  }
};

} // namespace
} // namespace symc::cpu
