//===- LoweringUtils.cpp - building blocks for sym -> linalg --------------===//
#include "codegen/CPU/LoweringUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include <limits>

using namespace mlir;

namespace symc::cpu {

int64_t normalizeAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

SmallVector<int64_t> reducedAxes(std::optional<ArrayRef<int64_t>> axis, bool exclude, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i) {
    bool listed = axis && llvm::any_of(*axis, [&](int64_t a) { return normalizeAxis(a, rank) == i; });
    if (!axis || axis->empty() || listed != exclude)
      axes.push_back(i);
  }
  return axes;
}

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elementType) {
  return b.create<tensor::EmptyOp>(loc, shape, elementType);
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return emptyTensor(b, loc, type.getShape(), type.getElementType());
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Value init = emptyLike(b, loc, type);
  Value scalar = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<linalg::FillOp>(loc, scalar, init).getResult(0);
}

Value mapWithMaps(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                  ArrayRef<AffineMap> inputMaps, ScalarFn fn) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, inputs, emptyLike(b, loc, resultType), maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = fn(nested, nestedLoc, args.drop_back());
        nested.create<linalg::YieldOp>(nestedLoc, result);
      });
  return generic.getResult(0);
}

/// The map reading `inputType` broadcast (numpy rules) into a result of `resultShape`.
static AffineMap broadcastMap(OpBuilder &b, RankedTensorType inputType,
                              ArrayRef<int64_t> resultShape) {
  unsigned rank = resultShape.size(), inputRank = inputType.getRank();
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < inputRank; ++i) {
    unsigned dim = rank - inputRank + i;
    bool broadcast = inputType.getDimSize(i) == 1 && resultShape[dim] != 1;
    exprs.push_back(broadcast ? b.getAffineConstantExpr(0) : b.getAffineDimExpr(dim));
  }
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

Value mapElementwise(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                     ScalarFn fn) {
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(b, tensorType(input), resultType.getShape()));
  return mapWithMaps(b, loc, resultType, inputs, maps, fn);
}

Value mapAlongAxis(OpBuilder &b, Location loc, ValueRange tensors, int64_t axis, ValueRange vectors,
                   ScalarFn fn) {
  RankedTensorType type = tensorType(tensors.front());
  SmallVector<AffineMap> maps(tensors.size(), b.getMultiDimIdentityMap(type.getRank()));
  AffineMap vectorMap = AffineMap::get(type.getRank(), 0, b.getAffineDimExpr(axis));
  maps.append(vectors.size(), vectorMap);
  SmallVector<Value> inputs(tensors);
  llvm::append_range(inputs, vectors);
  return mapWithMaps(b, loc, type, inputs, maps, fn);
}

Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, bool keepDims,
             double init, ScalarFn combine, Type accumulator) {
  RankedTensorType type = tensorType(input);
  unsigned rank = type.getRank();
  SmallVector<int64_t> reducedShape, keptShape;
  SmallVector<AffineExpr> outputExprs;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    keptShape.push_back(reduced ? 1 : type.getDimSize(i));
    if (!reduced) {
      reducedShape.push_back(type.getDimSize(i));
      outputExprs.push_back(b.getAffineDimExpr(i));
    }
  }
  auto resultType = RankedTensorType::get(reducedShape, accumulator ? accumulator : type.getElementType());
  Value acc = filledTensor(b, loc, resultType, init);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, outputExprs, b.getContext())};
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, input, acc, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        nested.create<linalg::YieldOp>(nestedLoc, combine(nested, nestedLoc, args));
      });
  Value result = generic.getResult(0);
  return keepDims ? reshapeTo(b, loc, result, keptShape) : result;
}

Value reshapeTo(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(input);
  if (type.getShape() == shape)
    return input;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  auto allDims = [](unsigned rank) {
    ReassociationIndices group;
    for (unsigned i = 0; i < rank; ++i)
      group.push_back(i);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat = input;
  if (type.getRank() > 1) {
    auto flatType = RankedTensorType::get({type.getNumElements()}, type.getElementType());
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, input, allDims(type.getRank()));
  } else if (type.getRank() == 0) {
    flat = b.create<tensor::ExpandShapeOp>(
        loc, RankedTensorType::get({1}, type.getElementType()), input,
        SmallVector<ReassociationIndices>{});
  }
  if (shape.size() == 1)
    return flat;
  if (shape.empty())
    return b.create<tensor::CollapseShapeOp>(loc, resultType, flat,
                                             SmallVector<ReassociationIndices>{});
  return b.create<tensor::ExpandShapeOp>(loc, resultType, flat, allDims(shape.size()));
}

Value transposeTo(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> permutation) {
  RankedTensorType type = tensorType(input);
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init = emptyTensor(b, loc, shape, type.getElementType());
  return b.create<linalg::TransposeOp>(loc, input, init, permutation).getResult()[0];
}

Value padConstant(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                  ArrayRef<int64_t> high, double value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return input;
  RankedTensorType type = tensorType(input);
  SmallVector<int64_t> shape;
  for (unsigned i = 0; i < type.getRank(); ++i)
    shape.push_back(type.getDimSize(i) + low[i] + high[i]);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value padValue = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<tensor::PadOp>(loc, resultType, input, getAsIndexOpFoldResult(b.getContext(), low),
                                 getAsIndexOpFoldResult(b.getContext(), high), padValue);
}

/// The float or the integer form of a binary arith op, by operand type.
template <typename FloatOp, typename IntOp>
static Value floatOrInt(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<FloatOp>(loc, x, y);
  return b.create<IntOp>(loc, x, y);
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, x, y);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, x, y);
}
Value div(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, x, y);
}
Value max(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, loc, x, y);
}
Value min(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, loc, x, y);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = scalarConstant(b, loc, x.getType(), 1.0);
  Value expNeg = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  return b.create<arith::DivFOp>(loc, one, b.create<arith::AddFOp>(loc, one, expNeg));
}

Value selectPositive(OpBuilder &b, Location loc, Value x, Value ifPositive, Value otherwise) {
  Value zero = scalarConstant(b, loc, x.getType(), 0.0);
  Value isPositive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, zero);
  return b.create<arith::SelectOp>(loc, isPositive, ifPositive, otherwise);
}

Value convertScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return fromFloat.getWidth() < toFloat.getWidth()
               ? b.create<arith::ExtFOp>(loc, to, x).getResult()
               : b.create<arith::TruncFOp>(loc, to, x).getResult();
  bool fromUnsigned = from.isUnsignedInteger(), toUnsigned = to.isUnsignedInteger();
  if (fromFloat)
    return toUnsigned ? b.create<arith::FPToUIOp>(loc, to, x).getResult()
                      : b.create<arith::FPToSIOp>(loc, to, x).getResult();
  if (toFloat)
    return fromUnsigned ? b.create<arith::UIToFPOp>(loc, to, x).getResult()
                        : b.create<arith::SIToFPOp>(loc, to, x).getResult();
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return b.create<arith::TruncIOp>(loc, to, x);
  if (fromUnsigned || from.isInteger(1))
    return b.create<arith::ExtUIOp>(loc, to, x);
  return b.create<arith::ExtSIOp>(loc, to, x);
}

Value softmax(OpBuilder &b, Location loc, Value input, int64_t axis, bool log) {
  RankedTensorType type = tensorType(input);
  double lowest = -std::numeric_limits<double>::infinity();
  Value rowMax = reduce(b, loc, input, {axis}, /*keepDims=*/true, lowest,
                        [](OpBuilder &b, Location loc, ValueRange args) {
                          return max(b, loc, args[0], args[1]);
                        });
  Value shifted = mapElementwise(b, loc, type, {input, rowMax},
                                 [](OpBuilder &b, Location loc, ValueRange args) {
                                   return sub(b, loc, args[0], args[1]);
                                 });
  Value exps = mapElementwise(b, loc, type, shifted, [](OpBuilder &b, Location loc, ValueRange args) {
    return b.create<math::ExpOp>(loc, args[0]).getResult();
  });
  Value sum = reduce(b, loc, exps, {axis}, /*keepDims=*/true, 0.0,
                     [](OpBuilder &b, Location loc, ValueRange args) {
                       return add(b, loc, args[0], args[1]);
                     });
  if (log)
    return mapElementwise(b, loc, type, {shifted, sum},
                          [](OpBuilder &b, Location loc, ValueRange args) {
                            return sub(b, loc, args[0], b.create<math::LogOp>(loc, args[1]));
                          });
  return mapElementwise(b, loc, type, {exps, sum}, [](OpBuilder &b, Location loc, ValueRange args) {
    return div(b, loc, args[0], args[1]);
  });
}

namespace {

/// `buffer` as the kernel ABI's memref<?xT>.
Value flatBuffer(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<mlir::MemRefType>(buffer.getType());
  if (type.getRank() != 1) {
    mlir::ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    buffer = b.create<mlir::memref::CollapseShapeOp>(loc, buffer,
                                                      llvm::ArrayRef<mlir::ReassociationIndices>(all));
  }
  auto flat = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, type.getElementType());
  return b.create<mlir::memref::CastOp>(loc, flat, buffer);
}

void declareKernel(OpBuilder &b, Location loc, llvm::StringRef kernel, mlir::FunctionType type) {
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<mlir::ModuleOp>();
  if (module.lookupSymbol(kernel))
    return;
  OpBuilder atTop = OpBuilder::atBlockBegin(module.getBody());
  auto declaration = atTop.create<mlir::func::FuncOp>(loc, kernel, type);
  declaration.setPrivate();
}

} // namespace

namespace {

mlir::FailureOr<std::string> kernelSymbol(mlir::Operation *op, const Kernel &kernel) {
  Type element = kernel.element;
  if (element.isF32() || element.isF64())
    return (kernel.name + (element.isF32() ? "_f32" : "_f64")).str();
  if (kernel.integers && (element.isSignlessInteger(32) || element.isSignlessInteger(64)))
    return (kernel.name + (element.isSignlessInteger(32) ? "_i32" : "_i64")).str();
  return op->emitError("the CPU backend runs '")
         << op->getName().stripDialect() << "' on "
         << (kernel.integers ? "float32, float64, int32 and int64" : "float32 and float64") << " only, not "
         << element;
}

} // namespace

Lowered callKernel(OpBuilder &b, mlir::Operation *op, const Kernel &kernel, ValueRange inputs,
                   llvm::ArrayRef<RankedTensorType> resultTypes, ValueRange scalars) {
  mlir::FailureOr<std::string> symbol = kernelSymbol(op, kernel);
  if (failed(symbol))
    return mlir::failure();
  Location loc = op->getLoc();
  llvm::SmallVector<Value> operands, results;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    auto memref = mlir::MemRefType::get(type.getShape(), type.getElementType());
    auto buffer = b.create<mlir::bufferization::ToMemrefOp>(loc, memref, input, /*read_only=*/true);
    operands.push_back(flatBuffer(b, loc, buffer));
  }
  llvm::SmallVector<Value> outputs;
  for (RankedTensorType type : resultTypes) {
    auto memref = mlir::MemRefType::get(type.getShape(), type.getElementType());
    outputs.push_back(b.create<mlir::memref::AllocOp>(loc, memref, b.getI64IntegerAttr(64)));
    operands.push_back(flatBuffer(b, loc, outputs.back()));
  }
  llvm::append_range(operands, scalars);
  auto type = b.getFunctionType(ValueRange(operands).getTypes(), {});
  declareKernel(b, loc, *symbol, type);
  b.create<mlir::func::CallOp>(loc, *symbol, mlir::TypeRange{}, operands);
  for (Value output : outputs)
    results.push_back(b.create<mlir::bufferization::ToTensorOp>(loc, output, /*restrict=*/true, /*writable=*/true));
  return results;
}

Value i64(OpBuilder &b, Location loc, int64_t value) { return b.create<mlir::arith::ConstantIntOp>(loc, value, 64); }

} // namespace symc::cpu
