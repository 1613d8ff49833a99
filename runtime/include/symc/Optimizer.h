//===- Optimizer.h - MXNet's SGD optimizer ----------------------*- C++ -*-===//
//
// mx.optimizer.SGD as MXNet 1.9.1 computes it (sgd_update / sgd_mom_update):
//   g = rescale_grad * grad, clipped to [-clip_gradient, clip_gradient] if set
//   no momentum: w = (1 - lr * wd) * w - lr * g
//   momentum:    m = momentum * m - lr * wd * w - lr * g;  w = w + m
// with lr = learning_rate * lr_mult and wd = wd * wd_mult per parameter.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_OPTIMIZER_H
#define SYMC_RUNTIME_OPTIMIZER_H

#include "symc/NDArray.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace symc {

struct SGDOptions {
  float learningRate = 0.01f, momentum = 0.0f, wd = 0.0f, rescaleGrad = 1.0f;
  /// 0: no clipping (MXNet's `if self.clip_gradient`).
  float clipGradient = 0.0f;
};

class SGD {
public:
  explicit SGD(SGDOptions options) : options_(options) {}

  /// MXNet's multipliers of the parameters `names` (param_idx2name): wd_mult
  /// 0 for a name not ending in _weight or _gamma, then the symbol's
  /// __lr_mult__ / __wd_mult__ attributes of the variables of `symbolJson`
  /// (MXNet symbol JSON, an artifact's manifest().symbolJson; empty for
  /// none), then `lrMult` and `wdMult`.
  void setMultipliers(const std::string &symbolJson, const std::vector<std::string> &names,
                      const std::map<std::string, float> &lrMult = {},
                      const std::map<std::string, float> &wdMult = {});
  void setLearningRate(float lr) { options_.learningRate = lr; }
  const SGDOptions &options() const { return options_; }

  /// One step on `weight` (float32) from `grad`; the momentum is kept under
  /// `key` (MXNet's updater index: one per parameter and device). Safe to
  /// call concurrently for different keys. Arrays on a GPU are updated
  /// through host memory.
  void update(int key, const std::string &name, const NDArray &weight, const NDArray &grad);

private:
  NDArray &momentum(int key, const NDArray &weight);

  SGDOptions options_;
  std::map<std::string, float> lrMult_, wdMult_;
  std::map<int, NDArray> momenta_;
  std::mutex momentaMutex_;
};

} // namespace symc

#endif
