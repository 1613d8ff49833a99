//===- EntryPoints.cpp - the exported entry points of an artifact ---------===//
#include "codegen/Artifact/EntryPoints.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace symc {
namespace {

/// An identity-layout memref descriptor over `pointer`, cast to `type`, whose
/// dynamic dims have size `dynamicSize` (an i64).
Value buildDescriptor(OpBuilder &b, Location loc, Value pointer, MemRefType type, Value dynamicSize) {
  MLIRContext *ctx = b.getContext();
  auto i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  int64_t rank = type.getRank();
  SmallVector<Type> fields{ptr, ptr, i64};
  if (rank > 0)
    fields.append(2, LLVM::LLVMArrayType::get(i64, rank));
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  auto constant = [&](int64_t v) -> Value { return b.create<LLVM::ConstantOp>(loc, i64, v); };
  Value desc = b.create<LLVM::UndefOp>(loc, structType);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, pointer, 0);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, pointer, 1);
  desc = b.create<LLVM::InsertValueOp>(loc, desc, constant(0), 2);
  Value stride = constant(1);
  for (int64_t i = rank - 1; i >= 0; --i) {
    Value size = type.isDynamicDim(i) ? dynamicSize : constant(type.getDimSize(i));
    desc = b.create<LLVM::InsertValueOp>(loc, desc, size, ArrayRef<int64_t>{3, i});
    desc = b.create<LLVM::InsertValueOp>(loc, desc, stride, ArrayRef<int64_t>{4, i});
    stride = b.create<LLVM::MulOp>(loc, stride, size);
  }
  return b.create<UnrealizedConversionCastOp>(loc, type, desc).getResult(0);
}

} // namespace

void buildEntry(ModuleOp module, func::FuncOp impl, StringRef name) {
  std::optional<unsigned> seedArg;
  for (unsigned i = 0; i < impl.getNumArguments(); ++i)
    if (impl.getArgAttr(i, sym::kRngSeedAttr))
      seedArg = i;
  MLIRContext *ctx = module.getContext();
  Location loc = impl.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  auto i64 = b.getI64Type();
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, name,
                                          LLVM::LLVMFunctionType::get(i32, {ptr, ptr, ptr, ptr}));
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value buffers = block->getArgument(0);
  ArrayRef<Type> bufferTypes = impl.getArgumentTypes().drop_back(2);
  bool dynamic = llvm::any_of(bufferTypes, [](Type t) { return !cast<MemRefType>(t).hasStaticShape(); });
  // The batch is read only where it exists: a static artifact accepts null dims.
  Value batch = dynamic ? b.create<LLVM::LoadOp>(loc, i64, block->getArgument(1)).getResult()
                        : b.create<LLVM::ConstantOp>(loc, i64, 0).getResult();
  SmallVector<Value> memrefs;
  int32_t slot = 0;
  for (auto [i, type] : llvm::enumerate(bufferTypes)) {
    Value pointer;
    if (i == seedArg) {
      pointer = b.create<LLVM::GEPOp>(loc, ptr, i64, block->getArgument(1), ArrayRef<LLVM::GEPArg>{1});
    } else {
      Value address = b.create<LLVM::GEPOp>(loc, ptr, ptr, buffers, ArrayRef<LLVM::GEPArg>{slot++});
      pointer = b.create<LLVM::LoadOp>(loc, ptr, address);
    }
    memrefs.push_back(buildDescriptor(b, loc, pointer, cast<MemRefType>(type), batch));
  }
  Value none = b.create<LLVM::ConstantOp>(loc, i64, 0);
  Value error = block->getArgument(3);
  memrefs.push_back(buildDescriptor(b, loc, error, cast<MemRefType>(impl.getArgumentTypes().drop_back().back()), none));
  // Nothing reads the workspace's size.
  memrefs.push_back(buildDescriptor(b, loc, block->getArgument(2),
                                    cast<MemRefType>(impl.getArgumentTypes().back()), none));
  b.create<LLVM::StoreOp>(loc, none, error);
  b.create<func::CallOp>(loc, impl, memrefs);
  Value check = b.create<LLVM::LoadOp>(loc, i64, error);
  b.create<LLVM::ReturnOp>(loc, ValueRange{b.create<LLVM::TruncOp>(loc, i32, check)});
}


} // namespace symc
