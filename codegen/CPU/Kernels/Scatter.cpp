//===- Scatter.cpp - rows summed into positions ---------------------------===//
//
// The gradient of gathers (gather_nd, take, topk) and topk's mask: row i of `grad` is added to row
// rows[i] of the result, in order, on one thread (rows may repeat).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

template <typename T>
void scatterAddRows(const T *grad, const int64_t *rows, T *out, int64_t count, int64_t width, int64_t outRows) {
  for (int64_t i = 0; i < outRows * width; ++i)
    out[i] = T(0);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t c = 0; c < width; ++c)
      out[rows[i] * width + c] += grad[i * width + c];
}

} // namespace

// rows: `count` entries in [0, outRows).
#define SYMC_SCATTER_ADD(T, suffix)                                                                               \
  extern "C" void symc_scatter_add_rows_##suffix(SYMC_BUFFER(const T, grad), SYMC_BUFFER(const int64_t, rows),   \
                                                 SYMC_BUFFER(T, out), int64_t count, int64_t width,              \
                                                 int64_t outRows) {                                               \
    scatterAddRows(SYMC_DATA(grad), SYMC_DATA(rows), SYMC_DATA(out), count, width, outRows);                      \
  }

SYMC_SCATTER_ADD(float, f32)
SYMC_SCATTER_ADD(double, f64)
SYMC_SCATTER_ADD(int32_t, i32)
SYMC_SCATTER_ADD(int64_t, i64)
