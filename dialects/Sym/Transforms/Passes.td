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

    Each entry of `shapes` is `name:d0xd1x...`; a `?` dim stays dynamic; a 0
    dim is unknown and must be inferred (MXNet reads a 0 so in simple_bind). When
    no dim is dynamic, an argument whose shape is still not fully known is an
    error listing them, as MXNet's simple_bind reports it.
  }];
  let options = [
    ListOption<"shapes", "shapes", "std::string",
               "input shapes as name:d0xd1x... ('?' keeps a dim dynamic, 0 is inferred)">,
  ];
  let dependentDialects = ["::mlir::sym::SymDialect"];
}

def SymGenerateGradients : Pass<"sym-generate-gradients", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of @main into @main_backward";
  let description = [{
    Builds `@main_backward(arguments..., aux states..., head gradients...)`
    returning the gradient of every argument whose grad_req is not null, in
    argument order (`sym.grad_of` names it). The forward ops are recomputed
    in it (sym-save-activations then turns the values the gradients read into
    arguments saved by the training forward); then each op, last first, adds its operands' gradients through
    its GradientOpInterface rule: contributions to one value are summed,
    BlockGrad stops them, and an argument with none gets zeros. An output
    whose producer ignores the head gradient (a loss head) gets no
    head-gradient argument; the others get one (`sym.head_grad_of`). An op
    on the gradient path without a rule is an error at its node.

    `grad-req` entries are `NAME=write|add|null`; arguments not listed are
    `write`, aux states never get gradients.
  }];
  let options = [
    ListOption<"gradReq", "grad-req", "std::string", "NAME=write|add|null per argument">,
  ];
  let dependentDialects = ["::mlir::sym::SymDialect"];
}

def SymSaveActivations : Pass<"sym-save-activations", "::mlir::ModuleOp"> {
  let summary = "Keep the forward values @main_backward needs instead of recomputing them";
  let description = [{
    @main_backward, as sym-generate-gradients builds it, recomputes the
    forward. This pass makes the training forward (@main_train, created from
    @main if missing) return the forward values the gradient ops read, as
    extra results marked `sym.saved`, and @main_backward take them as extra
    arguments (marked alike, in the same order); the recomputation is erased.

    With `mirror`, as MXNet's MXNET_BACKWARD_DO_MIRROR, values of cheap ops
    are recomputed from their operands instead (which are then saved or
    recomputed in turn): all but Convolution, FullyConnected, Concat,
    SoftmaxOutput, BatchNorm and Dropout (whose mask must be the forward's).

    A backward with dynamic dims (a batch chunked at run time) keeps
    recomputing.
  }];
  let options = [
    Option<"mirror", "mirror", "bool", /*default=*/"false", "recompute cheap ops (MXNet's mirror)">,
  ];
  let dependentDialects = ["::mlir::sym::SymDialect"];
}

def SymInstrumentMonitor : Pass<"sym-instrument-monitor", "::mlir::ModuleOp"> {
  let summary = "Add @main_monitor: the forward returning every node's outputs";
  let description = [{
    MXNet's monitor callback (set_monitor_callback) sees every node's
    outputs, which the compiled forward fuses away. This pass clones @main as
    @main_monitor returning, after @main's outputs, the outputs of every op
    (hidden ones included, as MXNet reports them) in node order, each result
    named by `sym.monitor` with MXNet's output name (`<node>_output`,
    `<node>_output<i>`, op-specific names such as `lrn_tmp_norm`).
    When the module trains (@main_train exists) and @main has train-sensitive
    ops (BatchNorm, Dropout, rrelu), it also adds @main_train_monitor, the
    same in training mode. @main is unchanged: the fast path stays fused.
    Over a dynamic ('?') batch, static values reduced from the batch
    (BatchNorm's mean and var) are not returned: the chunked CPU backend
    cannot.
  }];
  let dependentDialects = ["::mlir::sym::SymDialect"];
}

#endif // SYM_PASSES_TD
