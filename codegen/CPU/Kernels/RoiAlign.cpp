//===- RoiAlign.cpp - _contrib_ROIAlign and its gradient -------------------===//
//
// MXNet's ROIAlignForward / ROIAlignBackward (src/operator/contrib/
// roi_align.cc) with the same arithmetic, in the same order: each output
// bin averages a grid of bilinear samples of its roi's feature map. The
// forward runs rois on libsymrt's threads; the backward accumulates into the
// data gradient in MXNet's order, on one thread. A roi whose batch index is
// negative or past the batch gives zeros (MXNet reads out of bounds there).
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

struct RoiParams {
  int64_t batch, channels, height, width, pooledHeight, pooledWidth, rois, roiCols, sampleRatio,
      positionSensitive, aligned;
  float spatialScale;
};

/// One roi in feature-map coordinates and its sampling grid.
template <typename T> struct Roi {
  int64_t image = -1; // -1: no image, the roi gives zeros
  T startH, startW, binH, binW;
  int64_t gridH, gridW;
};

template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }

template <typename T> int64_t ceilToInt(T v) {
  int64_t i = static_cast<int64_t>(v);
  return static_cast<T>(i) < v ? i + 1 : i;
}

template <typename T> Roi<T> locate(const T *box, const RoiParams &p) {
  Roi<T> roi;
  int64_t image = 0;
  if (p.roiCols == 5) {
    image = static_cast<int64_t>(static_cast<int>(box[0]));
    ++box;
  }
  if (image < 0 || image >= p.batch)
    return roi;
  T scale = static_cast<T>(p.spatialScale), offset = p.aligned ? T(0.5) : T(0);
  T startW = box[0] * scale - offset, startH = box[1] * scale - offset;
  T width = box[2] * scale - offset - startW, height = box[3] * scale - offset - startH;
  if (p.aligned && !(width > 0 && height > 0))
    return roi; // MXNet stops on a failed check there
  if (!p.aligned) {
    width = maxOf(width, T(1));
    height = maxOf(height, T(1));
  }
  roi.image = image;
  roi.startH = startH;
  roi.startW = startW;
  roi.binH = height / static_cast<T>(p.pooledHeight);
  roi.binW = width / static_cast<T>(p.pooledWidth);
  roi.gridH = p.sampleRatio > 0 ? p.sampleRatio : ceilToInt(height / static_cast<T>(p.pooledHeight));
  roi.gridW = p.sampleRatio > 0 ? p.sampleRatio : ceilToInt(width / static_cast<T>(p.pooledWidth));
  return roi;
}

/// A bilinear sample: four positions in the plane and their weights (all
/// zero outside [-1, size]).
template <typename T> struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  T weight[4] = {0, 0, 0, 0};
  bool inside = false;
};

template <typename T> Sample<T> sampleAt(T y, T x, int64_t height, int64_t width) {
  Sample<T> s;
  if (y < -1.0 || y > height || x < -1.0 || x > width)
    return s;
  if (y <= 0)
    y = 0;
  if (x <= 0)
    x = 0;
  int64_t yLow = static_cast<int>(y), xLow = static_cast<int>(x), yHigh, xHigh;
  if (yLow >= height - 1) {
    yHigh = yLow = height - 1;
    y = static_cast<T>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= width - 1) {
    xHigh = xLow = width - 1;
    x = static_cast<T>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  T ly = y - yLow, lx = x - xLow;
  T hy = T(1) - ly, hx = T(1) - lx;
  s.pos[0] = yLow * width + xLow;
  s.pos[1] = yLow * width + xHigh;
  s.pos[2] = yHigh * width + xLow;
  s.pos[3] = yHigh * width + xHigh;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  s.inside = true;
  return s;
}

/// Sample (iy, ix) of bin (ph, pw).
template <typename T>
Sample<T> binSample(const Roi<T> &roi, int64_t ph, int64_t pw, int64_t iy, int64_t ix, const RoiParams &p) {
  T y = roi.startH + ph * roi.binH + static_cast<T>(iy + .5f) * roi.binH / static_cast<T>(roi.gridH);
  T x = roi.startW + pw * roi.binW + static_cast<T>(ix + .5f) * roi.binW / static_cast<T>(roi.gridW);
  return sampleAt(y, x, p.height, p.width);
}

/// The input plane that output channel `c`, bin (ph, pw) reads.
int64_t inputPlane(int64_t image, int64_t c, int64_t ph, int64_t pw, const RoiParams &p) {
  int64_t bins = p.pooledHeight * p.pooledWidth;
  if (p.positionSensitive)
    return image * p.channels * bins + c * bins + ph * p.pooledWidth + pw;
  return image * p.channels + c;
}

template <typename T> void roiAlign(const T *data, const T *rois, T *out, const RoiParams &p) {
  int64_t bins = p.pooledHeight * p.pooledWidth, plane = p.height * p.width;
  symc::kernels::parallelFor(p.rois, [&](int64_t n) {
    T *roiOut = out + n * p.channels * bins;
    Roi<T> roi = locate(rois + n * p.roiCols, p);
    if (roi.image < 0) {
      for (int64_t i = 0; i < p.channels * bins; ++i)
        roiOut[i] = T(0);
      return;
    }
    T count = static_cast<T>(roi.gridH * roi.gridW);
    for (int64_t c = 0; c < p.channels; ++c)
      for (int64_t ph = 0; ph < p.pooledHeight; ++ph)
        for (int64_t pw = 0; pw < p.pooledWidth; ++pw) {
          const T *in = data + inputPlane(roi.image, c, ph, pw, p) * plane;
          T value = 0;
          for (int64_t iy = 0; iy < roi.gridH; ++iy)
            for (int64_t ix = 0; ix < roi.gridW; ++ix) {
              Sample<T> s = binSample(roi, ph, pw, iy, ix, p);
              value += s.weight[0] * in[s.pos[0]] + s.weight[1] * in[s.pos[1]] + s.weight[2] * in[s.pos[2]] +
                       s.weight[3] * in[s.pos[3]];
            }
          roiOut[(c * p.pooledHeight + ph) * p.pooledWidth + pw] = value / count;
        }
  });
}

template <typename T> void roiAlignBackward(const T *outGrad, const T *rois, T *dataGrad, const RoiParams &p) {
  int64_t bins = p.pooledHeight * p.pooledWidth, plane = p.height * p.width;
  int64_t planes = p.batch * p.channels * (p.positionSensitive ? bins : 1);
  for (int64_t i = 0; i < planes * plane; ++i)
    dataGrad[i] = T(0);
  for (int64_t n = 0; n < p.rois; ++n) {
    Roi<T> roi = locate(rois + n * p.roiCols, p);
    if (roi.image < 0)
      continue;
    T count = static_cast<T>(roi.gridH * roi.gridW);
    for (int64_t c = 0; c < p.channels; ++c)
      for (int64_t ph = 0; ph < p.pooledHeight; ++ph)
        for (int64_t pw = 0; pw < p.pooledWidth; ++pw) {
          T *grad = dataGrad + inputPlane(roi.image, c, ph, pw, p) * plane;
          T g = outGrad[((n * p.channels + c) * p.pooledHeight + ph) * p.pooledWidth + pw];
          for (int64_t iy = 0; iy < roi.gridH; ++iy)
            for (int64_t ix = 0; ix < roi.gridW; ++ix) {
              Sample<T> s = binSample(roi, ph, pw, iy, ix, p);
              if (!s.inside)
                continue;
              for (int k = 0; k < 4; ++k)
                grad[s.pos[k]] += g * s.weight[k] / count;
            }
        }
  }
}

} // namespace

// The forward and backward take the same sizes and params after their buffers.
#define SYMC_ROI_PARAMS                                                                                           \
  int64_t batch, int64_t channels, int64_t height, int64_t width, int64_t pooledHeight, int64_t pooledWidth,     \
      int64_t numRois, int64_t roiCols, int64_t sampleRatio, int64_t positionSensitive, int64_t aligned,        \
      float spatialScale
#define SYMC_ROI_PARAMS_STRUCT                                                                                    \
  RoiParams {                                                                                                     \
    batch, channels, height, width, pooledHeight, pooledWidth, numRois, roiCols, sampleRatio, positionSensitive, \
        aligned, spatialScale                                                                                     \
  }

#define SYMC_ROI_ALIGN(T, suffix)                                                                                 \
  extern "C" void symc_roi_align_##suffix(SYMC_BUFFER(const T, data), SYMC_BUFFER(const T, rois),                \
                                          SYMC_BUFFER(T, out), SYMC_ROI_PARAMS) {                                 \
    roiAlign(SYMC_DATA(data), SYMC_DATA(rois), SYMC_DATA(out), SYMC_ROI_PARAMS_STRUCT);                           \
  }                                                                                                               \
  extern "C" void symc_roi_align_backward_##suffix(SYMC_BUFFER(const T, outGrad), SYMC_BUFFER(const T, rois),    \
                                                   SYMC_BUFFER(T, dataGrad), SYMC_ROI_PARAMS) {                   \
    roiAlignBackward(SYMC_DATA(outGrad), SYMC_DATA(rois), SYMC_DATA(dataGrad), SYMC_ROI_PARAMS_STRUCT);           \
  }

SYMC_ROI_ALIGN(float, f32)
SYMC_ROI_ALIGN(double, f64)
