//===- OptimizerTest.cpp - MXNet's SGD update rule ------------------------===//
//
// test_mxnet_parity.py runs the same steps against mx.optimizer.SGD; these
// check the rule by hand on single elements.
//
//===----------------------------------------------------------------------===//
#include "symc/Optimizer.h"

#include <gtest/gtest.h>

using namespace symc;

namespace {

NDArray scalar(float value) { return NDArray::fromData({1}, DType::Float32, &value); }

TEST(SGD, PlainStepDecaysTheWeightAndClipsTheRescaledGradient) {
  SGD sgd(SGDOptions{0.5f, 0.0f, 0.1f, 2.0f, 1.5f});
  sgd.setMultipliers("", {"fc_weight"});
  NDArray w = scalar(1.0f);
  sgd.update(0, "fc_weight", w, scalar(1.0f)); // g = clip(2 * 1, 1.5) = 1.5
  EXPECT_FLOAT_EQ(w.data<float>()[0], (1 - 0.5f * 0.1f) * 1.0f - 0.5f * 1.5f);
}

TEST(SGD, MomentumIsKeptPerKey) {
  SGD sgd(SGDOptions{0.1f, 0.9f});
  NDArray a = scalar(0.0f), b = scalar(0.0f);
  for (int step = 0; step < 2; ++step) {
    sgd.update(0, "a", a, scalar(1.0f));
    sgd.update(1, "b", b, scalar(1.0f));
  }
  // m1 = -0.1, w1 = -0.1; m2 = 0.9 * -0.1 - 0.1 = -0.19, w2 = -0.29.
  EXPECT_FLOAT_EQ(a.data<float>()[0], -0.29f);
  EXPECT_FLOAT_EQ(b.data<float>()[0], -0.29f);
}

TEST(SGD, OnlyWeightsAndGammasDecayByDefault) {
  SGD sgd(SGDOptions{1.0f, 0.0f, 0.5f});
  sgd.setMultipliers("", {"fc_weight", "fc_bias", "bn_gamma"}, {{"fc_weight", 2.0f}});
  NDArray weight = scalar(1.0f), bias = scalar(1.0f), gamma = scalar(1.0f);
  sgd.update(0, "fc_weight", weight, scalar(0.0f));
  sgd.update(1, "fc_bias", bias, scalar(0.0f));
  sgd.update(2, "bn_gamma", gamma, scalar(0.0f));
  EXPECT_FLOAT_EQ(weight.data<float>()[0], 0.0f); // lr 2 * wd 0.5
  EXPECT_FLOAT_EQ(bias.data<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(gamma.data<float>()[0], 0.5f);
}

TEST(SGD, MultipliersComeFromTheSymbolsVariables) {
  const char *symbol = R"({"nodes": [{"op": "null", "name": "w", "attrs": {"__lr_mult__": "0.25"}, "inputs": []},
    {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})";
  SGD sgd(SGDOptions{1.0f});
  sgd.setMultipliers(symbol, {"w"});
  NDArray w = scalar(0.0f);
  sgd.update(0, "w", w, scalar(1.0f));
  EXPECT_FLOAT_EQ(w.data<float>()[0], -0.25f);
  try {
    sgd.update(0, "w", NDArray({1}, DType::Float64), scalar(1.0f));
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "SGD of 'w': float32 weights and gradients only");
  }
}

} // namespace
