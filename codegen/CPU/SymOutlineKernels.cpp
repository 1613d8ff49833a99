//===- SymOutlineKernels.cpp - the sym-outline-kernels pass ---------------===//
//
// Per-layer code is most of what LLVM compiles, and real models repeat
// layers: ResNet-50's 53 convolutions have about a dozen distinct shapes,
// and every artifact holds the forward two or three times (plain, monitor,
// training). Once buffers are planned, a kernel only differs from its twin
// by the buffers it is given, so outlining kernels and merging equal ones
// leaves one copy of each to compile.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"
#include "dialects/Sym/IR/SymOps.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMOUTLINEKERNELS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

bool containsThreads(Operation *op) {
  return op->walk([](scf::ForallOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// The kernels of `block`: threaded loops, loop nests without threads
/// inside, and linalg ops; loops around threaded loops are searched.
void collectKernels(Block &block, SmallVectorImpl<Operation *> &kernels) {
  for (Operation &op : block) {
    if (op.getNumResults() != 0)
      continue;
    bool isLoop = isa<scf::ForOp, scf::ForallOp, scf::ParallelOp>(op);
    if (!isLoop && !isa<linalg::LinalgOp>(op))
      continue;
    if (isa<scf::ForallOp>(op) || !containsThreads(&op)) {
      kernels.push_back(&op);
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        collectKernels(inner, kernels);
  }
}

/// A hash of `body`'s structure (ops, attributes, types), blind to which
/// values the ops use: equal for equivalent bodies.
llvm::hash_code hashStructure(Region &body) {
  llvm::hash_code hash = llvm::hash_value(body.getNumArguments());
  body.walk([&](Operation *op) {
    hash = llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                        op, OperationEquivalence::ignoreHashValue,
                                        OperationEquivalence::ignoreHashValue,
                                        OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Outlined kernels by structure, to find a kernel's twin.
class KernelTable {
public:
  explicit KernelTable(ModuleOp module) : symbols(module) {}

  /// A function equivalent to `kernel` already in the table, or `kernel`
  /// itself, then added.
  func::FuncOp deduplicate(func::FuncOp kernel) {
    SmallVector<func::FuncOp> &twins = byHash[hashStructure(kernel.getBody())];
    for (func::FuncOp twin : twins)
      if (twin.getFunctionType() == kernel.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(&twin.getBody(), &kernel.getBody(),
                                                     OperationEquivalence::IgnoreLocations)) {
        kernel.erase();
        return twin;
      }
    symbols.insert(kernel);
    twins.push_back(kernel);
    return kernel;
  }

private:
  SymbolTable symbols;
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> byHash;
};

/// Whether `type`'s layout is fully static: such a buffer crosses into a
/// kernel as its aligned pointer alone, the rest rebuilt from the type.
bool passesAsPointer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || memref.getMemorySpace())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(memref, strides, offset)) && !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// The aligned pointer of `value`'s descriptor, which the caller passes for
/// it: memref descriptors cost each call some ten scalar arguments that LLVM
/// cannot prune once the module is split for parallel code generation.
/// (Not memref.extract_aligned_pointer_as_index: expand-strided-metadata
/// folds it through a memref.view and loses the view's byte shift.)
Value pointerArgument(OpBuilder &caller, const LLVMTypeConverter &converter, Value value) {
  Location loc = value.getLoc();
  Type descriptorType = converter.convertType(value.getType());
  Value descriptor = caller.create<UnrealizedConversionCastOp>(loc, descriptorType, value).getResult(0);
  return MemRefDescriptor(descriptor).alignedPtr(caller, loc);
}

/// The memref of static layout `type` at `pointer`, inside the kernel.
Value memrefAt(OpBuilder &builder, const LLVMTypeConverter &converter, MemRefType type, Value pointer) {
  Location loc = pointer.getLoc();
  Value descriptor = MemRefDescriptor::fromStaticShape(builder, loc, converter, type, pointer, pointer);
  return builder.create<UnrealizedConversionCastOp>(loc, type, descriptor).getResult(0);
}

/// The name of `kernel`'s function: the parent's, then the MXNet node the
/// kernel computes (its location), so that profilers name the layer.
std::string kernelName(Operation *kernel, func::FuncOp parent) {
  std::string name = (parent.getName() + "_kernel").str();
  StringRef node = sym::nodeName(kernel->getLoc());
  if (!node.empty())
    name += "_";
  for (char c : node)
    name += llvm::isAlnum(c) ? c : '_';
  return name;
}

/// Moves `kernel` into a function of the values it uses (constants cloned
/// in) and calls that function, or its twin, instead.
void outline(Operation *kernel, func::FuncOp parent, KernelTable &table, const LLVMTypeConverter &converter) {
  llvm::SetVector<Value> used(kernel->operand_begin(), kernel->operand_end());
  getUsedValuesDefinedAbove(kernel->getRegions(), used);
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : used) {
    Operation *definition = value.getDefiningOp();
    if (definition && definition->getNumOperands() == 0 && matchPattern(definition, m_Constant()))
      constants.push_back(definition);
    else
      arguments.push_back(value);
  }

  OpBuilder caller(kernel);
  SmallVector<Value> passed;
  for (Value argument : arguments)
    passed.push_back(passesAsPointer(argument.getType()) ? pointerArgument(caller, converter, argument) : argument);

  OpBuilder builder(parent);
  auto type = builder.getFunctionType(ValueRange(passed).getTypes(), {});
  auto function = builder.create<func::FuncOp>(kernel->getLoc(), kernelName(kernel, parent), type);
  function.setPrivate();
  // Private to the object file too, not only to the module.
  function->setAttr("llvm.linkage", LLVM::LinkageAttr::get(function.getContext(), LLVM::Linkage::Internal));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [argument, parameter] : llvm::zip(arguments, body->getArguments()))
    mapping.map(argument, passesAsPointer(argument.getType())
                              ? memrefAt(builder, converter, cast<MemRefType>(argument.getType()), parameter)
                              : parameter);
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  builder.clone(*kernel, mapping);
  builder.create<func::ReturnOp>(kernel->getLoc());

  func::FuncOp callee = table.deduplicate(function);
  caller.create<func::CallOp>(kernel->getLoc(), callee, passed);
  kernel->erase();
}

struct SymOutlineKernelsPass : impl::SymOutlineKernelsBase<SymOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, func::FuncOp>> kernels;
    for (auto function : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (function.isExternal())
        continue;
      SmallVector<Operation *> found;
      for (Block &block : function.getBody())
        collectKernels(block, found);
      for (Operation *kernel : found)
        kernels.emplace_back(kernel, function);
    }
    KernelTable table(module);
    LLVMTypeConverter converter(&getContext());
    for (auto [kernel, parent] : kernels)
      outline(kernel, parent, table, converter);
  }
};

} // namespace
} // namespace symc::cpu
