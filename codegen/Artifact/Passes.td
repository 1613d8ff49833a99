//===- Passes.td - artifact ABI passes ---------------------*- tablegen -*-===//
#ifndef SYMC_CODEGEN_ARTIFACT_PASSES_TD
#define SYMC_CODEGEN_ARTIFACT_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymArtifactABI : Pass<"sym-artifact-abi", "::mlir::ModuleOp"> {
  let summary = "Give @main the artifact's C ABI and embed the manifest";
  let description = [{
    Rewrites the sym-level `@main(tensors) -> tensors` into destination-passing
    style: `@<prefix>_forward_impl` takes one memref per argument, aux state
    and output, reads inputs through `bufferization.to_tensor` and writes each
    result with `bufferization.materialize_in_destination`, so bufferization
    computes results straight into the caller's buffers.

    It adds the exported entry points of ABI version 1:
      int32_t <prefix>_forward(void *const *buffers, const int64_t *dims, void *workspace);
      const char *<prefix>_manifest(void);
    `buffers` holds the arguments, then the aux states, then the outputs, in
    the manifest's orders; `dims` holds the values of the dynamic dims.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"symc\"",
           "prefix of the exported symbols (one per artifact linked into a program)">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif
