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

/// Whether `value` is a stack of f32 matrices (or one) of `rank` that
/// cuBLAS reads: row-major (its innermost stride 1) or, where
/// `columnMajor`, column-major (a transposed view: its rows' stride 1).
bool isMatrixF32(Value value, int64_t rank, bool columnMajor) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() != rank || !type.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         (columnMajor ? strides[rank - 2] == 1 : strides[rank - 1] == 1);
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
/// into the dims of its matrix (or stack of them) as it is stored, A (M, K)
/// or transposed (K, M), B ([stack,] K, N) or transposed ([stack,] N, K),
/// C ([stack,] M, N).
struct GemmOperands {
  SmallVector<ReassociationIndices> a, b, c;
  bool transposedA = false, transposedB = false;
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
/// along C (stack..., m..., n...), A (m..., k...) or (k..., m...), B
/// (stack..., k..., n...) or (stack..., n..., k...), each group of loop
/// dims in order: a stack of products that share A (a convolution's weight
/// times each image's columns), or a product with an operand transposed as
/// it lies (a weight gradient's columns).
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
  ArrayRef<unsigned> m = dims->m, k = dims->k;
  // C's n dims before its m dims stack the products (A has none of them).
  auto firstM = llvm::find_if(*cDims, [&](unsigned d) { return llvm::is_contained(m, d); });
  SmallVector<unsigned> stack(cDims->begin(), firstM);
  SmallVector<unsigned> columns(firstM + std::min<size_t>(m.size(), cDims->end() - firstM), cDims->end());
  auto concat = [](std::initializer_list<ArrayRef<unsigned>> parts) {
    SmallVector<unsigned> all;
    for (ArrayRef<unsigned> part : parts)
      llvm::append_range(all, part);
    return all;
  };
  bool transposedA = *aDims == concat({k, m}), transposedB = *bDims == concat({stack, columns, k});
  if (*cDims != concat({stack, m, columns}) || (*aDims != concat({m, k}) && !transposedA) ||
      (*bDims != concat({stack, k, columns}) && !transposedB))
    return std::nullopt;
  GemmOperands operands;
  operands.a = transposedA ? groupsOf({k.size(), m.size()}) : groupsOf({m.size(), k.size()});
  operands.b = transposedB ? groupsOf({stack.size(), columns.size(), k.size()})
                           : groupsOf({stack.size(), k.size(), columns.size()});
  operands.c = groupsOf({stack.size(), m.size(), columns.size()});
  operands.transposedA = transposedA;
  operands.transposedB = transposedB;
  return operands;
}

/// `value` collapsed by `groups` into an f32 matrix (or stack of them)
/// cuBLAS reads, its last two dims swapped where `transposed` (a view of
/// the matrix that is stored transposed), or none.
std::optional<Value> asMatrix(OpBuilder &b, Location loc, Value value, ArrayRef<ReassociationIndices> groups,
                              bool transposed = false) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.getElementType().isF32() || groups.size() < 2 || groups.size() > 3)
    return std::nullopt;
  int64_t rank = groups.size();
  Value matrix = value;
  if (!llvm::all_of(groups, [](const ReassociationIndices &g) { return g.size() == 1; })) {
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
      return std::nullopt;
    matrix = b.create<memref::CollapseShapeOp>(loc, value, groups);
  }
  if (transposed) {
    SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, rank));
    std::swap(order[rank - 1], order[rank - 2]);
    AffineMap permutation = AffineMap::getPermutationMap(order, b.getContext());
    matrix = b.create<memref::TransposeOp>(loc, matrix, AffineMapAttr::get(permutation));
  }
  return isMatrixF32(matrix, rank, transposed) ? std::optional<Value>(matrix) : std::nullopt;
}

/// Replaces `op` by the call, or fails when the operands are not row-major
/// f32 matrices (or stacks of them) once collapsed.
LogicalResult offload(linalg::LinalgOp op, const GemmOperands &operands, func::FuncOp gemm) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  std::optional<Value> a = asMatrix(b, loc, op.getDpsInputs()[0], operands.a, operands.transposedA),
                       bValue = asMatrix(b, loc, op.getDpsInputs()[1], operands.b, operands.transposedB),
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
