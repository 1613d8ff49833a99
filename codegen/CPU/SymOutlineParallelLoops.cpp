//===- SymOutlineParallelLoops.cpp - the sym-outline-parallel-loops pass ---===//
//
// Threads belong to libsymrt, not to the artifact: each parallel loop is a
// call to symcParallelFor (ArtifactABI.h) with a function that runs a range
// of the loop's iterations and a context, on the caller's stack, holding the
// values the loop body uses from above. The runtime hands ranges to the
// calling thread's workers; a nested loop stays a sequential one inside.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMOUTLINEPARALLELLOOPS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

constexpr llvm::StringLiteral kParallelForName = "symcParallelFor";

/// symcParallelFor(body, context, count), declared once per module.
LLVM::LLVMFuncOp declareParallelFor(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelForName))
    return existing;
  MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                          {ptr, ptr, IntegerType::get(context, 64)});
  auto builder = OpBuilder::atBlockBegin(module.getBody());
  return builder.create<LLVM::LLVMFuncOp>(module.getLoc(), kParallelForName, type);
}

/// The iterations of one dim: ceil((ub - lb) / step), or 0.
Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub, Value step) {
  Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  Value count = b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  return b.createOrFold<arith::MaxSIOp>(loc, count, zero);
}

/// `value` as the context field of type `fieldType` holds it.
Value toField(OpBuilder &b, Location loc, Value value, Type fieldType) {
  if (value.getType() == fieldType)
    return value;
  if (value.getType().isIndex())
    return b.create<arith::IndexCastOp>(loc, fieldType, value);
  return b.create<UnrealizedConversionCastOp>(loc, fieldType, value).getResult(0);
}

Value fromField(OpBuilder &b, Location loc, Value field, Type type) {
  if (field.getType() == type)
    return field;
  if (type.isIndex())
    return b.create<arith::IndexCastOp>(loc, type, field);
  return b.create<UnrealizedConversionCastOp>(loc, type, field).getResult(0);
}

bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 && matchPattern(value, m_Constant());
}

class LoopOutliner {
public:
  explicit LoopOutliner(ModuleOp module)
      : symbols(module), types(module.getContext()), parallelFor(declareParallelFor(module)) {}

  void outline(scf::ParallelOp loop);

private:
  /// The function that runs iterations [begin, end) of `loop`, linearized,
  /// with `inputs` loaded from its context of type `contextType`.
  func::FuncOp outlineBody(scf::ParallelOp loop, ArrayRef<Value> inputs, ArrayRef<Value> counts,
                           LLVM::LLVMStructType contextType);

  SymbolTable symbols;
  LLVMTypeConverter types;
  LLVM::LLVMFuncOp parallelFor;
};

void LoopOutliner::outline(scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  SmallVector<Value> counts;
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
    counts.push_back(tripCount(b, loc, lb, ub, step));
  Value total = counts.front();
  for (Value count : ArrayRef(counts).drop_front())
    total = b.createOrFold<arith::MulIOp>(loc, total, count);

  // What the body needs from here: the values it uses, where each index
  // starts and steps, and each inner dim's count (to split the linear index).
  llvm::SetVector<Value> inputs;
  getUsedValuesDefinedAbove(loop.getRegion(), inputs);
  inputs.insert(loop.getLowerBound().begin(), loop.getLowerBound().end());
  inputs.insert(loop.getStep().begin(), loop.getStep().end());
  inputs.insert(counts.begin() + 1, counts.end());
  SmallVector<Value> fields, constants;
  for (Value input : inputs)
    (isConstant(input) ? constants : fields).push_back(input);
  SmallVector<Type> fieldTypes;
  for (Value field : fields)
    fieldTypes.push_back(types.convertType(field.getType()));
  auto contextType = LLVM::LLVMStructType::getLiteral(loop.getContext(), fieldTypes);

  SmallVector<Value> bodyInputs(fields);
  bodyInputs.append(constants);
  func::FuncOp body = outlineBody(loop, bodyInputs, counts, contextType);

  // The context lives in the caller's frame: allocated once, at entry.
  auto caller = loop->getParentOfType<func::FuncOp>();
  auto entry = OpBuilder::atBlockBegin(&caller.getBody().front());
  auto ptr = LLVM::LLVMPointerType::get(loop.getContext());
  auto i64 = b.getI64Type();
  Value one = entry.create<LLVM::ConstantOp>(loc, i64, entry.getI64IntegerAttr(1));
  Value context = entry.create<LLVM::AllocaOp>(loc, ptr, contextType, one);
  for (auto [index, field] : llvm::enumerate(fields)) {
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, contextType, context,
                                       ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    b.create<LLVM::StoreOp>(loc, toField(b, loc, field, fieldTypes[index]), slot);
  }
  Value function = b.create<func::ConstantOp>(loc, body.getFunctionType(), SymbolRefAttr::get(body));
  Value functionPtr = b.create<UnrealizedConversionCastOp>(loc, ptr, function).getResult(0);
  Value count = b.create<arith::IndexCastOp>(loc, i64, total);
  b.create<LLVM::CallOp>(loc, parallelFor, ValueRange{functionPtr, context, count});
  loop.erase();
}

func::FuncOp LoopOutliner::outlineBody(scf::ParallelOp loop, ArrayRef<Value> inputs, ArrayRef<Value> counts,
                                       LLVM::LLVMStructType contextType) {
  Location loc = loop.getLoc();
  auto caller = loop->getParentOfType<func::FuncOp>();
  auto ptr = LLVM::LLVMPointerType::get(loop.getContext());
  OpBuilder b(loop.getContext());
  Type index = b.getIndexType();
  auto function = b.create<func::FuncOp>(loc, (caller.getSymName() + "_parallel").str(),
                                         b.getFunctionType({ptr, index, index}, {}));
  function.setPrivate();
  symbols.insert(function, std::next(Block::iterator(caller))); // unique name
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);

  IRMapping map;
  ArrayRef<Type> fieldTypes = contextType.getBody();
  for (auto [index, input] : llvm::enumerate(inputs)) {
    if (index >= fieldTypes.size()) { // a constant
      b.clone(*input.getDefiningOp(), map);
      continue;
    }
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, contextType, entry->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    Value field = b.create<LLVM::LoadOp>(loc, fieldTypes[index], slot);
    map.map(input, fromField(b, loc, field, input.getType()));
  }

  Value step = b.create<arith::ConstantIndexOp>(loc, 1);
  auto range = b.create<scf::ForOp>(loc, entry->getArgument(1), entry->getArgument(2), step);
  b.setInsertionPoint(range.getBody()->getTerminator());
  // The linear index, split into the loop's indices (the last dim fastest).
  Value linear = range.getInductionVar();
  for (int64_t dim = loop.getNumLoops() - 1; dim >= 0; --dim) {
    Value position = linear;
    if (dim > 0) {
      Value count = map.lookup(counts[dim]);
      position = b.create<arith::RemUIOp>(loc, linear, count);
      linear = b.create<arith::DivUIOp>(loc, linear, count);
    }
    Value offset = b.create<arith::MulIOp>(loc, position, map.lookup(loop.getStep()[dim]));
    map.map(loop.getInductionVars()[dim],
            b.create<arith::AddIOp>(loc, map.lookup(loop.getLowerBound()[dim]), offset));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  b.setInsertionPointToEnd(entry);
  b.create<func::ReturnOp>(loc);
  return function;
}

struct SymOutlineParallelLoopsPass : impl::SymOutlineParallelLoopsBase<SymOutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Outermost loops only; a loop with reductions stays sequential.
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (loop.getNumResults() == 0 && !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    LoopOutliner outliner(module);
    for (scf::ParallelOp loop : loops)
      outliner.outline(loop);
  }
};

} // namespace
} // namespace symc::cpu
