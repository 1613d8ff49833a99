//===- LowerRecurrent.cpp - MXNet's fused RNN op --------------------------===//
//
// RNN unrolls over time as MXNet's CPU kernels (src/operator/rnn_impl.h)
// compute it: per layer and direction, one product of the whole input
// sequence with the i2h weight, then per step a product of the previous
// state with the h2h weight and the gate arithmetic in MXNet's order of
// additions. The reverse direction walks the steps backwards and writes the
// second half of each output row.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/LayerUtils.h"
#include "codegen/CPU/OpLowerings.h"

#include "dialects/Sym/IR/SymOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace symc::cpu {
namespace {

/// The box of `source` at `offsets` of `sizes`, reshaped to `shape`.
Value extractBox(OpBuilder &b, Location loc, Value source, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                 ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  Value box = b.create<tensor::ExtractSliceOp>(loc, source, getAsIndexOpFoldResult(b.getContext(), offsets),
                                               getAsIndexOpFoldResult(b.getContext(), sizes),
                                               getAsIndexOpFoldResult(b.getContext(), strides));
  return reshapeTo(b, loc, box, shape);
}

/// `dest` with `value` written at `offsets`, `value` viewed as `sizes`.
Value insertBox(OpBuilder &b, Location loc, Value value, Value dest, ArrayRef<int64_t> offsets,
                ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  return b.create<tensor::InsertSliceOp>(loc, reshapeTo(b, loc, value, sizes), dest,
                                         getAsIndexOpFoldResult(b.getContext(), offsets),
                                         getAsIndexOpFoldResult(b.getContext(), sizes),
                                         getAsIndexOpFoldResult(b.getContext(), strides));
}

/// One layer's and direction's slices of the flat parameter vector.
struct CellWeights {
  Value i2h, h2h;         // (gates * H, input), (gates * H, H)
  Value i2hBias, h2hBias; // (gates * H)
};

/// Reads MXNet's parameter layout in order: all weights, then all biases.
class ParameterReader {
public:
  ParameterReader(OpBuilder &b, Location loc, Value flat, int64_t biasStart)
      : b(b), loc(loc), flat(flat), biasOffset(biasStart) {}

  CellWeights next(int64_t rows, int64_t input, int64_t hidden) {
    CellWeights w;
    w.i2h = take(weightOffset, {rows, input});
    w.h2h = take(weightOffset, {rows, hidden});
    w.i2hBias = take(biasOffset, {rows});
    w.h2hBias = take(biasOffset, {rows});
    return w;
  }

private:
  Value take(int64_t &offset, ArrayRef<int64_t> shape) {
    int64_t size = ShapedType::getNumElements(shape);
    Value v = extractBox(b, loc, flat, {offset}, {size}, shape);
    offset += size;
    return v;
  }

  OpBuilder &b;
  Location loc;
  Value flat;
  int64_t weightOffset = 0, biasOffset;
};

/// What one step of a cell computes from the step's gate inputs.
struct StepState {
  Value h, c; // (N, H); c only for LSTM
};

/// Gate `g`'s columns of the (N, gates * H) products.
Value gate(OpBuilder &b, Location loc, Value products, int64_t g, int64_t hidden) {
  int64_t n = tensorType(products).getDimSize(0);
  return extractBox(b, loc, products, {0, g * hidden}, {n, hidden}, {n, hidden});
}

class Unroller {
public:
  Unroller(OpBuilder &b, sym::RNNOp op) : b(b), loc(op.getLoc()), op(op) {
    RankedTensorType data = tensorType(op.getData());
    steps = data.getDimSize(0);
    batch = data.getDimSize(1);
    hidden = op.getStateSize();
    element = data.getElementType();
  }

  /// One step: the i2h product of step t (N, gates * H), the h2h product
  /// of the previous state, and the biases.
  StepState step(Value x, Value h, const StepState &previous, const CellWeights &w) {
    auto stateType = RankedTensorType::get({batch, hidden}, element);
    auto gateValue = [&](int64_t g, ScalarFn activation) {
      SmallVector<Value> inputs{gate(b, loc, x, g, hidden), gate(b, loc, h, g, hidden), biasGate(w.i2hBias, g),
                        biasGate(w.h2hBias, g)};
      return mapElementwise(b, loc, stateType, inputs, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value sum = add(nb, l, add(nb, l, add(nb, l, a[0], a[1]), a[2]), a[3]);
        return activation(nb, l, ValueRange{sum});
      });
    };
    ScalarFn sigmoidFn = [](OpBuilder &nb, Location l, ValueRange a) { return sigmoid(nb, l, a[0]); };
    ScalarFn tanhFn = [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return nb.create<math::TanhOp>(l, a[0]);
    };
    StringRef mode = op.getMode();
    if (mode == "lstm") {
      Value i = gateValue(0, sigmoidFn), f = gateValue(1, sigmoidFn), g = gateValue(2, tanhFn),
            o = gateValue(3, sigmoidFn);
      Value c = mapElementwise(b, loc, stateType, ValueRange{previous.c, f, i, g},
                               [](OpBuilder &nb, Location l, ValueRange a) {
                                 return add(nb, l, mul(nb, l, a[0], a[1]), mul(nb, l, a[2], a[3]));
                               });
      Value next = mapElementwise(b, loc, stateType, ValueRange{o, c}, [](OpBuilder &nb, Location l, ValueRange a) {
        return mul(nb, l, a[0], nb.create<math::TanhOp>(l, a[1]));
      });
      return {next, c};
    }
    if (mode == "gru")
      return {gruStep(x, h, previous.h, w, stateType, sigmoidFn), Value()};
    // rnn_tanh, rnn_relu: act(x + bx + h + bh).
    SmallVector<Value> inputs{gate(b, loc, x, 0, hidden), biasGate(w.i2hBias, 0), gate(b, loc, h, 0, hidden),
                      biasGate(w.h2hBias, 0)};
    bool relu = mode == "rnn_relu";
    Value next = mapElementwise(b, loc, stateType, inputs, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value sum = add(nb, l, add(nb, l, add(nb, l, a[0], a[1]), a[2]), a[3]);
      if (relu)
        return max(nb, l, sum, scalarConstant(nb, l, sum.getType(), 0.0));
      return nb.create<math::TanhOp>(l, sum);
    });
    return {next, Value()};
  }

  /// r and z as LSTM's gates; n = tanh(x_n + b_xn + r * (h_n + b_hn));
  /// h' = (1 - z) * n + z * h.
  Value gruStep(Value x, Value h, Value previous, const CellWeights &w, RankedTensorType stateType,
                ScalarFn sigmoidFn) {
    auto sigmoidGate = [&](int64_t g) {
      SmallVector<Value> inputs{gate(b, loc, x, g, hidden), gate(b, loc, h, g, hidden), biasGate(w.i2hBias, g),
                        biasGate(w.h2hBias, g)};
      return mapElementwise(b, loc, stateType, inputs, [&](OpBuilder &nb, Location l, ValueRange a) {
        return sigmoidFn(nb, l, ValueRange{add(nb, l, add(nb, l, add(nb, l, a[0], a[1]), a[2]), a[3])});
      });
    };
    Value r = sigmoidGate(0), z = sigmoidGate(1);
    SmallVector<Value> inputs{gate(b, loc, x, 2, hidden), biasGate(w.i2hBias, 2), r, gate(b, loc, h, 2, hidden),
                      biasGate(w.h2hBias, 2), z, previous};
    return mapElementwise(b, loc, stateType, inputs, [](OpBuilder &nb, Location l, ValueRange a) {
      Value n = nb.create<math::TanhOp>(l, add(nb, l, add(nb, l, a[0], a[1]), mul(nb, l, a[2], add(nb, l, a[3], a[4]))));
      Value one = scalarConstant(nb, l, a[5].getType(), 1.0);
      return add(nb, l, mul(nb, l, sub(nb, l, one, a[5]), n), mul(nb, l, a[5], a[6]));
    });
  }

  Value biasGate(Value bias, int64_t g) { return extractBox(b, loc, bias, {g * hidden}, {hidden}, {hidden}); }

  Lowered run() {
    if (op.getProjectionSize() || op.getUseSequenceLength() || op.getLstmStateClipMin() || op.getLstmStateClipMax())
      return op.emitError("RNN with projection_size, use_sequence_length or lstm_state_clip_* is not supported yet");
    if (sym::runsInTraining(op))
      return op.emitError("RNN's dropout between layers (p > 0) in training is not supported yet");
    int64_t directions = op.numDirections(), layers = op.getNumLayers(), rows = op.gateRows();
    int64_t input = tensorType(op.getData()).getDimSize(2);
    int64_t weights = (input + hidden) * rows * directions + (layers - 1) * (directions * hidden + hidden) * rows * directions;
    ParameterReader params(b, loc, op.getParameters(), weights);
    int64_t states = layers * directions;
    Value layerInput = reshapeTo(b, loc, op.getData(), {steps * batch, input});
    Value output, finalStates = emptyTensor(b, loc, {states, batch, hidden}, element),
                  finalCells = emptyTensor(b, loc, {states, batch, hidden}, element);
    for (int64_t l = 0; l < layers; ++l) {
      output = emptyTensor(b, loc, {steps, batch, directions * hidden}, element);
      for (int64_t d = 0; d < directions; ++d) {
        CellWeights w = params.next(rows, l == 0 ? input : directions * hidden, hidden);
        int64_t s = l * directions + d;
        StepState state{initial(op.getState(), s), op.isLstm() ? initial(op.getStateCell(), s) : Value()};
        Value projected = matmulTransposedB(b, loc, layerInput, w.i2h); // (T * N, rows)
        for (int64_t i = 0; i < steps; ++i) {
          int64_t t = d ? steps - 1 - i : i;
          Value x = extractBox(b, loc, projected, {t * batch, 0}, {batch, rows}, {batch, rows});
          state = step(x, matmulTransposedB(b, loc, state.h, w.h2h), state, w);
          output = insertBox(b, loc, state.h, output, {t, 0, d * hidden}, {1, batch, hidden});
        }
        finalStates = insertBox(b, loc, state.h, finalStates, {s, 0, 0}, {1, batch, hidden});
        if (state.c)
          finalCells = insertBox(b, loc, state.c, finalCells, {s, 0, 0}, {1, batch, hidden});
      }
      layerInput = reshapeTo(b, loc, output, {steps * batch, directions * hidden});
    }
    SmallVector<Value> results{output};
    if (op.getStateOutputs())
      results.push_back(finalStates);
    if (op.getStateOutputs() && op.isLstm())
      results.push_back(finalCells);
    return results;
  }

private:
  /// State `s` of a (L * D, N, H) state input.
  Value initial(Value states, int64_t s) { return extractBox(b, loc, states, {s, 0, 0}, {1, batch, hidden}, {batch, hidden}); }

  OpBuilder &b;
  Location loc;
  sym::RNNOp op;
  int64_t steps, batch, hidden;
  Type element;
};

} // namespace

std::optional<Lowered> lowerRecurrentOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::RNNOp o) { return Unroller(b, o).run(); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
