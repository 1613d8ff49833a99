//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef SYMC_CODEGEN_CPU_PASSES_TD
#define SYMC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymLowerToLinalg : Pass<"sym-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower sym ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Each sym op becomes linalg named ops (matmuls, transposes, fills),
    linalg.generic ops (elementwise maps with numpy broadcasting, reductions,
    windowed convolution and pooling) and tensor slice/reshape ops, with
    MXNet's inference semantics. Every type must be ranked and static; an op
    the CPU backend cannot lower is an error at its node. Sequential,
    data-dependent ops (non-maximum suppression, sorting) call kernels of
    symc's kernel library on buffers, which the pass declares in the module.
    With `pack-weights`, convolutions over small maps read their weights
    packed into filter strips, by ops marked for the prepare entry
    (sym-outline-prepare). With `gpu` (GPU code), ungrouped convolutions
    and their gradients are im2col GEMMs over whole batches, never
    contractions by taps, and pooling gradients are gathered at each input
    element.
  }];
  let options = [
    Option<"packWeights", "pack-weights", "bool", "false",
           "let convolutions read weights packed by marked ops (CPU code)">,
    Option<"gpu", "gpu", "bool", "false",
           "lower for a GPU: batch-sized im2col GEMMs (cuBLAS), gathered pooling gradients">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect", "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SymChannelsLast : Pass<"sym-channels-last", "::mlir::ModuleOp"> {
  let summary = "Run convolutions channels-last (NHWC) and the layers between them too";
  let description = [{
    Each 2-d convolution the CPU lowering has a channels-last kernel for
    (hasChannelsLastKernel: depthwise ones, ungrouped ones over whole strips
    of filters) becomes an NHWC Convolution between transposes: its data and
    weight to NHWC, its result back to NCHW; each such convolution's
    gradient (_backward_Convolution) likewise. The transposes back then sink
    through the elementwise ops, BatchNorms and their gradients after them
    (which go channels-last themselves, BatchNorm's axis moved), and a
    transpose of a transpose folds, so that between consecutive such layers
    none is left: transposes remain only where the graph enters and leaves
    channels-last (the input, a pooling gradient, the outputs). A training
    step keeps a convolution over few data channels (an RGB stem)
    channels-first, but hands its output on channels-last when the next
    convolutions run so: one transpose right after it, marked so that the
    layers between (BatchNorm, relu, max pooling) go channels-last rather
    than moving it back above them. Where
    @main_train and @main_backward are both converted, the activations the
    first saves for the second are saved channels-last where it computes
    them so: their signatures change, so the CPU pipeline converts those two
    before sym-artifact-abi fixes the entries, and the others after it has
    described them (its node tables follow @main's ops).
  }];
  let options = [
    ListOption<"functions", "functions", "std::string", "the functions to convert (default: all)">
  ];
}

def SymChunkBatch : Pass<"sym-chunk-batch", "::mlir::func::FuncOp"> {
  let summary = "Run the sym ops that see a dynamic batch dim in loops over static chunks";
  let description = [{
    The sym ops with a dynamic (leading, batch) dim are cloned into an
    scf.for over chunks of `chunk` batch rows, then into a second loop over
    the remaining single rows; inside, every type is static, so the static
    lowering and schedules apply unchanged and intermediate tensors are
    chunk-sized. Inputs are sliced by rows and results inserted into
    batch-sized tensors. An op that combines batch rows (a reduction or
    softmax over axis 0, a reshape that changes the row size, ...) or a
    dynamic dim other than the leading one is an error at its node.

    With `chunk-bytes`, a static batch (the leading dim of the arguments
    marked `sym.batch`) is chunked too, where that pays: when its largest
    batch tensor outgrows `chunk-bytes`, its convolutions and fully
    connected layers do at most 32 flops per activation byte, and one
    chunk's activations outweigh twice the weights (read again per chunk),
    the ops that see it loop over chunks of the most rows (a divisor of the
    batch) whose largest tensor fits. Which results carry the batch is found
    by each op's shape rule with the batch dims unknown; a function with an
    op that mixes rows, draws random numbers or loses the batch dim is left
    unchanged.
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", "16", "batch rows per loop iteration">,
    Option<"chunkBytes", "chunk-bytes", "int64_t", "0",
           "chunk a static batch whose largest tensor outgrows this many bytes (0: never)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SymFuseElementwise : Pass<"sym-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops into one loop nest";
  let description = [{
    Linalg's elementwise fusion and reshape propagation, restricted so that
    named ops (matmuls, transposes, fills) keep their form: folding a reshape
    into a matmul would turn it into a generic contraction that
    sym-schedule-matmuls no longer recognizes. A contraction's columns less
    the tail of a strip (filters not a multiple of 32), read by elementwise
    work and a pad that only slices read (a depthwise convolution's), are
    sliced after the work and the pad instead: the work becomes the
    contraction's epilogue and the pad's image its tiles' output.
  }];
}

def SymApproximateMath : Pass<"sym-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "Replace f32 transcendental math ops with polynomial approximations";
  let description = [{
    exp, log, log1p, expm1, tanh, erf, sin, cos, ... on f32 become MLIR's
    polynomial approximations (accurate to a few ulp): plain arithmetic that
    the loop vectorizer handles, where libm calls would keep loops scalar.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def SymFuseIntoImageLoops : Pass<"sym-fuse-into-image-loops", "::mlir::func::FuncOp"> {
  let summary = "Move the elementwise work after a batch's image loop into the loop";
  let description = [{
    A convolution of a batch is an scf.for over image groups that inserts
    each group's result into the batch. The elementwise op that alone reads
    the loop's result, identically (a BatchNorm, an activation, a residual
    add), moves into the loop (scf::tileAndFuseConsumerOfSlice) and runs on
    each group's result: where sym-schedule-matmuls fuses it into the GEMM's
    thread tiles, as it does for a batch of one, rather than after the loop
    over the whole batch.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"];
}

def SymWriteIntoPadding : Pass<"sym-write-into-padding", "::mlir::func::FuncOp"> {
  let summary = "Compute an image that is padded with a constant in the padded tensor itself";
  let description = [{
    A constant tensor.pad (a convolution's zero-padded input, a max
    pooling's -inf-padded one) that alone reads an image computed by an
    elementwise linalg op (a generic, a transpose), or by the thread tiles
    of a scheduled contraction whose rows are the image's positions (the
    image their expand_shape, each tile within one image row), is replaced
    by that computation writing into the padded tensor's interior: the
    op's init, each thread tile's slice of the forall's shared output.
    Only the border is filled with the constant. Bufferized, the padded
    image is then written once, instead of written and copied whole.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def SymDistributeThreads : Pass<"sym-distribute-threads", "::mlir::func::FuncOp"> {
  let summary = "Split each linalg op's outer parallel dims into scf.forall chunks";
  let description = [{
    Every linalg op on tensors outside a matmul schedule, and every
    tensor.pad (a serial copy once bufferized), is tiled with
    scf.forall on its leading parallel dims into about `chunks` pieces; the
    forall becomes a loop on libsymrt's threads (sym-outline-parallel-loops)
    while the dims inside stay sequential loops that LLVM vectorizes.
    (Running all dims on threads would collapse them into a single
    linearized index that no vectorizer can handle.) Ops are tiled consumers
    first, each computing in its tiles the producers only it reads, where
    each dim it is cut along is read by that dim alone, so that the tiles
    partition the producer's work (a grouped convolution's zero padding,
    fill and windowed reduction under its BatchNorm and activation; a pad
    is cut only along dims it does not pad, and each tile pads its own
    slice of the source): a chain runs in one scf.forall, each tile's data
    still in cache for the next op, and forks threads once. An elementwise
    generic cut along the dim sym-vectorize-elementwise will vectorize is cut
    into multiples of 16 there, whole vectors; over few positions (a 7x7
    map) of many channels, it is cut along those channels alone. A linalg.transpose that moves the input's
    innermost dim is then tiled by scf.for loops into 16 x 16 squares of the
    two dims it swaps, so that the input lines a square reads serve all of
    its rows. An op of fewer than `min-iterations` iterations (its reduction
    dims included) stays on one thread: forking would cost more than the
    work, and a graph of many tiny ops would outline a parallel region each,
    which LLVM does in time quadratic in their number.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", "16", "pieces of work per op">,
    Option<"minIterations", "min-iterations", "int64_t", "16384",
           "the fewest iterations an op splits across threads">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def SymVectorizeElementwise : Pass<"sym-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Vectorize elementwise linalg.generic ops along their innermost dim";
  let description = [{
    LLVM does not vectorize the loops of an elementwise linalg.generic once
    they are scalar code over memrefs: it unrolls short ones fully first, and
    cannot rule out that the operands alias. So every all-parallel generic
    on buffers (a residual add and its relu, a transform of Winograd's) is
    cut into scf.for loops whose steps cover one vector along its innermost
    dim of more than one index (the most lanes up to `vector-bits` at its
    widest element type that divide that dim, so that no step needs masks),
    and each step vectorized, where every operand reads or writes that dim
    contiguously or not at all. A step of a copy that reads a window (an
    im2col copy: y + i), whose maps linalg does not vectorize, becomes one
    vector read and one vector written. Matmul schedules have vectorized their own
    ops by then; generics that linalg cannot vectorize (gathers by
    tensor.extract), whose math LLVM lowers for scalars only (tan, erf),
    or with masks of i1 (a byte per element in memory) stay as they are. On buffers, so that bufferization
    still writes each generic in place.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "width of the target's vector registers (256 or 512)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def SymOutlineParallelLoops : Pass<"sym-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Run parallel loops on libsymrt's threads, through symcParallelFor";
  let description = [{
    Every outermost scf.parallel without reductions becomes a call to
    libsymrt's `symcParallelFor(body, context, count)` (ArtifactABI.h):
    `body` is a new private function that runs iterations [begin, end) of
    the loop's iteration space, linearized (the last dim fastest), and
    `context` a struct in the caller's frame (allocated at its entry) of the
    values the loop body uses from above, the lower bounds, steps and inner
    dims' counts among them; constants are cloned into the body instead. A
    memref of static sizes and strides is held as its aligned pointer (and
    its offset where that is dynamic), and the body rebuilds its descriptor
    from its type. The runtime hands ranges out to threads dynamically.
    Loops nested in it stay scf.parallel and run sequentially in the body.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect"];
}

def SymVectorizeCopies : Pass<"sym-vectorize-copies", "::mlir::func::FuncOp"> {
  let summary = "Copy buffers by rows of vector loads and stores";
  let description = [{
    Every linalg.copy on memrefs whose innermost dim is static and
    contiguous in both becomes loops over the outer dims around 8-lane
    vector loads and stores along each row, the row's rest as one shorter
    vector. Others stay linalg.copy. A copy of 16K elements or more outside
    any scf.forall spreads the rows of its first dim of more than one index
    over the threads: an scf.forall of up to 16 runs of rows.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def SymScheduleMatmuls : Pass<"sym-schedule-matmuls", "::mlir::ModuleOp"> {
  let summary = "Tile, pack registers and vectorize every linalg matmul for the CPU";
  let description = [{
    Each linalg.matmul / linalg.batch_matmul on tensors is scheduled with the
    transform dialect: thread tiles (scf.forall), a k-chunk that fits the L1
    cache, an MR x NR register tile whose accumulator stays in vector
    registers across the k loop (hoisted subsets), and vector outer products.
    Register tiles walk in BLIS's jr/ir order. B and C get zero columns up to
    a multiple of NR (and off a 4 KiB row stride); the register-row count MR
    is picked to divide M where possible. Loops that still do not divide are
    peeled and their remainder tiles vectorized with masks, so any shape works.

    `vector-bits` picks the micro-kernels: 512 (AVX-512: 8 x 32, then
    6/4/2/1 x 32) or 256 (AVX2: 6 x 16, then 4/2/1 x 16).

    An elementwise op reading a 2-D matmul's or forward tap contraction's
    result through reshapes and slices (a convolution's BatchNorm, bias,
    activation, residual add) moves onto that result in place, in its index
    space, and runs on each thread tile once the tile is computed, one row
    of NR columns per vector (`epilogues`; not where thread tiles are
    partial or the k loop is chunked around them).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "256",
           "width of the target's vector registers (256 or 512)">,
    Option<"epilogues", "epilogues", "bool", "true",
           "apply consumers' elementwise work on the thread tiles">,
  ];
  let dependentDialects = [
    "::mlir::transform::TransformDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def SymOutlineKernels : Pass<"sym-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline each kernel over planned buffers into a function shared by its twins";
  let description = [{
    After memory planning, every kernel of a function (a threaded
    scf.forall, a loop nest or a linalg op at the top level of the body or
    of a loop around kernels) moves into a private function of the
    buffers and indices it uses; the constants it uses are cloned into it.
    Kernels that are the same computation on buffers of the same types (the
    repeated blocks of a ResNet, the forward inside its monitor variant and
    its training forward) call one function, so the later passes and LLVM
    compile each distinct kernel once. A kernel that yields results stays
    where it is.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"];
}

#endif
