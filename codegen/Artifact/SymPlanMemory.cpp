//===- SymPlanMemory.cpp - the sym-plan-memory pass -----------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
  int64_t offset = -1;
};

/// The position in `body` of the top-level op containing `op`.
unsigned positionIn(Block &body, Operation *op, const DenseMap<Operation *, unsigned> &positions) {
  return positions.lookup(body.findAncestorOpInBlock(*op));
}

/// The last position that uses `value` or any view derived from it.
unsigned lastUse(Block &body, Value value, const DenseMap<Operation *, unsigned> &positions) {
  unsigned last = 0;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      last = std::max(last, positionIn(body, user, positions));
      // Any memref a user returns may alias the buffer (views, casts, loop
      // results carrying it): follow them all, conservatively.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return last;
}

std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// Greedy by decreasing size: each buffer takes the lowest aligned offset
/// that no buffer with an overlapping lifetime occupies.
int64_t assignOffsets(SmallVector<Buffer> &buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  // Ties keep program order, so plans are deterministic.
  llvm::sort(order, [](Buffer *a, Buffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
  });
  int64_t total = 0;
  SmallVector<Buffer *> placed;
  for (Buffer *buffer : order) {
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
  return static_cast<int64_t>(llvm::alignTo(total, kAlignment));
}

struct SymPlanMemoryPass : impl::SymPlanMemoryBase<SymPlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t total = 0;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kImplAttr))
        total = std::max(total, plan(func));
    module->setAttr(kWorkspaceBytesAttr, IntegerAttr::get(IntegerType::get(&getContext(), 64), total));
  }

  int64_t plan(func::FuncOp func) {
    Block &body = func.getBody().front();
    DenseMap<Operation *, unsigned> positions;
    for (auto [i, op] : llvm::enumerate(body))
      positions[&op] = i;
    SmallVector<Buffer> buffers;
    for (auto alloc : body.getOps<memref::AllocOp>())
      if (std::optional<int64_t> bytes = staticBytes(alloc.getType()))
        buffers.push_back({alloc, *bytes, positions[alloc], lastUse(body, alloc, positions)});
    if (buffers.empty())
      return 0;
    int64_t total = assignOffsets(buffers);
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
