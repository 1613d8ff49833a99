//===- LowerRecurrent.cpp - MXNet's fused RNN op --------------------------===//
//
// RNN unrolls over time as MXNet's CPU kernels (src/operator/rnn_impl.h)
// compute it: per layer and direction, one product of the whole input
// sequence with the i2h weight, then per step a product of the previous
// state with the h2h weight and the gate arithmetic in MXNet's order of
// additions. The reverse direction walks the steps backwards and writes the
// second half of each output row. The gradient runs the forward again and
// walks the steps back, with per-step h2h products and one product per
// layer and direction for the i2h weight, the input and the h2h weight.
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

/// One layer's and direction's slices of the flat parameter vector, and
/// where each starts in it.
/// With projection_size P, h2h reads the projected state (gates * H, P),
/// and h2r (P, H) projects each step's state.
struct CellWeights {
  Value i2h, h2h, h2r;    // (gates * H, input), (gates * H, H or P), (P, H)
  Value i2hBias, h2hBias; // (gates * H)
  int64_t i2hAt, h2hAt, h2rAt, i2hBiasAt, h2hBiasAt;
};

/// Reads MXNet's parameter layout in order: all weights (i2h, h2h, h2r per
/// layer and direction), then all biases.
class ParameterReader {
public:
  ParameterReader(OpBuilder &b, Location loc, Value flat, int64_t biasStart)
      : b(b), loc(loc), flat(flat), biasOffset(biasStart) {}

  CellWeights next(int64_t rows, int64_t input, int64_t hidden, int64_t projection) {
    CellWeights w;
    w.i2h = take(weightOffset, {rows, input}, w.i2hAt);
    w.h2h = take(weightOffset, {rows, projection ? projection : hidden}, w.h2hAt);
    if (projection)
      w.h2r = take(weightOffset, {projection, hidden}, w.h2rAt);
    w.i2hBias = take(biasOffset, {rows}, w.i2hBiasAt);
    w.h2hBias = take(biasOffset, {rows}, w.h2hBiasAt);
    return w;
  }

private:
  Value take(int64_t &offset, ArrayRef<int64_t> shape, int64_t &at) {
    int64_t size = ShapedType::getNumElements(shape);
    Value v = extractBox(b, loc, flat, {offset}, {size}, shape);
    at = offset;
    offset += size;
    return v;
  }

  OpBuilder &b;
  Location loc;
  Value flat;
  int64_t weightOffset = 0, biasOffset;
};

/// One step of a cell: its state (N, H), or (N, P) projected, (c only for
/// LSTM), and what the gradient reads again: the activated gates (lstm i,
/// f, g, o; gru r, z, n), gru's h2h product of its n gate plus bias, and
/// with a projection the state before it (N, H), with a state clip the cell
/// before it.
struct StepState {
  Value h, c;
  SmallVector<Value, 4> gates;
  Value hn, unprojected, unclipped;
};

/// Gate `g`'s columns of the (N, gates * H) products.
Value gate(OpBuilder &b, Location loc, Value products, int64_t g, int64_t hidden) {
  int64_t n = tensorType(products).getDimSize(0);
  return extractBox(b, loc, products, {0, g * hidden}, {n, hidden}, {n, hidden});
}

Value tanhOf(OpBuilder &b, Location loc, Value x) { return b.create<math::TanhOp>(loc, x); }

/// A layer's and direction's forward, kept for its gradient: the weights,
/// the layer's input (T * N, input) and each step's state in the order the
/// direction walks them.
struct DirectionRecord {
  CellWeights w;
  Value input;
  SmallVector<StepState> steps;
};

/// RNN's attributes as both RNNOp and BackwardRNNOp carry them.
struct RNNShape {
  StringRef mode;
  int64_t steps, batch, input, hidden, layers, directions, rows, projection;
  std::optional<double> clipMin, clipMax; // both or neither (the verifier)
  bool clipNan;
  Type element;

  template <typename OpTy> static RNNShape of(OpTy op) {
    RankedTensorType data = tensorType(op->getOperand(0));
    RNNShape s;
    s.mode = op.getMode();
    s.steps = data.getDimSize(0);
    s.batch = data.getDimSize(1);
    s.input = data.getDimSize(2);
    s.hidden = op.getStateSize();
    s.layers = op.getNumLayers();
    s.directions = op.numDirections();
    s.rows = op.gateRows();
    s.projection = op.getProjectionSize().value_or(0);
    s.clipMin = op.getLstmStateClipMin();
    s.clipMax = op.getLstmStateClipMax();
    s.clipNan = op.getLstmStateClipNan();
    s.element = data.getElementType();
    return s;
  }
  int64_t states() const { return layers * directions; }
  /// The width of the state each step passes on and outputs.
  int64_t stateWidth() const { return projection ? projection : hidden; }
  int64_t layerInput(int64_t l) const { return l == 0 ? input : directions * stateWidth(); }
  /// Where the biases start: after every layer's and direction's weights.
  int64_t biasStart() const {
    int64_t size = 0;
    for (int64_t l = 0; l < layers; ++l)
      size += ((layerInput(l) + stateWidth()) * rows + projection * hidden) * directions;
    return size;
  }
};

class Unroller {
public:
  /// With `lengths` (use_sequence_length), row n runs its first lengths[n]
  /// steps (the reverse direction from its last one); past them its state
  /// stays and its output is 0: cuDNN's padded layout, which MXNet's GPU RNN
  /// uses (its CPU RNN refuses lengths).
  /// `dropout`: the op whose draws mask each layer's output but the last,
  /// as MXNet's training forward does (p > 0); null without dropout.
  Unroller(OpBuilder &b, Location loc, const RNNShape &shape, Value lengths, Operation *dropout, double p)
      : b(b), loc(loc), s(shape), lengths(lengths), dropout(dropout), p(p) {}

  /// The forward: the output (T, N, D * H) (D * P projected), the final
  /// states (L * D, N, H or P) and cells (L * D, N, H), and each layer's and
  /// direction's record.
  struct Forward {
    Value output, states, cells;
    SmallVector<DirectionRecord> records; // layer-major
    SmallVector<Value> masks;             // layer l's dropout mask (T * N, D * width)
  };

  Forward run(Value data, Value parameters, Value initialStates, Value initialCells) {
    ParameterReader params(b, loc, parameters, s.biasStart());
    Forward f;
    Value layerInput = reshapeTo(b, loc, data, {s.steps * s.batch, s.input});
    int64_t width = s.stateWidth();
    f.states = emptyTensor(b, loc, {s.states(), s.batch, width}, s.element);
    f.cells = emptyTensor(b, loc, {s.states(), s.batch, s.hidden}, s.element);
    for (int64_t l = 0; l < s.layers; ++l) {
      f.output = emptyTensor(b, loc, {s.steps, s.batch, s.directions * width}, s.element);
      for (int64_t d = 0; d < s.directions; ++d) {
        DirectionRecord r{params.next(s.rows, s.layerInput(l), s.hidden, s.projection), layerInput, {}};
        int64_t k = l * s.directions + d;
        StepState state{initial(initialStates, k), initialCells ? initial(initialCells, k) : Value(), {}, {}, {}, {}};
        Value projected = matmulTransposedB(b, loc, layerInput, r.w.i2h); // (T * N, rows)
        for (int64_t i = 0; i < s.steps; ++i) {
          int64_t t = d ? s.steps - 1 - i : i;
          Value x = extractBox(b, loc, projected, {t * s.batch, 0}, {s.batch, s.rows}, {s.batch, s.rows});
          StepState next = step(x, matmulTransposedB(b, loc, state.h, r.w.h2h), state, r.w);
          Value output = next.h;
          if (lengths) {
            output = withinLengthOrZero(t, next.h);
            next.h = withinLength(t, next.h, state.h);
            if (next.c)
              next.c = withinLength(t, next.c, state.c);
          }
          state = next;
          r.steps.push_back(state);
          f.output = insertBox(b, loc, output, f.output, {t, 0, d * width}, {1, s.batch, width});
        }
        f.states = insertBox(b, loc, state.h, f.states, {k, 0, 0}, {1, s.batch, width});
        if (state.c)
          f.cells = insertBox(b, loc, state.c, f.cells, {k, 0, 0}, {1, s.batch, s.hidden});
        f.records.push_back(std::move(r));
      }
      layerInput = reshapeTo(b, loc, f.output, {s.steps * s.batch, s.directions * width});
      if (dropout && l + 1 < s.layers) {
        f.masks.push_back(dropoutMask(b, dropout, tensorType(layerInput), p, l + 1));
        layerInput = mulTensors(layerInput, f.masks.back());
      }
    }
    return f;
  }

  /// The gradients of data, parameters, state and cell (null without a
  /// cell) from those of the output, final states and cells (null: zero).
  SmallVector<Value> backward(Forward &f, Value parameters, Value state, Value cell, Value outGrad,
                              Value statesGrad, Value cellsGrad) {
    int64_t width = s.stateWidth();
    Value paramGrad = zeros(b, loc, tensorType(parameters).getShape(), s.element);
    Value stateGrad = emptyTensor(b, loc, {s.states(), s.batch, width}, s.element);
    Value cellGrad = cell ? emptyTensor(b, loc, {s.states(), s.batch, s.hidden}, s.element) : Value();
    Value outputGrad = reshapeTo(b, loc, outGrad, {s.steps * s.batch, s.directions * width});
    for (int64_t l = s.layers - 1; l >= 0; --l) {
      Value inputGrad = zeros(b, loc, {s.steps * s.batch, s.layerInput(l)}, s.element);
      for (int64_t d = 0; d < s.directions; ++d) {
        int64_t k = l * s.directions + d;
        const DirectionRecord &r = f.records[k];
        Value dh = statesGrad ? initial(statesGrad, k) : zeros(b, loc, {s.batch, width}, s.element);
        Value dc = cell ? (cellsGrad ? initial(cellsGrad, k) : zeros(b, loc, {s.batch, s.hidden}, s.element))
                        : Value();
        Value xGates = emptyTensor(b, loc, {s.steps * s.batch, s.rows}, s.element);
        Value hGates = emptyTensor(b, loc, {s.steps * s.batch, s.rows}, s.element);
        Value previousStates = emptyTensor(b, loc, {s.steps * s.batch, width}, s.element);
        // With a projection: each step's gradient of its projected state,
        // and its state before the projection, for h2r's gradient.
        Value projectedGrads = emptyTensor(b, loc, {s.steps * s.batch, width}, s.element);
        Value unprojected = emptyTensor(b, loc, {s.steps * s.batch, s.hidden}, s.element);
        for (int64_t i = s.steps - 1; i >= 0; --i) {
          int64_t t = d ? s.steps - 1 - i : i;
          StepState previous =
              i ? r.steps[i - 1] : StepState{initial(state, k), cell ? initial(cell, k) : Value(), {}, {}, {}, {}};
          Value fromOutput =
              extractBox(b, loc, outputGrad, {t * s.batch, d * width}, {s.batch, width}, {s.batch, width});
          Value g = addTensors(withinLengthOrZero(t, fromOutput), dh);
          Value carried = g;
          if (s.projection) {
            projectedGrads =
                insertBox(b, loc, withinLengthOrZero(t, g), projectedGrads, {t * s.batch, 0}, {s.batch, width});
            unprojected = insertBox(b, loc, r.steps[i].unprojected, unprojected, {t * s.batch, 0},
                                    {s.batch, s.hidden});
            g = matmul(b, loc, g, r.w.h2r, false, false);
          }
          StepGrad grad = stepGrad(r.steps[i], previous, g, dc);
          if (lengths) { // rows past their length pass the gradients on
            Value none = zeros(b, loc, {s.batch, s.rows}, s.element);
            grad.xGates = withinLength(t, grad.xGates, none);
            grad.hGates = withinLength(t, grad.hGates, none);
          }
          dh = withinLength(t, addTensors(grad.direct, matmul(b, loc, grad.hGates, r.w.h2h, false, false)), carried);
          dc = dc ? withinLength(t, grad.c, dc) : Value();
          xGates = insertBox(b, loc, grad.xGates, xGates, {t * s.batch, 0}, {s.batch, s.rows});
          hGates = insertBox(b, loc, grad.hGates, hGates, {t * s.batch, 0}, {s.batch, s.rows});
          previousStates = insertBox(b, loc, previous.h, previousStates, {t * s.batch, 0}, {s.batch, width});
        }
        stateGrad = insertBox(b, loc, dh, stateGrad, {k, 0, 0}, {1, s.batch, width});
        if (cell)
          cellGrad = insertBox(b, loc, dc, cellGrad, {k, 0, 0}, {1, s.batch, s.hidden});
        int64_t rows = s.rows, in = s.layerInput(l);
        paramGrad = insertBox(b, loc, matmul(b, loc, xGates, r.input, true, false), paramGrad, {r.w.i2hAt},
                              {rows * in});
        paramGrad = insertBox(b, loc, matmul(b, loc, hGates, previousStates, true, false), paramGrad, {r.w.h2hAt},
                              {rows * width});
        if (s.projection)
          paramGrad = insertBox(b, loc, matmul(b, loc, projectedGrads, unprojected, true, false), paramGrad,
                                {r.w.h2rAt}, {s.projection * s.hidden});
        paramGrad = insertBox(b, loc, columnSums(xGates), paramGrad, {r.w.i2hBiasAt}, {rows});
        paramGrad = insertBox(b, loc, columnSums(hGates), paramGrad, {r.w.h2hBiasAt}, {rows});
        inputGrad = addTensors(inputGrad, matmul(b, loc, xGates, r.w.i2h, false, false));
      }
      outputGrad = l > 0 && dropout ? mulTensors(inputGrad, f.masks[l - 1]) : inputGrad;
    }
    SmallVector<Value> grads{reshapeTo(b, loc, outputGrad, {s.steps, s.batch, s.input}), paramGrad, stateGrad};
    if (cell)
      grads.push_back(cellGrad);
    return grads;
  }

private:
  /// One step: the i2h product of step t (N, gates * H), the h2h product
  /// of the previous state, and the biases, summed in MXNet's order.
  StepState step(Value x, Value h, const StepState &previous, const CellWeights &w) {
    auto activated = [&](int64_t g, bool isTanh) {
      SmallVector<Value> inputs{gate(b, loc, x, g, s.hidden), gate(b, loc, h, g, s.hidden), biasGate(w.i2hBias, g),
                                biasGate(w.h2hBias, g)};
      return map(inputs, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value sum = add(nb, l, add(nb, l, add(nb, l, a[0], a[1]), a[2]), a[3]);
        return isTanh ? tanhOf(nb, l, sum) : sigmoid(nb, l, sum);
      });
    };
    if (s.mode == "lstm") {
      Value i = activated(0, false), f = activated(1, false), g = activated(2, true), o = activated(3, false);
      Value c = map({previous.c, f, i, g}, [](OpBuilder &nb, Location l, ValueRange a) {
        return add(nb, l, mul(nb, l, a[0], a[1]), mul(nb, l, a[2], a[3]));
      });
      Value unclipped;
      if (s.clipMin)
        std::tie(unclipped, c) = std::pair(c, clipCell(c));
      Value next = map({o, c}, [](OpBuilder &nb, Location l, ValueRange a) { return mul(nb, l, a[0], tanhOf(nb, l, a[1])); });
      Value projected = s.projection ? matmulTransposedB(b, loc, next, w.h2r) : Value();
      return {projected ? projected : next, c, {i, f, g, o}, Value(), projected ? next : Value(), unclipped};
    }
    if (s.mode == "gru") {
      // n = tanh(x_n + b_xn + r * (h_n + b_hn)); h' = (1 - z) * n + z * h.
      Value r = activated(0, false), z = activated(1, false);
      Value hn = addTensors(gate(b, loc, h, 2, s.hidden), biasGate(w.h2hBias, 2));
      Value n = map({gate(b, loc, x, 2, s.hidden), biasGate(w.i2hBias, 2), r, hn},
                    [](OpBuilder &nb, Location l, ValueRange a) {
                      return tanhOf(nb, l, add(nb, l, add(nb, l, a[0], a[1]), mul(nb, l, a[2], a[3])));
                    });
      Value next = map({z, n, previous.h}, [](OpBuilder &nb, Location l, ValueRange a) {
        Value one = scalarConstant(nb, l, a[0].getType(), 1.0);
        return add(nb, l, mul(nb, l, sub(nb, l, one, a[0]), a[1]), mul(nb, l, a[0], a[2]));
      });
      return {next, Value(), {r, z, n}, hn, Value(), Value()};
    }
    // rnn_tanh, rnn_relu: act(x + b_x + h + b_h).
    bool relu = s.mode == "rnn_relu";
    Value next = map({gate(b, loc, x, 0, s.hidden), biasGate(w.i2hBias, 0), gate(b, loc, h, 0, s.hidden),
                      biasGate(w.h2hBias, 0)},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value sum = add(nb, l, add(nb, l, add(nb, l, a[0], a[1]), a[2]), a[3]);
                       return relu ? max(nb, l, sum, scalarConstant(nb, l, sum.getType(), 0.0)) : tanhOf(nb, l, sum);
                     });
    return {next, Value(), {next}, Value(), Value(), Value()};
  }

  /// A step's gradients: of its i2h and h2h pre-activations (N, gates * H),
  /// of the previous state other than through the h2h product, and of the
  /// previous cell.
  struct StepGrad {
    Value xGates, hGates, direct, c;
  };

  StepGrad stepGrad(const StepState &at, const StepState &previous, Value dh, Value dc) {
    auto gates = [&](ArrayRef<Value> parts) {
      Value all = emptyTensor(b, loc, {s.batch, s.rows}, s.element);
      for (auto [g, part] : llvm::enumerate(parts))
        all = insertBox(b, loc, part, all, {0, int64_t(g) * s.hidden}, {s.batch, s.hidden});
      return all;
    };
    auto sigmoidGrad = [](OpBuilder &nb, Location l, Value g, Value y) { // g y (1 - y)
      return mul(nb, l, mul(nb, l, g, y), sub(nb, l, scalarConstant(nb, l, y.getType(), 1.0), y));
    };
    auto tanhGrad = [](OpBuilder &nb, Location l, Value g, Value y) { // g (1 - y^2)
      return mul(nb, l, g, sub(nb, l, scalarConstant(nb, l, y.getType(), 1.0), mul(nb, l, y, y)));
    };
    if (s.mode == "lstm") {
      Value i = at.gates[0], f = at.gates[1], g = at.gates[2], o = at.gates[3];
      // h = o tanh(c): the cell's gradient, through h and from the next step.
      Value dcell = map({dh, o, at.c, dc}, [&](OpBuilder &nb, Location l, ValueRange a) {
        return add(nb, l, a[3], tanhGrad(nb, l, mul(nb, l, a[0], a[1]), tanhOf(nb, l, a[2])));
      });
      if (at.unclipped)
        dcell = clippedCellGrad(dcell, at.unclipped);
      Value di = map({dcell, g, i}, [&](OpBuilder &nb, Location l, ValueRange a) { return sigmoidGrad(nb, l, mul(nb, l, a[0], a[1]), a[2]); });
      Value df = map({dcell, previous.c, f}, [&](OpBuilder &nb, Location l, ValueRange a) { return sigmoidGrad(nb, l, mul(nb, l, a[0], a[1]), a[2]); });
      Value dg = map({dcell, i, g}, [&](OpBuilder &nb, Location l, ValueRange a) { return tanhGrad(nb, l, mul(nb, l, a[0], a[1]), a[2]); });
      Value dout = map({dh, at.c, o}, [&](OpBuilder &nb, Location l, ValueRange a) { return sigmoidGrad(nb, l, mul(nb, l, a[0], tanhOf(nb, l, a[1])), a[2]); });
      Value all = gates({di, df, dg, dout});
      return {all, all, zeros(b, loc, {s.batch, s.stateWidth()}, s.element), mulStates(dcell, f)};
    }
    if (s.mode == "gru") {
      Value r = at.gates[0], z = at.gates[1], n = at.gates[2];
      Value dn = map({dh, z, n}, [&](OpBuilder &nb, Location l, ValueRange a) {
        return tanhGrad(nb, l, mul(nb, l, a[0], sub(nb, l, scalarConstant(nb, l, a[1].getType(), 1.0), a[1])), a[2]);
      });
      Value dz = map({dh, previous.h, n, z}, [&](OpBuilder &nb, Location l, ValueRange a) {
        return sigmoidGrad(nb, l, mul(nb, l, a[0], sub(nb, l, a[1], a[2])), a[3]);
      });
      Value dr = map({dn, at.hn, r}, [&](OpBuilder &nb, Location l, ValueRange a) { return sigmoidGrad(nb, l, mul(nb, l, a[0], a[1]), a[2]); });
      return {gates({dr, dz, dn}), gates({dr, dz, mulStates(dn, r)}), mulStates(dh, z), Value()};
    }
    bool relu = s.mode == "rnn_relu";
    Value da = map({dh, at.h}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      if (!relu)
        return tanhGrad(nb, l, a[0], a[1]);
      Value positive = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, a[1], scalarConstant(nb, l, a[1].getType(), 0.0));
      return nb.create<arith::SelectOp>(l, positive, a[0], scalarConstant(nb, l, a[0].getType(), 0.0));
    });
    return {da, da, zeros(b, loc, {s.batch, s.hidden}, s.element), Value()};
  }

  /// Per row of (N, ...) tensors: `fresh` where step t is within the row's
  /// length (lengths converted to integers, as MXNet does), else `kept`; `fresh`
  /// alone without lengths.
  Value withinLength(int64_t t, Value fresh, Value kept) {
    if (!lengths)
      return fresh;
    return mapAlongAxis(b, loc, {fresh, kept}, 0, {lengths}, [t](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value length = convertScalar(nb, l, a[2], nb.getI64Type());
      Value inside = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sgt, length, i64(nb, l, t));
      return nb.create<arith::SelectOp>(l, inside, a[0], a[1]);
    });
  }

  /// withinLength against zeros, built only where there are lengths.
  Value withinLengthOrZero(int64_t t, Value fresh) {
    if (!lengths)
      return fresh;
    return withinLength(t, fresh, zeros(b, loc, tensorType(fresh).getShape(), s.element));
  }

  /// The state clip: the cell state limited to [min, max]; with clip_nan, a
  /// NaN becomes min (fmax then fmin, as cuDNN's clip, which MXNet calls).
  Value clipCell(Value c) {
    return map({c}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value lo = scalarConstant(nb, l, a[0].getType(), *s.clipMin);
      Value hi = scalarConstant(nb, l, a[0].getType(), *s.clipMax);
      if (s.clipNan)
        return nb.create<arith::MinNumFOp>(l, nb.create<arith::MaxNumFOp>(l, a[0], lo), hi);
      return min(nb, l, max(nb, l, a[0], lo), hi);
    });
  }

  /// The clip passes the gradient where the cell was inside [min, max].
  Value clippedCellGrad(Value g, Value unclipped) {
    return map({g, unclipped}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Type t = a[1].getType();
      Value above = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, a[1], scalarConstant(nb, l, t, *s.clipMin));
      Value below = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, a[1], scalarConstant(nb, l, t, *s.clipMax));
      return nb.create<arith::SelectOp>(l, nb.create<arith::AndIOp>(l, above, below), a[0],
                                        scalarConstant(nb, l, t, 0.0));
    });
  }

  Value map(ArrayRef<Value> inputs, ScalarFn fn) {
    return mapElementwise(b, loc, RankedTensorType::get({s.batch, s.hidden}, s.element), inputs, fn);
  }
  Value addTensors(Value x, Value y) { return mapElementwise(b, loc, tensorType(x), {x, y}, addFn); }
  Value mulTensors(Value x, Value y) {
    return mapElementwise(b, loc, tensorType(x), {x, y},
                          [](OpBuilder &nb, Location l, ValueRange a) { return mul(nb, l, a[0], a[1]); });
  }
  Value mulStates(Value x, Value y) {
    return map({x, y}, [](OpBuilder &nb, Location l, ValueRange a) { return mul(nb, l, a[0], a[1]); });
  }
  Value biasGate(Value bias, int64_t g) { return extractBox(b, loc, bias, {g * s.hidden}, {s.hidden}, {s.hidden}); }
  Value columnSums(Value m) { return reduce(b, loc, m, {0}, false, 0.0, addFn); }
  /// State `k` of a (L * D, N, width) state tensor.
  Value initial(Value states, int64_t k) {
    int64_t width = tensorType(states).getDimSize(2);
    return extractBox(b, loc, states, {k, 0, 0}, {1, s.batch, width}, {s.batch, width});
  }

  OpBuilder &b;
  Location loc;
  RNNShape s;
  Value lengths;
  Operation *dropout;
  double p;
};

template <typename OpTy> Unroller unrollerOf(OpBuilder &b, OpTy op) {
  return Unroller(b, op.getLoc(), RNNShape::of(op), op.getSequenceLength(),
                  sym::drawsRandomNumbers(op) ? op.getOperation() : nullptr, op.getP());
}

Lowered lowerRNN(OpBuilder &b, sym::RNNOp op) {
  Unroller::Forward f = unrollerOf(b, op).run(op.getData(), op.getParameters(), op.getState(), op.getStateCell());
  SmallVector<Value> results{f.output};
  if (op.getStateOutputs())
    results.push_back(f.states);
  if (op.getStateOutputs() && op.isLstm())
    results.push_back(f.cells);
  return results;
}

/// The forward again (MXNet keeps it in a reserve space), then back
/// through time.
Lowered lowerRNNBackward(OpBuilder &b, sym::BackwardRNNOp op) {
  ValueRange in = op.getInputs();
  Unroller unroller = unrollerOf(b, op);
  Unroller::Forward f = unroller.run(in[0], in[1], in[2], op.getStateCell());
  return unroller.backward(f, in[1], in[2], op.getStateCell(), op.getOutGrad(), op.getStateGrad(), op.getCellGrad());
}

} // namespace

std::optional<Lowered> lowerRecurrentOp(Operation *op, OpBuilder &b) {
  return llvm::TypeSwitch<Operation *, std::optional<Lowered>>(op)
      .Case([&](sym::RNNOp o) { return lowerRNN(b, o); })
      .Case([&](sym::BackwardRNNOp o) { return lowerRNNBackward(b, o); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace symc::cpu
