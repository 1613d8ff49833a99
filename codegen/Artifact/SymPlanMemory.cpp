//===- SymPlanMemory.cpp - the sym-plan-memory pass -----------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <set>

namespace symc {
#define GEN_PASS_DEF_SYMPLANMEMORY
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes;
  unsigned first, last; // positions in the function body
  /// Used only inside sym-chunk-batch's loop over whole chunks.
  bool chunksOnly = false;
  int64_t offset = -1;
};

/// The workspace of a function: all of it, and the part that batches
/// smaller than a chunk use.
struct Plan {
  int64_t bytes = 0, smallBatchBytes = 0;
};

/// The position in `body` of the top-level op containing `op`.
unsigned positionIn(Block &body, Operation *op, const DenseMap<Operation *, unsigned> &positions) {
  return positions.lookup(body.findAncestorOpInBlock(*op));
}

/// The positions that use `value` or any view derived from it.
std::set<unsigned> usePositions(Block &body, Value value, const DenseMap<Operation *, unsigned> &positions) {
  std::set<unsigned> uses;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      uses.insert(positionIn(body, user, positions));
      // Any memref a user returns may alias the buffer (views, casts, loop
      // results carrying it): follow them all, conservatively.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return uses;
}

std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// Greedy by decreasing size: each buffer takes the lowest aligned offset
/// that no buffer with an overlapping lifetime occupies. The buffers every
/// batch uses go first, so that they pack at the bottom of the workspace.
Plan assignOffsets(SmallVector<Buffer> &buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  // Ties keep program order, so plans are deterministic.
  llvm::sort(order, [](Buffer *a, Buffer *b) {
    if (a->chunksOnly != b->chunksOnly)
      return b->chunksOnly;
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
  });
  Plan plan;
  int64_t total = 0;
  SmallVector<Buffer *> placed;
  for (Buffer *buffer : order) {
    if (buffer->chunksOnly && !plan.smallBatchBytes)
      plan.smallBatchBytes = static_cast<int64_t>(llvm::alignTo(total, kAlignment));
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (Buffer *other : placed)
      if (other->first <= buffer->last && buffer->first <= other->last)
        busy.push_back({other->offset, other->offset + other->bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buffer->bytes <= begin)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(end, kAlignment));
    }
    buffer->offset = offset;
    total = std::max(total, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  plan.bytes = static_cast<int64_t>(llvm::alignTo(total, kAlignment));
  if (!plan.smallBatchBytes)
    plan.smallBatchBytes = plan.bytes;
  return plan;
}

struct SymPlanMemoryPass : impl::SymPlanMemoryBase<SymPlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Plan workspace;
    int64_t chunkRows = 0;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kImplAttr)) {
        Plan p = plan(func, chunkRows);
        workspace.bytes = std::max(workspace.bytes, p.bytes);
        workspace.smallBatchBytes = std::max(workspace.smallBatchBytes, p.smallBatchBytes);
      }
    Builder b(&getContext());
    module->setAttr(kWorkspaceBytesAttr, b.getI64IntegerAttr(workspace.bytes));
    if (chunkRows > 1 && workspace.smallBatchBytes < workspace.bytes)
      module->setAttr(kSmallBatchWorkspaceAttr, b.getDenseI64ArrayAttr({chunkRows, workspace.smallBatchBytes}));
  }

  /// Plans `func`'s buffers; sets `chunkRows` to the rows of its chunk loop.
  Plan plan(func::FuncOp func, int64_t &chunkRows) {
    Block &body = func.getBody().front();
    DenseMap<Operation *, unsigned> positions;
    std::set<unsigned> chunkLoops;
    for (auto [i, op] : llvm::enumerate(body)) {
      positions[&op] = i;
      if (auto rows = op.getAttrOfType<IntegerAttr>(kBatchChunkAttr)) {
        chunkLoops.insert(i);
        chunkRows = rows.getInt();
      }
    }
    SmallVector<Buffer> buffers;
    for (auto alloc : body.getOps<memref::AllocOp>())
      if (std::optional<int64_t> bytes = staticBytes(alloc.getType())) {
        std::set<unsigned> uses = usePositions(body, alloc, positions);
        bool chunksOnly = !uses.empty() && std::includes(chunkLoops.begin(), chunkLoops.end(), uses.begin(), uses.end());
        buffers.push_back({alloc, *bytes, positions[alloc], uses.empty() ? positions[alloc] : *uses.rbegin(),
                           chunksOnly});
      }
    if (buffers.empty())
      return {};
    Plan total = assignOffsets(buffers);
    Value workspace = body.getArguments().back();
    for (Buffer &buffer : buffers) {
      OpBuilder b(buffer.alloc);
      Value offset = b.create<arith::ConstantIndexOp>(buffer.alloc.getLoc(), buffer.offset);
      Value view = b.create<memref::ViewOp>(buffer.alloc.getLoc(), buffer.alloc.getType(), workspace,
                                            offset, ValueRange{});
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
    }
    return total;
  }
};

} // namespace
} // namespace symc
