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

/// How the GEMM reads a product's operands: each operand's dims grouped
/// into the dims of its matrix (or stack of them), A (M, K), B ([batch,] K,
/// N), C ([batch,] M, N).
struct GemmOperands {
  SmallVector<ReassociationIndices> a, b, c;
};

/// Consecutive groups of sizes `sizes`.
SmallVector<ReassociationIndices> groupsOf(ArrayRef<size_t> sizes) {
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (size_t size : sizes) {
    if (size == 0)
      continue;
    groups.emplace_back();
    for (size_t i = 0; i < size; ++i)
      groups.back().push_back(next++);
  }
  return groups;
}

/// The loop dims `map` reads, in order, if each of its results is one.
std::optional<SmallVector<unsigned>> dimsRead(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim)
      return std::nullopt;
    dims.push_back(dim.getPosition());
  }
  return dims;
}

/// The operands of a product libsymrt_cuda's GEMM computes: linalg.matmul,
/// linalg.batch_matmul, or a contraction generic whose operands are read
/// along A (m..., k...), B (stack..., k..., n...), C (stack..., m...,
/// n...), each group of loop dims in order: a stack of products that share
/// A, as a convolution's weight times each image's columns.
std::optional<GemmOperands> gemmOperands(linalg::LinalgOp op) {
  if (isa<linalg::MatmulOp>(op))
    return GemmOperands{groupsOf({1, 1}), groupsOf({1, 1}), groupsOf({1, 1})};
  if (isa<linalg::BatchMatmulOp>(op))
    return GemmOperands{groupsOf({1, 1, 1}), groupsOf({1, 1, 1}), groupsOf({1, 1, 1})};
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !linalg::isaContractionOpInterface(generic))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(generic);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  std::optional<SmallVector<unsigned>> aDims = dimsRead(maps[0]), bDims = dimsRead(maps[1]),
                                       cDims = dimsRead(maps[2]);
  if (failed(dims) || !dims->batch.empty() || !aDims || !bDims || !cDims)
    return std::nullopt;
  // B's n dims before its k dims stack the products (A has none of them).
  auto firstK = llvm::find_if(*bDims, [&](unsigned d) { return llvm::is_contained(dims->k, d); });
  SmallVector<unsigned> stack(bDims->begin(), firstK);
  SmallVector<unsigned> columns(llvm::make_filter_range(
      dims->n, [&](unsigned d) { return !llvm::is_contained(stack, d); }));
  auto concat = [](std::initializer_list<ArrayRef<unsigned>> parts) {
    SmallVector<unsigned> all;
    for (ArrayRef<unsigned> part : parts)
      llvm::append_range(all, part);
    return all;
  };
  if (*aDims != concat({dims->m, dims->k}) || *bDims != concat({stack, dims->k, columns}) ||
      *cDims != concat({stack, dims->m, columns}))
    return std::nullopt;
  size_t m = dims->m.size(), k = dims->k.size();
  return GemmOperands{groupsOf({m, k}), groupsOf({stack.size(), k, columns.size()}),
                      groupsOf({stack.size(), m, columns.size()})};
}

/// `value` collapsed by `groups` into a row-major f32 buffer, or none.
std::optional<Value> asMatrix(OpBuilder &b, Location loc, Value value, ArrayRef<ReassociationIndices> groups) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.getElementType().isF32() || groups.size() < 2 || groups.size() > 3)
    return std::nullopt;
  if (llvm::all_of(groups, [](const ReassociationIndices &g) { return g.size() == 1; }))
    return isRowMajorF32(value, groups.size()) ? std::optional<Value>(value) : std::nullopt;
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
    return std::nullopt;
  Value collapsed = b.create<memref::CollapseShapeOp>(loc, value, groups);
  return isRowMajorF32(collapsed, groups.size()) ? std::optional<Value>(collapsed) : std::nullopt;
}

/// Replaces `op` by the call, or fails when the operands are not row-major
/// f32 matrices (or stacks of them) once collapsed.
LogicalResult offload(linalg::LinalgOp op, const GemmOperands &operands, func::FuncOp gemm) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  std::optional<Value> a = asMatrix(b, loc, op.getDpsInputs()[0], operands.a),
                       bValue = asMatrix(b, loc, op.getDpsInputs()[1], operands.b),
                       c = asMatrix(b, loc, op.getDpsInits()[0], operands.c);
  if (!a || !bValue || !c)
    return failure();
  // Unranked, each operand passes its whole descriptor (pointers, offset,
  // sizes, strides) as the memref lowering computes it: a workspace view's
  // byte shift included.
  auto unranked = UnrankedMemRefType::get(b.getF32Type(), 0);
  SmallVector<Value> arguments;
  for (Value operand : {*a, *bValue, *c})
    arguments.push_back(b.create<memref::CastOp>(loc, unranked, operand));
  b.create<func::CallOp>(loc, gemm, arguments);
  op->erase();
  return success();
}

bool insideParallelLoop(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() || op->getParentOfType<scf::ForallOp>();
}

struct SymOffloadMatmulsPass : impl::SymOffloadMatmulsBase<SymOffloadMatmulsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, GemmOperands>> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || insideParallelLoop(op))
        return;
      if (std::optional<GemmOperands> operands = gemmOperands(op))
        matmuls.emplace_back(op, *operands);
    });
    if (matmuls.empty())
      return;
    func::FuncOp gemm = declareGemm(module);
    for (auto &[op, operands] : matmuls)
      (void)offload(op, operands, gemm);
  }
};

} // namespace
} // namespace symc::cuda
