//===- ExecutorTest.cpp - compiled symbols through MXNet's Executor API ---===//
//
// Artifacts are compiled from the MXNet-saved fixtures beside this file at
// build time (CMakeLists.txt); the numbers are the executor docstring
// examples of shared/mxnet-semantics.md section 1.5.
//
//===----------------------------------------------------------------------===//
#include "symc/Executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <thread>

using namespace symc;

namespace {

std::shared_ptr<const Artifact> load(const std::string &name) {
  return Artifact::load(std::string(SYMC_E2E_DIR) + "/" + name + ".so");
}

NDArray vector(std::vector<float> values) {
  return NDArray::fromData({static_cast<int64_t>(values.size())}, DType::Float32, values.data());
}

std::vector<float> values(const NDArray &a) {
  return std::vector<float>(a.data<float>(), a.data<float>() + a.size());
}

/// Runs `body` and returns the message of the symc::Error of kind `kind`.
template <typename F> std::string errorOf(F &&body, const std::string &kind) {
  try {
    body();
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(Executor, TwoAPlusB) {
  Executor exec = Executor::bind(load("axpb"), Context::cpu(), ArrayDict{{"a", vector({1, 2})}, {"b", vector({2, 3})}});
  EXPECT_EQ(values(exec.forward()[0]), (std::vector<float>{4, 7}));
  EXPECT_EQ(exec.listOutputs(), (std::vector<std::string>{"_plus0_output"}));
}

TEST(Executor, BindDoesNotCopy) {
  NDArray a = vector({1, 2}), b = vector({2, 3});
  Executor exec = Executor::bind(load("axpb"), Context::cpu(), ArrayList{a, b});
  a.data<float>()[0] = 10;
  EXPECT_EQ(values(exec.forward()[0]), (std::vector<float>{22, 7}));
  EXPECT_TRUE(exec.argArrays()[0].sharesStorageWith(a));
}

TEST(Executor, OutputsAreFixedBuffers) {
  Executor exec = Executor::simpleBind(load("axpb"), Context::cpu());
  const NDArray first = exec.forward(false, {{"a", vector({1, 1})}})[0];
  NDArray second = exec.forward(false, {{"a", vector({2, 2})}})[0];
  EXPECT_TRUE(first.sharesStorageWith(second));
  EXPECT_EQ(values(first), (std::vector<float>{4, 4}));
}

TEST(Executor, FullyConnectedReluSoftmax) {
  Executor exec = Executor::simpleBind(load("fc-softmax"), Context::cpu(), {{"data", {1, 4}}});
  std::vector<float> ones(24, 1.0f);
  exec.copyParamsFrom({{"fc_weight", NDArray::fromData({6, 4}, DType::Float32, ones.data())},
                       {"fc_bias", vector({1, 4, 4, 4, 5, 6})}});
  std::vector<float> data(4, 1.0f);
  exec.forward(true, {{"data", NDArray::fromData({1, 4}, DType::Float32, data.data())},
                      {"softmax_label", vector({1})}});
  std::vector<float> expected{0.00378404f, 0.07600445f, 0.07600445f,
                              0.07600445f, 0.20660152f, 0.5616011f};
  std::vector<float> got = values(exec.outputs()[0]);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-6) << i;
}

/// fc-softmax's weights of the docstring example: all ones, bias [1,4,4,4,5,6].
void setDocstringParams(Executor &exec) {
  std::vector<float> ones(24, 1.0f);
  exec.copyParamsFrom({{"fc_weight", NDArray::fromData({6, 4}, DType::Float32, ones.data())},
                       {"fc_bias", vector({1, 4, 4, 4, 5, 6})}});
}

TEST(Executor, DynamicBatchRunsAnyBatchSize) {
  // Batch 5 with chunks of 2: two whole chunks and one single row.
  for (int64_t batch : {1, 5}) {
    Executor exec = Executor::simpleBind(load("fc-softmax-dynamic"), Context::cpu(), {{"data", {batch, 4}}});
    setDocstringParams(exec);
    std::vector<float> data(batch * 4);
    for (int64_t i = 0; i < batch * 4; ++i)
      data[i] = static_cast<float>(i % 4 == 0 ? i / 4 : 1); // row r: [r, 1, 1, 1]
    exec.forward(false, {{"data", NDArray::fromData({batch, 4}, DType::Float32, data.data())}});
    ASSERT_EQ(exec.outputs()[0].shape(), (std::vector<int64_t>{batch, 6}));
    EXPECT_EQ(exec.argMap().at("softmax_label").shape(), (std::vector<int64_t>{batch}));
    // Row r has logits r+3 + bias: the docstring row shifted by r-1, the same softmax.
    std::vector<float> got = values(exec.outputs()[0]);
    for (int64_t r = 0; r < batch; ++r)
      EXPECT_NEAR(got[r * 6 + 5], 0.5616011f, 1e-6) << "row " << r;
  }
}

/// Every argument and aux state of `exec` set to a fixed pattern (variances
/// positive), the same for every artifact of one symbol.
void fillPattern(const Executor &exec) {
  for (const ArrayDict &arrays : {exec.argMap(), exec.auxMap()})
    for (const auto &[name, array] : arrays) {
      float *values = array.data<float>();
      for (size_t i = 0; i < array.size(); ++i)
        values[i] = name.find("var") != std::string::npos ? 1.5f : 0.1f * static_cast<float>(static_cast<int>(i % 11) - 5);
    }
}

TEST(Executor, ShapeVariantsServeEachCompiledImageSize) {
  std::shared_ptr<const Artifact> sizes = load("conv-gap-sizes");
  ASSERT_EQ(sizes->shapeVariants().size(), 3u);
  Executor small = Executor::simpleBind(sizes, Context::cpu(), {{"data", {3, 2, 8, 8}}}, std::string("null"));
  EXPECT_EQ(&small.artifact(), sizes.get());
  fillPattern(small);
  small.forward();
  // The 12x12 variant, reached by reshape, gives what a 12x12 artifact gives.
  Executor large = small.reshape(false, true, {{"data", {2, 2, 12, 12}}, {"softmax_label", {2}}});
  EXPECT_EQ(large.argArrays()[0].shape(), (std::vector<int64_t>{2, 2, 12, 12}));
  fillPattern(large);
  large.forward();
  EXPECT_TRUE(large.outputs()[0].sharesStorageWith(small.outputs()[0])); // MXNet's reshape shares outputs
  Executor alone = Executor::simpleBind(load("conv-gap-12"), Context::cpu(), {{"data", {2, 2, 12, 12}}},
                                        std::string("null"));
  fillPattern(alone);
  alone.forward();
  std::vector<float> got = values(large.outputs()[0]), expected = values(alone.outputs()[0]);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-6) << i;
  // Non-square sizes are variants too; other sizes are not.
  EXPECT_EQ(Executor::simpleBind(sizes, Context::cpu(), {{"data", {1, 2, 12, 8}}}).outputs()[0].shape(),
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(errorOf([&] { small.reshape(true, true, {{"data", {3, 2, 10, 10}}}); }, "MXNetError"),
            "reshape: 'data' of shape (3, 2, 10, 10) does not fit the compiled shapes (-1, 2, 8, 8), (-1, 2, 8, 12), "
            "(-1, 2, 12, 8), (-1, 2, 12, 12): only the dynamic (-1) batch dim changes without recompiling, among the "
            "shapes compiled; compile with symc compile --shape 'data=?,2,8|10|12,8|10|12' ('?' keeps the batch dim "
            "dynamic, 'A|B' compiles both sizes into one artifact)");
}

/// LeNet's arguments filled with a fixed pattern; `input` as its data.
Executor boundLenet(const std::shared_ptr<const Artifact> &artifact, const std::vector<float> &input) {
  Executor exec = Executor::simpleBind(artifact, Context::cpu());
  for (const auto &[name, array] : exec.argMap()) {
    float *values = array.data<float>();
    for (size_t i = 0; i < array.size(); ++i)
      values[i] = name == "data" ? input[i] : 0.01f * static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  return exec;
}

TEST(Executor, ThreadsEachRunTheirOwnExecutorOnOneArtifact) {
  // Four threads, one artifact (LeNet, whose layers run on several threads),
  // an executor each, forward in a loop on their own data; each matches the
  // same forward run alone. (TSan runs this: test/sanitizers.)
  std::shared_ptr<const Artifact> artifact = load("lenet");
  auto input = [](int t) {
    std::vector<float> data(4 * 28 * 28);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<float>((i * (t + 3)) % 17) / 17.0f;
    return data;
  };
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < 4; ++t)
    expected.push_back(values(boundLenet(artifact, input(t)).forward()[0]));
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Executor exec = boundLenet(artifact, input(t));
      for (int step = 0; step < 10 && failures[t].empty(); ++step) {
        std::vector<float> got = values(exec.forward()[0]);
        for (size_t i = 0; i < got.size(); ++i)
          if (std::abs(got[i] - expected[t][i]) > 1e-6f)
            failures[t] = "thread " + std::to_string(t) + " step " + std::to_string(step) + " output " +
                          std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(expected[t][i]);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &failure : failures)
    EXPECT_EQ(failure, "");
}

TEST(Executor, DynamicBatchErrors) {
  auto artifact = load("fc-softmax-dynamic");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::cpu()); }, "RuntimeError"),
            "simple_bind error. Arguments:\nthe shape of 'data' has a dynamic batch dim (-1, 4); give "
            "its shape, or the shape of another argument with one");
  EXPECT_EQ(errorOf([&] {
              Executor::simpleBind(artifact, Context::cpu(), {{"data", {3, 4}}, {"softmax_label", {2}}});
            }, "RuntimeError"),
            "simple_bind error. Arguments:\ndata: (3, 4)\nsoftmax_label: (2,)\nshape (2,) of "
            "'softmax_label' differs from the compiled shape (-1,) with the batch size (-1) already "
            "bound to 3");
  std::vector<float> ones(24, 1.0f);
  ArrayDict args{{"data", NDArray({3, 4}, DType::Float32)},
                 {"fc_weight", NDArray({6, 4}, DType::Float32)},
                 {"fc_bias", NDArray({6}, DType::Float32)},
                 {"softmax_label", NDArray({4}, DType::Float32)}};
  EXPECT_EQ(errorOf([&] { Executor::bind(artifact, Context::cpu(), args); }, "MXNetError"),
            "Shape inconsistent for 'softmax_label': provided (4,), compiled (-1,) with the batch "
            "size (-1) already bound to 3 (recompile with --shape softmax_label=... for other shapes)");
  args["softmax_label"] = NDArray({3}, DType::Float32);
  EXPECT_EQ(Executor::bind(artifact, Context::cpu(), args).outputs()[0].shape(),
            (std::vector<int64_t>{3, 6}));
}

TEST(Executor, TwoAPlusBBackward) {
  // The docstring: backward(out) with head [4,7] gives grad a = [8,14], b = [4,7].
  NDArray gradA = vector({0, 0}), gradB = vector({0, 0});
  Executor exec = Executor::bind(load("axpb-train"), Context::cpu(), ArrayList{vector({1, 2}), vector({2, 3})},
                                 ArrayList{gradA, gradB});
  const NDArray out = exec.forward(true)[0];
  exec.backward({out});
  EXPECT_EQ(values(gradA), (std::vector<float>{8, 14}));
  EXPECT_EQ(values(gradB), (std::vector<float>{4, 7}));
  EXPECT_EQ(values(exec.gradMap().at("a")), (std::vector<float>{8, 14}));
}

TEST(Executor, SoftmaxOutputHeadBackward) {
  // The docstring: the loss head needs no head gradient; the weight-gradient
  // rows are p - onehot(1), each broadcast over the 4 inputs of ones.
  Executor exec = Executor::simpleBind(load("fc-softmax-train"), Context::cpu(), {{"data", {1, 4}}});
  setDocstringParams(exec);
  std::vector<float> data(4, 1.0f);
  exec.forward(true, {{"data", NDArray::fromData({1, 4}, DType::Float32, data.data())},
                      {"softmax_label", vector({1})}});
  exec.backward();
  std::vector<float> p{0.00378404f, 0.07600445f, 0.07600445f, 0.07600445f, 0.20660152f, 0.5616011f};
  std::vector<float> weightGrad = values(exec.gradMap().at("fc_weight"));
  for (size_t row = 0; row < 6; ++row)
    for (size_t col = 0; col < 4; ++col)
      EXPECT_NEAR(weightGrad[row * 4 + col], p[row] - (row == 1 ? 1.0f : 0.0f), 1e-6) << row;
  EXPECT_NEAR(weightGrad[4], -0.92399555f, 1e-6);
  EXPECT_EQ(values(exec.gradMap().at("softmax_label")), std::vector<float>{0});
}

TEST(Executor, BackwardReadsTheTrainingForwardsSavedValues) {
  // The backward takes the softmax probabilities (and relu's output) from
  // the training forward; after an inference forward, or none, it runs one.
  std::shared_ptr<const Artifact> artifact = load("fc-softmax-train");
  EXPECT_FALSE(artifact->manifest().backward->saved.empty());
  for (bool forwardFirst : {false, true}) {
    Executor exec = Executor::simpleBind(artifact, Context::cpu(), {{"data", {1, 4}}});
    setDocstringParams(exec);
    std::vector<float> data(4, 1.0f);
    exec.argMap().at("data").copyFrom(NDArray::fromData({1, 4}, DType::Float32, data.data()));
    exec.argMap().at("softmax_label").copyFrom(vector({1}));
    if (forwardFirst)
      exec.forward(false);
    exec.backward();
    EXPECT_NEAR(values(exec.gradMap().at("fc_weight"))[4], -0.92399555f, 1e-6) << forwardFirst;
  }
}

TEST(Executor, GradReqAddAccumulatesAndNullLeavesAlone) {
  NDArray gradA = vector({1, 1}), gradB = vector({5, 5});
  Executor exec = Executor::bind(load("axpb-train"), Context::cpu(), ArrayList{vector({1, 2}), vector({2, 3})},
                                 ArrayList{gradA, gradB}, std::map<std::string, std::string>{{"a", "add"}, {"b", "null"}});
  exec.forward(true);
  exec.backward({vector({1, 1})});
  exec.backward({vector({1, 1})});
  EXPECT_EQ(values(gradA), (std::vector<float>{5, 5})); // 1 + 2 + 2, never zeroed
  EXPECT_EQ(values(gradB), (std::vector<float>{5, 5}));
}

TEST(Executor, BackwardErrors) {
  Executor exec = Executor::simpleBind(load("axpb-train"), Context::cpu());
  exec.forward(true);
  EXPECT_EQ(errorOf([&] { exec.backward(); }, "MXNetError"),
            "Because the last operator is not Loss function, head_gradient is required when calling "
            "backward. If you are attempting to minimize the output as an objective, please modify "
            "your network and pass it through the make_loss symbol.");
  Executor inference = Executor::simpleBind(load("axpb"), Context::cpu());
  EXPECT_EQ(errorOf([&] { inference.backward({vector({1, 1})}); }, "MXNetError"),
            "'symc' was compiled for inference only; compile it with symc compile --train for backward");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(load("axpb-train-a"), Context::cpu()); }, "MXNetError"),
            "the gradient of 'b' was not compiled (symc compile --grad-req b=null); bind it with "
            "grad_req 'null'");
  Executor onlyA = Executor::simpleBind(load("axpb-train-a"), Context::cpu(),
                                        {}, std::map<std::string, std::string>{{"a", "write"}, {"b", "null"}});
  onlyA.forward(true);
  onlyA.backward({vector({1, 1})});
  EXPECT_EQ(values(onlyA.gradMap().at("a")), (std::vector<float>{2, 2}));
  EXPECT_TRUE(onlyA.gradMap().at("b").isNone());
}

TEST(Executor, BindErrors) {
  auto artifact = load("fc-softmax");
  EXPECT_EQ(errorOf([&] { Executor::bind(artifact, Context::cpu(), ArrayList{vector({1})}); },
                    "ValueError"),
            "Length of args does not match the number of arguments");
  EXPECT_EQ(errorOf([&] { Executor::bind(artifact, Context::cpu(), ArrayDict{{"data", NDArray({1, 4})}}); },
                    "ValueError"),
            "key `fc_weight` is missing in `args`");
  ArrayDict args{{"data", NDArray({1, 4})}, {"fc_weight", NDArray({6, 4})}, {"fc_bias", NDArray({6})},
                 {"softmax_label", NDArray({1})}};
  EXPECT_EQ(errorOf([&] { Executor::bind(artifact, Context::cpu(), args, std::nullopt, std::string("sum")); },
                    "ValueError"),
            "grad_req must be in {'null': 0, 'write': 1, 'add': 3}");
  ArrayDict wrongShape = args;
  wrongShape["fc_weight"] = NDArray({4, 6});
  EXPECT_NE(errorOf([&] { Executor::bind(artifact, Context::cpu(), wrongShape); }, "MXNetError")
                .find("Shape inconsistent for 'fc_weight'"),
            std::string::npos);
  auto conv = load("conv-bn-dropout");
  EXPECT_EQ(errorOf([&] {
              Executor::bind(conv, Context::cpu(),
                             ArrayDict{{"data", NDArray({1, 2, 5, 5})}, {"conv_weight", NDArray({4, 2, 3, 3})},
                                       {"conv_bias", NDArray({4})}, {"bn_gamma", NDArray({4})},
                                       {"bn_beta", NDArray({4})}});
            }, "ValueError"),
            "Length of aux_states does not match the number of arguments");
}

TEST(Executor, MissingGradientArrayMeansNull) {
  Executor exec = Executor::bind(load("axpb"), Context::cpu(), ArrayList{vector({1, 2}), vector({2, 3})},
                                 Arrays(ArrayDict{{"a", vector({0, 0})}}));
  EXPECT_EQ(exec.gradReqs()[0], GradReq::Write);
  EXPECT_EQ(exec.gradReqs()[1], GradReq::Null);
}

TEST(Executor, SimpleBindErrors) {
  auto artifact = load("axpb");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::cpu(), {}, std::string("sum")); },
                    "MXNetError"),
            "grad_req=sum is not a valid input in simple_bind; only 'null', 'write', and 'add' are supported");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::cpu(), {}, std::vector<std::string>{"write"}); },
                    "MXNetError"),
            "The length of grad_req list does not match the number of input arguments in simple_bind, "
            "expected 2, provided 1");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::cpu(), {}, std::vector<std::string>{}); },
                    "RuntimeError"),
            "grad_req in simple_bind cannot be an empty list");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::cpu(), {{"a", {3}}}); }, "RuntimeError"),
            "simple_bind error. Arguments:\na: (3,)\nshape (3,) of 'a' differs from the compiled shape (2,)");
  EXPECT_EQ(errorOf([&] { Executor::simpleBind(artifact, Context::gpu(0)); }, "MXNetError"),
            "this artifact was compiled for the CPU; bind it with ctx=cpu(), not gpu(0) (symc compile --target cuda "
            "compiles for a GPU)");
  // Names the symbol does not have are ignored, as MXNet does.
  EXPECT_NO_THROW(Executor::simpleBind(artifact, Context::cpu(), {{"c", {7}}}));
}

TEST(Executor, ForwardKeywordErrors) {
  Executor exec = Executor::simpleBind(load("axpb"), Context::cpu());
  EXPECT_EQ(errorOf([&] { exec.forward(false, {{"c", vector({1, 2})}}); }, "TypeError"),
            "Unknown argument c");
  EXPECT_EQ(errorOf([&] { exec.forward(false, {{"a", vector({1, 2, 3})}}); }, "ValueError"),
            "Shape not match! Argument a, need: (2,), received: (3,)");
}

TEST(Executor, CopyParamsFrom) {
  Executor exec = Executor::simpleBind(load("conv-bn-dropout"), Context::cpu(), {{"data", {1, 2, 5, 5}}});
  EXPECT_EQ(errorOf([&] { exec.copyParamsFrom({{"nope", vector({1})}}); }, "ValueError"),
            "Find name \"nope\" that is not in the arguments");
  EXPECT_EQ(errorOf([&] { exec.copyParamsFrom({}, ArrayDict{{"nope", vector({1})}}); }, "ValueError"),
            "Find name nope that is not in the auxiliary states");
  EXPECT_NO_THROW(exec.copyParamsFrom({{"nope", vector({1})}}, std::nullopt, /*allowExtraParams=*/true));
  // A shape mismatch names what it was copied into.
  EXPECT_EQ(errorOf([&] { exec.copyParamsFrom({}, ArrayDict{{"bn_moving_mean", vector({1})}}); }, "MXNetError"),
            "auxiliary state 'bn_moving_mean': operands shape mismatch from.shape = (1,) to.shape = (4,)");
  // A float64 source is cast to the destination dtype.
  std::vector<double> mean{1, 2, 3, 4};
  exec.copyParamsFrom({}, ArrayDict{{"bn_moving_mean", NDArray::fromData({4}, DType::Float64, mean.data())}});
  EXPECT_EQ(values(exec.auxMap().at("bn_moving_mean")), (std::vector<float>{1, 2, 3, 4}));
}

/// relu(conv(x, w) + bias) of conv-packed: 3 channels of 5x5, 32 filters
/// of 3x3, zero padding 1, computed directly.
std::vector<float> packedConvolution(const NDArray &x, const NDArray &w, const NDArray &bias) {
  const float *in = x.data<float>(), *filter = w.data<float>(), *b = bias.data<float>();
  std::vector<float> out(32 * 25);
  for (int f = 0; f < 32; ++f)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        double sum = b[f];
        for (int c = 0; c < 3; ++c)
          for (int ki = 0; ki < 3; ++ki)
            for (int kj = 0; kj < 3; ++kj) {
              int y = i + ki - 1, z = j + kj - 1;
              if (y >= 0 && y < 5 && z >= 0 && z < 5)
                sum += double(filter[((f * 3 + c) * 3 + ki) * 3 + kj]) * in[(c * 5 + y) * 5 + z];
            }
        out[(f * 5 + i) * 5 + j] = std::max(0.0, sum);
      }
  return out;
}

NDArray sequence(std::vector<int64_t> shape, float scale) {
  NDArray a(std::move(shape));
  for (size_t i = 0; i < a.size(); ++i)
    a.data<float>()[i] = scale * float(int(i * 37 % 23) - 11);
  return a;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "element " << i;
}

TEST(Executor, PreparedWeightsFollowEveryWriteToTheWeight) {
  std::shared_ptr<const Artifact> artifact = load("conv-packed");
  ASSERT_TRUE(artifact->manifest().prepare) << "the convolution no longer reads a prepared weight";
  Executor exec = Executor::simpleBind(artifact, Context::cpu(), {{"data", {1, 3, 5, 5}}});
  NDArray x = exec.argMap().at("data"), w = exec.argMap().at("conv_weight"), bias = exec.argMap().at("conv_bias");
  x.copyFrom(sequence({1, 3, 5, 5}, 0.5f));
  w.copyFrom(sequence({32, 3, 3, 3}, 0.01f));
  bias.fill(0.25);
  expectNear(values(exec.forward()[0]), packedConvolution(x, w, bias));
  // Through each way of writing: a copy, a fill, the pointer, copy_params_from.
  w.copyFrom(sequence({32, 3, 3, 3}, -0.02f));
  expectNear(values(exec.forward()[0]), packedConvolution(x, w, bias));
  w.fill(0.125);
  expectNear(values(exec.forward()[0]), packedConvolution(x, w, bias));
  w.data<float>()[7] = 3;
  expectNear(values(exec.forward()[0]), packedConvolution(x, w, bias));
  exec.copyParamsFrom({{"conv_weight", sequence({32, 3, 3, 3}, 0.03f)}});
  expectNear(values(exec.forward()[0]), packedConvolution(x, w, bias));
  // The training forward packs its own; both agree after a write.
  w.reshape({32 * 27}).data<float>()[100] = -2;
  std::vector<float> want = packedConvolution(x, w, bias);
  expectNear(values(exec.forward(true)[0]), want);
  expectNear(values(exec.forward(false)[0]), want);
}

TEST(Executor, PreparedWeightsServeEveryChunkOfADynamicBatch) {
  // Three images: a chunk of two, then one row, both reading the weight packed once.
  std::shared_ptr<const Artifact> artifact = load("conv-packed-dynamic");
  ASSERT_TRUE(artifact->manifest().prepare);
  Executor exec = Executor::simpleBind(artifact, Context::cpu(), {{"data", {3, 3, 5, 5}}});
  NDArray image = sequence({1, 3, 5, 5}, 0.5f), w = exec.argMap().at("conv_weight"),
          bias = exec.argMap().at("conv_bias");
  float *data = exec.argMap().at("data").data<float>();
  for (int i = 0; i < 3; ++i)
    std::copy(image.data<float>(), image.data<float>() + image.size(), data + i * image.size());
  for (float scale : {0.01f, -0.03f}) {
    w.copyFrom(sequence({32, 3, 3, 3}, scale));
    std::vector<float> want = packedConvolution(image, w, bias), got = values(exec.forward()[0]);
    for (int i = 0; i < 3; ++i)
      expectNear(std::vector<float>(got.begin() + i * want.size(), got.begin() + (i + 1) * want.size()), want);
  }
}

TEST(Executor, FixGammaForwardWritesOnesIntoGamma) {
  // BatchNorm's fix_gamma (the default) treats gamma as 1, and MXNet's
  // forward writes 1 into the gamma array.
  Executor exec = Executor::simpleBind(load("conv-bn-dropout"), Context::cpu(), {{"data", {1, 2, 5, 5}}});
  exec.argMap().at("bn_gamma").copyFrom(NDArray::fromData({4}, DType::Float32, std::vector<float>(4, 3).data()));
  exec.forward(false);
  EXPECT_EQ(values(exec.argMap().at("bn_gamma")), (std::vector<float>{1, 1, 1, 1}));
}

TEST(Executor, TrainingForwardNeedsTheTrainingVariant) {
  Executor exec = Executor::simpleBind(load("conv-bn-dropout"), Context::cpu(), {{"data", {1, 2, 5, 5}}});
  EXPECT_NO_THROW(exec.forward(false));
  EXPECT_NE(errorOf([&] { exec.forward(true); }, "MXNetError").find("node 'bn'"), std::string::npos);
}

TEST(Executor, DuplicateNamesRaiseInNameMaps) {
  Executor exec = Executor::simpleBind(load("duplicate-names"), Context::cpu(), {}, std::string("null"));
  EXPECT_EQ(exec.listArguments(), (std::vector<std::string>{"x", "x"}));
  EXPECT_EQ(errorOf([&] { exec.argMap(); }, "ValueError"), "Duplicate names detected, ['x', 'x']");
  EXPECT_NO_THROW(exec.outputMap());
}

TEST(Executor, BackwardWithHeadGradientsByName) {
  Executor exec = Executor::bind(load("axpb-train"), Context::cpu(), ArrayDict{{"a", vector({1, 2})}, {"b", vector({2, 3})}},
                                 ArrayDict{{"a", vector({0, 0})}, {"b", vector({0, 0})}});
  exec.forward(true);
  exec.backward(ArrayDict{{"_plus0_output", vector({4, 7})}});
  EXPECT_EQ(values(exec.gradArrays()[0]), (std::vector<float>{8, 14}));
  EXPECT_EQ(errorOf([&] { exec.backward(ArrayDict{{"other", vector({4, 7})}}); }, "KeyError"), "'_plus0_output'");
}

TEST(Executor, SimpleBindZeroDimMeansInferred) {
  Executor exec = Executor::simpleBind(load("fc-softmax"), Context::cpu(), {{"data", {1, 0}}});
  EXPECT_EQ(exec.argArrays()[0].shape(), (std::vector<int64_t>{1, 4}));
}

// reshape runs the same dynamic-batch artifact at another batch, over views
// of the parent's arrays and outputs (shared/mxnet-semantics.md 1.9).
TEST(Executor, ReshapeSharesMemoryWithoutRecompiling) {
  Executor exec = Executor::simpleBind(load("fc-softmax-dynamic"), Context::cpu(), {{"data", {4, 4}}},
                                       std::string("null"));
  NDArray(exec.argArrays()[1]).fill(1.0); // fc_weight (a handle sharing storage)
  NDArray(exec.argArrays()[0]).fill(1.0); // data
  Executor small = exec.reshape(false, false, {{"data", {2, 4}}, {"softmax_label", {2}}});
  EXPECT_EQ(small.argArrays()[0].shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(small.argArrays()[0].sharesStorageWith(exec.argArrays()[0]));
  EXPECT_TRUE(small.argArrays()[1].sharesStorageWith(exec.argArrays()[1]));
  NDArray(exec.outputs()[0]).fill(0.0);
  small.forward();
  // The parent's first rows hold the child's results.
  EXPECT_NEAR(exec.outputs()[0].data<float>()[0], 1.0f / 6, 1e-6);
  EXPECT_EQ(exec.outputs()[0].data<float>()[2 * 6], 0.0f);
  EXPECT_EQ(errorOf([&] { exec.reshape(false, false, {{"data", {8, 4}}, {"softmax_label", {8}}}); }, "MXNetError")
                .rfind("New shape of arg: data is larger than original.", 0),
            0u);
  Executor big = exec.reshape(false, true, {{"data", {8, 4}}, {"softmax_label", {8}}});
  EXPECT_FALSE(big.argArrays()[0].sharesStorageWith(exec.argArrays()[0]));
  EXPECT_EQ(big.forward()[0].shape(), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(errorOf([&] { exec.reshape(false, false, {{"data", {2, 4}}}); }, "MXNetError"),
            "Shape of unspecifie arg: softmax_label changed. This can cause the new executor to not share "
            "parameters with the old one. Please check for error in network.If this is intended, set "
            "partial_shaping=True to suppress this warning.");
}

TEST(Executor, ReshapeBeyondTheCompiledShapesNamesTheCompileCommand) {
  Executor exec = Executor::simpleBind(load("fc-softmax"), Context::cpu(), {}, std::string("null"));
  EXPECT_EQ(errorOf([&] { exec.reshape(true, true, {{"data", {3, 4}}}); }, "MXNetError"),
            "reshape: 'data' of shape (3, 4) does not fit the compiled shape (1, 4): only the dynamic (-1) batch "
            "dim changes without recompiling; compile with symc compile --shape 'data=?,4' ('?' keeps the batch dim "
            "dynamic, 'A|B' compiles both sizes into one artifact)");
}

TEST(Executor, SimpleBindSharesWithAnotherExecutor) {
  auto artifact = load("fc-softmax-dynamic");
  Executor big = Executor::simpleBind(artifact, Context::cpu(), {{"data", {4, 4}}});
  ArrayDict buffer;
  SharedMemory shared{&big, {"fc_weight", "fc_bias"}, &buffer};
  Executor small = Executor::simpleBind(artifact, Context::cpu(), {{"data", {2, 4}}}, std::string("write"), {}, shared);
  EXPECT_TRUE(small.argArrays()[1].sharesStorageWith(big.argArrays()[1]));
  EXPECT_TRUE(small.gradArrays()[1].sharesStorageWith(big.gradArrays()[1]));
  EXPECT_FALSE(small.argArrays()[0].sharesStorageWith(big.argArrays()[0]));
  ASSERT_TRUE(buffer.count("data") && buffer.count("grad of data") && buffer.count("softmax_label"));
  EXPECT_TRUE(small.argArrays()[0].sharesStorageWith(buffer["data"]));
  // The buffer's arrays serve a later, smaller executor as views.
  Executor smaller = Executor::simpleBind(artifact, Context::cpu(), {{"data", {1, 4}}}, std::string("write"), {},
                                          SharedMemory{&big, {"fc_weight", "fc_bias"}, &buffer});
  EXPECT_TRUE(smaller.argArrays()[0].sharesStorageWith(small.argArrays()[0]));
  EXPECT_EQ(errorOf([&] {
              Executor::simpleBind(artifact, Context::cpu(), {{"data", {2, 4}}}, std::string("write"), {},
                                   SharedMemory{&big, {"data"}, nullptr});
            }, "MXNetError"),
            "Inferred shape does not match shared_exec.arg_array's shape Therefore, the allocated memory for "
            "shared_exec.arg_array cannot be resued for creating NDArray of the argument data for the current executor");
}

TEST(Executor, PartialForwardStepsThroughMXNetsNodes) {
  Executor exec = Executor::simpleBind(load("fc-softmax"), Context::cpu(), {{"data", {1, 4}}});
  setDocstringParams(exec);
  std::vector<float> data(4, 1.0f);
  exec.argMap().at("data").copyFrom(NDArray::fromData({1, 4}, DType::Float32, data.data()));
  std::vector<std::pair<int, std::string>> seen;
  int step = 0;
  exec.setMonitorCallback([&](const std::string &name, const NDArray &) { seen.push_back({step, name}); });
  // data, fc_weight, fc_bias, fc, relu, softmax_label, softmax.
  std::vector<int> left;
  for (step = 0; step < 7; ++step)
    left.push_back(exec.partialForward(false, step));
  EXPECT_EQ(left, (std::vector<int>{6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(seen, (std::vector<std::pair<int, std::string>>{{3, "fc_output"}, {4, "relu_output"}, {6, "softmax_output"}}));
  std::vector<float> partial = values(exec.outputs()[0]);
  EXPECT_EQ(partial, values(exec.forward()[0]));
  EXPECT_NEAR(partial[5], 0.5616011f, 1e-6);
  EXPECT_EQ(exec.partialForward(false, 7), 0);
  EXPECT_EQ(exec.partialForward(false, -1), 0);
}

TEST(Executor, MonitorCallsBackEveryBackwardNode) {
  // MXNet's backward graph: SoftmaxOutput's head needs no head gradient;
  // each node's outputs are the gradients of its inputs, the label's zero.
  Executor exec = Executor::simpleBind(load("fc-softmax-train"), Context::cpu(), {{"data", {1, 4}}});
  setDocstringParams(exec);
  std::vector<float> data(4, 1.0f);
  exec.argMap().at("data").copyFrom(NDArray::fromData({1, 4}, DType::Float32, data.data()));
  exec.argMap().at("softmax_label").copyFrom(vector({1}));
  std::vector<std::string> seen;
  std::map<std::string, std::vector<float>> arrays;
  exec.setMonitorCallback([&](const std::string &name, const NDArray &array) {
    seen.push_back(name);
    arrays[name] = values(array);
  });
  exec.forward(true);
  exec.backward();
  EXPECT_EQ(seen, (std::vector<std::string>{"fc_output", "relu_output", "softmax_output", "softmax_backward_output0",
                                            "softmax_backward_output1", "relu_backward_output", "fc_backward_output0",
                                            "fc_backward_output1", "fc_backward_output2"}));
  EXPECT_EQ(arrays["fc_backward_output1"], values(exec.gradMap().at("fc_weight")));
  EXPECT_NEAR(arrays["fc_backward_output1"][4], -0.92399555f, 1e-6);
  EXPECT_EQ(arrays["softmax_backward_output1"], std::vector<float>{0});
  std::string text = exec.debugStr();
  EXPECT_NE(text.find("Op:_backward_FullyConnected, Name=fc_backward\nInputs:\n\targ[0]=relu_backward(0)\n"
                      "\targ[1]=data(0) version=0\n\targ[2]=fc_weight(0) version=0\nAttrs:\n\tnum_hidden=6\n"
                      "Control deps:\n\tcdep[0]=fc\n"),
            std::string::npos)
      << text;
  // Without gradients, MXNet's graph has no backward part.
  Executor inference = Executor::simpleBind(load("fc-softmax-train"), Context::cpu(), {{"data", {1, 4}}}, "null");
  EXPECT_EQ(inference.debugStr().find("_backward"), std::string::npos);
}

/// Fills `a` with values in [-0.5, 0.5) from a fixed linear congruential sequence.
void fillDeterministic(NDArray &a, uint32_t seed) {
  for (size_t i = 0; i < a.size(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    a.data<float>()[i] = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
}

/// A 1x1 convolution of NCHW `x` (N, C, P positions) by weight (F, C),
/// or with `transposed` by its transpose (the data gradient of g).
std::vector<float> pointwise(const std::vector<float> &x, const std::vector<float> &weight, int64_t n, int64_t c,
                             int64_t f, int64_t p, bool transposed) {
  std::vector<float> y(n * f * p, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t k = 0; k < c; ++k) {
        float w = transposed ? weight[k * f + o] : weight[o * c + k];
        for (int64_t q = 0; q < p; ++q)
          y[(i * f + o) * p + q] += w * x[(i * c + k) * p + q];
      }
  return y;
}

void expectAllNear(const std::vector<float> &got, const std::vector<float> &expected, float tolerance,
                   const std::string &what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], tolerance * (1 + std::fabs(expected[i]))) << what << " element " << i;
}

TEST(Executor, MonitoredTrainingStepSeesChannelsFirstArrays) {
  // resblock's training step, monitored or not, runs its convolutions
  // channels-last; the monitor still sees MXNet's NCHW arrays, and the
  // monitored step computes the same gradients.
  Executor exec = Executor::simpleBind(load("resblock-monitored"), Context::cpu());
  uint32_t seed = 1;
  for (auto [name, array] : exec.argMap()) // handles sharing the executor's storage
    if (name != "softmax_label")
      fillDeterministic(array, seed++);
  exec.argMap().at("softmax_label").copyFrom(vector({1, 3, 5, 7}));
  exec.forward(true);
  exec.backward();
  std::map<std::string, std::vector<float>> plain;
  for (const auto &[name, grad] : exec.gradMap())
    if (!grad.isNone())
      plain[name] = values(grad);
  std::map<std::string, std::vector<float>> seen;
  exec.setMonitorCallback([&](const std::string &name, const NDArray &array) { seen[name] = values(array); });
  exec.forward(true);
  exec.backward();
  for (const auto &[name, grad] : plain)
    expectAllNear(values(exec.gradMap().at(name)), grad, 1e-4f, "gradient of " + name);
  // b1_conv2, 32 -> 32 channels over 8x8 positions of 4 images, and its data gradient.
  std::vector<float> weight = values(exec.argMap().at("b1_conv2_weight"));
  expectAllNear(seen.at("b1_conv2_output"), pointwise(seen.at("b1_dw_relu_output"), weight, 4, 32, 32, 64, false),
                1e-4f, "b1_conv2_output");
  expectAllNear(seen.at("b1_conv2_backward_output0"),
                pointwise(seen.at("b1_conv2_bn_backward_output0"), weight, 4, 32, 32, 64, true), 1e-4f,
                "b1_conv2_backward_output0");
  // Global average pooling of 4x4 maps, and its gradient spread over them.
  const std::vector<float> &pool = seen.at("pool_output"), &gap = seen.at("gap_output");
  const std::vector<float> &flatGrad = seen.at("flatten0_backward_output"), &gapGrad = seen.at("gap_backward_output");
  std::vector<float> mean(4 * 32, 0.0f), spread(4 * 32 * 16);
  for (size_t i = 0; i < spread.size(); ++i) {
    mean[i / 16] += pool[i] / 16;
    spread[i] = flatGrad[i / 16] / 16;
  }
  expectAllNear(gap, mean, 1e-5f, "gap_output");
  expectAllNear(gapGrad, spread, 1e-5f, "gap_backward_output");
}

TEST(Executor, StaticBatchInChunksComputesTheWholeBatch) {
  // resblock at batch 4, run one image at a time through all its layers
  // (--batch-chunk-bytes 4096) and whole: the same outputs, and a
  // workspace that holds one image's activations instead of four.
  std::shared_ptr<const Artifact> chunked = load("resblock-chunked"), whole = load("resblock-whole");
  EXPECT_LT(chunked->manifest().workspaceBytes * 2, whole->manifest().workspaceBytes);
  Executor a = Executor::simpleBind(chunked, Context::cpu(), {}, "null");
  Executor b = Executor::simpleBind(whole, Context::cpu(), {}, "null");
  uint32_t seed = 1;
  for (auto [name, array] : a.argMap()) {
    fillDeterministic(array, seed++);
    b.argMap().at(name).copyFrom(array);
  }
  for (auto [name, array] : a.auxMap()) {
    fillDeterministic(array, seed++);
    for (size_t i = 0; i < array.size(); ++i)
      array.data<float>()[i] += 1.0f; // variances above 0
    b.auxMap().at(name).copyFrom(array);
  }
  expectAllNear(values(a.forward()[0]), values(b.forward()[0]), 1e-5f, "softmax_output");
}

TEST(Executor, ThreadCount) {
  Executor exec = Executor::simpleBind(load("fc-softmax"), Context::cpu(), {{"data", {1, 4}}});
  exec.setNumThreads(1);
  EXPECT_NO_THROW(exec.forward());
  EXPECT_EQ(exec.numThreads(), 1);
}

} // namespace
