//===- SymEmbedManifest.cpp - the sym-embed-manifest pass -----------------===//
#include "codegen/Artifact/Manifest.h"
#include "codegen/Artifact/Passes.h"

namespace symc {
#define GEN_PASS_DEF_SYMEMBEDMANIFEST
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// const char *<prefix>_manifest(void), returning `json` (NUL-terminated).
void buildManifestEntry(ModuleOp module, StringRef prefix, StringRef json) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string text = json.str();
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
  std::string globalName = manifestEntryName(prefix) + "_json";
  b.create<LLVM::GlobalOp>(loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, globalName,
                           b.getStringAttr(text));
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, manifestEntryName(prefix),
                                          LLVM::LLVMFunctionType::get(ptr, {}));
  b.setInsertionPointToStart(entry.addEntryBlock(b));
  Value address = b.create<LLVM::AddressOfOp>(loc, ptr, globalName);
  b.create<LLVM::ReturnOp>(loc, address);
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
    manifest["cpu_features"] = llvm::json::Array(cpuFeatures);
    std::string prefix = manifest.getString("prefix").value_or("symc").str();
    std::string json;
    llvm::raw_string_ostream(json) << llvm::json::Value(std::move(manifest));
    buildManifestEntry(module, prefix, json);
    module->removeAttr(kManifestAttr);
    module->removeAttr(kWorkspaceBytesAttr);
  }
};

} // namespace
} // namespace symc
