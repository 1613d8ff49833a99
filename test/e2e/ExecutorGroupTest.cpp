//===- ExecutorGroupTest.cpp - data-parallel training on one artifact -----===//
//
// A batch split over two CPU contexts, run concurrently, gives after
// aggregation the gradients one executor computes on the whole batch.
//
//===----------------------------------------------------------------------===//
#include "symc/ExecutorGroup.h"

#include <gtest/gtest.h>

using namespace symc;

namespace {

std::shared_ptr<const Artifact> load(const std::string &name) {
  return Artifact::load(std::string(SYMC_E2E_DIR) + "/" + name + ".so");
}

/// Deterministic values for an array, different per name.
void fillPattern(const NDArray &array, int seed) {
  float *values = array.data<float>();
  for (size_t i = 0; i < array.size(); ++i)
    values[i] = 0.05f * static_cast<float>(static_cast<int>((i * 7 + seed * 13) % 23) - 11);
}

const std::vector<std::string> kParams{"fc_weight", "fc_bias"};

ArrayDict batchOf(int64_t rows) {
  NDArray data({rows, 4}), label({rows});
  fillPattern(data, 1);
  for (int64_t r = 0; r < rows; ++r)
    label.data<float>()[r] = static_cast<float>(r % 6);
  return {{"data", data}, {"softmax_label", label}};
}

TEST(ExecutorGroup, AggregatedGradientsAreTheWholeBatchs) {
  auto artifact = load("fc-softmax-train-sizes");
  DataParallelExecutorGroup group(artifact, {Context::cpu(0), Context::cpu(1)}, {1, 1},
                                  {{"data", {5, 4}}, {"softmax_label", {5}}}, kParams);
  ASSERT_EQ(group.slices(), (std::vector<BatchSlice>{{0, 2}, {2, 5}}));
  EXPECT_EQ(group.executors()[1]->argMap().at("data").shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(group.executors()[1]->argMap().at("data").context(), Context::cpu(1));
  EXPECT_TRUE(group.executors()[0]->gradMap().at("data").isNone()); // inputs get no gradient

  Executor whole = Executor::simpleBind(artifact, Context::cpu(), {{"data", {5, 4}}},
                                        std::string("write"));
  ASSERT_NE(&whole.artifact(), &group.executors()[1]->artifact()); // shape variants for 5 and 3 rows
  ArrayDict params{{"fc_weight", NDArray({6, 4})}, {"fc_bias", NDArray({6})}};
  fillPattern(params["fc_weight"], 2);
  fillPattern(params["fc_bias"], 3);
  group.setParams(params, {});
  whole.copyParamsFrom(params);
  ArrayDict batch = batchOf(5);
  group.loadDataBatch(batch);
  group.forward(true);
  group.backward();
  group.aggregateGradients();
  whole.forward(true, batch);
  whole.backward();
  for (const std::string &name : kParams)
    for (const auto &exec : group.executors()) {
      NDArray got = exec->gradMap().at(name), expected = whole.gradMap().at(name);
      for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-6) << name << "[" << i << "]";
    }
  // Each device's outputs are its rows of the whole batch's.
  EXPECT_NEAR(group.executors()[1]->outputs()[0].data<float>()[0], whole.outputs()[0].data<float>()[2 * 6], 1e-6);

  // An SGD step with momentum on every device gives the whole batch's step.
  SGD perDevice(SGDOptions{0.1f, 0.9f, 0.01f, 1.0f / 5}), single(SGDOptions{0.1f, 0.9f, 0.01f, 1.0f / 5});
  perDevice.setMultipliers("", kParams);
  single.setMultipliers("", kParams);
  for (int step = 0; step < 2; ++step) {
    group.update(perDevice);
    for (size_t p = 0; p < kParams.size(); ++p)
      single.update(static_cast<int>(p), kParams[p], whole.argMap().at(kParams[p]), whole.gradMap().at(kParams[p]));
  }
  for (const std::string &name : kParams)
    for (const auto &exec : group.executors()) {
      NDArray got = exec->argMap().at(name), expected = whole.argMap().at(name);
      for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(got.data<float>()[i], expected.data<float>()[i], 1e-6) << name << "[" << i << "]";
    }
}

TEST(ExecutorGroup, CopyToAveragesOverDevices) {
  DataParallelExecutorGroup group(load("fc-softmax-train-sizes"), {Context::cpu(0), Context::cpu(1)}, {1, 1},
                                  {{"data", {4, 4}}, {"softmax_label", {4}}}, kParams);
  group.executors()[0]->argMap().at("fc_bias").fill(1);
  group.executors()[1]->argMap().at("fc_bias").fill(4);
  ArrayDict args, aux;
  group.copyTo(args, aux);
  EXPECT_EQ(args.at("fc_bias").data<float>()[5], 2.5f);
  EXPECT_EQ(args.count("data"), 0u);
}

TEST(ExecutorManager, BucketsShareTheDefaultGroupsParameters) {
  auto artifact = load("fc-softmax-train-sizes");
  int generated = 0;
  DataParallelExecutorManager manager(
      artifact, {Context::cpu(0), Context::cpu(1)}, {{"data", {5, 4}}, {"softmax_label", {5}}}, kParams, {},
      [&](const std::string &key) {
        ++generated;
        return artifact;
      },
      "default");
  EXPECT_EQ(manager.slices(), (std::vector<BatchSlice>{{0, 2}, {2, 5}}));
  manager.loadDataBatch(batchOf(5), "other", {{"data", {5, 4}}, {"softmax_label", {5}}});
  manager.loadDataBatch(batchOf(5), "other", {{"data", {5, 4}}, {"softmax_label", {5}}});
  EXPECT_EQ(generated, 1);
  ASSERT_NE(manager.currentGroup(), manager.defaultGroup());
  for (size_t device = 0; device < 2; ++device)
    for (const std::string &name : kParams) {
      EXPECT_TRUE(manager.currentGroup()->executors()[device]->argMap().at(name).sharesStorageWith(
          manager.defaultGroup()->executors()[device]->argMap().at(name)));
      EXPECT_TRUE(manager.currentGroup()->executors()[device]->gradMap().at(name).sharesStorageWith(
          manager.defaultGroup()->executors()[device]->gradMap().at(name)));
    }
  manager.loadDataBatch(batchOf(5), "default");
  EXPECT_EQ(manager.currentGroup(), manager.defaultGroup());
  DataParallelExecutorManager plain(artifact, {Context::cpu(0)}, {{"data", {5, 4}}}, kParams);
  try {
    plain.loadDataBatch(batchOf(5), "other");
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "no bucket 'other': the manager has no sym_gen");
  }
}

TEST(ExecutorGroup, Errors) {
  auto artifact = load("fc-softmax-train-sizes");
  auto kindOf = [](auto &&body) -> std::string {
    try {
      body();
    } catch (const Error &e) {
      return e.kind() + ": " + e.what();
    }
    return "";
  };
  EXPECT_EQ(kindOf([&] { DataParallelExecutorGroup(artifact, {Context::cpu(0)}, {1, 1}, {{"data", {4, 4}}}, kParams); }),
            "AssertionError: Invalid settings for work load. ");
  EXPECT_EQ(kindOf([&] {
              DataParallelExecutorGroup(artifact, {Context::cpu(0), Context::cpu(1)}, {1, 1},
                                        {{"data", {4, 4}}, {"softmax_label", {3}}}, kParams);
            }),
            "AssertionError: all data must have the same batch size: batch_size = 4, but softmax_label has shape (3,)");
  EXPECT_EQ(kindOf([&] {
              DataParallelExecutorGroup(artifact, {Context::cpu(0)}, {1}, {{"data", {4, 4}}}, {"fc_weight", "fc9_bias"});
            }),
            "ValueError: param 'fc9_bias' is not an argument of the artifact");
  DataParallelExecutorGroup group(artifact, {Context::cpu(0), Context::cpu(1)}, {1, 1},
                                  {{"data", {4, 4}}, {"softmax_label", {4}}}, kParams);
  EXPECT_EQ(kindOf([&] { group.loadDataBatch(batchOf(5)); }), "AssertionError: Batch size miss match. Expected 4, got 5");
  EXPECT_EQ(kindOf([&] { group.aggregateGradients(KVStoreType::Nccl); }),
            "MXNetError: NCCL sums arrays on GPUs, not on cpu(0)");
  EXPECT_EQ(kindOf([&] { parseKVStoreType("dist_async"); }),
            "ValueError: Unknown KVStore type dist_async: an executor group sums with 'local', 'device' or 'nccl'");
}

/// 'device' on CPU contexts has no GPU to sum on: it sums as 'local' does.
TEST(ExecutorGroup, DeviceKVStoreOnCpusSumsAsLocal) {
  auto artifact = load("fc-softmax-train-sizes");
  std::vector<std::vector<std::vector<NDArray>>> sums;
  for (KVStoreType type : {KVStoreType::Local, KVStoreType::Device}) {
    DataParallelExecutorGroup group(artifact, {Context::cpu(0), Context::cpu(1)}, {1, 1},
                                    {{"data", {5, 4}}, {"softmax_label", {5}}}, kParams);
    ArrayDict params{{"fc_weight", NDArray({6, 4})}, {"fc_bias", NDArray({6})}};
    fillPattern(params["fc_weight"], 2);
    group.setParams(params, {});
    group.loadDataBatch(batchOf(5));
    group.forward(true);
    group.backward();
    group.aggregateGradients(type);
    sums.push_back(group.gradArrays());
  }
  ASSERT_EQ(sums[0].size(), kParams.size());
  for (size_t p = 0; p < kParams.size(); ++p)
    for (size_t e = 0; e < 2; ++e)
      for (size_t i = 0; i < sums[0][p][e].size(); ++i)
        ASSERT_EQ(sums[1][p][e].data<float>()[i], sums[0][p][e].data<float>()[i]) << kParams[p];
  EXPECT_NE(sums[0][1][0].data<float>()[0], 0.0f);
}

} // namespace
