//===- CudaTest.cpp - CUDA artifacts against the CPU path -----------------===//
//
// Each fixture is compiled twice (CMakeLists.txt): for the CPU (x86-64-v3,
// to run on any GPU machine's host), whose numbers the oracle tests hold to
// MXNet, and with --target cuda. Both executors get
// the same random arguments and aux states and the same step seed; every
// output, gradient and aux update of the GPU must match the CPU's. Without
// a GPU (or its driver, or libsymrt_cuda) the tests that run kernels skip;
// the ones about refusing a mismatched context run everywhere.
//
//===----------------------------------------------------------------------===//
#include "symc/Executor.h"
#include "symc/ExecutorGroup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

using namespace symc;

namespace {

std::shared_ptr<const Artifact> load(const std::string &name, const std::string &dir = SYMC_E2E_DIR) {
  return Artifact::load(dir + "/" + name + ".so");
}

/// Why gpu(0) cannot hold an array here, or "" when it can.
std::string gpuMissing() {
  static const std::string reason = [] {
    try {
      NDArray probe({1}, DType::Float32, Context::gpu(0));
      return std::string();
    } catch (const Error &e) {
      return std::string(e.what());
    }
  }();
  return reason;
}

#define REQUIRE_GPU()                                                                                            \
  if (!gpuMissing().empty())                                                                                     \
  GTEST_SKIP() << "no GPU: " << gpuMissing()

/// Uniform values in [lo, hi) of `like`'s shape, in host memory.
NDArray randomLike(const NDArray &like, std::mt19937 &rng, float lo, float hi) {
  std::uniform_real_distribution<float> draw(lo, hi);
  std::vector<float> values(like.size());
  for (float &v : values)
    v = draw(rng);
  return NDArray::fromData(like.shape(), DType::Float32, values.data());
}

/// How far a GPU array may stray from the CPU's: relative L2 distance,
/// and each element relative to its magnitude. The kernels and cuBLAS sum
/// in other orders than the CPU's: forward outputs agree to float32
/// rounding; gradients also see a max pooling pick another of two
/// near-equal inputs (measured on LeNet: 1.05e-5 in L2, 3e-4 at worst).
struct Tolerance {
  double l2, element;
};
constexpr Tolerance kForward{1e-5, 1e-4}, kGradient{1e-4, 1e-3};
/// Whole networks: each element carries the rounding of every sum before
/// it, through a hundred layers (measured: ResNet-18's and MobileNet's
/// outputs 1.2e-4 apart at worst, 2.5e-5 in L2).
constexpr Tolerance kNetwork{1e-4, 1e-3};

/// `got` (any context) against `want` within `tol`, with an absolute floor
/// of float32 rounding for arrays that are zero up to rounding (a bias
/// gradient before BatchNorm).
void expectClose(const NDArray &got, const NDArray &want, const std::string &what, Tolerance tol = kForward) {
  NDArray a(got.shape(), DType::Float64), b(want.shape(), DType::Float64);
  a.copyFrom(got);
  b.copyFrom(want);
  ASSERT_EQ(a.shape(), b.shape()) << what;
  double distance = 0, norm = 0;
  size_t mismatches = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a.data<double>()[i], y = b.data<double>()[i];
    if ((!std::isfinite(x) || !std::isfinite(y)) && ((std::isnan(x) && std::isnan(y)) || x == y))
      continue; // the same NaN or infinity on both paths
    distance += (x - y) * (x - y);
    norm += y * y;
    if (!(std::fabs(x - y) <= tol.element * (1 + std::fabs(y))) && mismatches++ < 3)
      ADD_FAILURE() << what << "[" << i << "]: gpu " << x << ", cpu " << y;
  }
  EXPECT_EQ(mismatches, 0u) << what;
  EXPECT_LE(std::sqrt(distance), tol.l2 * std::sqrt(norm) + 1e-6 * std::sqrt(double(a.size()))) << what;
}

/// Binds `name`-ref (in `dir`) on the CPU and `name`-cuda on gpu(0) with the
/// same random inputs, runs a forward (and with `train`, a training step)
/// on both and compares everything they produce.
/// A network's weights (arguments named *weight) drawn in [-1, 1] and
/// scaled by 1 / sqrt(fan-in), as initializers do: with unscaled weights a
/// deep network's activations saturate (relu6) and grow, and float
/// rounding differences grow with them layer by layer (MobileNet v2: 1e-7
/// after 2 layers, 6% at the end; 1.3e-7 at the end scaled).
void scaleWeights(Executor &exec, const std::vector<std::string> &names) {
  for (size_t i = 0; i < names.size(); ++i) {
    NDArray array = exec.argArrays()[i];
    const std::string suffix = "weight";
    if (array.shape().size() < 2 || names[i].size() < suffix.size() ||
        names[i].compare(names[i].size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    NDArray host(array.shape(), DType::Float32);
    host.copyFrom(array);
    float scale = 1.0f / std::sqrt(float(array.size() / array.shape()[0]));
    for (size_t j = 0; j < host.size(); ++j)
      host.data<float>()[j] *= scale;
    array.copyFrom(host);
  }
}

void checkAgainstCpu(const std::string &name, bool train, std::map<std::string, std::vector<int64_t>> shapes = {},
                     const std::string &dir = SYMC_E2E_DIR, Tolerance forward = kForward, bool network = false) {
  std::string req = train ? "write" : "null";
  Executor cpu = Executor::simpleBind(load(name + "-ref", dir), Context::cpu(), shapes, req);
  Executor gpu = Executor::simpleBind(load(name + "-cuda", dir), Context::gpu(0), shapes, req);
  std::mt19937 rng(7);
  // (Copies of a bound array share its storage.)
  for (size_t i = 0; i < cpu.argArrays().size(); ++i) {
    NDArray values = randomLike(cpu.argArrays()[i], rng, -1, 1), onCpu = cpu.argArrays()[i],
            onGpu = gpu.argArrays()[i];
    onCpu.copyFrom(values);
    onGpu.copyFrom(values);
  }
  if (network)
    for (Executor *exec : {&cpu, &gpu})
      scaleWeights(*exec, cpu.listArguments());
  for (size_t i = 0; i < cpu.auxArrays().size(); ++i) {
    NDArray values = randomLike(cpu.auxArrays()[i], rng, 0.5, 1.5), onCpu = cpu.auxArrays()[i],
            onGpu = gpu.auxArrays()[i]; // moving variances stay positive
    onCpu.copyFrom(values);
    onGpu.copyFrom(values);
  }
  for (Executor *exec : {&cpu, &gpu}) {
    seedRandom(11); // the same Dropout masks
    exec->forward(train);
  }
  for (size_t i = 0; i < cpu.outputs().size(); ++i)
    expectClose(gpu.outputs()[i], cpu.outputs()[i], name + " output " + std::to_string(i), forward);
  if (!train)
    return;
  // Head gradients, for the outputs that are no loss (host arrays: each
  // executor copies them into its own memory).
  std::vector<NDArray> heads;
  for (const NDArray &output : cpu.outputs())
    heads.push_back(randomLike(output, rng, -1, 1));
  cpu.backward(heads);
  gpu.backward(heads);
  for (size_t i = 0; i < cpu.gradArrays().size(); ++i)
    if (!cpu.gradArrays()[i].isNone())
      expectClose(gpu.gradArrays()[i], cpu.gradArrays()[i], name + " gradient of " + cpu.listArguments()[i],
                  kGradient);
  for (size_t i = 0; i < cpu.auxArrays().size(); ++i)
    expectClose(gpu.auxArrays()[i], cpu.auxArrays()[i], name + " aux " + cpu.listAuxiliaryStates()[i], forward);
}

TEST(Cuda, ArtifactRefusesTheCpuContext) {
  std::string message;
  try {
    Executor::simpleBind(load("axpb-cuda"), Context::cpu());
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find("compiled for cuda:sm_"), std::string::npos) << message;
}

TEST(Cuda, CpuArtifactRefusesAGpuContext) {
  std::string message;
  try {
    Executor::simpleBind(load("axpb-ref"), Context::gpu(0));
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find("compiled for the CPU"), std::string::npos) << message;
}

TEST(Cuda, ArraysRoundTrip) {
  REQUIRE_GPU();
  std::mt19937 rng(3);
  NDArray host = randomLike(NDArray({3, 5}), rng, -2, 2);
  NDArray device({3, 5}, DType::Float32, Context::gpu(0));
  device.copyFrom(host);
  EXPECT_TRUE(device.onDevice());
  expectClose(device.toHost(), host, "round trip");
  NDArray twice = device.copy();
  twice.addFrom(host);
  NDArray doubled = host.copy();
  doubled.addFrom(host);
  expectClose(twice, doubled, "addFrom on the device");
  device.fill(0.25);
  EXPECT_EQ(device.toHost().data<float>()[14], 0.25f);
}

TEST(Cuda, ElementwiseForwardAndBackward) {
  REQUIRE_GPU();
  checkAgainstCpu("axpb-train", true);
}

TEST(Cuda, FullyConnectedSoftmaxForward) {
  REQUIRE_GPU();
  checkAgainstCpu("fc-softmax", false);
}

TEST(Cuda, FullyConnectedSoftmaxTrainingStep) {
  REQUIRE_GPU();
  checkAgainstCpu("fc-softmax-train", true);
}

TEST(Cuda, DynamicBatch) {
  REQUIRE_GPU();
  for (int64_t batch : {1, 3, 5})
    checkAgainstCpu("fc-softmax-dynamic", false, {{"data", {batch, 4}}});
}

TEST(Cuda, ConvolutionBatchNormDropoutTrainingStep) {
  REQUIRE_GPU();
  checkAgainstCpu("conv-bn-dropout-train", true);
}

// A residual block with a strided, a depthwise and 1x1 convolutions (im2col
// GEMMs and direct loops on the GPU), BatchNorm statistics long enough to
// be split into partial sums, max and global average pooling.
TEST(Cuda, ResidualBlockForward) {
  REQUIRE_GPU();
  checkAgainstCpu("resblock", false);
}

TEST(Cuda, ResidualBlockTrainingStep) {
  REQUIRE_GPU();
  checkAgainstCpu("resblock-train", true);
}

// Every pair NAME-ref.so / NAME-cuda.so in $SYMC_CUDA_PAIRS (written by
// test/oracle/make_cuda_pairs.py: the oracle's op cases and models, which
// the CPU path matches MXNet on), a training step where the artifact has a
// backward.
TEST(Cuda, OraclePairs) {
  REQUIRE_GPU();
  const char *dir = std::getenv("SYMC_CUDA_PAIRS");
  if (!dir)
    GTEST_SKIP() << "SYMC_CUDA_PAIRS is not set";
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::string file = entry.path().filename().string();
    const std::string suffix = "-cuda.so";
    if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  ASSERT_FALSE(names.empty()) << "no pairs in " << dir;
  size_t checked = 0;
  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    ++checked;
    try {
      bool train = load(name + "-cuda", dir)->manifest().backward.has_value();
      bool network = name.rfind("model_", 0) == 0 || name.rfind("zoo_", 0) == 0;
      checkAgainstCpu(name, train, {}, dir, network ? kNetwork : kForward, network);
    } catch (const std::exception &e) {
      ADD_FAILURE() << name << ": " << e.what();
      // A kernel's fault poisons the process's CUDA context: no later pair
      // could run.
      if (std::string(e.what()).find("running the kernels failed") != std::string::npos) {
        ADD_FAILURE() << "the GPU context is lost after " << name << ": the pairs after it were not run";
        break;
      }
    }
  }
  std::printf("checked %zu of %zu pairs from %s\n", checked, names.size(), dir);
}

TEST(Cuda, LeNetForward) {
  REQUIRE_GPU();
  checkAgainstCpu("lenet", false);
}

TEST(Cuda, LeNetTrainingStep) {
  REQUIRE_GPU();
  checkAgainstCpu("lenet-train", true);
}

/// A training step of a data-parallel group on GPUs against one CPU
/// executor on the whole batch: the summed gradients, then two SGD steps
/// with momentum (on the GPU arrays), give the whole batch's.
void checkGroupAgainstCpu(const std::vector<Context> &gpus, KVStoreType kvstore) {
  const std::vector<std::string> params{"fc_weight", "fc_bias"};
  const ShapeDict shapes{{"data", {5, 4}}, {"softmax_label", {5}}};
  DataParallelExecutorGroup group(load("fc-softmax-train-sizes-cuda"), gpus, std::vector<double>(gpus.size(), 1.0),
                                  shapes, params);
  Executor whole = Executor::simpleBind(load("fc-softmax-train-sizes-ref"), Context::cpu(), shapes,
                                       std::map<std::string, std::string>{{"fc_weight", "write"}, {"fc_bias", "write"}});
  std::mt19937 rng(5);
  ArrayDict values;
  for (const std::string &name : params)
    values[name] = randomLike(whole.argMap().at(name), rng, -1, 1);
  NDArray labels({5});
  for (int64_t r = 0; r < 5; ++r)
    labels.data<float>()[r] = static_cast<float>(r % 6);
  ArrayDict batch{{"data", randomLike(whole.argMap().at("data"), rng, -1, 1)}, {"softmax_label", labels}};
  group.setParams(values, {});
  whole.copyParamsFrom(values);
  SGD perDevice(SGDOptions{0.1f, 0.9f, 0.01f, 1.0f / 5}), single(SGDOptions{0.1f, 0.9f, 0.01f, 1.0f / 5});
  for (int step = 0; step < 2; ++step) {
    group.loadDataBatch(batch);
    group.forward(true);
    group.backward();
    group.aggregateGradients(kvstore);
    whole.forward(true, batch);
    whole.backward();
    for (const std::string &name : params)
      for (const auto &exec : group.executors())
        expectClose(exec->gradMap().at(name), whole.gradMap().at(name), "step " + std::to_string(step) +
                    " gradient of " + name + " on " + exec->argMap().at(name).context().str(), kGradient);
    group.update(perDevice);
    for (size_t p = 0; p < params.size(); ++p)
      single.update(static_cast<int>(p), params[p], whole.argMap().at(params[p]), whole.gradMap().at(params[p]));
  }
  for (const std::string &name : params)
    for (const auto &exec : group.executors())
      expectClose(exec->argMap().at(name), whole.argMap().at(name), name + " after two steps", kGradient);
}

TEST(Cuda, ExecutorGroupSumsThroughHostMemory) {
  REQUIRE_GPU();
  checkGroupAgainstCpu({Context::gpu(0), Context::gpu(0)}, KVStoreType::Local);
  // Two executors on one GPU: NCCL cannot hold both, 'device' sums as 'local'.
  checkGroupAgainstCpu({Context::gpu(0), Context::gpu(0)}, KVStoreType::Device);
}

/// NCCL with one rank per GPU this machine has (one rank: the all-reduce
/// of the whole batch's gradient leaves it as it is).
TEST(Cuda, ExecutorGroupSumsWithNccl) {
  REQUIRE_GPU();
  int count = 0;
  for (; count < 8; ++count)
    try {
      NDArray probe({1}, DType::Float32, Context::gpu(count));
    } catch (const Error &) {
      break;
    }
  std::vector<Context> gpus;
  for (int i = 0; i < std::min(count, 5); ++i)
    gpus.push_back(Context::gpu(i));
  checkGroupAgainstCpu(gpus, KVStoreType::Nccl);
  std::string message;
  try {
    checkGroupAgainstCpu({Context::gpu(0), Context::gpu(0)}, KVStoreType::Nccl);
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find("NCCL needs one GPU per rank: gpu(0) is given twice"), std::string::npos) << message;
}

} // namespace
