//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef SYMC_CODEGEN_CPU_PASSES_TD
#define SYMC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymLowerToLinalg : Pass<"sym-lower-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Lower sym ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Each sym op becomes linalg named ops (matmuls, transposes, fills),
    linalg.generic ops (elementwise maps with numpy broadcasting, reductions,
    windowed convolution and pooling) and tensor slice/reshape ops, with
    MXNet's inference semantics. Every type must be ranked and static; an op
    the CPU backend cannot lower is an error at its node.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif
