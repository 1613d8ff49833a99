//===- RoiPooling.cpp - ROIPooling and its gradient ------------------------===//
//
// MXNet's ROIPoolForward / ROIPoolBackwardAcc (src/operator/roi_pooling.cc)
// with the same arithmetic: each roi's corners are scaled and rounded, its
// (h, w) split into pooled_size bins whose bounds are floored and ceiled, and
// each bin takes the first strict maximum from -FLT_MAX, recording its flat
// position in data (maxidx). Empty bins and rois of no image give 0 and -1.
// The backward adds each bin's gradient at its maximum, in output order, on
// one thread. Coordinates are clamped before their conversion to int, where
// MXNet's casts of huge or NaN values are undefined.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

struct PoolParams {
  int64_t batch, channels, height, width, pooledHeight, pooledWidth, rois;
  float spatialScale;
};

/// static_cast<int>, saturating, NaN to 0.
template <typename T> int64_t toInt(T v) {
  if (!(v == v))
    return 0;
  if (v > T(1 << 30))
    return 1 << 30;
  if (v < -T(1 << 30))
    return -(1 << 30);
  return static_cast<int64_t>(v);
}

/// std::round: halfway cases away from zero.
template <typename T> int64_t roundToInt(T v) {
  int64_t whole = toInt(v);
  T rest = v - static_cast<T>(whole);
  if (rest >= T(0.5))
    return whole + 1;
  if (rest <= T(-0.5))
    return whole - 1;
  return whole;
}

template <typename T> int64_t floorToInt(T v) {
  int64_t i = toInt(v);
  return static_cast<T>(i) > v ? i - 1 : i;
}

template <typename T> int64_t ceilToInt(T v) {
  int64_t i = toInt(v);
  return static_cast<T>(i) < v ? i + 1 : i;
}

int64_t clamp(int64_t v, int64_t low, int64_t high) { return v < low ? low : (v > high ? high : v); }

template <typename T> void roiPool(const T *data, const T *rois, T *out, int32_t *maxIdx, const PoolParams &p) {
  int64_t bins = p.pooledHeight * p.pooledWidth, plane = p.height * p.width;
  symc::kernels::parallelFor(p.rois, [&](int64_t n) {
    const T *roi = rois + n * 5;
    T scale = static_cast<T>(p.spatialScale);
    int64_t startW = roundToInt(roi[1] * scale), startH = roundToInt(roi[2] * scale);
    int64_t endW = roundToInt(roi[3] * scale), endH = roundToInt(roi[4] * scale);
    int64_t image = static_cast<int64_t>(static_cast<int>(toInt(roi[0])));
    bool noImage = image < 0 || image >= p.batch;
    int64_t roiHeight = endH - startH + 1 > 1 ? endH - startH + 1 : 1; // malformed rois are 1 x 1
    int64_t roiWidth = endW - startW + 1 > 1 ? endW - startW + 1 : 1;
    T binH = static_cast<T>(roiHeight) / static_cast<T>(p.pooledHeight);
    T binW = static_cast<T>(roiWidth) / static_cast<T>(p.pooledWidth);
    for (int64_t c = 0; c < p.channels; ++c) {
      int64_t planeStart = ((noImage ? 0 : image) * p.channels + c) * plane;
      const T *in = data + planeStart;
      T *top = out + (n * p.channels + c) * bins;
      int32_t *arg = maxIdx + (n * p.channels + c) * bins;
      for (int64_t ph = 0; ph < p.pooledHeight; ++ph)
        for (int64_t pw = 0; pw < p.pooledWidth; ++pw) {
          int64_t hStart = clamp(floorToInt(static_cast<T>(ph) * binH) + startH, 0, p.height);
          int64_t hEnd = clamp(ceilToInt(static_cast<T>(ph + 1) * binH) + startH, 0, p.height);
          int64_t wStart = clamp(floorToInt(static_cast<T>(pw) * binW) + startW, 0, p.width);
          int64_t wEnd = clamp(ceilToInt(static_cast<T>(pw + 1) * binW) + startW, 0, p.width);
          int64_t bin = ph * p.pooledWidth + pw;
          if (noImage || hEnd <= hStart || wEnd <= wStart) {
            top[bin] = T(0);
            arg[bin] = -1;
            continue;
          }
          T best = static_cast<T>(-3.402823466e+38f); // -FLT_MAX
          int32_t where = -1;
          for (int64_t h = hStart; h < hEnd; ++h)
            for (int64_t w = wStart; w < wEnd; ++w)
              if (in[h * p.width + w] > best) {
                best = in[h * p.width + w];
                where = static_cast<int32_t>(planeStart + h * p.width + w);
              }
          top[bin] = best;
          arg[bin] = where;
        }
    }
  });
}

template <typename T>
void roiPoolBackward(const T *outGrad, const int32_t *maxIdx, T *dataGrad, int64_t outSize, int64_t dataSize) {
  for (int64_t i = 0; i < dataSize; ++i)
    dataGrad[i] = T(0);
  for (int64_t i = 0; i < outSize; ++i)
    if (maxIdx[i] >= 0)
      dataGrad[maxIdx[i]] += outGrad[i];
}

} // namespace

#define SYMC_ROI_POOLING(T, suffix)                                                                               \
  extern "C" void symc_roi_pooling_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(const T, rois),              \
                                            SYMC_BUFFER(T, out), SYMC_BUFFER(int32_t, maxIdx), int64_t batch,    \
                                            int64_t channels, int64_t height, int64_t width,                     \
                                            int64_t pooledHeight, int64_t pooledWidth, int64_t numRois,          \
                                            float spatialScale) {                                                 \
    PoolParams p{batch, channels, height, width, pooledHeight, pooledWidth, numRois, spatialScale};               \
    roiPool(SYMC_DATA(data), SYMC_DATA(rois), SYMC_DATA(out), SYMC_DATA(maxIdx), p);                              \
  }                                                                                                               \
  extern "C" void symc_roi_pooling_backward_##suffix(SYMC_BUFFER(const T, outGrad),                              \
                                                     SYMC_BUFFER(const int32_t, maxIdx),                         \
                                                     SYMC_BUFFER(T, dataGrad)) {                                  \
    roiPoolBackward(SYMC_DATA(outGrad), SYMC_DATA(maxIdx), SYMC_DATA(dataGrad), outGrad_size, dataGrad_size);    \
  }

SYMC_ROI_POOLING(float, f32)
SYMC_ROI_POOLING(double, f64)
