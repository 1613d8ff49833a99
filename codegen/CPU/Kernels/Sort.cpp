//===- Sort.cpp - sorting and searching along rows ------------------------===//
//
// MXNet's argsort, sort and topk (TopKSort in src/operator/tensor/ordering_op-inl.h) sorts
// each row's indices by value with std::sort, which leaves the order of
// equal values unspecified; here equal values keep their input order (a
// stable sort), so the result is deterministic. argmax and argmin return
// the first extreme. Rows run on libsymrt's threads.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

template <typename T>
void argsortRows(const T *data, int64_t *indices, int64_t *scratch, int64_t rows, int64_t n, bool ascend) {
  symc::kernels::parallelFor(rows, [&](int64_t r) {
    const T *values = data + r * n;
    int64_t *row = indices + r * n;
    for (int64_t i = 0; i < n; ++i)
      row[i] = i;
    if (ascend)
      symc::kernels::stableSort(row, scratch + r * n, n, [&](int64_t a, int64_t b) { return values[a] < values[b]; });
    else
      symc::kernels::stableSort(row, scratch + r * n, n, [&](int64_t a, int64_t b) { return values[a] > values[b]; });
  });
}

/// The index of each row's first maximum or minimum (`better` than the
/// best so far), as MXNet's reduce_with_axis finds it: a NaN, once reached,
/// is the answer.
template <typename T, typename Better>
void searchRows(const T *data, int64_t *out, int64_t rows, int64_t n, Better better) {
  symc::kernels::parallelFor(rows, [&](int64_t r) {
    const T *values = data + r * n;
    T best = values[0];
    int64_t at = 0;
    for (int64_t i = 1; i < n && best == best; ++i)
      if (better(values[i], best)) {
        best = values[i];
        at = i;
      }
    out[r] = at;
  });
}

} // namespace

// !(best >= x): x is larger, or NaN.
#define SYMC_SEARCH(T, suffix)                                                                                    \
  extern "C" void symc_argmax_rows_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(int64_t, out), int64_t rows,  \
                                            int64_t n) {                                                          \
    searchRows(SYMC_DATA(data), SYMC_DATA(out), rows, n, [](T x, T best) { return !(best >= x); });               \
  }                                                                                                               \
  extern "C" void symc_argmin_rows_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(int64_t, out), int64_t rows,  \
                                            int64_t n) {                                                          \
    searchRows(SYMC_DATA(data), SYMC_DATA(out), rows, n, [](T x, T best) { return !(best <= x); });               \
  }

SYMC_SEARCH(float, f32)
SYMC_SEARCH(double, f64)
SYMC_SEARCH(int32_t, i32)
SYMC_SEARCH(int64_t, i64)

// scratch: as many entries as indices.
#define SYMC_ARGSORT(T, suffix)                                                                                   \
  extern "C" void symc_argsort_rows_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(int64_t, indices),          \
                                             SYMC_BUFFER(int64_t, scratch), int64_t rows, int64_t n,             \
                                             int64_t ascend) {                                                    \
    argsortRows(SYMC_DATA(data), SYMC_DATA(indices), SYMC_DATA(scratch), rows, n, ascend != 0);                   \
  }

SYMC_ARGSORT(float, f32)
SYMC_ARGSORT(double, f64)
SYMC_ARGSORT(int32_t, i32)
SYMC_ARGSORT(int64_t, i64)
