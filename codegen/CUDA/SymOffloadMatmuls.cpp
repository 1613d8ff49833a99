//===- SymOffloadMatmuls.cpp - the sym-offload-matmuls pass ---------------===//
#include "codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace symc::cuda {
#define GEN_PASS_DEF_SYMOFFLOADMATMULS
#include "codegen/CUDA/Passes.h.inc"
} // namespace symc::cuda

using namespace mlir;

namespace symc::cuda {
namespace {

/// libsymrt_cuda's GEMM (symc/ArtifactABI.h).
constexpr llvm::StringLiteral kGemmFunction = "symcCudaGemm";

/// Whether `value` is an f32 buffer of `rank` whose innermost stride is 1.
bool isRowMajorF32(Value value, int64_t rank) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != rank || !type.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) && strides.back() == 1;
}

func::FuncOp declareGemm(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kGemmFunction))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<Type> arguments(3, UnrankedMemRefType::get(b.getF32Type(), 0));
  auto gemm = b.create<func::FuncOp>(module.getLoc(), kGemmFunction, b.getFunctionType(arguments, {}));
  gemm.setPrivate();
  gemm->setAttr(kDeviceRuntimeAttr, b.getUnitAttr());
  return gemm;
}

/// Replaces `op` (A, B, C of `rank`) by the call, or fails when the operands
/// are not row-major f32.
LogicalResult offload(linalg::LinalgOp op, int64_t rank, func::FuncOp gemm) {
  Value a = op.getDpsInputs()[0], bValue = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  if (!llvm::all_of(ValueRange{a, bValue, c}, [&](Value v) { return isRowMajorF32(v, rank); }))
    return failure();
  // Unranked, each operand passes its whole descriptor (pointers, offset,
  // sizes, strides) as the memref lowering computes it: a workspace view's
  // byte shift included.
  OpBuilder b(op);
  auto unranked = UnrankedMemRefType::get(b.getF32Type(), 0);
  SmallVector<Value> operands;
  for (Value operand : {a, bValue, c})
    operands.push_back(b.create<memref::CastOp>(op.getLoc(), unranked, operand));
  b.create<func::CallOp>(op.getLoc(), gemm, operands);
  op->erase();
  return success();
}

bool insideParallelLoop(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() || op->getParentOfType<scf::ForallOp>();
}

struct SymOffloadMatmulsPass : impl::SymOffloadMatmulsBase<SymOffloadMatmulsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || insideParallelLoop(op))
        return;
      if (isa<linalg::MatmulOp>(op))
        matmuls.emplace_back(op, 2);
      else if (isa<linalg::BatchMatmulOp>(op))
        matmuls.emplace_back(op, 3);
    });
    if (matmuls.empty())
      return;
    func::FuncOp gemm = declareGemm(module);
    for (auto [op, rank] : matmuls)
      (void)offload(op, rank, gemm);
  }
};

} // namespace
} // namespace symc::cuda
