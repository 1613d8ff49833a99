//===- Sort.cpp - argsort along rows --------------------------------------===//
//
// MXNet's argsort (TopKSort in src/operator/tensor/ordering_op-inl.h) sorts
// each row's indices by value with std::sort, which leaves the order of
// equal values unspecified; here equal values keep their input order (a
// stable sort), so the result is deterministic. Rows run on OpenMP threads.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

template <typename T>
void argsortRows(const T *data, int64_t *indices, int64_t *scratch, int64_t rows, int64_t n, bool ascend) {
#pragma omp parallel for schedule(dynamic)
  for (int64_t r = 0; r < rows; ++r) {
    const T *values = data + r * n;
    int64_t *row = indices + r * n;
    for (int64_t i = 0; i < n; ++i)
      row[i] = i;
    if (ascend)
      symc::kernels::stableSort(row, scratch + r * n, n, [&](int64_t a, int64_t b) { return values[a] < values[b]; });
    else
      symc::kernels::stableSort(row, scratch + r * n, n, [&](int64_t a, int64_t b) { return values[a] > values[b]; });
  }
}

} // namespace

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
