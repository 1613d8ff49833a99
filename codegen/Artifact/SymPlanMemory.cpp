//===- SymPlanMemory.cpp - the sym-plan-memory pass -----------------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <climits>

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

/// Positions in program order: one per top-level op, and within a
/// top-level loop one per op of its body, so that buffers private to one
/// iteration can share bytes within the loop.
class Positions {
public:
  explicit Positions(Block &body) : body(body) {
    unsigned next = 0;
    for (Operation &op : body) {
      unsigned first = next;
      if (auto loop = dyn_cast<scf::ForOp>(op))
        for (Operation &inner : *loop.getBody()) // at least its yield
          inLoop[&inner] = next++;
      else
        ++next;
      spans[&op] = {first, next - 1};
    }
  }
  /// The first and last position of the top-level op containing `op`.
  std::pair<unsigned, unsigned> span(Operation *op) const { return spans.lookup(topLevel(op)); }
  Operation *topLevel(Operation *op) const { return body.findAncestorOpInBlock(*op); }
  /// The position of the op of a top-level loop's body containing `op`.
  unsigned inLoopBody(Operation *op) const {
    auto loop = cast<scf::ForOp>(topLevel(op));
    return inLoop.lookup(loop.getBody()->findAncestorOpInBlock(*op));
  }

private:
  Block &body;
  DenseMap<Operation *, std::pair<unsigned, unsigned>> spans;
  DenseMap<Operation *, unsigned> inLoop;
};

/// Every op that uses `value` or any memref derived from it.
SmallVector<Operation *> transitiveUsers(Value value) {
  SmallVector<Operation *> users;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      users.push_back(user);
      // Any memref a user returns may alias the buffer (views, casts, loop
      // results carrying it): follow them all, conservatively.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return users;
}

/// Whether the body of one top-level loop holds every use of a buffer and
/// the buffer cannot carry values from one iteration to the next (it is not
/// the loop's operand and its body's terminator does not pass it on): bufferization
/// allocated it for one iteration, and buffer-loop-hoisting moved it out.
bool privateToOneIteration(ArrayRef<Operation *> users, const Positions &positions) {
  Operation *loop = nullptr;
  for (Operation *user : users) {
    Operation *top = positions.topLevel(user);
    bool passedOut = user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() == top;
    if (!isa<scf::ForOp>(top) || top == user || passedOut || (loop && top != loop))
      return false;
    loop = top;
  }
  return loop != nullptr;
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
    std::optional<int64_t> monitorBytes;
    int64_t chunkRows = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(kImplAttr))
        continue;
      Plan p = plan(func, chunkRows);
      if (func->hasAttr(kMonitorImplAttr)) {
        monitorBytes = std::max(monitorBytes.value_or(0), p.bytes);
        continue;
      }
      workspace.bytes = std::max(workspace.bytes, p.bytes);
      workspace.smallBatchBytes = std::max(workspace.smallBatchBytes, p.smallBatchBytes);
    }
    Builder b(&getContext());
    module->setAttr(kWorkspaceBytesAttr, b.getI64IntegerAttr(workspace.bytes));
    if (chunkRows > 1 && workspace.smallBatchBytes < workspace.bytes)
      module->setAttr(kSmallBatchWorkspaceAttr, b.getDenseI64ArrayAttr({chunkRows, workspace.smallBatchBytes}));
    if (monitorBytes)
      module->setAttr(kMonitorWorkspaceBytesAttr, b.getI64IntegerAttr(*monitorBytes));
  }

  /// Plans `func`'s buffers; sets `chunkRows` to the rows of its chunk loop.
  Plan plan(func::FuncOp func, int64_t &chunkRows) {
    Block &body = func.getBody().front();
    Positions positions(body);
    for (Operation &op : body)
      if (auto rows = op.getAttrOfType<IntegerAttr>(kBatchChunkAttr))
        chunkRows = rows.getInt();
    SmallVector<Buffer> buffers;
    for (auto alloc : body.getOps<memref::AllocOp>()) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes)
        continue;
      SmallVector<Operation *> users = transitiveUsers(alloc);
      Buffer buffer{alloc, *bytes, positions.span(alloc).first, positions.span(alloc).first};
      if (privateToOneIteration(users, positions)) {
        buffer.first = UINT_MAX;
        buffer.last = 0;
        for (Operation *user : users) {
          buffer.first = std::min(buffer.first, positions.inLoopBody(user));
          buffer.last = std::max(buffer.last, positions.inLoopBody(user));
        }
      } else {
        for (Operation *user : users)
          buffer.last = std::max(buffer.last, positions.span(user).second);
      }
      buffer.chunksOnly = !users.empty() && llvm::all_of(users, [&](Operation *user) {
        return positions.topLevel(user)->hasAttr(kBatchChunkAttr);
      });
      buffers.push_back(buffer);
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
