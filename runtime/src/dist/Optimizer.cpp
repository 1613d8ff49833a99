//===- Optimizer.cpp - MXNet's SGD optimizer ------------------------------===//
#include "symc/Optimizer.h"

#include "../core/SymbolGraph.h"

#include <algorithm>

namespace symc {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

float parseMultiplier(const std::string &name, const std::string &key, const std::string &text) {
  try {
    size_t used = 0;
    float value = std::stof(text, &used);
    if (used == text.size())
      return value;
  } catch (const std::exception &) {
  }
  throw Error("ValueError", "could not convert " + key + " '" + text + "' of '" + name + "' to float");
}

} // namespace

void SGD::setMultipliers(const std::string &symbolJson, const std::vector<std::string> &names,
                         const std::map<std::string, float> &lrMult, const std::map<std::string, float> &wdMult) {
  lrMult_.clear();
  wdMult_.clear();
  for (const std::string &name : names)
    if (!endsWith(name, "_weight") && !endsWith(name, "_gamma"))
      wdMult_[name] = 0.0f;
  if (!symbolJson.empty())
    for (const SymbolNodePtr &node : SymbolGraph::parse(symbolJson).executionOrder()) {
      if (!node->isVariable())
        continue;
      for (auto [key, target] : {std::pair{"__lr_mult__", &lrMult_}, std::pair{"__wd_mult__", &wdMult_}})
        if (auto it = node->attrs.find(key); it != node->attrs.end())
          (*target)[node->name] = parseMultiplier(node->name, key, it->second);
    }
  for (const auto &[name, value] : lrMult)
    lrMult_[name] = value;
  for (const auto &[name, value] : wdMult)
    wdMult_[name] = value;
}

NDArray &SGD::momentum(int key, const NDArray &weight) {
  std::lock_guard<std::mutex> lock(momentaMutex_);
  NDArray &state = momenta_[key];
  if (state.isNone())
    state = NDArray(weight.shape(), weight.dtype(), weight.context());
  return state;
}

void SGD::update(int key, const std::string &name, const NDArray &weight, const NDArray &grad) {
  if (weight.dtype() != DType::Float32 || grad.dtype() != DType::Float32)
    throw Error("MXNetError", "SGD of '" + name + "': float32 weights and gradients only");
  if (weight.shape() != grad.shape())
    throw Error("MXNetError", "SGD of '" + name + "': weight shape " + shapeToString(weight.shape()) +
                                  " differs from its gradient's " + shapeToString(grad.shape()));
  auto multiplier = [&](const std::map<std::string, float> &mults) {
    auto it = mults.find(name);
    return it == mults.end() ? 1.0f : it->second;
  };
  if (weight.onDevice() || grad.onDevice()) {
    // On a GPU the step runs in host memory (the momentum kept there).
    NDArray hostWeight = weight.toHost();
    update(key, name, hostWeight, grad.toHost());
    NDArray(weight).copyFrom(hostWeight);
    return;
  }
  const float lr = options_.learningRate * multiplier(lrMult_), wd = options_.wd * multiplier(wdMult_);
  const float rescale = options_.rescaleGrad, clip = options_.clipGradient;
  float *w = weight.data<float>();
  const float *g = grad.data<float>();
  auto scaled = [&](size_t i) {
    float v = rescale * g[i];
    return clip > 0 ? std::clamp(v, -clip, clip) : v;
  };
  size_t n = weight.size();
  if (options_.momentum > 0) {
    float *m = momentum(key, weight).data<float>();
    for (size_t i = 0; i < n; ++i) {
      m[i] = options_.momentum * m[i] - lr * wd * w[i] - lr * scaled(i);
      w[i] += m[i];
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      w[i] = (1.0f - lr * wd) * w[i] - lr * scaled(i);
  }
}

} // namespace symc
