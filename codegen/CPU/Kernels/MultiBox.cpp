//===- MultiBox.cpp - SSD's _contrib_MultiBoxDetection and MultiBoxTarget -===//
//
// MXNet's MultiBoxDetectionForward and MultiBoxTargetForward (src/operator/
// contrib/multibox_detection.cc, multibox_target.cc) with the same
// arithmetic and the same order of decisions, on one thread. Where MXNet
// stops on a failed check at run time (a label row that starts with -1 but
// is not all -1; fewer negative candidates than the mining ratio asks for),
// these take the row as the end of the labels and mine the candidates there
// are.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Kernels/KernelABI.h"

namespace {

using symc::kernels::stableSort;

template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }
template <typename T> T minOf(T a, T b) { return a < b ? a : b; }

float expOf(float x) { return __builtin_expf(x); }
double expOf(double x) { return __builtin_exp(x); }

struct Variances {
  float x, y, w, h;
};

struct DetectionParams {
  int64_t batches, classes, anchors, clip, forceSuppress, nmsTopk;
  float threshold, nmsThreshold;
  Variances variances;
};

/// An anchor moved by a location prediction, as corners (clipped to [0, 1]).
template <typename T> void decode(T *out, const T *anchor, const T *pred, bool clip, const Variances &v) {
  T aw = anchor[2] - anchor[0], ah = anchor[3] - anchor[1];
  T ax = (anchor[0] + anchor[2]) / 2.f, ay = (anchor[1] + anchor[3]) / 2.f;
  T ox = pred[0] * v.x * aw + ax, oy = pred[1] * v.y * ah + ay;
  T ow = expOf(pred[2] * v.w) * aw / 2, oh = expOf(pred[3] * v.h) * ah / 2;
  T corners[4] = {ox - ow, oy - oh, ox + ow, oy + oh};
  for (int k = 0; k < 4; ++k)
    out[k] = clip ? maxOf(T(0), minOf(T(1), corners[k])) : corners[k];
}

template <typename T> T overlap(const T *a, const T *b) {
  T w = maxOf(T(0), minOf(a[2], b[2]) - maxOf(a[0], b[0]));
  T h = maxOf(T(0), minOf(a[3], b[3]) - maxOf(a[1], b[1]));
  T i = w * h;
  T u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0.f ? T(0) : i / u;
}

void copyRow(float *to, const float *from) {
  for (int k = 0; k < 6; ++k)
    to[k] = from[k];
}
void copyRow(double *to, const double *from) {
  for (int k = 0; k < 6; ++k)
    to[k] = from[k];
}

/// rows: `anchors` * 6 scratch entries; order: 2 * `anchors`.
template <typename T>
void multiBoxDetection(const T *clsProb, const T *locPred, const T *anchor, T *out, T *rows, int32_t *order,
                       const DetectionParams &p) {
  int64_t n = p.anchors;
  for (int64_t i = 0; i < p.batches * n * 6; ++i)
    out[i] = T(-1);
  for (int64_t b = 0; b < p.batches; ++b) {
    const T *prob = clsProb + b * p.classes * n;
    T *o = out + b * n * 6;
    for (int64_t i = 0; i < n; ++i) { // the best class but the background, [id, score, box]
      T score = -1;
      int64_t id = 0;
      for (int64_t j = 1; j < p.classes; ++j)
        if (prob[j * n + i] > score) {
          score = prob[j * n + i];
          id = j;
        }
      if (id > 0 && score < p.threshold)
        id = 0;
      rows[i * 6] = static_cast<T>(id - 1);
      rows[i * 6 + 1] = score;
      decode(rows + i * 6 + 2, anchor + i * 4, locPred + (b * n + i) * 4, p.clip, p.variances);
    }
    int64_t valid = 0;
    for (int64_t i = 0; i < n; ++i)
      if (rows[i * 6] >= 0)
        copyRow(o + 6 * valid++, rows + i * 6);
    if (valid < 1 || p.nmsThreshold <= 0 || p.nmsThreshold > 1)
      continue;
    for (int64_t i = 0; i < valid * 6; ++i)
      rows[i] = o[i];
    for (int64_t i = 0; i < valid; ++i)
      order[i] = static_cast<int32_t>(i);
    stableSort(order, order + n, valid, [&](int32_t x, int32_t y) { return rows[x * 6 + 1] > rows[y * 6 + 1]; });
    int64_t keep = valid;
    if (p.nmsTopk > 0 && p.nmsTopk < keep) {
      keep = p.nmsTopk;
      for (int64_t i = keep; i < valid; ++i)
        o[i * 6] = -1; // the rest of those rows keeps the unsorted values, as in MXNet
    }
    for (int64_t i = 0; i < keep; ++i)
      copyRow(o + i * 6, rows + order[i] * 6);
    for (int64_t i = 0; i < keep; ++i) {
      if (o[i * 6] < 0)
        continue;
      for (int64_t j = i + 1; j < keep; ++j)
        if (o[j * 6] >= 0 && (p.forceSuppress || o[i * 6] == o[j * 6]) &&
            overlap(o + i * 6 + 2, o + j * 6 + 2) >= p.nmsThreshold)
          o[j * 6] = -1;
    }
  }
}

struct TargetParams {
  int64_t batches, anchors, labels, labelWidth, classes;
  float overlapThreshold, ignoreLabel, negativeMiningRatio, negativeMiningThresh;
  Variances variances;
};

/// The anchor's regression target towards its ground truth box `g`.
template <typename T> void encode(const T *anchor, const T *g, T *dst, const Variances &v) {
  float al = anchor[0], at = anchor[1], ar = anchor[2], ab = anchor[3];
  float aw = ar - al, ah = ab - at, ax = (al + ar) * 0.5, ay = (at + ab) * 0.5;
  float gl = g[0], gt = g[1], gr = g[2], gb = g[3];
  float gw = gr - gl, gh = gb - gt, gx = (gl + gr) * 0.5, gy = (gt + gb) * 0.5;
  dst[0] = T((gx - ax) / aw / v.x);
  dst[1] = T((gy - ay) / ah / v.y);
  dst[2] = T(__builtin_logf(gw / aw) / v.w);
  dst[3] = T(__builtin_logf(gh / ah) / v.h);
}

/// Scratch of one image: `ious` anchors * labels entries; `matchIou`,
/// `matchGt`, `flags` and `candidateScore` one per anchor, `candidates` two
/// (the sort's scratch after them); `gtMatched` one per label.
template <typename T> struct TargetScratch {
  T *ious;
  float *matchIou, *candidateScore;
  int32_t *matchGt, *flags, *candidates, *gtMatched;
};

/// MXNet's anchor-label IoUs (mshadow's expression in T; 0 for an empty
/// union).
template <typename T> void labelOverlaps(const T *anchors, const T *label, T *ious, const TargetParams &p) {
  for (int64_t j = 0; j < p.anchors; ++j)
    for (int64_t k = 0; k < p.labels; ++k) {
      const T *a = anchors + j * 4, *g = label + k * p.labelWidth + 1;
      T w = maxOf(T(0), minOf(a[2], g[2]) - maxOf(a[0], g[0]));
      T h = maxOf(T(0), minOf(a[3], g[3]) - maxOf(a[1], g[1]));
      T i = w * h, u = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - i;
      ious[j * p.labels + k] = u == T(0) ? T(0) : i / u;
    }
}

/// The label with the largest IoU with anchor `j` (first of ties), or -1.
template <typename T> int32_t bestLabel(const T *ious, int64_t j, int64_t validLabels, int64_t labels, float &iou) {
  int32_t best = -1;
  iou = -1.0f;
  for (int64_t k = 0; k < validLabels; ++k)
    if (static_cast<float>(ious[j * labels + k]) > iou) {
      best = static_cast<int32_t>(k);
      iou = static_cast<float>(ious[j * labels + k]);
    }
  return best;
}

/// Marks anchors 1 (positive) or 0 (negative, mined); -1 stays "ignore".
template <typename T>
void matchAnchors(const T *clsPred, int64_t validLabels, TargetScratch<T> &s, const TargetParams &p) {
  int64_t n = p.anchors, positives = 0;
  for (int64_t k = 0; k < validLabels; ++k)
    s.gtMatched[k] = 0;
  for (int64_t j = 0; j < n; ++j) {
    s.matchIou[j] = -1.0f;
    s.matchGt[j] = -1;
    s.flags[j] = -1;
  }
  for (;;) { // each label takes its best free anchor, the best pair first
    int64_t bestAnchor = -1, bestGt = -1;
    float best = 1e-6f;
    for (int64_t j = 0; j < n; ++j) {
      if (s.flags[j] == 1)
        continue;
      for (int64_t k = 0; k < validLabels; ++k)
        if (!s.gtMatched[k] && static_cast<float>(s.ious[j * p.labels + k]) > best) {
          bestAnchor = j;
          bestGt = k;
          best = static_cast<float>(s.ious[j * p.labels + k]);
        }
    }
    if (bestAnchor < 0)
      break;
    s.matchIou[bestAnchor] = best;
    s.matchGt[bestAnchor] = static_cast<int32_t>(bestGt);
    s.gtMatched[bestGt] = 1;
    s.flags[bestAnchor] = 1;
    ++positives;
    bool allMatched = true;
    for (int64_t k = 0; k < validLabels; ++k)
      allMatched = allMatched && s.gtMatched[k];
    if (allMatched)
      break;
  }
  if (p.overlapThreshold > 0)
    for (int64_t j = 0; j < n; ++j) {
      if (s.flags[j] == 1)
        continue;
      float iou;
      int32_t gt = bestLabel(s.ious, j, validLabels, p.labels, iou);
      if (gt < 0)
        continue;
      s.matchIou[j] = iou;
      s.matchGt[j] = gt;
      if (iou > p.overlapThreshold) {
        ++positives;
        s.gtMatched[gt] = 1;
        s.flags[j] = 1;
      }
    }
  if (!(p.negativeMiningRatio > 0)) {
    for (int64_t j = 0; j < n; ++j)
      if (s.flags[j] != 1)
        s.flags[j] = 0;
    return;
  }
  int64_t negatives = static_cast<int64_t>(static_cast<float>(positives) * p.negativeMiningRatio);
  if (negatives > n - positives)
    negatives = n - positives;
  if (negatives <= 0)
    return;
  // The hardest negatives: the lowest background probability first.
  int64_t count = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (s.flags[j] == 1)
      continue;
    if (s.matchIou[j] < 0) {
      float iou;
      int32_t gt = bestLabel(s.ious, j, validLabels, p.labels, iou);
      if (gt >= 0) {
        s.matchIou[j] = iou;
        s.matchGt[j] = gt;
      }
    }
    if (s.matchIou[j] < p.negativeMiningThresh && s.flags[j] == -1) {
      T top = clsPred[j];
      for (int64_t k = 1; k < p.classes; ++k)
        top = maxOf(top, clsPred[j + n * k]);
      T sum = 0.f;
      for (int64_t k = 0; k < p.classes; ++k)
        sum += expOf(clsPred[j + n * k] - top);
      s.candidateScore[j] = static_cast<float>(-(expOf(clsPred[j] - top) / sum));
      s.candidates[count++] = static_cast<int32_t>(j);
    }
  }
  const float *score = s.candidateScore;
  stableSort(s.candidates, s.candidates + n, count, [&](int32_t a, int32_t b) { return score[a] > score[b]; });
  for (int64_t i = 0; i < negatives && i < count; ++i)
    s.flags[s.candidates[i]] = 0;
}

template <typename T>
void multiBoxTarget(const T *anchors, const T *labels, const T *clsPreds, T *locTarget, T *locMask, T *clsTarget,
                    TargetScratch<T> s, const TargetParams &p) {
  int64_t n = p.anchors;
  for (int64_t i = 0; i < p.batches * n * 4; ++i)
    locTarget[i] = locMask[i] = T(0);
  for (int64_t i = 0; i < p.batches * n; ++i)
    clsTarget[i] = static_cast<T>(p.ignoreLabel);
  for (int64_t b = 0; b < p.batches; ++b) {
    const T *label = labels + b * p.labels * p.labelWidth;
    int64_t validLabels = 0;
    while (validLabels < p.labels && static_cast<float>(label[validLabels * p.labelWidth]) != -1.0f)
      ++validLabels;
    if (validLabels == 0)
      continue;
    labelOverlaps(anchors, label, s.ious, p);
    matchAnchors(clsPreds + b * p.classes * n, validLabels, s, p);
    for (int64_t i = 0; i < n; ++i) {
      T *target = locTarget + (b * n + i) * 4, *mask = locMask + (b * n + i) * 4;
      if (s.flags[i] == 1) {
        const T *gt = label + p.labelWidth * s.matchGt[i];
        clsTarget[b * n + i] = gt[0] + 1; // 0 is the background
        for (int k = 0; k < 4; ++k)
          mask[k] = 1;
        encode(anchors + i * 4, gt + 1, target, p.variances);
      } else if (s.flags[i] == 0) {
        clsTarget[b * n + i] = 0;
      }
    }
  }
}

} // namespace

// rows: anchors * 6 entries; order: 2 * anchors.
#define SYMC_MULTIBOX(T, suffix)                                                                                  \
  extern "C" void symc_multibox_detection_##suffix(                                                              \
      SYMC_BUFFER(const T, clsProb), SYMC_BUFFER(const T, locPred), SYMC_BUFFER(const T, anchor),                \
      SYMC_BUFFER(T, out), SYMC_BUFFER(T, rows), SYMC_BUFFER(int32_t, order), int64_t batches, int64_t classes,  \
      int64_t anchors, int64_t clip, int64_t forceSuppress, int64_t nmsTopk, float threshold, float nmsThreshold, \
      float vx, float vy, float vw, float vh) {                                                                   \
    DetectionParams p{batches,   classes,      anchors, clip, forceSuppress, nmsTopk,                             \
                      threshold, nmsThreshold, {vx, vy, vw, vh}};                                                 \
    multiBoxDetection(SYMC_DATA(clsProb), SYMC_DATA(locPred), SYMC_DATA(anchor), SYMC_DATA(out),                 \
                      SYMC_DATA(rows), SYMC_DATA(order), p);                                                      \
  }                                                                                                               \
  /* ious: anchors * labels; scores: 2 * anchors; indices: 4 * anchors + labels. */                              \
  extern "C" void symc_multibox_target_##suffix(                                                                 \
      SYMC_BUFFER(const T, anchor), SYMC_BUFFER(const T, label), SYMC_BUFFER(const T, clsPred),                  \
      SYMC_BUFFER(T, locTarget), SYMC_BUFFER(T, locMask), SYMC_BUFFER(T, clsTarget), SYMC_BUFFER(T, ious),       \
      SYMC_BUFFER(float, scores), SYMC_BUFFER(int32_t, indices), int64_t batches, int64_t anchors,               \
      int64_t labels, int64_t labelWidth, int64_t classes, float overlapThreshold, float ignoreLabel,            \
      float negativeMiningRatio, float negativeMiningThresh, float vx, float vy, float vw, float vh) {           \
    TargetParams p{batches,     anchors,          labels,          labelWidth, classes, overlapThreshold,        \
                   ignoreLabel, negativeMiningRatio, negativeMiningThresh, {vx, vy, vw, vh}};                     \
    float *score = SYMC_DATA(scores);                                                                             \
    int32_t *index = SYMC_DATA(indices);                                                                          \
    TargetScratch<T> s{SYMC_DATA(ious), score,         score + anchors,    index,                                 \
                       index + anchors, index + 2 * anchors, index + 4 * anchors};                                \
    multiBoxTarget(SYMC_DATA(anchor), SYMC_DATA(label), SYMC_DATA(clsPred), SYMC_DATA(locTarget),               \
                   SYMC_DATA(locMask), SYMC_DATA(clsTarget), s, p);                                               \
  }

SYMC_MULTIBOX(float, f32)
SYMC_MULTIBOX(double, f64)
