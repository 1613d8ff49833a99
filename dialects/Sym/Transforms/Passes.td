//===- Passes.td - sym dialect passes ----------------------*- tablegen -*-===//
#ifndef SYM_PASSES_TD
#define SYM_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymInferShapes : Pass<"sym-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "MXNet's InferShape: refine tensor types from the given input shapes";
  let description = [{
    Seeds the shapes of arguments named in `shapes` (by their `sym.name`), then
    applies every op's shape rule forwards and backwards until nothing changes,
    as MXNet's InferShape pass does. Unknown weight shapes are recovered from
    the data (FullyConnected, Convolution, BatchNorm, ...), unknown data dims
    from known outputs (`_zeros(shape=(0,H))` states). Afterwards every value
    has a ranked type; a dim that stayed unknown becomes `?`.

    Each entry of `shapes` is `name:d0xd1x...`; a `?` dim stays dynamic. When
    no dim is dynamic, an argument whose shape is still not fully known is an
    error listing them, as MXNet's simple_bind reports it.
  }];
  let options = [
    ListOption<"shapes", "shapes", "std::string",
               "input shapes as name:d0xd1x... ('?' keeps a dim dynamic)">,
  ];
  let dependentDialects = ["::mlir::sym::SymDialect"];
}

#endif // SYM_PASSES_TD
