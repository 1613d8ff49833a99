//===- ShapeInference.cpp - MXNet's FInferShape rules ----------------------===//
//
// Each rule follows the MXNet 1.9.1 function named beside it. Where MXNet
// would CHECK-fail on an unknown dim (TShape::Size), the rule leaves the dim
// unknown instead, so symbolic (`?`) dims flow through.
//
//===----------------------------------------------------------------------===//
#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::sym;

//===----------------------------------------------------------------------===//
// PartialShape and ShapeInferenceContext
//===----------------------------------------------------------------------===//

PartialShape PartialShape::fromType(Type type) {
  auto ranked = llvm::dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return PartialShape();
  PartialShape shape(ranked.getShape());
  for (int64_t &d : *shape.dims)
    if (ShapedType::isDynamic(d))
      d = kUnknownDim;
  return shape;
}

Type PartialShape::toTensorType(Type elementType) const {
  if (!hasRank())
    return UnrankedTensorType::get(elementType);
  llvm::SmallVector<int64_t> shape(dims->begin(), dims->end());
  for (int64_t &d : shape)
    if (d < 0)
      d = ShapedType::kDynamic;
  return RankedTensorType::get(shape, elementType);
}

bool PartialShape::isFullyKnown() const {
  return hasRank() && llvm::all_of(*dims, [](int64_t d) { return d >= 0; });
}

std::optional<int64_t> PartialShape::product(unsigned begin, unsigned end) const {
  int64_t n = 1;
  for (unsigned i = begin; i < end; ++i) {
    if ((*dims)[i] < 0)
      return std::nullopt;
    n *= (*dims)[i];
  }
  return n;
}

std::optional<int64_t> PartialShape::numElements() const {
  if (!hasRank())
    return std::nullopt;
  return product(0, rank());
}

bool PartialShape::merge(const PartialShape &other) {
  if (!other.hasRank())
    return true;
  if (!hasRank()) {
    dims = other.dims;
    return true;
  }
  if (rank() != other.rank())
    return false;
  for (unsigned i = 0; i < rank(); ++i) {
    int64_t theirs = other[i];
    if (theirs < 0)
      continue;
    if ((*dims)[i] >= 0 && (*dims)[i] != theirs)
      return false;
    (*dims)[i] = theirs;
  }
  return true;
}

std::string PartialShape::str() const {
  if (!hasRank())
    return "[?]";
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(*dims, os, ",");
  os << "]";
  return s;
}

bool ShapeInferenceContext::refine(PartialShape &slot, const PartialShape &shape) {
  PartialShape merged = slot;
  if (!merged.merge(shape))
    return false;
  if (merged != slot) {
    slot = merged;
    changed = true;
  }
  return true;
}

LogicalResult ShapeInferenceContext::conflict(const llvm::Twine &what, const PartialShape &provided,
                                              const PartialShape &inferred) const {
  return fail("shape inconsistent for " + what + ": provided " + provided.str() + ", inferred " +
              inferred.str());
}

LogicalResult ShapeInferenceContext::refineInput(unsigned i, const PartialShape &shape) {
  // Interface verifiers run before op verifiers, so the op may lack operands.
  if (i >= inputs.size())
    return fail("is missing input " + llvm::Twine(i));
  if (refine(inputs[i], shape))
    return success();
  OpSignature sig = getOpSignature(op);
  std::string name = i < sig.inputs.size() ? sig.inputs[i] : "input" + std::to_string(i);
  return conflict("input '" + name + "'", inputs[i], shape);
}

LogicalResult ShapeInferenceContext::refineOutput(unsigned i, const PartialShape &shape) {
  if (i >= outputs.size())
    return fail("is missing output " + llvm::Twine(i));
  if (refine(outputs[i], shape))
    return success();
  return conflict("output " + llvm::Twine(i), outputs[i], shape);
}

LogicalResult ShapeInferenceContext::fail(const llvm::Twine &message) const {
  return op->emitOpError(message);
}

ShapeInferenceContext mlir::sym::makeShapeContext(Operation *op) {
  llvm::SmallVector<PartialShape> ins, outs;
  for (Type t : op->getOperandTypes())
    ins.push_back(PartialShape::fromType(t));
  for (Type t : op->getResultTypes())
    outs.push_back(PartialShape::fromType(t));
  return ShapeInferenceContext(op, std::move(ins), std::move(outs));
}

LogicalResult mlir::sym::verifyShapesAgree(Operation *op) {
  ShapeInferenceContext ctx = makeShapeContext(op);
  return cast<ShapeInferenceOpInterface>(op).inferShapes(ctx);
}

LogicalResult mlir::sym::verifyOptionalOperand(Operation *op, Value operand, bool expected,
                                               llvm::StringRef operandName,
                                               llvm::StringRef condition) {
  if (static_cast<bool>(operand) == expected)
    return success();
  if (expected)
    return op->emitOpError() << "requires a '" << operandName << "' input when " << condition;
  return op->emitOpError() << "takes a '" << operandName << "' input only when " << condition;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Normalizes a possibly negative axis against `rank`.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return std::nullopt;
  return a;
}

/// An axis out of range is an MXNet CHECK failure.
FailureOr<int64_t> checkAxis(ShapeInferenceContext &ctx, int64_t axis, int64_t rank,
                             llvm::StringRef what = "axis") {
  if (auto a = normalizeAxis(axis, rank))
    return *a;
  (void)ctx.fail(what + " " + llvm::Twine(axis) + " is out of range for a " + llvm::Twine(rank) +
                 "-d input");
  return failure();
}

/// Expands MXNet's empty stride/dilate/pad tuples to one value per spatial dim.
llvm::SmallVector<int64_t, 3> perDim(llvm::ArrayRef<int64_t> values, size_t n, int64_t dflt) {
  if (values.empty())
    return llvm::SmallVector<int64_t, 3>(n, dflt);
  return llvm::SmallVector<int64_t, 3>(values);
}

/// Input 0 and output 0 share one shape (the layer is shape-preserving);
/// refines both and returns it.
FailureOr<PartialShape> unifyDataAndOutput(ShapeInferenceContext &ctx) {
  PartialShape s = ctx.input(0);
  if (!s.merge(ctx.output(0))) {
    (void)ctx.refineOutput(0, ctx.input(0)); // reports the conflict
    return failure();
  }
  if (failed(ctx.refineInput(0, s)) || failed(ctx.refineOutput(0, s)))
    return failure();
  return s;
}

PartialShape shapeWithout(const PartialShape &s, unsigned axis) {
  llvm::SmallVector<int64_t> dims(s.getDims());
  dims.erase(dims.begin() + axis);
  return PartialShape(dims);
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

// ElemwiseShape<n, m>: every input and output has one shape.
LogicalResult mlir::sym::inferSameShape(ShapeInferenceContext &ctx) {
  PartialShape common;
  for (const PartialShape &s : ctx.getInputs())
    if (!common.merge(s))
      break;
  for (const PartialShape &s : ctx.getOutputs())
    if (!common.merge(s))
      break;
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (failed(ctx.refineInput(i, common)))
      return failure();
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    if (failed(ctx.refineOutput(i, common)))
      return failure();
  return success();
}

// BinaryBroadcastShapeCompact.
LogicalResult mlir::sym::inferBroadcastShape(ShapeInferenceContext &ctx) {
  const PartialShape &lhs = ctx.input(0), &rhs = ctx.input(1);
  if (!lhs.hasRank() || !rhs.hasRank())
    return success();
  if (lhs == rhs)
    return ctx.refineOutput(0, lhs);
  unsigned rank = std::max(lhs.rank(), rhs.rank());
  PartialShape out = PartialShape::ofRank(rank);
  unsigned bl = rank - lhs.rank(), br = rank - rhs.rank();
  for (unsigned i = 0; i < rank; ++i) {
    int64_t l = i >= bl ? lhs[i - bl] : 1;
    int64_t r = i >= br ? rhs[i - br] : 1;
    if (l < 0 || r < 0)
      continue;
    if (l != r && l != 1 && r != 1)
      return ctx.fail("operands could not be broadcast together with shapes " + lhs.str() +
                      " " + rhs.str());
    out[i] = l == 1 ? r : l;
  }
  return ctx.refineOutput(0, out);
}

// RegressionOpShape.
LogicalResult mlir::sym::inferRegressionOutputShape(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0), &label = ctx.input(1);
  if (!data.isFullyKnown())
    return ctx.refineOutput(0, data);
  if (!label.hasRank()) {
    // MXNet allows a 1-D label for a (N, 1) output.
    PartialShape dflt = data.rank() == 2 && data[1] == 1 ? PartialShape({data[0]}) : data;
    if (failed(ctx.refineInput(1, dflt)))
      return failure();
  } else if (label.rank() == 0 || label[0] != data[0] ||
             label.numElements() != data.numElements()) {
    return ctx.fail("shape inconsistent, provided " + label.str() + ", inferred shape " +
                    data.str());
  }
  return ctx.refineOutput(0, data);
}

// SoftmaxOpShape: data and output agree; `length` drops the softmax axis.
LogicalResult mlir::sym::inferSoftmaxShape(ShapeInferenceContext &ctx, int64_t axis,
                                           bool useLength) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape))
    return failure();
  const PartialShape &common = *shape;
  // A missing length operand is the op verifier's to report.
  if (!useLength || ctx.numInputs() < 2 || !common.hasRank())
    return success();
  FailureOr<int64_t> a = checkAxis(ctx, axis, common.rank());
  if (failed(a))
    return failure();
  return ctx.refineInput(1, shapeWithout(common, *a));
}

// ReduceAxesShapeImpl.
LogicalResult mlir::sym::inferReduceShape(ShapeInferenceContext &ctx,
                                          std::optional<llvm::ArrayRef<int64_t>> axis,
                                          bool keepdims, bool exclude) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  int64_t rank = in.rank();
  if (!axis || axis->empty())
    return ctx.refineOutput(0, keepdims ? PartialShape(llvm::SmallVector<int64_t>(rank, 1))
                                        : PartialShape({1}));
  llvm::SmallVector<int64_t> axes;
  for (int64_t a : *axis)
    axes.push_back(a < 0 ? a + rank : a);
  llvm::sort(axes);
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i - 1] == axes[i])
      return ctx.fail("reduction axes have duplicates");
  if (axes.back() >= rank || axes.front() < 0)
    return ctx.fail("reduction axis exceeds input dimensions " + in.str());
  auto reduced = [&](int64_t i) { return llvm::is_contained(axes, i) != exclude; };
  llvm::SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced(i))
      out.push_back(in[i]);
    else if (keepdims)
      out.push_back(1);
  }
  if (out.empty())
    out.push_back(1);
  return ctx.refineOutput(0, PartialShape(out));
}

// InitShape: zeros in `shape` are unknown dims; an empty shape is an unknown rank.
LogicalResult mlir::sym::inferFillShape(ShapeInferenceContext &ctx, llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return success();
  PartialShape out(shape);
  for (unsigned i = 0; i < out.rank(); ++i)
    if (out[i] == 0)
      out[i] = kUnknownDim;
  return ctx.refineOutput(0, out);
}

//===----------------------------------------------------------------------===//
// Neural-network layers
//===----------------------------------------------------------------------===//

// FullyConnectedShape.
LogicalResult FullyConnectedOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape data = ctx.input(0);
  const PartialShape &out = ctx.output(0);
  int64_t numHidden = getNumHidden();
  if (!data.hasRank())
    return success();
  if (data.rank() == 0)
    return ctx.fail("data must have at least one dimension");
  unsigned rank = data.rank();
  std::optional<int64_t> numInput = getFlatten() ? data.product(1, rank) : data.product(rank - 1, rank);
  if (failed(ctx.refineInput(1, PartialShape({numHidden, numInput.value_or(kUnknownDim)}))))
    return failure();
  if (getBias()) {
    PartialShape bias = ctx.input(2);
    bool column = bias.hasRank() && bias.rank() == 2;
    if (failed(ctx.refineInput(2, column ? PartialShape({numHidden, 1}) : PartialShape({numHidden}))))
      return failure();
  }
  if (out.hasRank() && out.rank() > 0 && (!getFlatten() || out.rank() == 2))
    data[0] = data[0] < 0 ? out[0] : data[0];
  if (failed(ctx.refineInput(0, data)))
    return failure();
  if (!getFlatten()) {
    PartialShape result = data;
    result[rank - 1] = numHidden;
    return ctx.refineOutput(0, result);
  }
  return ctx.refineOutput(0, PartialShape({data[0], numHidden}));
}

// ConvolutionShape (NCW / NCHW / NCDHW, and NHWC with the weight
// (F, kh, kw, C / G) as ConvertLayout makes it).
LogicalResult ConvolutionOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape data = ctx.input(0);
  llvm::ArrayRef<int64_t> kernel = getKernel();
  size_t n = kernel.size();
  if (!data.hasRank())
    return success();
  if (data.rank() != n + 2)
    return ctx.fail("data must be " + llvm::Twine(n + 2) + "-d for a " + llvm::Twine(n) +
                    "-d kernel, got " + data.str());
  auto stride = perDim(getStride(), n, 1), dilate = perDim(getDilate(), n, 1),
       pad = perDim(getPad(), n, 0);
  int64_t groups = getNumGroup(), filters = getNumFilter();
  unsigned c = channelDim();
  if (filters % groups != 0)
    return ctx.fail("output num_filter must divide group size");
  if (data.isKnown(c) && data[c] % groups != 0)
    return ctx.fail("input num_filter must divide group size");

  int64_t groupChannels = data.isKnown(c) ? data[c] / groups : kUnknownDim;
  llvm::SmallVector<int64_t> weight = {filters};
  if (!isChannelsLast())
    weight.push_back(groupChannels);
  weight.append(kernel.begin(), kernel.end());
  if (isChannelsLast())
    weight.push_back(groupChannels);
  if (failed(ctx.refineInput(1, PartialShape(weight))))
    return failure();
  if (getBias() && failed(ctx.refineInput(2, PartialShape({filters}))))
    return failure();

  const PartialShape &outKnown = ctx.output(0);
  PartialShape out = PartialShape::ofRank(n + 2);
  out[0] = data[0];
  out[c] = filters;
  for (size_t i = 0; i < n; ++i) {
    int64_t dilated = 1 + (kernel[i] - 1) * dilate[i];
    int64_t x = data[spatialDim(i)];
    if (x < 0)
      continue;
    if (dilated > x + 2 * pad[i])
      return ctx.fail("kernel size exceeds input: dilated kernel " + llvm::Twine(dilated) +
                      " > padded input " + llvm::Twine(x + 2 * pad[i]));
    out[spatialDim(i)] = (x + 2 * pad[i] - dilated) / stride[i] + 1;
  }
  if (failed(ctx.refineOutput(0, out)))
    return failure();
  // Backward: batch from the output; spatial dims only when stride is 1.
  if (outKnown.hasRank() && outKnown.rank() == n + 2) {
    data[0] = outKnown[0];
    for (size_t i = 0; i < n; ++i)
      if (stride[i] == 1 && outKnown.isKnown(spatialDim(i)))
        data[spatialDim(i)] = outKnown[spatialDim(i)] + 1 + (kernel[i] - 1) * dilate[i] - 1 - 2 * pad[i];
    return ctx.refineInput(0, data);
  }
  return success();
}

// PoolingShape (NC* layouts).
// DeconvolutionProp::InferShape.
LogicalResult DeconvolutionOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  llvm::ArrayRef<int64_t> kernel = getKernel();
  size_t n = kernel.size();
  if (!data.hasRank())
    return success();
  if (data.rank() != n + 2)
    return ctx.fail("data must be " + llvm::Twine(n + 2) + "-d for a " + llvm::Twine(n) + "-d kernel, got " +
                    data.str());
  int64_t groups = getNumGroup(), filters = getNumFilter();
  if (data.isKnown(1) && data[1] % groups != 0)
    return ctx.fail("input num_filter must divide group size");
  if (filters % groups != 0)
    return ctx.fail("output num_filter must divide group size");
  llvm::SmallVector<int64_t> weight = {data[1], filters / groups};
  weight.append(kernel.begin(), kernel.end());
  if (failed(ctx.refineInput(1, PartialShape(weight))))
    return failure();
  if (getBias() && failed(ctx.refineInput(2, PartialShape({filters}))))
    return failure();
  if (!data.isFullyKnown())
    return success();
  auto [pad, adj] = getPadAndAdj(data.getDims().drop_front(2));
  auto stride = perDim(getStride(), n, 1), dilate = perDim(getDilate(), n, 1);
  PartialShape out = PartialShape::ofRank(n + 2);
  out[0] = data[0];
  out[1] = filters;
  for (size_t i = 0; i < n; ++i) {
    if (pad[i] < 0)
      return ctx.fail("too big target shape");
    out[i + 2] = stride[i] * (data[i + 2] - 1) + 1 + (kernel[i] - 1) * dilate[i] - 2 * pad[i] + adj[i];
    if (out[i + 2] <= 0)
      return ctx.fail("the output size " + llvm::Twine(out[i + 2]) + " of spatial dim " + llvm::Twine(i) +
                      " is not positive");
  }
  return ctx.refineOutput(0, out);
}

LogicalResult PoolingOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() < 3 || data.rank() > 5)
    return ctx.fail("Pooling: input data should be 3D in (batch, channel, x), 4D in "
                    "(batch, channel, y, x) or 5D in (batch, channel, d, y, x), got " +
                    data.str());
  size_t n = data.rank() - 2;
  if (isChannelsLast() && n != 2)
    return ctx.fail("Pooling: layout NHWC needs 4D data (batch, y, x, channel), got " + data.str());
  PartialShape out = data;
  if (getGlobalPool()) {
    for (size_t i = 0; i < n; ++i)
      out[spatialDim(i)] = 1;
    return ctx.refineOutput(0, out);
  }
  llvm::ArrayRef<int64_t> kernel = getKernel();
  if (kernel.size() != n)
    return ctx.fail("kernel has " + llvm::Twine(kernel.size()) + " dims but the input has " +
                    llvm::Twine(n) + " spatial dims");
  auto stride = perDim(getStride(), n, 1), pad = perDim(getPad(), n, 0);
  llvm::StringRef convention = getPoolingConvention();
  for (size_t i = 0; i < n; ++i) {
    int64_t x = data[spatialDim(i)];
    if (x < 0)
      continue;
    int64_t padded = x + 2 * pad[i];
    if (kernel[i] > padded)
      return ctx.fail("kernel size (" + llvm::Twine(kernel[i]) + ") exceeds input (" +
                      llvm::Twine(x) + " padded to " + llvm::Twine(padded) + ")");
    int64_t &o = out[spatialDim(i)];
    if (convention == "valid")
      o = 1 + (padded - kernel[i]) / stride[i];
    else if (convention == "full")
      o = 1 + (padded - kernel[i] + stride[i] - 1) / stride[i];
    else
      o = (padded + stride[i] - 1) / stride[i];
  }
  return ctx.refineOutput(0, out);
}

// LeakyReLUShape: prelu's gamma is per channel unless given otherwise.
LogicalResult LeakyReLUOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape))
    return failure();
  const PartialShape &data = *shape;
  if (getMask() && failed(ctx.refineOutput(1, data)))
    return failure();
  if (!getGamma() || !data.hasRank())
    return success();
  if (data.rank() < 2)
    return ctx.fail("prelu needs data with a channel axis, got " + data.str());
  const PartialShape &gamma = ctx.input(1);
  if (!gamma.hasRank())
    return ctx.refineInput(1, PartialShape({data[1]}));
  if (gamma.rank() == data.rank())
    return ctx.refineInput(1, data);
  return success();
}

// BatchNormShape.
LogicalResult BatchNormOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape))
    return failure();
  PartialShape data = *shape;
  if (!data.hasRank())
    return success();
  FailureOr<int64_t> axis = checkAxis(ctx, getAxis(), data.rank());
  if (failed(axis))
    return failure();
  PartialShape channel({data[*axis]});
  for (unsigned i = 1; i < 5; ++i)
    if (failed(ctx.refineInput(i, channel)))
      return failure();
  // A channel count known from gamma & co. fills the data's axis.
  for (unsigned i = 1; i < 5; ++i)
    if (ctx.input(i).hasRank() && ctx.input(i).rank() == 1)
      data[*axis] = ctx.input(i)[0];
  channel = PartialShape({data[*axis]});
  if (failed(ctx.refineInput(0, data)) || failed(ctx.refineOutput(0, data)))
    return failure();
  return success(succeeded(ctx.refineOutput(1, channel)) &&
                 succeeded(ctx.refineOutput(2, channel)));
}

// LayerNormShape: gamma and beta have the size of `axis`; the mean and std
// keep data's shape with that axis 1.
LogicalResult LayerNormOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  PartialShape data = *shape;
  std::optional<int64_t> axis = normalizeAxis(getAxis(), data.rank());
  if (!axis)
    return ctx.fail("Channel axis out of range: axis=" + llvm::Twine(getAxis()));
  for (unsigned i = 1; i < 3; ++i)
    if (failed(ctx.refineInput(i, PartialShape({data[*axis]}))))
      return failure();
  if (ctx.input(1).hasRank())
    data[*axis] = ctx.input(1)[0];
  if (failed(ctx.refineInput(0, data)) || failed(ctx.refineOutput(0, data)))
    return failure();
  PartialShape moments = data;
  moments[*axis] = 1;
  return success(succeeded(ctx.refineOutput(1, moments)) && succeeded(ctx.refineOutput(2, moments)));
}

// InstanceNormProp::InferShape: gamma and beta have the channel count, mean
// and var the shape (n, c). MXNet checks the rank only when it runs.
LogicalResult InstanceNormOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  PartialShape data = *shape;
  if (data.rank() < 3)
    return ctx.fail("InstanceNorm only supports input tensors of rank >= 3.");
  for (unsigned i = 1; i < 3; ++i)
    if (failed(ctx.refineInput(i, PartialShape({data[1]}))))
      return failure();
  PartialShape moments({data[0], data[1]});
  return success(succeeded(ctx.refineOutput(1, moments)) && succeeded(ctx.refineOutput(2, moments)));
}

// L2NormalizationProp::InferShape: the norm drops (channel: keeps as 1) the
// summed dims.
LogicalResult L2NormalizationOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  const PartialShape &data = *shape;
  if (data.rank() == 0)
    return ctx.fail("L2Normalization needs data of at least one dim");
  if (getMode() == "instance")
    return ctx.refineOutput(1, PartialShape({data[0]}));
  if (data.rank() < 3)
    return ctx.fail("At lease 3 dimensions required in " + getMode() + " mode");
  if (getMode() == "spatial")
    return ctx.refineOutput(1, PartialShape({data[0], data[1]}));
  PartialShape norm = data;
  norm[1] = 1;
  return ctx.refineOutput(1, norm);
}

// DropoutShape: the mask is 1 along the variational `axes`.
LogicalResult DropoutOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  const PartialShape &data = *shape;
  PartialShape mask = data;
  for (int64_t a : getAxes()) {
    FailureOr<int64_t> axis = checkAxis(ctx, a, data.rank(), "dropout axis");
    if (failed(axis))
      return failure();
    mask[*axis] = 1;
  }
  return ctx.refineOutput(1, mask);
}

// LRNShape.
LogicalResult LRNOp::inferShapes(ShapeInferenceContext &ctx) {
  if (ctx.input(0).hasRank() && ctx.input(0).rank() != 4)
    return ctx.fail("input data should be 4D in batch-channel-y-x, got " + ctx.input(0).str());
  return inferSameShape(ctx);
}

// UpSamplingShape.
LogicalResult UpSamplingOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() != 4)
    return ctx.fail("UpSampling: input data should be 4D in (batch, channel, y, x), got " +
                    data.str());
  int64_t scale = getScale();
  PartialShape out = data;
  auto scaled = [&](int64_t d) { return d < 0 ? kUnknownDim : d * scale; };
  out[2] = scaled(data[2]);
  out[3] = scaled(data[3]);
  if (getSampleType() == "bilinear") {
    int64_t k = getBilinearKernel();
    if (failed(ctx.refineInput(1, PartialShape({data[1], 1, k, k}))))
      return failure();
    return ctx.refineOutput(0, out);
  }
  bool sum = getMultiInputMode() == "sum";
  int64_t channels = sum ? kUnknownDim : 0;
  for (const PartialShape &in : ctx.getInputs()) {
    if (!in.hasRank() || in.rank() != 4)
      return in.hasRank() ? ctx.fail("UpSamplingNearest: input data should be 4D in "
                                     "(batch, channel, y, x), got " + in.str())
                          : success();
    for (unsigned d = 2; d < 4; ++d)
      if (out[d] >= 0 && in[d] > 0 && out[d] % in[d] != 0)
        return ctx.fail("UpSamplingNearest: input size " + llvm::Twine(in[d]) +
                        " does not divide output size " + llvm::Twine(out[d]));
    if (sum) {
      if (channels >= 0 && in[1] >= 0 && channels != in[1])
        return ctx.fail("number of channels must be the same when multi_input_mode==sum");
      channels = in[1] >= 0 ? in[1] : channels;
    } else {
      channels = channels < 0 || in[1] < 0 ? kUnknownDim : channels + in[1];
    }
  }
  out[1] = channels;
  return ctx.refineOutput(0, out);
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// ConcatShape; also recovers a single unknown axis extent from the output.
LogicalResult ConcatOp::inferShapes(ShapeInferenceContext &ctx) {
  std::optional<int64_t> axis;
  PartialShape common;
  auto absorb = [&](const PartialShape &s) -> LogicalResult {
    if (!s.hasRank())
      return success();
    if (s.rank() == 0)
      return ctx.fail("zero-dimensional arrays cannot be concatenated");
    FailureOr<int64_t> a = checkAxis(ctx, getDim(), s.rank(), "dimension");
    if (failed(a))
      return failure();
    axis = *a;
    PartialShape t = s;
    t[*a] = kUnknownDim;
    if (!common.merge(t))
      return ctx.fail("incompatible input shape: expected " + common.str() + ", got " + s.str());
    return success();
  };
  for (const PartialShape &s : ctx.getInputs())
    if (failed(absorb(s)))
      return failure();
  if (failed(absorb(ctx.output(0))))
    return failure();
  if (!common.hasRank())
    return success();
  int64_t total = 0;
  int unknownAt = -1, unknownCount = 0;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    PartialShape in = common;
    const PartialShape &given = ctx.input(i);
    in[*axis] = given.hasRank() ? given[*axis] : kUnknownDim;
    if (failed(ctx.refineInput(i, in)))
      return failure();
    if (in[*axis] < 0) {
      unknownAt = i;
      ++unknownCount;
    } else {
      total += in[*axis];
    }
  }
  PartialShape out = common;
  if (unknownCount == 0)
    out[*axis] = total;
  if (failed(ctx.refineOutput(0, out)))
    return failure();
  const PartialShape &outKnown = ctx.output(0);
  if (unknownCount == 1 && outKnown.isKnown(*axis)) {
    PartialShape in = ctx.input(unknownAt);
    in[*axis] = outKnown[*axis] - total;
    if (in[*axis] < 0)
      return ctx.fail("concatenated extent " + llvm::Twine(total) + " exceeds output " +
                      outKnown.str());
    return ctx.refineInput(unknownAt, in);
  }
  return success();
}

// SliceChannelOpShape.
LogicalResult SliceChannelOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape data = ctx.input(0);
  int64_t n = getNumOutputs();
  bool squeeze = getSqueezeAxis();
  if (!data.hasRank()) {
    // Backward: rebuild the input from any output.
    for (const PartialShape &o : ctx.getOutputs())
      if (o.hasRank() && !squeeze) {
        PartialShape guess = PartialShape::ofRank(o.rank());
        FailureOr<int64_t> a = checkAxis(ctx, getAxis(), o.rank());
        if (failed(a))
          return failure();
        for (unsigned i = 0; i < o.rank(); ++i)
          guess[i] = i == *a ? (o[i] < 0 ? kUnknownDim : o[i] * n) : o[i];
        return ctx.refineInput(0, guess);
      }
    return success();
  }
  FailureOr<int64_t> axisOr = checkAxis(ctx, getAxis(), data.rank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  for (const PartialShape &o : ctx.getOutputs()) {
    if (!o.hasRank() || squeeze || o.rank() != data.rank() || data[axis] >= 0 || o[axis] < 0)
      continue;
    data[axis] = o[axis] * n;
  }
  if (squeeze && data[axis] < 0)
    data[axis] = n;
  if (failed(ctx.refineInput(0, data)))
    return failure();
  if (data[axis] >= 0 && data[axis] % n != 0)
    return ctx.fail("you are trying to split the " + llvm::Twine(axis) +
                    "-th axis of input tensor with shape " + data.str() + " into num_outputs=" +
                    llvm::Twine(n) + " evenly sized chunks, but this is not possible because " +
                    llvm::Twine(n) + " does not evenly divide " + llvm::Twine(data[axis]));
  if (squeeze && data[axis] != n)
    return ctx.fail("if squeeze axis is True, the size of the sliced axis must be the same as "
                    "num_outputs; input shape " + data.str());
  PartialShape out = data;
  out[axis] = data[axis] < 0 ? kUnknownDim : data[axis] / n;
  if (squeeze)
    out = shapeWithout(out, axis);
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    if (failed(ctx.refineOutput(i, out)))
      return failure();
  return success();
}

// FlattenShape.
LogicalResult FlattenOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() == 0)
    return ctx.fail("cannot flatten a 0-d tensor");
  return ctx.refineOutput(
      0, PartialShape({data[0], data.product(1, data.rank()).value_or(kUnknownDim)}));
}

namespace {

/// InferReshapeShape: applies the special codes of `spec` to `in`.
FailureOr<PartialShape> applyReshapeCodes(ShapeInferenceContext &ctx,
                                          llvm::ArrayRef<int64_t> spec,
                                          const PartialShape &in, bool reverse) {
  llvm::SmallVector<int64_t> src(in.getDims()), codes(spec), out;
  if (reverse) {
    std::reverse(src.begin(), src.end());
    std::reverse(codes.begin(), codes.end());
  }
  size_t s = 0;
  int inferAt = -1;
  // Unknown input dims copied verbatim (codes 0 and -2) cancel out of -1.
  int copiedUnknown = 0;
  auto copy = [&](int64_t d) {
    copiedUnknown += d < 0;
    out.push_back(d);
  };
  auto missing = [&](const char *code) {
    return ctx.fail(llvm::Twine("Reshape code ") + code + " has no input dim left in " +
                    in.str());
  };
  for (size_t i = 0; i < codes.size(); ++i) {
    int64_t c = codes[i];
    if (c == 0) {
      if (s >= src.size())
        return missing("0");
      copy(src[s++]);
    } else if (c == -1) {
      if (inferAt >= 0)
        return ctx.fail("One and only one dim can be inferred");
      inferAt = out.size();
      out.push_back(1);
      ++s;
    } else if (c == -2) {
      while (s < src.size())
        copy(src[s++]);
    } else if (c == -3) {
      if (s + 1 >= src.size())
        return missing("-3");
      int64_t d1 = src[s++], d2 = src[s++];
      out.push_back(d1 < 0 || d2 < 0 ? kUnknownDim : d1 * d2);
    } else if (c == -4) {
      if (i + 2 >= codes.size())
        return ctx.fail("Reshape code -4 needs two following values");
      if (s >= src.size())
        return missing("-4");
      int64_t d0 = src[s++], d1 = codes[++i], d2 = codes[++i];
      if (d1 == -1 && d2 == -1)
        return ctx.fail("Split dims cannot both be -1.");
      if (d1 == -1 && d0 >= 0)
        d1 = d0 / d2;
      if (d2 == -1 && d0 >= 0)
        d2 = d0 / d1;
      if (d0 >= 0 && d1 * d2 != d0)
        return ctx.fail("Split dims " + llvm::Twine(d1) + ", " + llvm::Twine(d2) +
                        " do not divide original dim " + llvm::Twine(d0));
      out.push_back(d1);
      out.push_back(d2);
    } else if (c > 0) {
      out.push_back(c);
      ++s;
    } else {
      return ctx.fail("invalid Reshape code " + llvm::Twine(c));
    }
  }
  if (inferAt >= 0) {
    int64_t knownIn = 1, knownOut = 1;
    int unknownIn = 0, unknownOut = 0;
    for (int64_t d : src)
      d < 0 ? ++unknownIn : knownIn *= d;
    for (int64_t d : out)
      d < 0 ? ++unknownOut : knownOut *= d;
    bool cancels = unknownIn == copiedUnknown && unknownOut == copiedUnknown;
    out[inferAt] = cancels && knownOut > 0 ? knownIn / knownOut : kUnknownDim;
  }
  if (reverse)
    std::reverse(out.begin(), out.end());
  return PartialShape(out);
}

/// The legacy `target_shape`: 0 is the one dim to infer.
PartialShape applyTargetShape(llvm::ArrayRef<int64_t> target, const PartialShape &in,
                              bool keepHighest) {
  PartialShape out(target);
  unsigned start = keepHighest ? 1 : 0;
  if (keepHighest)
    out[0] = in[0];
  int inferAt = -1, zeros = 0;
  for (unsigned i = start; i < out.rank(); ++i)
    if (out[i] == 0)
      ++zeros, inferAt = i;
  if (zeros == 1) {
    out[inferAt] = 1;
    std::optional<int64_t> total = in.numElements(), rest = out.numElements();
    out[inferAt] = total && rest ? *total / *rest : kUnknownDim;
  }
  return out;
}

/// ReverseReshapeInferShape: one unknown input dim from a known output.
PartialShape recoverReshapeInput(const PartialShape &in, const PartialShape &out) {
  std::optional<int64_t> total = out.numElements();
  if (!in.hasRank() || !total)
    return in;
  int unknownAt = -1;
  int64_t known = 1;
  for (unsigned i = 0; i < in.rank(); ++i) {
    if (in[i] >= 0) {
      known *= in[i];
    } else if (unknownAt >= 0) {
      return in;
    } else {
      unknownAt = i;
    }
  }
  PartialShape result = in;
  if (unknownAt >= 0 && known > 0)
    result[unknownAt] = *total / known;
  return result;
}

} // namespace

// ReshapeShape.
LogicalResult ReshapeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  PartialShape out;
  if (!getShape().empty()) {
    FailureOr<PartialShape> result = applyReshapeCodes(ctx, getShape(), in, getReverse());
    if (failed(result))
      return failure();
    out = *result;
  } else if (!getTargetShape().empty()) {
    out = applyTargetShape(getTargetShape(), in, getKeepHighest());
  } else {
    return ctx.refineInput(0, recoverReshapeInput(in, ctx.output(0)));
  }
  std::optional<int64_t> inSize = in.numElements(), outSize = out.numElements();
  if (inSize && outSize && *inSize != *outSize)
    return ctx.fail("target shape size is different to source. Target: " + out.str() +
                    " Source: " + in.str());
  if (failed(ctx.refineOutput(0, out)))
    return failure();
  return ctx.refineInput(0, recoverReshapeInput(in, ctx.output(0)));
}

// TransposeShape, both directions.
LogicalResult TransposeOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape in = ctx.input(0);
  const PartialShape &out = ctx.output(0);
  unsigned rank = in.hasRank() ? in.rank() : out.hasRank() ? out.rank() : 0;
  if (!in.hasRank() && !out.hasRank())
    return success();
  llvm::SmallVector<int64_t> perm;
  if (getAxes().empty()) {
    for (unsigned i = 0; i < rank; ++i)
      perm.push_back(rank - 1 - i);
  } else {
    if (getAxes().size() != rank)
      return ctx.fail("axes " + PartialShape(getAxes()).str() + " do not match a " +
                      llvm::Twine(rank) + "-d input");
    llvm::SmallVector<bool> seen(rank, false);
    for (int64_t a : getAxes()) {
      std::optional<int64_t> axis = normalizeAxis(a, rank);
      if (!axis || seen[*axis])
        return ctx.fail("axes " + PartialShape(getAxes()).str() + " are not a permutation");
      seen[*axis] = true;
      perm.push_back(*axis);
    }
  }
  PartialShape fwd = PartialShape::ofRank(rank), bwd = PartialShape::ofRank(rank);
  for (unsigned i = 0; i < rank; ++i) {
    fwd[i] = in.hasRank() ? in[perm[i]] : kUnknownDim;
    bwd[perm[i]] = out.hasRank() ? out[i] : kUnknownDim;
  }
  if (failed(ctx.refineOutput(0, fwd)))
    return failure();
  return ctx.refineInput(0, bwd);
}

// ExpandDimShape, both directions.
LogicalResult ExpandDimsOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0), &out = ctx.output(0);
  if (in.hasRank()) {
    int64_t rank = in.rank();
    int64_t axis = getAxis() < 0 ? getAxis() + rank + 1 : getAxis();
    if (axis < 0 || axis > rank)
      return ctx.fail("axis " + llvm::Twine(getAxis()) + " is out of bounds for a " +
                      llvm::Twine(rank) + "-d input");
    llvm::SmallVector<int64_t> dims(in.getDims());
    dims.insert(dims.begin() + axis, 1);
    if (failed(ctx.refineOutput(0, PartialShape(dims))))
      return failure();
  }
  if (out.hasRank() && out.rank() > 0) {
    int64_t rank = out.rank() - 1;
    int64_t axis = getAxis() < 0 ? getAxis() + rank + 1 : getAxis();
    if (axis >= 0 && axis <= rank)
      return ctx.refineInput(0, shapeWithout(out, axis));
  }
  return success();
}

// SwapAxisShape, both directions.
LogicalResult SwapAxisOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0), &out = ctx.output(0);
  const PartialShape &ranked = in.hasRank() ? in : out;
  if (!ranked.hasRank())
    return success();
  FailureOr<int64_t> a = checkAxis(ctx, getDim1(), ranked.rank(), "dim1");
  FailureOr<int64_t> b = failed(a) ? a : checkAxis(ctx, getDim2(), ranked.rank(), "dim2");
  if (failed(b))
    return failure();
  auto swapped = [&](PartialShape s) {
    if (s.hasRank())
      std::swap(s[*a], s[*b]);
    return s;
  };
  if (failed(ctx.refineOutput(0, swapped(in))))
    return failure();
  return ctx.refineInput(0, swapped(ctx.output(0)));
}

// SliceAxisShape.
LogicalResult SliceAxisOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  int64_t rank = in.rank();
  int64_t axis = getAxis() < 0 ? getAxis() + rank : getAxis();
  if (axis < 0 || axis >= rank)
    return ctx.fail("transformed axis must be smaller than the source ndim and larger than "
                    "zero! Received axis=" + llvm::Twine(getAxis()) + ", src_ndim=" +
                    llvm::Twine(rank));
  PartialShape out = in;
  int64_t size = in[axis];
  if (size < 0) {
    out[axis] = kUnknownDim;
    return ctx.refineOutput(0, out);
  }
  int64_t begin = getBegin() < 0 ? getBegin() + size : getBegin();
  int64_t end = size;
  if (std::optional<int64_t> e = getEnd())
    end = *e < 0 ? *e + size : *e;
  if (end > size)
    return ctx.fail("invalid end for end=" + llvm::Twine(end) + " as axis_size is " +
                    llvm::Twine(size));
  if (begin < 0 || begin >= end)
    return ctx.fail("invalid begin, end, get begin=" + llvm::Twine(getBegin()) + ", end=" +
                    llvm::Twine(end));
  out[axis] = end - begin;
  return ctx.refineOutput(0, out);
}

// SliceOpShape, forwards only as MXNet's.
LogicalResult SliceOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  if (in.rank() == 0)
    return ctx.fail("slice only works for ndim > 0");
  PartialShape known = in;
  for (unsigned i = 0; i < in.rank(); ++i)
    if (!in.isKnown(i))
      known[i] = 1; // any size: only the dims' count and the tuples are checked
  std::string error;
  FailureOr<SmallVector<SliceDim>> slices = getSliceDims(getBegin(), getEnd(), getStep(), known.getDims(), error);
  if (failed(slices))
    return ctx.fail(error);
  PartialShape out = in;
  for (unsigned i = 0; i < getBegin().size(); ++i)
    out[i] = in.isKnown(i) ? (*slices)[i].size : kUnknownDim;
  return ctx.refineOutput(0, out);
}

// SliceLikeShape: shape_like's dims on `axes` (on all, of equal rank, if
// empty), each no larger than data's.
// CropProp::InferShape: data's (h, w) replaced by h_w's or crop_like's.
LogicalResult CropOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() != 4)
    return ctx.fail("Input data should be 4D in batch-num_filter-y-x");
  PartialShape out = data;
  if (getCropLike()) {
    const PartialShape &like = ctx.input(1);
    if (!like.hasRank())
      return success();
    if (like.rank() < 4)
      return ctx.fail("crop_like " + like.str() + " has no (h, w) at dims 2 and 3");
    out[2] = like[2];
    out[3] = like[3];
  } else {
    ArrayRef<int64_t> hw = getHW();
    const char *names[] = {"height(h_w[0])", "width(h_w[1])"};
    for (unsigned i = 0; i < 2; ++i) {
      if (hw[i] < 1)
        return ctx.fail(llvm::Twine("the crop ") + names[i] + " should be larger than 1");
      if (data.isKnown(2 + i) && hw[i] > data[2 + i])
        return ctx.fail(llvm::Twine("the crop ") + names[i] + " should be less than the input data's " +
                        (i ? "width" : "height"));
      out[2 + i] = hw[i];
    }
  }
  for (unsigned i = 2; i < 4; ++i) {
    if (!data.isKnown(i) || !out.isKnown(i))
      continue;
    if (out[i] > data[i])
      return ctx.fail(llvm::Twine("data_shape'") + (i == 2 ? "height" : "weight") +
                      " should be larger than that of out_shape");
    int64_t offset = getOffset()[i - 2];
    std::string name = "offset[" + std::to_string(i - 2) + "]";
    if (!getCenterCrop() && offset < 0)
      return ctx.fail(name + " should be larger than 0");
    if (!getCenterCrop() && offset > data[i] - out[i])
      return ctx.fail(name + " should be less than the residual space of " + (i == 2 ? "height" : "width"));
  }
  return ctx.refineOutput(0, out);
}

LogicalResult SliceLikeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0), &like = ctx.input(1);
  if (!in.hasRank() || !like.hasRank())
    return success();
  auto fits = [&](unsigned axis) -> LogicalResult {
    if (in.isKnown(axis) && like.isKnown(axis) && in[axis] < like[axis])
      return ctx.fail("Slice axis " + llvm::Twine(axis) + " with size " + llvm::Twine(like[axis]) +
                      "exceeds limit of input with size " + llvm::Twine(in[axis]));
    return success();
  };
  if (getAxes().empty()) {
    if (in.rank() != like.rank())
      return ctx.fail("By default slice_axis performs slice on all axes, but ndim mismatch for inputs: " +
                      llvm::Twine(in.rank()) + " vs. " + llvm::Twine(like.rank()));
    for (unsigned i = 0; i < in.rank(); ++i)
      if (failed(fits(i)))
        return failure();
    return ctx.refineOutput(0, like);
  }
  PartialShape out = in;
  for (int64_t given : getAxes()) {
    int64_t axis = given < 0 ? given + in.rank() : given;
    if (axis < 0)
      return ctx.fail("Slice axis: " + llvm::Twine(given) + " too small");
    if (axis >= in.rank())
      return ctx.fail("Slice axis: " + llvm::Twine(axis) + " exceeds first input: " + llvm::Twine(in.rank()));
    if (axis >= like.rank())
      return ctx.fail("Slice axis: " + llvm::Twine(axis) + " exceeds second input: " + llvm::Twine(like.rank()));
    out[axis] = like[axis];
    if (failed(fits(axis)))
      return failure();
  }
  return ctx.refineOutput(0, out);
}

// ArgSortShape (TopKShapeImpl with k = all): data's shape, or the element
// count for axis None.
LogicalResult ArgsortOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  if (getAxis() == kNone)
    return ctx.refineOutput(0, PartialShape({in.numElements().value_or(kUnknownDim)}));
  int64_t axis = getAxis() < 0 ? getAxis() + in.rank() : getAxis();
  if (axis < 0 || axis >= in.rank())
    return ctx.fail("Invalid axis! axis should be between 0 and " + llvm::Twine(in.rank()) +
                    ", found axis=" + llvm::Twine(axis));
  return ctx.refineOutput(0, in);
}

Type ArgsortOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) {
  return dtypeOrFloat32(getDtype(), getContext());
}

namespace {

/// broadcast_reduce_op.h's CheckAxis.
FailureOr<int64_t> checkReduceAxis(ShapeInferenceContext &ctx, int64_t axis, int64_t rank) {
  if (auto a = normalizeAxis(axis, rank))
    return *a;
  (void)ctx.fail("axis " + llvm::Twine(axis) + " exceeds the input dimension of " + llvm::Twine(rank));
  return failure();
}

/// ReduceAxisShapeImpl: data without `axis` (or with a 1 there); all of it
/// for no axis or 1-d data.
FailureOr<PartialShape> reduceAxisShape(ShapeInferenceContext &ctx, const PartialShape &in,
                                        std::optional<int64_t> axis, bool keepdims) {
  if (!axis || in.rank() == 1)
    return keepdims ? PartialShape(llvm::SmallVector<int64_t>(in.rank(), 1)) : PartialShape({1});
  FailureOr<int64_t> a = checkReduceAxis(ctx, *axis, in.rank());
  if (failed(a))
    return failure();
  if (!keepdims)
    return shapeWithout(in, *a);
  PartialShape out = in;
  out[*a] = 1;
  return out;
}

} // namespace

// ReduceAxisShape.
LogicalResult mlir::sym::inferSearchAxisShape(ShapeInferenceContext &ctx, std::optional<int64_t> axis,
                                              bool keepdims) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  FailureOr<PartialShape> out = reduceAxisShape(ctx, in, axis, keepdims);
  return failed(out) ? failure() : ctx.refineOutput(0, *out);
}

// PickOpShape: the index has the output's shape, with or without the 1.
LogicalResult PickOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0), &index = ctx.input(1);
  if (getAxis() == kNone)
    return ctx.fail("axis=None is not supported by pick yet. Must specify an axis.");
  if (!in.hasRank())
    return success();
  FailureOr<PartialShape> out = reduceAxisShape(ctx, in, getAxis(), getKeepdims());
  if (failed(out) || failed(ctx.refineOutput(0, *out)) || !index.hasRank())
    return failure(failed(out));
  FailureOr<PartialShape> expected = reduceAxisShape(ctx, in, getAxis(), index.rank() == in.rank());
  return failed(expected) ? failure() : ctx.refineInput(1, *expected);
}

// ParseTopKParam's target shape: k along the axis (all of it for k < 1),
// the flattened data's k for no axis; the data's shape for a mask.
static FailureOr<PartialShape> topkShape(ShapeInferenceContext &ctx, const PartialShape &in, int64_t axis, int64_t k,
                                  bool mask) {
  std::optional<int64_t> n = in.numElements();
  if (axis != kNone) {
    if (!normalizeAxis(axis, in.rank())) {
      (void)ctx.fail("Invalid axis! axis should be between 0 and " + llvm::Twine(in.rank()) +
                     ", found axis=" + llvm::Twine(axis < 0 ? axis + in.rank() : axis));
      return failure();
    }
    axis = *normalizeAxis(axis, in.rank());
    n = in.isKnown(axis) ? std::optional<int64_t>(in[axis]) : std::nullopt;
  }
  if (k < 1)
    k = n.value_or(kUnknownDim);
  if (n && k > *n) {
    (void)ctx.fail("k must be smaller than " + llvm::Twine(*n) + ", get k = " + llvm::Twine(k));
    return failure();
  }
  if (mask)
    return in;
  if (axis == kNone)
    return PartialShape({k});
  PartialShape out = in;
  out[axis] = k;
  return out;
}

// TopKShapeImpl.
LogicalResult TopkOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  FailureOr<PartialShape> out = topkShape(ctx, in, getAxis(), getK(), getRetTyp() == "mask");
  if (failed(out))
    return failure();
  for (unsigned i = 0; i < ctx.numOutputs(); ++i)
    if (failed(ctx.refineOutput(i, *out)))
      return failure();
  return success();
}

// TopKType: indices in dtype; value's hidden indices int32.
Type TopkOp::inferResultElementType(unsigned index, llvm::ArrayRef<Type> operands) {
  llvm::StringRef ret = getRetTyp();
  if (ret == "indices" || (ret == "both" && index == 1))
    return dtypeOrFloat32(getDtype(), getContext());
  if (index == 1)
    return IntegerType::get(getContext(), 32);
  return operands[0];
}

LogicalResult TopkOp::verify() {
  unsigned expected = getRetTyp() == "value" || getRetTyp() == "both" ? 2 : 1;
  if (getNumResults() != expected)
    return emitOpError() << "ret_typ " << getRetTyp() << " has " << expected << " results, got " << getNumResults();
  return success();
}

// SortShape: TopKShapeImpl with k = 0.
LogicalResult SortOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  FailureOr<PartialShape> out = topkShape(ctx, in, getAxis(), 0, false);
  if (failed(out) || failed(ctx.refineOutput(0, *out)))
    return failure();
  return ctx.refineOutput(1, *out);
}

Type SortOp::inferResultElementType(unsigned index, llvm::ArrayRef<Type> operands) {
  return index == 0 ? operands[0] : IntegerType::get(getContext(), 32);
}

// RNNShape: data (T, N, I); the states (L * D, N, H); the flat parameter
// vector's length (GetRnnParamSize).
LogicalResult RNNOp::inferShapes(ShapeInferenceContext &ctx) {
  unsigned inputs = 3 + (isLstm() ? 1 : 0) + (getUseSequenceLength() ? 1 : 0);
  if (ctx.numInputs() != inputs)
    return ctx.fail("Input shape mismatch. Expected " + llvm::Twine(inputs) + " input parameters but got " +
                    llvm::Twine(ctx.numInputs()) + ".");
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() != 3)
    return ctx.fail("Input data should be rank-3 tensor of dim [sequence length, batch size, input size]");
  int64_t directions = numDirections(), layers = directions * getNumLayers(), hidden = getStateSize();
  int64_t batch = data[1], input = data[2];
  int64_t layerSize = getProjectionSize().value_or(hidden);
  PartialShape state({layers, batch, layerSize});
  if (failed(ctx.refineInput(2, state)))
    return failure();
  if (isLstm() && failed(ctx.refineInput(3, PartialShape({layers, batch, hidden}))))
    return failure();
  if (getUseSequenceLength() && failed(ctx.refineInput(ctx.numInputs() - 1, PartialShape({batch}))))
    return failure();
  if (input >= 0) {
    int64_t rows = gateRows() * directions, first, other;
    if (std::optional<int64_t> projection = getProjectionSize()) {
      first = (input + *projection + 2) * rows;
      other = (*projection * directions + *projection + 2) * rows;
    } else {
      first = (input + hidden + 2) * rows;
      other = (hidden * directions + hidden + 2) * rows;
    }
    int64_t size = first + (getNumLayers() - 1) * other;
    if (std::optional<int64_t> projection = getProjectionSize())
      size += *projection * hidden * getNumLayers() * directions;
    if (failed(ctx.refineInput(1, PartialShape({size}))))
      return failure();
  }
  if (failed(ctx.refineOutput(0, PartialShape({data[0], batch, directions * layerSize}))))
    return failure();
  if (ctx.numOutputs() > 1 && failed(ctx.refineOutput(1, state)))
    return failure();
  if (ctx.numOutputs() > 2)
    return ctx.refineOutput(2, PartialShape({layers, batch, hidden}));
  return success();
}

// TakeOpShape: indices' shape in place of the axis.
LogicalResult TakeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &a = ctx.input(0), &indices = ctx.input(1);
  if (!a.hasRank() || !indices.hasRank())
    return success();
  int64_t rank = a.rank();
  if (getAxis() < -rank || getAxis() >= rank)
    return ctx.fail("Axis should be in the range of [-r, r-1] where r is the rank of input tensor");
  int64_t axis = getAxis() < 0 ? getAxis() + rank : getAxis();
  llvm::SmallVector<int64_t> out(a.getDims().take_front(axis));
  llvm::append_range(out, indices.getDims());
  llvm::append_range(out, a.getDims().drop_front(axis + 1));
  return ctx.refineOutput(0, PartialShape(out));
}

// OneHotOpShape.
LogicalResult OneHotOp::inferShapes(ShapeInferenceContext &ctx) {
  if (getDepth() < 0)
    return ctx.fail("Dimension size, depth, must be a non-negative integer");
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  llvm::SmallVector<int64_t> out(in.getDims());
  out.push_back(getDepth());
  return ctx.refineOutput(0, PartialShape(out));
}

Type OneHotOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) {
  return dtypeOrFloat32(getDtype(), getContext());
}

// BroadcastLikeShape.
LogicalResult BroadcastLikeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &lhs = ctx.input(0), &rhs = ctx.input(1);
  if (!lhs.hasRank() || !rhs.hasRank())
    return success();
  if (!getLhsAxes() || !getRhsAxes()) {
    if (lhs.rank() != rhs.rank())
      return ctx.fail("Operand of shape " + lhs.str() + " cannot be broadcasted to " + rhs.str());
    PartialShape out = rhs;
    for (unsigned i = 0; i < lhs.rank(); ++i) {
      if (!rhs.isKnown(i))
        out[i] = lhs[i];
      else if (lhs.isKnown(i) && lhs[i] != rhs[i] && lhs[i] != 1)
        return ctx.fail("Array cannot be broadcasted from " + lhs.str() + " to " + rhs.str());
    }
    return ctx.refineOutput(0, out);
  }
  llvm::ArrayRef<int64_t> from = *getLhsAxes(), to = *getRhsAxes();
  if (from.size() != to.size())
    return ctx.fail("Input_axis and other_axis size does not match");
  if (from.empty())
    return ctx.fail("Empty axes tuple is not allowed");
  PartialShape out = lhs;
  for (auto [i, f, t] : llvm::enumerate(from, to)) {
    std::optional<int64_t> copyFrom = normalizeAxis(f, lhs.rank()), copyTo = normalizeAxis(t, rhs.rank());
    if (!copyFrom)
      return ctx.fail("Invalid dimension specified in lhs_axes: " + llvm::Twine(f));
    if (!copyTo)
      return ctx.fail("Invalid dimension specified in rhs_axes: " + llvm::Twine(t));
    if (lhs.isKnown(*copyFrom) && lhs[*copyFrom] != 1)
      return ctx.fail("Input axis " + llvm::Twine(f) + " at dimension " + llvm::Twine(i) +
                      " cannot be broadcasted to " + llvm::Twine(rhs[*copyTo]));
    out[*copyFrom] = rhs[*copyTo];
  }
  return ctx.refineOutput(0, out);
}

// GatherNDShape: indices (M, y...), data (x_0..x_{M-1}, rest...) give
// (y..., rest...).
LogicalResult GatherNdOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0), &indices = ctx.input(1);
  if (!data.hasRank() || !indices.hasRank())
    return success();
  if (indices.rank() <= 1)
    return ctx.fail("gather_nd requires index tensor to have at least 2 dimensions");
  int64_t m = indices[0];
  if (m < 0)
    return success();
  if (m > data.rank())
    return ctx.fail("Number of indices exceeds data dimension");
  if (m > 10)
    return ctx.fail("gather_nd supports indexing along at most 10 dimensions.");
  SmallVector<int64_t> out(indices.getDims().drop_front());
  llvm::append_range(out, data.getDims().drop_front(m));
  return ctx.refineOutput(0, PartialShape(out));
}

// TileOpShape: reps and the data's dims aligned at the right, the shorter
// padded with 1s.
LogicalResult TileOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  ArrayRef<int64_t> reps = getReps();
  if (llvm::any_of(reps, [](int64_t r) { return r <= 0; }))
    return ctx.fail("reps " + PartialShape(reps).str() + " must be positive (symc has no empty tensors)");
  unsigned rank = std::max<unsigned>(in.rank(), reps.size());
  PartialShape out = PartialShape::ofRank(rank);
  for (unsigned i = 0; i < rank; ++i) {
    int64_t inIndex = int64_t(i) - (rank - in.rank()), repIndex = int64_t(i) - (rank - reps.size());
    int64_t size = inIndex >= 0 ? in[inIndex] : 1, rep = repIndex >= 0 ? reps[repIndex] : 1;
    out[i] = size < 0 ? kUnknownDim : size * rep;
  }
  return ctx.refineOutput(0, out);
}

// RepeatOpShape: the repeated axis grows, or the flattened data.
LogicalResult RepeatOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  if (!getAxis()) {
    std::optional<int64_t> size = in.numElements();
    return ctx.refineOutput(0, PartialShape({size ? *size * getRepeats() : kUnknownDim}));
  }
  FailureOr<int64_t> axis = checkAxis(ctx, *getAxis(), in.rank());
  if (failed(axis))
    return failure();
  PartialShape out = in;
  out[*axis] = in.isKnown(*axis) ? in[*axis] * getRepeats() : kUnknownDim;
  return ctx.refineOutput(0, out);
}

// SqueezeShape: the output keeps at least one dim.
LogicalResult SqueezeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank() || !in.isFullyKnown())
    return success();
  int64_t rank = in.rank();
  llvm::SmallVector<bool> removed(rank, false);
  if (std::optional<ArrayRef<int64_t>> axes = getAxis()) {
    for (int64_t a : *axes) {
      int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank)
        return ctx.fail("axis " + llvm::Twine(a) + " is out of bounds for array of dimension " + llvm::Twine(rank));
      if (in[axis] != 1)
        return ctx.fail("cannot select an axis to squeeze out which has size=" + llvm::Twine(in[axis]) +
                        " not equal to one");
      if (removed[axis])
        return ctx.fail("duplicate value in axis");
      removed[axis] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      removed[i] = in[i] == 1;
  }
  llvm::SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (!removed[i])
      dims.push_back(in[i]);
  if (dims.empty())
    dims.push_back(1);
  return ctx.refineOutput(0, PartialShape(dims));
}

// StackOpShape: every input has one shape; the output inserts num_args at
// `axis`.
LogicalResult StackOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape common;
  for (const PartialShape &s : ctx.getInputs())
    if (!common.merge(s))
      return ctx.fail("incompatible input shape: expected " + common.str() + ", got " + s.str());
  const PartialShape &out = ctx.output(0);
  unsigned rank = common.hasRank() ? common.rank() : out.hasRank() ? out.rank() - 1 : 0;
  if (!common.hasRank() && !out.hasRank())
    return success();
  FailureOr<int64_t> axis = checkAxis(ctx, getAxis(), rank + 1);
  if (failed(axis))
    return failure();
  if (out.hasRank() && !common.merge(shapeWithout(out, *axis)))
    return ctx.fail("incompatible output shape " + out.str() + " for inputs of shape " + common.str());
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (failed(ctx.refineInput(i, common)))
      return failure();
  llvm::SmallVector<int64_t> dims(common.getDims());
  dims.insert(dims.begin() + *axis, getNumArgs());
  return ctx.refineOutput(0, PartialShape(dims));
}

// BroadcastAxesShape; an input dim is 1 where the output's is broadcast.
LogicalResult BroadcastAxisOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0), &out = ctx.output(0);
  const PartialShape &ranked = in.hasRank() ? in : out;
  if (!ranked.hasRank())
    return success();
  if (getAxis().size() != getSize().size())
    return ctx.fail("axis " + PartialShape(getAxis()).str() + " and size " + PartialShape(getSize()).str() +
                    " differ in length");
  PartialShape from = in.hasRank() ? in : PartialShape::ofRank(ranked.rank()), to = from;
  for (auto [a, size] : llvm::zip(getAxis(), getSize())) {
    FailureOr<int64_t> axis = checkAxis(ctx, a, ranked.rank());
    if (failed(axis))
      return failure();
    if (from.isKnown(*axis) && from[*axis] != 1)
      return ctx.fail("Broadcasting axis must have size 1");
    from[*axis] = 1;
    to[*axis] = size;
  }
  if (failed(ctx.refineInput(0, from)) || failed(ctx.refineOutput(0, to)))
    return failure();
  PartialShape back = ctx.output(0);
  for (int64_t a : getAxis())
    back[*normalizeAxis(a, ranked.rank())] = 1;
  return ctx.refineInput(0, back);
}

// BroadcastToShape; a 0 in `shape` keeps the input's dim both ways.
LogicalResult BroadcastToOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  ArrayRef<int64_t> shape = getShape();
  if (!in.hasRank())
    return success();
  if (in.rank() != shape.size())
    return ctx.fail("Operand of shape " + in.str() + " cannot be broadcasted to " + PartialShape(shape).str());
  PartialShape out = PartialShape(shape), back = in;
  for (unsigned i = 0; i < in.rank(); ++i) {
    if (shape[i] == 0) {
      out[i] = in[i];
      back[i] = ctx.output(0).hasRank() ? ctx.output(0)[i] : kUnknownDim;
    } else if (in.isKnown(i) && in[i] != shape[i] && in[i] != 1) {
      return ctx.fail("Array cannot be broadcasted from " + in.str() + " to " + PartialShape(shape).str());
    }
  }
  if (failed(ctx.refineOutput(0, out)))
    return failure();
  return ctx.refineInput(0, back);
}

// SequenceLastProp::InferShape: (batch, rest...), one length per batch entry.
LogicalResult SequenceLastOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() < 2)
    return ctx.fail("The data array must be of rank 2 or greater.");
  int64_t batch = data[getAxis() ? 0 : 1];
  if (getUseSequenceLength() && failed(ctx.refineInput(1, PartialShape({batch}))))
    return failure();
  llvm::SmallVector<int64_t> out{batch};
  llvm::append_range(out, data.getDims().drop_front(2));
  return ctx.refineOutput(0, PartialShape(out));
}

/// SequenceMaskProp's and SequenceReverseProp's InferShape: the data's
/// shape, and one length per batch entry (dim `batchAxis`).
static LogicalResult inferSequenceShape(ShapeInferenceContext &ctx, bool useLength, int64_t batchAxis) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  if (shape->rank() < 2)
    return ctx.fail("The data array must be of rank 2 or greater.");
  if (!useLength)
    return success();
  return ctx.refineInput(1, PartialShape({(*shape)[batchAxis]}));
}

LogicalResult SequenceReverseOp::inferShapes(ShapeInferenceContext &ctx) {
  return inferSequenceShape(ctx, getUseSequenceLength(), 1);
}

LogicalResult SequenceMaskOp::inferShapes(ShapeInferenceContext &ctx) {
  return inferSequenceShape(ctx, getUseSequenceLength(), getAxis() == 0 ? 1 : 0);
}

//===----------------------------------------------------------------------===//
// Lookup, casts and loss heads
//===----------------------------------------------------------------------===//

// EmbeddingOpShape.
LogicalResult EmbeddingOp::inferShapes(ShapeInferenceContext &ctx) {
  if (failed(ctx.refineInput(1, PartialShape({getInputDim(), getOutputDim()}))))
    return failure();
  const PartialShape &data = ctx.input(0), &out = ctx.output(0);
  if (data.hasRank()) {
    llvm::SmallVector<int64_t> dims(data.getDims());
    dims.push_back(getOutputDim());
    return ctx.refineOutput(0, PartialShape(dims));
  }
  if (out.hasRank() && out.rank() > 0)
    return ctx.refineInput(0, shapeWithout(out, out.rank() - 1));
  return success();
}

Type mlir::sym::dtypeOrFloat32(std::optional<Type> dtype, MLIRContext *ctx) {
  return dtype ? *dtype : Float32Type::get(ctx);
}

Type EmbeddingOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) {
  return dtypeOrFloat32(getDtype(), getContext());
}
Type CastOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) { return getDtype(); }

// AdaptiveAvgPoolOpInferShape: (N, C, H, W) -> (N, C, OH, OW).
LogicalResult AdaptiveAvgPooling2DOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape data = ctx.input(0), out = ctx.output(0);
  if (out.hasRank() && out.rank() == 4 && !data.hasRank() && failed(ctx.refineInput(0, PartialShape::ofRank(4))))
    return failure();
  data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() != 4)
    return ctx.fail("AdaptiveAvgPooling2D: Input data should be 4D in (batch, channel, y, x), got " + data.str());
  llvm::ArrayRef<int64_t> size = getOutputSize();
  PartialShape expected = data;
  expected[2] = size.empty() ? 1 : size[0];
  expected[3] = size.empty() ? 1 : size.back();
  if (failed(ctx.refineOutput(0, expected)))
    return failure();
  PartialShape batchAndChannels = PartialShape::ofRank(4);
  batchAndChannels[0] = ctx.output(0)[0];
  batchAndChannels[1] = ctx.output(0)[1];
  return ctx.refineInput(0, batchAndChannels);
}

/// PadProp::InferShape: each dim grows by its two pads; a gradient's shape
/// is its output's less them.
static LogicalResult inferPadShape(ShapeInferenceContext &ctx, llvm::ArrayRef<int64_t> padWidth, bool reflect,
                                   bool isGradient) {
  unsigned rank = padWidth.size() / 2;
  for (const PartialShape &s : {ctx.input(0), ctx.output(0)})
    if (s.hasRank() && (s.rank() != 4 && s.rank() != 5))
      return ctx.fail("Current implementation only supports 4-D or 5-D input.");
  for (const PartialShape &s : {ctx.input(0), ctx.output(0)})
    if (s.hasRank() && 2 * s.rank() != padWidth.size())
      return ctx.fail("Input shape vs padding spec mismatch.");
  const PartialShape &small = isGradient ? ctx.output(0) : ctx.input(0);
  const PartialShape &large = isGradient ? ctx.input(0) : ctx.output(0);
  PartialShape grown = PartialShape::ofRank(rank), shrunk = PartialShape::ofRank(rank);
  for (unsigned i = 0; i < rank; ++i) {
    int64_t pads = padWidth[2 * i] + padWidth[2 * i + 1];
    if (small.hasRank() && small.isKnown(i)) {
      grown[i] = small[i] + pads;
      if (reflect && (padWidth[2 * i] >= small[i] || padWidth[2 * i + 1] >= small[i]))
        return ctx.fail("Current implementation of reflection padding only supports padding sizes smaller "
                        "than the input size.");
    }
    if (large.hasRank() && large.isKnown(i))
      shrunk[i] = large[i] - pads;
  }
  if (isGradient)
    return failure(failed(ctx.refineInput(0, grown)) || failed(ctx.refineOutput(0, shrunk)));
  return failure(failed(ctx.refineOutput(0, grown)) || failed(ctx.refineInput(0, shrunk)));
}

LogicalResult PadOp::inferShapes(ShapeInferenceContext &ctx) {
  return inferPadShape(ctx, getPadWidth(), getMode() == "reflect", /*isGradient=*/false);
}

LogicalResult BackwardPadOp::inferShapes(ShapeInferenceContext &ctx) {
  return inferPadShape(ctx, getPadWidth(), getMode() == "reflect", /*isGradient=*/true);
}

/// BilinearSampleOpInferShape: one output size of an input size.
static int64_t resizedDim(llvm::StringRef mode, int64_t size, int64_t requested, std::optional<double> scale) {
  bool even = size % 2 == 0;
  if (mode == "size")
    return scale ? static_cast<int64_t>(*scale * size) : requested;
  if (mode == "odd_scale")
    return even ? static_cast<int64_t>(size * *scale) : static_cast<int64_t>((size - 1) * *scale) + 1;
  if (mode == "to_even_down")
    return even ? size : size - 1;
  if (mode == "to_even_up")
    return even ? size : size + 1;
  if (mode == "to_odd_down")
    return even ? size - 1 : size;
  return even ? size + 1 : size; // to_odd_up
}

LogicalResult BilinearResize2DOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() != 4)
    return ctx.fail("BilinearResize2D: input data should be 4D in (batch, channel, y, x), got " + data.str());
  PartialShape out = PartialShape::ofRank(4);
  out[0] = data[0];
  out[1] = data[1];
  if (getMode() == "like") {
    const PartialShape &like = ctx.input(1);
    if (like.hasRank() && like.rank() != 4)
      return ctx.fail("BilinearResize2D: like should be 4D, got " + like.str());
    if (like.hasRank())
      for (unsigned i = 2; i < 4; ++i)
        out[i] = like[i];
  } else {
    if (data.isKnown(2))
      out[2] = resizedDim(getMode(), data[2], getHeight(), getScaleHeight());
    if (data.isKnown(3))
      out[3] = resizedDim(getMode(), data[3], getWidth(), getScaleWidth());
  }
  for (unsigned i = 2; i < 4; ++i)
    if (out.isKnown(i) && out[i] <= 0)
      return ctx.fail("BilinearResize2D: the output size " + out.str() + " must be positive");
  return ctx.refineOutput(0, out);
}

// WhereOpShape: x, y and the output agree; the condition has their shape or
// is a vector of their first dim.
LogicalResult WhereOp::inferShapes(ShapeInferenceContext &ctx) {
  PartialShape common = ctx.input(1);
  if (!common.merge(ctx.input(2)) || !common.merge(ctx.output(0)))
    return ctx.fail("x, y and the output must have one shape: " + ctx.input(1).str() + " " +
                    ctx.input(2).str() + " " + ctx.output(0).str());
  for (unsigned i : {1u, 2u})
    if (failed(ctx.refineInput(i, common)))
      return failure();
  if (failed(ctx.refineOutput(0, common)))
    return failure();
  const PartialShape &condition = ctx.input(0);
  if (!condition.hasRank() || !common.hasRank())
    return success();
  if (condition.rank() == common.rank())
    return ctx.refineInput(0, common);
  if (condition.rank() == 1 && common.rank() > 0)
    return ctx.refineInput(0, PartialShape({common[0]}));
  return ctx.fail("the condition must have x's shape " + common.str() + " or be a vector of its first dim, not " +
                  condition.str());
}

Type WhereOp::inferResultElementType(unsigned, llvm::ArrayRef<Type> operandTypes) { return operandTypes[1]; }

// SoftmaxOutputShape: the label is data.shape[:-1] unless it is a distribution.
LogicalResult SoftmaxOutputOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  const PartialShape &data = *shape;
  const PartialShape &label = ctx.input(1);
  if (label == data)
    return success();
  if (data.rank() < (getMultiOutput() ? 2u : 1u))
    return ctx.fail("SoftmaxOutput cannot take " + data.str() + " data");
  if (!getMultiOutput())
    return ctx.refineInput(1, PartialShape(data.getDims().drop_back()));
  // multi_output: (n, prod(rest)), (n, rest...) or (n, 1, rest...).
  PartialShape flat({data[0], data.product(2, data.rank()).value_or(kUnknownDim)});
  PartialShape keep = data;
  keep[1] = 1;
  if (!label.hasRank())
    return ctx.refineInput(1, flat);
  for (const PartialShape &option : {flat, shapeWithout(data, 1), keep})
    if (PartialShape merged = label; merged.merge(option))
      return ctx.refineInput(1, merged);
  return ctx.fail("expecting " + flat.str() + " or " + shapeWithout(data, 1).str() + " or " +
                  keep.str() + ". But got " + label.str());
}

/// A double as a C++ ostream prints it (6 significant digits).
static std::string streamed(double value) { return llvm::formatv("{0}", llvm::format("%g", value)).str(); }

// RangeShape.
LogicalResult ArangeOp::inferShapes(ShapeInferenceContext &ctx) {
  double step = getStep(), first = getFirst();
  if (step == 0)
    return ctx.fail("Range does not support step=0, received " + streamed(step));
  if (getRepeat() <= 0)
    return ctx.fail("Range only supports repeat > 0, received " + llvm::Twine(getRepeat()));
  std::optional<double> end = getEnd();
  if (!end)
    return success();
  if (step > 0 ? !(first < *end) : !(first > *end))
    return ctx.fail("Invalid range (start, stop, step) = (" + streamed(first) + "," + streamed(*end) + "," +
                    streamed(step) + ")");
  double size = std::ceil((*end - first) / step) * static_cast<double>(getRepeat());
  if (size >= static_cast<double>(int64_t{1} << 31) - 1)
    return ctx.fail("[RangeShape] Size of tensor you are trying to allocate is larger than 2^31 elements");
  return ctx.refineOutput(0, PartialShape({static_cast<int64_t>(size)}));
}

Type ArangeOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) {
  return dtypeOrFloat32(getDtype(), getContext());
}

// BoxNMSShape: data (..., boxes, width), record (..., boxes, 1).
LogicalResult BoxNmsOp::inferShapes(ShapeInferenceContext &ctx) {
  FailureOr<PartialShape> shape = unifyDataAndOutput(ctx);
  if (failed(shape) || !shape->hasRank())
    return success(succeeded(shape));
  const PartialShape &data = *shape;
  if (data.rank() < 2)
    return ctx.fail("input must have dim >= 2 the last two dimensions are num_box and box_width " + data.str() +
                    " provided");
  int64_t width = data[data.rank() - 1];
  if (width >= 0) {
    int64_t expected = getIdIndex() >= 0 ? 6 : 5;
    if (width < expected)
      return ctx.fail("the last dimension must have at least 5 elements namely (score, coordinates x 4) " +
                      llvm::Twine(width) + " provided, " + llvm::Twine(expected) + " expected.");
    int64_t coordStart = getCoordStart(), coordEnd = coordStart + 3, score = getScoreIndex(), id = getIdIndex();
    std::string range = " out of range: (0, " + std::to_string(width) + ")";
    std::string coords = "(" + std::to_string(coordStart) + ", " + std::to_string(coordEnd) + ")";
    if (score < 0 || score >= width)
      return ctx.fail("score_index: " + llvm::Twine(score) + range);
    if (score >= coordStart && score <= coordEnd)
      return ctx.fail("score_index: " + llvm::Twine(score) + " conflict with coordinates: " + coords + ".");
    if (coordStart < 0 || coordEnd >= width)
      return ctx.fail("coordinates: " + coords + " out of range:: (0, " + llvm::Twine(width) + ")");
    if (id >= 0) {
      if (id >= width)
        return ctx.fail("id_index: " + llvm::Twine(id) + range);
      if (id >= coordStart && id <= coordEnd)
        return ctx.fail("id_index: " + llvm::Twine(id) + " conflict with coordinates: " + coords + ".");
      if (id == score)
        return ctx.fail("id_index: " + llvm::Twine(id) + " conflict with score_index: " + llvm::Twine(score));
    }
  }
  PartialShape record = data;
  record[data.rank() - 1] = 1;
  return ctx.refineOutput(1, record);
}

// ROIAlign's FInferShape.
LogicalResult ROIAlignOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0), &rois = ctx.input(1);
  ArrayRef<int64_t> pooled = getPooledSize();
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    return ctx.fail("pooled_size must be two positive sizes (h, w)");
  if (!data.hasRank() || !rois.hasRank())
    return success();
  if (data.rank() != 4)
    return ctx.fail("data should be a 4D tensor");
  if (rois.rank() != 2 || (rois.isKnown(1) && rois[1] != 5))
    return ctx.fail("bbox should be a 2D tensor of shape [batch, 5]");
  int64_t channels = data[1];
  if (getPositionSensitive() && channels >= 0) {
    if (channels % (pooled[0] * pooled[1]) != 0)
      return ctx.fail("Input channels should be divided by pooled_size[0]*pooled_size[1]when position_sensitive is "
                      "true.");
    channels /= pooled[0] * pooled[1];
  }
  return ctx.refineOutput(0, PartialShape({rois[0], channels, pooled[0], pooled[1]}));
}

// ROIPoolingProp::InferShape: output and maxidx (n, channels, ph, pw).
LogicalResult ROIPoolingOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0), &rois = ctx.input(1);
  if (data.hasRank() && data.rank() != 4)
    return ctx.fail("data should be a 4D tensor");
  if (rois.hasRank() && (rois.rank() != 2 || (rois.isKnown(1) && rois[1] != 5)))
    return ctx.fail("bbox should be a 2D tensor of shape [batch, 5]");
  if (!data.hasRank() || !rois.hasRank())
    return success();
  PartialShape out({rois[0], data[1], getPooledSize()[0], getPooledSize()[1]});
  return success(succeeded(ctx.refineOutput(0, out)) && succeeded(ctx.refineOutput(1, out)));
}

// BoxEncodeShape, with the element counts its kernel's views check when it
// runs: samples and matches (B, N), anchors (B, N, 4), refs (B, M, 4).
LogicalResult BoxEncodeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &samples = ctx.input(0), &matches = ctx.input(1), &anchors = ctx.input(2),
                     &refs = ctx.input(3);
  auto rankAtLeast = [&](const PartialShape &shape, unsigned rank, const char *name) -> LogicalResult {
    if (shape.hasRank() && (rank == 2 ? shape.rank() != 2 : shape.rank() < rank))
      return ctx.fail(llvm::Twine(name) + " shape must have dim == " + llvm::Twine(rank) + ", " +
                      llvm::Twine(shape.rank()) + " provided");
    return success();
  };
  auto boxes = [&](const PartialShape &shape) -> LogicalResult {
    if (shape.hasRank() && shape.isKnown(shape.rank() - 1) && shape[shape.rank() - 1] != 4)
      return ctx.fail("last dimension of anchors must be 4, " + llvm::Twine(shape[shape.rank() - 1]) + " provided");
    return success();
  };
  if (failed(rankAtLeast(samples, 2, "samples")) || failed(rankAtLeast(matches, 2, "matches")) ||
      failed(rankAtLeast(anchors, 3, "matches")) || failed(boxes(anchors)) || failed(rankAtLeast(refs, 3, "refs")) ||
      failed(boxes(refs)))
    return failure();
  for (unsigned i = 4; i < 6; ++i)
    if (failed(ctx.refineInput(i, PartialShape({4}))))
      return failure();
  if (!anchors.hasRank())
    return success();
  std::optional<int64_t> count = anchors.numElements();
  for (const PartialShape *rows : {&samples, &matches}) {
    std::optional<int64_t> n = rows->hasRank() ? rows->numElements() : std::nullopt;
    if (count && n && anchors.isKnown(0) && anchors.isKnown(1) && (*n != anchors[0] * anchors[1] || *count != *n * 4))
      return ctx.fail("samples and matches " + rows->str() + " must hold one entry per anchor of " + anchors.str());
  }
  std::optional<int64_t> refCount = refs.hasRank() ? refs.numElements() : std::nullopt;
  if (refCount && anchors.isKnown(0) && *refCount != anchors[0] * refs[1] * 4)
    return ctx.fail("refs " + refs.str() + " must hold (M, 4) boxes for each of the " + llvm::Twine(anchors[0]) +
                    " images of anchors " + anchors.str());
  return success(succeeded(ctx.refineOutput(0, anchors)) && succeeded(ctx.refineOutput(1, anchors)));
}

// MultiBoxPriorProp::InferShape.
LogicalResult MultiBoxPriorOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0);
  if (!data.hasRank())
    return success();
  if (data.rank() < 4)
    return ctx.fail("Input data should be 4D: batch-channel-y-x");
  if (data[2] == 0 || data[3] == 0)
    return ctx.fail(llvm::Twine("Input ") + (data[2] == 0 ? "height" : "width") + " should > 0");
  int64_t anchors = static_cast<int64_t>(getSizes().size() + getRatios().size()) - 1;
  int64_t positions = data.isKnown(2) && data.isKnown(3) ? data[2] * data[3] : kUnknownDim;
  return ctx.refineOutput(0, PartialShape({1, positions < 0 ? kUnknownDim : positions * anchors, 4}));
}

// MultiBoxDetectionProp::InferShape; the kernel views anchor as (N, 4).
LogicalResult MultiBoxDetectionOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &cls = ctx.input(0), &loc = ctx.input(1), &anchor = ctx.input(2);
  if (!cls.hasRank() || !loc.hasRank() || !anchor.hasRank())
    return success();
  if (cls.rank() != 3)
    return ctx.fail("cls_prob: Provided: " + cls.str());
  if (loc.rank() != 2)
    return ctx.fail("loc_pred: Provided: " + loc.str());
  if (anchor.rank() != 3)
    return ctx.fail("anchor: Provided: " + anchor.str());
  if (cls.isKnown(2) && anchor.isKnown(1) && cls[2] != anchor[1])
    return ctx.fail("Number of anchors mismatch");
  if (cls.isKnown(2) && loc.isKnown(1) && cls[2] * 4 != loc[1])
    return ctx.fail("# anchors mismatch with # loc");
  if (anchor[1] == 0)
    return ctx.fail("Number of anchors must > 0");
  if (anchor.isKnown(2) && anchor[2] != 4)
    return ctx.fail("anchor boxes must have 4 coordinates, got " + anchor.str());
  if (anchor.isKnown(0) && anchor[0] != 1)
    return ctx.fail("anchors are shared across batches: anchor " + anchor.str() + " must be (1, N, 4)");
  return ctx.refineOutput(0, PartialShape({cls[0], anchor[1], 6}));
}

// MultiBoxTargetProp::InferShape.
LogicalResult MultiBoxTargetOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &anchor = ctx.input(0), &label = ctx.input(1), &pred = ctx.input(2);
  if (!anchor.hasRank() || !label.hasRank() || !pred.hasRank())
    return success();
  if (anchor.rank() != 3)
    return ctx.fail("Anchor should be batch shared N*4 tensor");
  if (anchor.isKnown(0) && anchor[0] != 1)
    return ctx.fail("Anchors are shared across batches, first dimension should be 1");
  if (anchor[1] == 0)
    return ctx.fail("Number boxes should be greater than 0");
  if (anchor.isKnown(2) && anchor[2] != 4)
    return ctx.fail("Box dimension should be 4: [xmin, ymin, xmax, ymax]");
  if (label.rank() != 3)
    return ctx.fail("Label should be [batch, num_labels, label_width] tensor");
  if (label[1] == 0)
    return ctx.fail("Padded label should be greater than 0");
  if (label.isKnown(2) && label[2] < 5)
    return ctx.fail("Label width should be greater than or equal to 5");
  if (pred.rank() != 3)
    return ctx.fail("Prediction: [batch, num_classes, num_anchors]");
  if (pred.isKnown(2) && anchor.isKnown(1) && pred[2] != anchor[1])
    return ctx.fail("Number of anchors mismatch");
  PartialShape loc({label[0], anchor.isKnown(1) ? anchor[1] * 4 : kUnknownDim});
  return success(succeeded(ctx.refineOutput(0, loc)) && succeeded(ctx.refineOutput(1, loc)) &&
                 succeeded(ctx.refineOutput(2, PartialShape({label[0], anchor[1]}))));
}

LogicalResult ShapeArrayOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  return in.hasRank() ? ctx.refineOutput(0, PartialShape({static_cast<int64_t>(in.rank())})) : success();
}

Type ShapeArrayOp::inferResultElementType(unsigned, llvm::ArrayRef<Type>) {
  return IntegerType::get(getContext(), 64);
}

// BoxDecodeShape: data (B, N, 4), anchors (..., 4) of at least 3 dims.
LogicalResult BoxDecodeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &data = ctx.input(0), &anchors = ctx.input(1);
  if (data.hasRank()) {
    if (data.rank() != 3)
      return ctx.fail("data shape must have dim == 3, " + llvm::Twine(data.rank()) + " provided");
    if (data.isKnown(2) && data[2] != 4)
      return ctx.fail("last dimension of data must be 4, " + llvm::Twine(data[2]) + " provided");
  }
  if (anchors.hasRank()) {
    if (anchors.rank() < 3)
      return ctx.fail("anchors shape must have dim == 3, " + llvm::Twine(anchors.rank()) + " provided");
    if (anchors.isKnown(anchors.rank() - 1) && anchors[anchors.rank() - 1] != 4)
      return ctx.fail("last dimension of anchors must be 4, " + llvm::Twine(anchors[anchors.rank() - 1]) +
                      " provided");
  }
  // The kernel views anchors as (1, N, 4).
  std::optional<int64_t> count = anchors.hasRank() ? anchors.numElements() : std::nullopt;
  if (count && data.hasRank() && data.isKnown(1) && *count != data[1] * 4)
    return ctx.fail("anchors " + anchors.str() + " do not hold the " + llvm::Twine(data[1]) + " boxes of data " +
                    data.str());
  return data.hasRank() ? ctx.refineOutput(0, data) : success();
}

// RangeLikeShape.
LogicalResult ArangeLikeOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &in = ctx.input(0);
  if (!in.hasRank())
    return success();
  if (!getAxis())
    return ctx.refineOutput(0, in);
  std::optional<int64_t> axis = normalizeAxis(*getAxis(), in.rank());
  if (!axis)
    return ctx.fail("cannot handle param.axis " + llvm::Twine(*getAxis()) + ".");
  return ctx.refineOutput(0, PartialShape({in[*axis]}));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// DotShape.
LogicalResult DotOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &l = ctx.input(0), &r = ctx.input(1);
  if (!l.hasRank() || !r.hasRank())
    return success();
  if (l.rank() == 0 || r.rank() == 0)
    return ctx.fail("dot does not take 0-d operands");
  bool ta = getTransposeA(), tb = getTransposeB();
  auto mismatch = [&] { return ctx.fail("dot shape error: " + l.str() + " X " + r.str()); };
  if (l.rank() == 1 && r.rank() == 1) {
    if (ta || tb)
      return ctx.fail("Cannot transpose vectors");
    if (l[0] >= 0 && r[0] >= 0 && l[0] != r[0])
      return mismatch();
    return ctx.refineOutput(0, PartialShape({1}));
  }
  // lhs as (M..., K) (or (K, M...) when transposed); rhs as (K, N...) (or (N..., K)).
  llvm::ArrayRef<int64_t> ld = l.getDims(), rd = r.getDims();
  llvm::ArrayRef<int64_t> lk = ta ? ld.take_front() : ld.take_back();
  llvm::ArrayRef<int64_t> lm = ta ? ld.drop_front() : ld.drop_back();
  llvm::ArrayRef<int64_t> rk = tb ? rd.take_back() : rd.take_front();
  llvm::ArrayRef<int64_t> rn = tb ? rd.drop_back() : rd.drop_front();
  if (ta && l.rank() == 1)
    lk = ld, lm = {};
  if (tb && r.rank() == 1)
    rk = rd, rn = {};
  std::optional<int64_t> kl = PartialShape(lk).numElements(), kr = PartialShape(rk).numElements();
  if (kl && kr && *kl != *kr)
    return mismatch();
  llvm::SmallVector<int64_t> out;
  if (l.rank() > 1)
    out.append(lm.begin(), lm.end());
  if (r.rank() > 1)
    out.append(rn.begin(), rn.end());
  return ctx.refineOutput(0, PartialShape(out));
}

// BatchDotShape.
LogicalResult BatchDotOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &l = ctx.input(0), &r = ctx.input(1);
  if (!l.hasRank() || !r.hasRank())
    return success();
  if (l.rank() < 3 || l.rank() != r.rank())
    return ctx.fail("batch_dot currently only support N-D*N-D array (N >= 3), got " + l.str() +
                    " v.s. " + r.str());
  unsigned n = l.rank();
  bool ta = getTransposeA(), tb = getTransposeB();
  PartialShape out = PartialShape::ofRank(n);
  for (unsigned i = 0; i + 2 < n; ++i) {
    if (l[i] >= 0 && r[i] >= 0 && l[i] != r[i])
      return ctx.fail("batch_dot shape error(batch_size must be equal): " + l.str() + " X " +
                      r.str());
    out[i] = l[i] >= 0 ? l[i] : r[i];
  }
  int64_t m = ta ? l[n - 1] : l[n - 2], kl = ta ? l[n - 2] : l[n - 1];
  int64_t nn = tb ? r[n - 2] : r[n - 1], kr = tb ? r[n - 1] : r[n - 2];
  if (kl >= 0 && kr >= 0 && kl != kr)
    return ctx.fail("batch_dot shape error(shape mismatch): " + l.str() + " X " + r.str());
  out[n - 2] = m;
  out[n - 1] = nn;
  return ctx.refineOutput(0, out);
}

/// The interleaved projections' shape check shared by the self-attention
/// ops; MXNet's own checks, and that the last dim splits into heads.
static LogicalResult checkInterleaved(ShapeInferenceContext &ctx, const PartialShape &qkv, int64_t heads,
                                      llvm::StringRef layout) {
  if (qkv.rank() != 3)
    return ctx.fail("Input queries_keys_values should be 3D in " + layout + ", currently is: " +
                    llvm::Twine(qkv.rank()) + "D");
  if (qkv.isKnown(2) && qkv[2] % (3 * heads) != 0)
    return ctx.fail("queries_keys_values.shape[2] " + llvm::Twine(qkv[2]) + " does not split into " +
                    llvm::Twine(heads) + " heads of query, key and value");
  return success();
}

// InterleavedMatMulSelfAttQKShape.
LogicalResult InterleavedMatmulSelfAttQKOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &qkv = ctx.input(0);
  if (!qkv.hasRank())
    return success();
  if (failed(checkInterleaved(ctx, qkv, getHeads(), "seq_length-batch-proj_dim")))
    return failure();
  int64_t batches = qkv.isKnown(1) ? getHeads() * qkv[1] : kUnknownDim;
  return ctx.refineOutput(0, PartialShape({batches, qkv[0], qkv[0]}));
}

// InterleavedMatMulSelfAttValAttShape.
LogicalResult InterleavedMatmulSelfAttValAttOp::inferShapes(ShapeInferenceContext &ctx) {
  const PartialShape &qkv = ctx.input(0), &att = ctx.input(1);
  if (!qkv.hasRank() || !att.hasRank())
    return success();
  if (failed(checkInterleaved(ctx, qkv, getHeads(), "seq_length-batch-3*proj_dim")))
    return failure();
  if (att.rank() != 3)
    return ctx.fail("Input attention should be 3D in batch-seq_length-seq_length, currently is: " +
                    llvm::Twine(att.rank()) + "D");
  for (unsigned i : {1u, 2u})
    if (qkv.isKnown(0) && att.isKnown(i) && qkv[0] != att[i])
      return ctx.fail("queries_keys_values.shape[0] and attention.shape[" + llvm::Twine(i) +
                      "] should be the same, currently are " + llvm::Twine(qkv[0]) + " and " + llvm::Twine(att[i]));
  if (qkv.isKnown(1) && att.isKnown(0) && att[0] != getHeads() * qkv[1])
    return ctx.fail("attention.shape[0] " + llvm::Twine(att[0]) + " is not heads * batch = " +
                    llvm::Twine(getHeads() * qkv[1]));
  return ctx.refineOutput(0, PartialShape({qkv[0], qkv[1], qkv.isKnown(2) ? qkv[2] / 3 : kUnknownDim}));
}
