//===- KernelABI.h - how generated code passes buffers to kernels -*- C++ -*-===//
//
// The kernels in this folder are compiled to LLVM bitcode when symc is built
// and linked into each artifact that calls one (KernelLibrary.cpp). Generated
// code calls them as MLIR's func-to-llvm lowers a call whose operands are
// memref<?xT>: each buffer arrives as five arguments (allocated and aligned
// pointers, offset, size, stride), always contiguous and flattened to 1-d.
// Integer parameters arrive as int64_t, real ones as float, as the lowering
// (codegen/CPU/LowerDetection.cpp) builds the call.
//
// Kernels are freestanding: no C++ library, no allocation. Scratch memory is a
// buffer the caller passes, planned with the rest of the workspace.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_CPU_KERNELS_KERNELABI_H
#define SYMC_CODEGEN_CPU_KERNELS_KERNELABI_H

#include "runtime/include/symc/ArtifactABI.h"
#include <stdint.h>

#define SYMC_BUFFER(T, name)                                                                       \
  T *name##_allocated, T *name##_aligned, int64_t name##_offset, int64_t name##_size,              \
      int64_t name##_stride
#define SYMC_DATA(name) (name##_aligned + name##_offset)

namespace symc::kernels {

/// Runs body(i) for each i in [0, count) on libsymrt's threads.
template <typename Body> void parallelFor(int64_t count, Body body) {
  symcParallelFor(
      [](void *context, int64_t begin, int64_t end) {
        Body &body = *static_cast<Body *>(context);
        for (int64_t i = begin; i < end; ++i)
          body(i);
      },
      &body, count);
}

/// Sorts `items` stably by `less` (a merge sort), using `scratch` of the
/// same length.
template <typename T, typename Less> void stableSort(T *items, T *scratch, int64_t n, Less less) {
  constexpr int64_t kRun = 16;
  for (int64_t start = 0; start < n; start += kRun) { // insertion-sorted runs
    int64_t end = start + kRun < n ? start + kRun : n;
    for (int64_t i = start + 1; i < end; ++i) {
      T item = items[i];
      int64_t j = i;
      for (; j > start && less(item, items[j - 1]); --j)
        items[j] = items[j - 1];
      items[j] = item;
    }
  }
  T *from = items, *to = scratch;
  for (int64_t width = kRun; width < n; width *= 2) {
    for (int64_t left = 0; left < n; left += 2 * width) {
      int64_t middle = left + width < n ? left + width : n;
      int64_t right = left + 2 * width < n ? left + 2 * width : n;
      int64_t i = left, j = middle, k = left;
      while (i < middle && j < right) // ties take the left run's item first
        to[k++] = less(from[j], from[i]) ? from[j++] : from[i++];
      while (i < middle)
        to[k++] = from[i++];
      while (j < right)
        to[k++] = from[j++];
    }
    T *swap = from;
    from = to;
    to = swap;
  }
  if (from != items)
    for (int64_t i = 0; i < n; ++i)
      items[i] = from[i];
}

} // namespace symc::kernels

#endif
