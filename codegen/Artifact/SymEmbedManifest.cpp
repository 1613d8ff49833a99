//===- SymEmbedManifest.cpp - the sym-embed-manifest pass -----------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

#include "llvm/Support/MemoryBuffer.h"

namespace symc {
#define GEN_PASS_DEF_SYMEMBEDMANIFEST
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// A constant global `name` holding `bytes`, 64-byte aligned.
void addBlob(OpBuilder &b, Location loc, StringRef name, StringRef bytes) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, name,
                           b.getStringAttr(bytes), /*alignment=*/64);
}

/// const char *<prefix>_manifest(void), returning `json` (NUL-terminated).
void buildManifestEntry(ModuleOp module, StringRef prefix, StringRef json) {
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string text = json.str();
  text.push_back('\0');
  std::string globalName = manifestGlobalName(prefix);
  addBlob(b, loc, globalName, text);
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, manifestEntryName(prefix),
                                          LLVM::LLVMFunctionType::get(ptr, {}));
  b.setInsertionPointToStart(entry.addEntryBlock(b));
  b.create<LLVM::ReturnOp>(loc, b.create<LLVM::AddressOfOp>(loc, ptr, globalName).getResult());
}

/// const uint8_t *<prefix>_params(int64_t *size), returning `bytes`.
void buildParamsEntry(ModuleOp module, StringRef prefix, StringRef bytes) {
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string globalName = paramsEntryName(prefix) + "_data";
  addBlob(b, loc, globalName, bytes);
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, paramsEntryName(prefix),
                                          LLVM::LLVMFunctionType::get(ptr, {ptr}));
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value size = b.create<LLVM::ConstantOp>(loc, b.getI64Type(), static_cast<int64_t>(bytes.size()));
  b.create<LLVM::StoreOp>(loc, size, block->getArgument(0));
  b.create<LLVM::ReturnOp>(loc, b.create<LLVM::AddressOfOp>(loc, ptr, globalName).getResult());
}

struct SymEmbedManifestPass : impl::SymEmbedManifestBase<SymEmbedManifestPass> {
  using SymEmbedManifestBase::SymEmbedManifestBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto text = module->getAttrOfType<StringAttr>(kManifestAttr);
    if (!text) {
      module.emitError("no manifest to embed: run sym-artifact-abi first");
      return signalPassFailure();
    }
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text.getValue());
    if (!parsed) {
      module.emitError("internal error: invalid manifest: ") << llvm::toString(parsed.takeError());
      return signalPassFailure();
    }
    llvm::json::Object &manifest = *parsed->getAsObject();
    auto bytes = module->getAttrOfType<IntegerAttr>(kWorkspaceBytesAttr);
    manifest["workspace_bytes"] = bytes ? bytes.getInt() : 0;
    if (auto small = module->getAttrOfType<DenseI64ArrayAttr>(kSmallBatchWorkspaceAttr))
      manifest["small_batch_workspace"] = llvm::json::Object{{"below_rows", small[0]}, {"bytes", small[1]}};
    llvm::json::Object *monitor = manifest.getObject("monitor");
    if (auto monitorBytes = module->getAttrOfType<IntegerAttr>(kMonitorWorkspaceBytesAttr); monitor && monitorBytes)
      (*monitor)["workspace_bytes"] = monitorBytes.getInt();
    manifest["cpu_features"] = llvm::json::Array(cpuFeatures);
    manifest["device"] = device;
    manifest["embedded_params"] = !paramsFile.empty();
    if (!shapeVariants.empty())
      manifest["shape_variants"] = llvm::json::Array(shapeVariants);
    std::string prefix = manifest.getString("prefix").value_or("symc").str();
    if (!paramsFile.empty()) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> params = llvm::MemoryBuffer::getFile(paramsFile);
      if (!params) {
        module.emitError("cannot read ") << paramsFile << ": " << params.getError().message();
        return signalPassFailure();
      }
      buildParamsEntry(module, prefix, (*params)->getBuffer());
    }
    std::string json;
    llvm::raw_string_ostream(json) << llvm::json::Value(std::move(manifest));
    buildManifestEntry(module, prefix, json);
    module->removeAttr(kManifestAttr);
    module->removeAttr(kWorkspaceBytesAttr);
    module->removeAttr(kSmallBatchWorkspaceAttr);
    module->removeAttr(kMonitorWorkspaceBytesAttr);
  }
};

} // namespace
} // namespace symc
