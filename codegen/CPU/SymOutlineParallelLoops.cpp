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

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
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

/// The static strides of `type`, a memref of static shape, and its offset
/// (possibly dynamic); failure for any other type.
FailureOr<std::pair<SmallVector<int64_t>, int64_t>> staticLayout(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!memref || !memref.hasStaticShape() || failed(getStridesAndOffset(memref, strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return failure();
  return std::make_pair(strides, offset);
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
  /// The context's fields holding `value`: a memref of static sizes and
  /// strides travels as its aligned pointer, and its offset where that is
  /// dynamic (the rest of its descriptor is known from its type: storing
  /// every field of every descriptor made most of a large entry's code);
  /// any other value as its LLVM type.
  SmallVector<Type> fieldTypesOf(Value value);
  /// Stores `value` into its fields of `context`, from field `next`, and
  /// moves `next` past them.
  void store(OpBuilder &b, Value value, Value context, LLVM::LLVMStructType contextType, unsigned &next);
  /// Loads the value of type `type` from its fields of `context`, from
  /// field `next`, and moves `next` past them.
  Value load(OpBuilder &b, Type type, Value context, LLVM::LLVMStructType contextType, unsigned &next);
  /// The function that runs iterations [begin, end) of `loop`, linearized,
  /// with `fields` loaded from its context of type `contextType`, then
  /// `constants` cloned.
  func::FuncOp outlineBody(scf::ParallelOp loop, ArrayRef<Value> fields, ArrayRef<Value> constants,
                           ArrayRef<Value> counts, LLVM::LLVMStructType contextType);

  SymbolTable symbols;
  LLVMTypeConverter types;
  LLVM::LLVMFuncOp parallelFor;
};

SmallVector<Type> LoopOutliner::fieldTypesOf(Value value) {
  auto layout = staticLayout(value.getType());
  if (failed(layout))
    return {types.convertType(value.getType())};
  SmallVector<Type> fields{LLVM::LLVMPointerType::get(value.getContext())};
  if (ShapedType::isDynamic(layout->second))
    fields.push_back(IntegerType::get(value.getContext(), 64));
  return fields;
}

Value fieldSlot(OpBuilder &b, Location loc, Value context, LLVM::LLVMStructType contextType, unsigned index) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  return b.create<LLVM::GEPOp>(loc, ptr, contextType, context,
                               ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
}

void LoopOutliner::store(OpBuilder &b, Value value, Value context, LLVM::LLVMStructType contextType,
                         unsigned &next) {
  Location loc = value.getLoc();
  auto storeField = [&](Value field) {
    b.create<LLVM::StoreOp>(loc, field, fieldSlot(b, loc, context, contextType, next++));
  };
  auto layout = staticLayout(value.getType());
  if (failed(layout))
    return storeField(toField(b, loc, value, contextType.getBody()[next]));
  MemRefDescriptor descriptor(toField(b, loc, value, types.convertType(value.getType())));
  storeField(descriptor.alignedPtr(b, loc));
  if (ShapedType::isDynamic(layout->second))
    storeField(descriptor.offset(b, loc));
}

Value LoopOutliner::load(OpBuilder &b, Type type, Value context, LLVM::LLVMStructType contextType,
                         unsigned &next) {
  Location loc = context.getLoc();
  auto loadField = [&]() -> Value {
    unsigned index = next++;
    return b.create<LLVM::LoadOp>(loc, contextType.getBody()[index], fieldSlot(b, loc, context, contextType, index));
  };
  auto layout = staticLayout(type);
  if (failed(layout))
    return fromField(b, loc, loadField(), type);
  auto memref = cast<MemRefType>(type);
  auto descriptor = MemRefDescriptor::undef(b, loc, types.convertType(type));
  Value pointer = loadField();
  descriptor.setAllocatedPtr(b, loc, pointer);
  descriptor.setAlignedPtr(b, loc, pointer);
  if (ShapedType::isDynamic(layout->second))
    descriptor.setOffset(b, loc, loadField());
  else
    descriptor.setConstantOffset(b, loc, layout->second);
  for (auto [dim, size] : llvm::enumerate(memref.getShape())) {
    descriptor.setConstantSize(b, loc, dim, size);
    descriptor.setConstantStride(b, loc, dim, layout->first[dim]);
  }
  return fromField(b, loc, descriptor, type);
}

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
    llvm::append_range(fieldTypes, fieldTypesOf(field));
  auto contextType = LLVM::LLVMStructType::getLiteral(loop.getContext(), fieldTypes);
  func::FuncOp body = outlineBody(loop, fields, constants, counts, contextType);

  // The context lives in the caller's frame: allocated once, at entry.
  auto caller = loop->getParentOfType<func::FuncOp>();
  auto entry = OpBuilder::atBlockBegin(&caller.getBody().front());
  auto ptr = LLVM::LLVMPointerType::get(loop.getContext());
  auto i64 = b.getI64Type();
  Value one = entry.create<LLVM::ConstantOp>(loc, i64, entry.getI64IntegerAttr(1));
  Value context = entry.create<LLVM::AllocaOp>(loc, ptr, contextType, one);
  unsigned next = 0;
  for (Value field : fields)
    store(b, field, context, contextType, next);
  Value function = b.create<func::ConstantOp>(loc, body.getFunctionType(), SymbolRefAttr::get(body));
  Value functionPtr = b.create<UnrealizedConversionCastOp>(loc, ptr, function).getResult(0);
  Value count = b.create<arith::IndexCastOp>(loc, i64, total);
  b.create<LLVM::CallOp>(loc, parallelFor, ValueRange{functionPtr, context, count});
  loop.erase();
}

func::FuncOp LoopOutliner::outlineBody(scf::ParallelOp loop, ArrayRef<Value> fields, ArrayRef<Value> constants,
                                       ArrayRef<Value> counts, LLVM::LLVMStructType contextType) {
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
  unsigned next = 0;
  for (Value field : fields)
    map.map(field, load(b, field.getType(), entry->getArgument(0), contextType, next));
  for (Value constant : constants)
    b.clone(*constant.getDefiningOp(), map);

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
