//===- BoxNms.cpp - _contrib_box_nms and its gradient ----------------------===//
//
// MXNet's BoxNMSForward (src/operator/contrib/bounding_box-inl.h) on one
// thread: per batch, the boxes whose score passes valid_thresh (and whose
// class is not background_id) sorted by descending score, ties in input
// order; the first topk of them suppress, in that order, later ones of the
// same class (or of any class with force_suppress) whose IoU exceeds
// overlap_thresh. Survivors fill the output's first rows, the rest is -1,
// and `record` keeps each output row's input row for the gradient.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

enum BoxFormat : int64_t { kCorner = 0, kCenter = 1 };

/// The overlap of two boxes along one axis: coordinates 0 and 2 of `a`, `b`.
template <typename T> T intersect(const T *a, const T *b, int64_t format) {
  T left, right;
  if (format == kCorner) {
    left = a[0] > b[0] ? a[0] : b[0];
    right = a[2] < b[2] ? a[2] : b[2];
  } else {
    T aw = a[2] / 2, bw = b[2] / 2;
    T al = a[0] - aw, ar = a[0] + aw, bl = b[0] - bw, br = b[0] + bw;
    left = bl > al ? bl : al;
    right = br < ar ? br : ar;
  }
  T w = right - left;
  return w > 0 ? w : T(0);
}

template <typename T> T area(const T *box, int64_t format) {
  T width = format == kCorner ? box[2] - box[0] : box[2];
  T height = format == kCorner ? box[3] - box[1] : box[3];
  return width < 0 || height < 0 ? T(0) : width * height;
}

/// Converts a box in place unless it is a -1 row (its first coordinate < 0,
/// as MXNet tests).
template <typename T> void convert(T *box, int64_t to) {
  if (box[0] < 0)
    return;
  T a = box[0], b = box[1], c = box[2], d = box[3];
  if (to == kCenter) {
    box[0] = (a + c) / 2;
    box[1] = (b + d) / 2;
    box[2] = c - a;
    box[3] = d - b;
  } else {
    box[0] = a - c / 2;
    box[1] = b - d / 2;
    box[2] = a + c / 2;
    box[3] = b + d / 2;
  }
}

struct NmsParams {
  int64_t batches, boxes, width, topk, coordStart, scoreIndex, idIndex, backgroundId, forceSuppress, inFormat,
      outFormat;
  float overlapThresh, validThresh;
};

/// One batch of `p.boxes` rows at `data`; `order` and `scratch` hold
/// `p.boxes` row numbers, `areas` as many values. Returns the survivors in
/// `order`'s first entries (their count), as rows of the whole input.
template <typename T>
int64_t suppress(const T *data, int64_t firstRow, int32_t *order, int32_t *scratch, T *areas, const NmsParams &p) {
  auto row = [&](int32_t r) { return data + (r - firstRow) * p.width; };
  int64_t valid = 0;
  for (int64_t i = 0; i < p.boxes; ++i) {
    const T *box = data + i * p.width;
    bool keep = box[p.scoreIndex] > T(p.validThresh);
    if (p.idIndex >= 0)
      keep = keep && box[p.idIndex] != T(p.backgroundId);
    if (keep)
      order[valid++] = static_cast<int32_t>(firstRow + i);
  }
  symc::kernels::stableSort(order, scratch, valid,
                            [&](int32_t a, int32_t b) { return row(a)[p.scoreIndex] > row(b)[p.scoreIndex]; });
  int64_t k = valid < p.topk ? valid : p.topk;
  for (int64_t j = 0; j < k; ++j)
    areas[j] = area(row(order[j]) + p.coordStart, p.inFormat);
  bool byClass = !p.forceSuppress && p.idIndex >= 0;
  for (int64_t ref = 0; ref < k; ++ref) {
    if (order[ref] < 0)
      continue;
    const T *a = row(order[ref]);
    for (int64_t pos = ref + 1; pos < k; ++pos) {
      if (order[pos] < 0)
        continue;
      const T *b = row(order[pos]);
      if (byClass && static_cast<int32_t>(a[p.idIndex]) != static_cast<int32_t>(b[p.idIndex]))
        continue;
      T overlap = intersect(a + p.coordStart, b + p.coordStart, p.inFormat) *
                  intersect(a + p.coordStart + 1, b + p.coordStart + 1, p.inFormat);
      if (overlap / (areas[ref] + areas[pos] - overlap) > T(p.overlapThresh))
        order[pos] = -1;
    }
  }
  int64_t survivors = 0;
  for (int64_t j = 0; j < k; ++j)
    if (order[j] >= 0)
      order[survivors++] = order[j];
  return survivors;
}

template <typename T>
void boxNms(const T *data, T *out, T *record, int32_t *order, T *areas, const NmsParams &p) {
  int64_t rows = p.batches * p.boxes;
  int64_t topk = p.topk < 0 || p.topk > p.boxes ? p.boxes : p.topk;
  if (topk < 1) { // MXNet passes everything through, unsorted
    for (int64_t i = 0; i < rows * p.width; ++i)
      out[i] = data[i];
    for (int64_t i = 0; i < rows; ++i)
      record[i] = static_cast<T>(i);
    return;
  }
  NmsParams batch = p;
  batch.topk = topk;
  for (int64_t i = 0; i < rows * p.width; ++i)
    out[i] = T(-1);
  for (int64_t i = 0; i < rows; ++i)
    record[i] = T(-1);
  for (int64_t b = 0; b < p.batches; ++b) {
    int64_t first = b * p.boxes;
    int64_t survivors = suppress(data + first * p.width, first, order, order + p.boxes, areas, batch);
    for (int64_t j = 0; j < survivors; ++j) {
      const T *from = data + order[j] * p.width;
      T *to = out + (first + j) * p.width;
      for (int64_t c = 0; c < p.width; ++c)
        to[c] = from[c];
      record[first + j] = static_cast<T>(order[j]);
    }
  }
  if (p.inFormat != p.outFormat)
    for (int64_t i = 0; i < rows; ++i)
      convert(out + i * p.width + p.coordStart, p.outFormat);
}

/// in_grad rows get the out_grad rows that `record` says they became.
template <typename T> void boxNmsBackward(const T *outGrad, const T *record, T *inGrad, int64_t rows, int64_t width) {
  for (int64_t i = 0; i < rows * width; ++i)
    inGrad[i] = T(0);
  for (int64_t i = 0; i < rows; ++i) {
    int64_t from = static_cast<int64_t>(record[i]);
    if (from < 0)
      continue;
    for (int64_t c = 0; c < width; ++c)
      inGrad[from * width + c] = outGrad[i * width + c];
  }
}

} // namespace

// order: 2 * boxes entries; areas: boxes entries.
#define SYMC_BOX_NMS(T, suffix)                                                                                   \
  extern "C" void symc_box_nms_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(T, out), SYMC_BUFFER(T, record), \
                                        SYMC_BUFFER(int32_t, order), SYMC_BUFFER(T, areas), int64_t batches,     \
                                        int64_t boxes, int64_t width, int64_t topk, int64_t coordStart,           \
                                        int64_t scoreIndex, int64_t idIndex, int64_t backgroundId,                \
                                        int64_t forceSuppress, int64_t inFormat, int64_t outFormat,               \
                                        float overlapThresh, float validThresh) {                                 \
    NmsParams p{batches,      boxes,         width,       topk,     coordStart, scoreIndex, idIndex,             \
                backgroundId, forceSuppress, inFormat,    outFormat, overlapThresh, validThresh};                 \
    boxNms(SYMC_DATA(data), SYMC_DATA(out), SYMC_DATA(record), SYMC_DATA(order), SYMC_DATA(areas), p);           \
  }                                                                                                               \
  extern "C" void symc_box_nms_backward_##suffix(SYMC_BUFFER(const T, outGrad), SYMC_BUFFER(const T, record),    \
                                                 SYMC_BUFFER(T, inGrad), int64_t rows, int64_t width) {          \
    boxNmsBackward(SYMC_DATA(outGrad), SYMC_DATA(record), SYMC_DATA(inGrad), rows, width);                      \
  }

SYMC_BOX_NMS(float, f32)
SYMC_BOX_NMS(double, f64)
