//===- SymMapToGPU.cpp - the sym-map-to-gpu pass --------------------------===//
#include "codegen/CUDA/Passes.h"

#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/Dialect/GPU/Transforms/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace symc::cuda {
#define GEN_PASS_DEF_SYMMAPTOGPU
#include "codegen/CUDA/Passes.h.inc"
} // namespace symc::cuda

using namespace mlir;

namespace symc::cuda {
namespace {

/// Whether `call` calls libsymrt_cuda (a GEMM), which host code does.
bool callsDeviceRuntime(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  return callee && callee->hasAttr(kDeviceRuntimeAttr);
}

/// Whether `op` holds work the host launches: a parallel loop (a kernel to
/// be) or a call into libsymrt_cuda.
bool launchesWork(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        auto call = dyn_cast<func::CallOp>(nested);
        return isa<scf::ParallelOp>(nested) || (call && callsDeviceRuntime(call)) ? WalkResult::interrupt()
                                                                                 : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` touches memory (reads or writes a buffer), looking into its
/// regions. Allocations are not accesses: they are refused on their own.
bool accessesMemory(Operation *op) {
  return op->walk([](Operation *nested) {
             if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(nested))
               return WalkResult::advance();
             auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
             if (effects && (effects.hasEffect<MemoryEffects::Read>() || effects.hasEffect<MemoryEffects::Write>()))
               return WalkResult::interrupt();
             if (!effects && !nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() && !isPure(nested) &&
                 !nested->hasTrait<OpTrait::IsTerminator>())
               return WalkResult::interrupt(); // unknown effects
             return WalkResult::advance();
           })
      .wasInterrupted();
}

/// Replaces every nested scf.parallel of `root` by sequential scf.for loops
/// (a kernel's thread runs them).
LogicalResult serializeNestedParallelLoops(Operation *root) {
  SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
  for (scf::ParallelOp loop : loops) {
    if (loop.getNumReductions() != 0)
      return loop.emitError("a parallel loop with reductions cannot run on the GPU yet");
    OpBuilder b(loop);
    IRMapping map;
    SmallVector<Value> ivs;
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      auto inner = b.create<scf::ForOp>(loop.getLoc(), lb, ub, step);
      ivs.push_back(inner.getInductionVar());
      b.setInsertionPointToStart(inner.getBody());
    }
    for (auto [iv, mapped] : llvm::zip(loop.getInductionVars(), ivs))
      map.map(iv, mapped);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, map);
    loop.erase();
  }
  return success();
}

/// A launch of `grid` blocks of `block` threads (1-d), its body to be filled
/// before the terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value grid, Value block) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto launch = b.create<gpu::LaunchOp>(loc, grid, one, one, block, one, one);
  OpBuilder inside = OpBuilder::atBlockEnd(&launch.getBody().front());
  inside.create<gpu::TerminatorOp>(loc);
  return launch;
}

/// Whether `op` or an op nested in it uses `value`.
bool usesValue(Operation *op, Value value) {
  return value && llvm::any_of(value.getUsers(), [&](Operation *user) { return op->isAncestor(user); });
}

/// Iterations a thread of a large elementwise loop runs, and the threads
/// from which it runs that many (H200: about 2048 threads on each of 132
/// multiprocessors).
constexpr int64_t kIterationsPerThread = 4;
constexpr int64_t kMinThreadsToCoarsen = 1 << 18;

class GPUMapper {
public:
  GPUMapper(func::FuncOp function, int64_t blockSize) : function(function), blockSize(blockSize) {
    for (BlockArgument arg : function.getArguments())
      if (function.getArgAttr(arg.getArgNumber(), sym::kRunErrorAttr))
        runError = arg;
  }

  LogicalResult run() {
    hoistSeedLoads();
    fuseFills();
    if (failed(mapRegion(function.getBody())))
      return failure();
    // Constants (bounds, steps, trip counts) are built into the kernels, not
    // passed to them: a division by a constant is a multiplication. A
    // constant array (memref.get_global) must be read in the kernel too:
    // outlining then copies its global into the GPU module (device memory),
    // where passed in it would be host memory.
    function.walk([](gpu::LaunchOp launch) {
      (void)sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
        return op->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(op);
      });
    });
    return success();
  }

private:
  /// Each loop that only stores a value defined outside it into a buffer at
  /// its own iteration's position (a fill), followed by a loop over the
  /// same space that touches that buffer only at its own iteration's
  /// position too (the reduction or update the fill initializes): the
  /// second loop's iterations store the value first, and the fill goes. A
  /// launch less, and the buffer is written once fewer.
  void fuseFills() {
    SmallVector<scf::ParallelOp> fills;
    function.walk([&](scf::ParallelOp loop) {
      if (filledBuffer(loop))
        fills.push_back(loop);
    });
    for (scf::ParallelOp fill : fills) {
      Operation *next = fill->getNextNode();
      while (next && isPure(next))
        next = next->getNextNode();
      auto consumer = dyn_cast_or_null<scf::ParallelOp>(next);
      if (!consumer || !sameSpace(fill, consumer) || !touchesOnlyOwnPosition(consumer, filledBuffer(fill)))
        continue;
      auto store = cast<memref::StoreOp>(fill.getBody()->front());
      IRMapping map;
      map.map(fill.getInductionVars(), consumer.getInductionVars());
      OpBuilder::atBlockBegin(consumer.getBody()).clone(*store, map);
      fill.erase();
    }
  }

  /// The buffer `loop` fills: its body a lone store of a value from outside
  /// at the loop's induction variables, in order.
  static Value filledBuffer(scf::ParallelOp loop) {
    Block *body = loop.getBody();
    if (body->getOperations().size() != 2 || loop.getNumReductions() != 0)
      return nullptr;
    auto store = dyn_cast<memref::StoreOp>(body->front());
    if (!store || loop->isAncestor(store.getValueToStore().getParentBlock()->getParentOp()) ||
        !llvm::equal(store.getIndices(), loop.getInductionVars()))
      return nullptr;
    return store.getMemRef();
  }

  static bool sameSpace(scf::ParallelOp a, scf::ParallelOp b) {
    auto equal = [](ValueRange x, ValueRange y) {
      return x.size() == y.size() && llvm::all_of(llvm::zip(x, y), [](auto pair) {
               auto [u, v] = pair;
               std::optional<int64_t> cu = getConstantIntValue(u), cv = getConstantIntValue(v);
               return u == v || (cu && cv && *cu == *cv);
             });
    };
    return equal(a.getLowerBound(), b.getLowerBound()) && equal(a.getUpperBound(), b.getUpperBound()) &&
           equal(a.getStep(), b.getStep());
  }

  /// The buffer `memref` views, through reshapes, subviews and casts: a
  /// memref.view of the workspace is a buffer of its own (the memory plan
  /// never overlaps buffers that live at once).
  static Value viewedBuffer(Value memref) {
    while (auto view = memref.getDefiningOp<ViewLikeOpInterface>()) {
      if (isa<memref::ViewOp>(view))
        break;
      memref = view.getViewSource();
    }
    return memref;
  }

  /// Whether `loop` reads or writes `buffer`, through any view of it, only
  /// by loads and stores of `buffer` itself at the loop's induction
  /// variables, in order.
  static bool touchesOnlyOwnPosition(scf::ParallelOp loop, Value buffer) {
    Value root = viewedBuffer(buffer);
    bool ownOnly = true;
    loop.getBody()->walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        if (!isa<MemRefType>(operand.getType()) || viewedBuffer(operand) != root)
          continue;
        auto load = dyn_cast<memref::LoadOp>(op);
        auto store = dyn_cast<memref::StoreOp>(op);
        bool own = operand == buffer && (load || (store && store.getValueToStore() != buffer)) &&
                   llvm::equal(load ? load.getIndices() : store.getIndices(), loop.getInductionVars());
        ownOnly &= own;
      }
    });
    return ownOnly;
  }

  /// The seed lives in the host's dims array: read it once, on the host.
  void hoistSeedLoads() {
    for (BlockArgument arg : function.getArguments()) {
      if (!function.getArgAttr(arg.getArgNumber(), sym::kRngSeedAttr))
        continue;
      SmallVector<memref::LoadOp> loads;
      for (Operation *user : arg.getUsers())
        if (auto load = dyn_cast<memref::LoadOp>(user))
          loads.push_back(load);
      if (loads.empty())
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
      Value zero = b.create<arith::ConstantIndexOp>(function.getLoc(), 0);
      SmallVector<Value> origin(cast<MemRefType>(arg.getType()).getRank(), zero);
      Value seed = b.create<memref::LoadOp>(function.getLoc(), arg, origin);
      for (memref::LoadOp load : loads) {
        load.replaceAllUsesWith(seed);
        load.erase();
      }
      hostLoads.insert(seed.getDefiningOp());
    }
  }

  LogicalResult mapRegion(Region &region) {
    for (Block &block : region) {
      SmallVector<Operation *> ops;
      for (Operation &op : block.without_terminator())
        ops.push_back(&op);
      for (size_t i = 0; i < ops.size(); ++i) {
        if (!runsSerially(ops[i])) {
          if (failed(mapOp(ops[i])))
            return failure();
          continue;
        }
        // The serial code from here: what touches memory, and what
        // computes on the values it read (a 0-d op's load, math, store).
        SmallVector<Operation *> segment{ops[i]};
        llvm::SmallPtrSet<Operation *, 8> members{ops[i]};
        auto readsSegment = [&](Operation *op) {
          return llvm::any_of(op->getOperands(), [&](Value v) { return members.contains(v.getDefiningOp()); });
        };
        while (i + 1 < ops.size() && (runsSerially(ops[i + 1]) || (isPure(ops[i + 1]) && readsSegment(ops[i + 1])))) {
          segment.push_back(ops[++i]);
          members.insert(ops[i]);
        }
        if (failed(launchSingleThread(segment)))
          return failure();
      }
    }
    return success();
  }

  /// Whether `op` is host code that touches device memory, to run on one
  /// GPU thread.
  bool runsSerially(Operation *op) {
    if (hostLoads.contains(op) || isa<scf::ParallelOp, func::CallOp, memref::AllocOp, memref::AllocaOp,
                                      memref::DeallocOp>(op))
      return false;
    if (op->getNumRegions() != 0 && launchesWork(op))
      return false;
    return accessesMemory(op);
  }

  LogicalResult mapOp(Operation *op) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op))
      return launchParallelLoop(loop);
    if (isa<memref::AllocOp, memref::AllocaOp>(op))
      return op->emitError("needs a buffer outside the workspace plan, which the cuda target does not support yet");
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (callsDeviceRuntime(call))
        return success();
      return call.emitError("calls '") << call.getCallee()
                                       << "' of symc's CPU kernel library: this op has no cuda lowering yet";
    }
    if (op->getNumRegions() != 0 && launchesWork(op))
      for (Region &region : op->getRegions())
        if (failed(mapRegion(region)))
          return failure();
    return success();
  }

  LogicalResult checkKernelBody(Operation *op) {
    // The run error record is host memory.
    if (usesValue(op, runError))
      return op->emitError("has a run-time check, which the cuda target does not support yet");
    bool callsLibrary = op->walk([](func::CallOp) { return WalkResult::interrupt(); }).wasInterrupted();
    if (callsLibrary)
      return op->emitError("calls symc's CPU kernel library: this op has no cuda lowering yet");
    return success();
  }

  /// Runs `ops` (consecutive host code that touches device memory) on one
  /// GPU thread.
  LogicalResult launchSingleThread(ArrayRef<Operation *> ops) {
    llvm::SmallPtrSet<Operation *, 8> members(ops.begin(), ops.end());
    for (Operation *op : ops) {
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!members.contains(ops.front()->getBlock()->findAncestorOpInBlock(*user)))
            return op->emitError(
                "reads device memory to steer host code, which the cuda target does not support yet");
      if (failed(checkKernelBody(op)))
        return failure();
    }
    OpBuilder b(ops.front());
    Value one = b.create<arith::ConstantIndexOp>(ops.front()->getLoc(), 1);
    gpu::LaunchOp launch = createLaunch(b, ops.front()->getLoc(), one, one);
    for (Operation *op : ops) {
      op->moveBefore(launch.getBody().front().getTerminator());
      if (failed(serializeNestedParallelLoops(op)))
        return failure();
    }
    return success();
  }

  /// Index arithmetic in 32 bits where `narrow` (the space allows): a GPU
  /// divides (to delinearize) and multiplies 64-bit integers in several
  /// instructions.
  struct IndexArithmetic {
    OpBuilder &b;
    Location loc;
    bool narrow;

    Value narrowed(Value v) { return narrow ? b.create<arith::IndexCastUIOp>(loc, b.getI32Type(), v) : v; }
    Value widened(Value v) { return narrow ? b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), v) : v; }
  };

  /// `loop`'s induction variables at the iteration numbered `linear` (row-
  /// major over `trips`).
  static IRMapping iteration(IndexArithmetic &math, Value linear, ArrayRef<Value> trips, scf::ParallelOp loop) {
    OpBuilder &b = math.b;
    IRMapping map;
    Value remaining = linear;
    for (int64_t d = static_cast<int64_t>(trips.size()) - 1; d >= 0; --d) {
      Value position = remaining;
      if (d > 0) {
        Value trip = math.narrowed(trips[d]);
        position = b.create<arith::RemUIOp>(math.loc, remaining, trip);
        remaining = b.create<arith::DivUIOp>(math.loc, remaining, trip);
      }
      Value step = b.create<arith::MulIOp>(math.loc, math.widened(position), loop.getStep()[d]);
      map.map(loop.getInductionVars()[d], b.create<arith::AddIOp>(math.loc, loop.getLowerBound()[d], step));
    }
    return map;
  }

  /// Iterations of `loop` (of `total` iterations, if static) that one thread
  /// runs: several, for a large space of a loop body without loops of its
  /// own, so that each thread has several loads in flight (a GPU hides
  /// memory latency by the loads in flight).
  int64_t iterationsPerThread(scf::ParallelOp loop, std::optional<int64_t> total) {
    bool hasLoops = loop.getBody()
                        ->walk([](Operation *op) {
                          return isa<LoopLikeOpInterface>(op) ? WalkResult::interrupt() : WalkResult::advance();
                        })
                        .wasInterrupted();
    if (hasLoops || !total || *total % kIterationsPerThread != 0 ||
        *total / kIterationsPerThread < kMinThreadsToCoarsen)
      return 1;
    return kIterationsPerThread;
  }

  /// One thread per iteration of `loop` (or per few, iterationsPerThread):
  /// thread t of the linearized space (iterations counted row-major) runs
  /// the iteration it delinearizes to.
  LogicalResult launchParallelLoop(scf::ParallelOp loop) {
    if (loop.getNumReductions() != 0)
      return loop.emitError("a parallel loop with reductions cannot run on the GPU yet");
    if (failed(checkKernelBody(loop)))
      return failure();
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    SmallVector<Value> trips;
    Value total = b.create<arith::ConstantIndexOp>(loc, 1);
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
      trips.push_back(b.createOrFold<arith::CeilDivSIOp>(loc, span, step));
      total = b.createOrFold<arith::MulIOp>(loc, total, trips.back());
    }
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    int64_t perThread = iterationsPerThread(loop, staticTotal);
    Value threadCount = b.createOrFold<arith::DivUIOp>(loc, total, b.create<arith::ConstantIndexOp>(loc, perThread));
    Value threads = b.create<arith::ConstantIndexOp>(loc, blockSize);
    Value grid = b.create<arith::CeilDivSIOp>(loc, threadCount, threads);
    // An empty space launches nothing (a zero grid is an invalid launch).
    Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, total, zero);
    auto ifAny = b.create<scf::IfOp>(loc, any, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifAny.thenBlock());
    gpu::LaunchOp launch = createLaunch(b, loc, grid, threads);

    b.setInsertionPointToStart(&launch.getBody().front());
    IndexArithmetic math{b, loc, staticTotal && *staticTotal <= std::numeric_limits<int32_t>::max()};
    Value index = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(loc, math.narrowed(launch.getBlockIds().x), math.narrowed(launch.getBlockSize().x)),
        math.narrowed(launch.getThreadIds().x));
    Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, index, math.narrowed(threadCount));
    auto ifInRange = b.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifInRange.thenBlock());
    // Thread t runs iterations t, t + threadCount, ...: at each step the
    // threads of a warp still touch neighbouring elements.
    SmallVector<IRMapping> maps{iteration(math, index, trips, loop)};
    for (int64_t j = 1; j < perThread; ++j) {
      Value offset = b.create<arith::MulIOp>(loc, threadCount, b.create<arith::ConstantIndexOp>(loc, j));
      maps.push_back(iteration(math, b.create<arith::AddIOp>(loc, index, math.narrowed(offset)), trips, loop));
    }
    // The iterations' ops interleaved, each op for every iteration in turn:
    // a thread's loads are all in flight together. Iterations of a parallel
    // loop touch no element another writes, so the order is free.
    for (Operation &op : loop.getBody()->without_terminator())
      for (IRMapping &map : maps)
        b.clone(op, map);
    loop.erase();
    return serializeNestedParallelLoops(launch);
  }

  func::FuncOp function;
  int64_t blockSize;
  Value runError;
  llvm::SmallPtrSet<Operation *, 2> hostLoads;
};

struct SymMapToGPUPass : impl::SymMapToGPUBase<SymMapToGPUPass> {
  using SymMapToGPUBase::SymMapToGPUBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    if (failed(GPUMapper(function, blockSize).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace symc::cuda
