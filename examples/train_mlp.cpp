//===- train_mlp.cpp - fine-tune an MXNet MLP with symc alone -------------===//
//
// Trains examples/mlp-symbol.json (an MXNet MLP: 64 -> 64 -> 4 classes with
// a SoftmaxOutput head, here on 16 inputs) on a synthetic dataset whose class
// is the largest of four fixed linear projections of the input, with plain
// SGD, and prints the falling cross-entropy loss of each epoch; it fails
// when the loss has not at least halved. The artifact comes from
//
//   symc compile examples/mlp-symbol.json --shape data=32,16 --train -o mlp-train.so
//
// and the program links only libsymrt:  train-mlp mlp-train.so
//
//===----------------------------------------------------------------------===//
#include "symc/Executor.h"

#include <cmath>
#include <cstdio>
#include <random>

using namespace symc;

namespace {

constexpr int64_t kBatch = 32, kFeatures = 16, kClasses = 4, kBatchesPerEpoch = 64, kEpochs = 8;
constexpr float kLearningRate = 0.5f;

/// Inputs uniform in [-1, 1); the label is the projection that scores highest.
struct Dataset {
  std::mt19937 rng{7};
  std::vector<float> projections = random(kClasses * kFeatures);

  std::vector<float> random(size_t n) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (float &v : values)
      v = uniform(rng);
    return values;
  }

  void batch(NDArray &data, NDArray &label) {
    std::vector<float> x = random(kBatch * kFeatures);
    std::copy(x.begin(), x.end(), data.data<float>());
    for (int64_t n = 0; n < kBatch; ++n) {
      int best = 0;
      float bestScore = -INFINITY;
      for (int c = 0; c < kClasses; ++c) {
        float score = 0;
        for (int64_t f = 0; f < kFeatures; ++f)
          score += projections[c * kFeatures + f] * x[n * kFeatures + f];
        if (score > bestScore)
          bestScore = score, best = c;
      }
      label.data<float>()[n] = static_cast<float>(best);
    }
  }
};

/// Mean cross-entropy of the SoftmaxOutput probabilities against the labels.
double crossEntropy(const NDArray &probabilities, const NDArray &label) {
  double loss = 0;
  for (int64_t n = 0; n < kBatch; ++n) {
    auto c = static_cast<int64_t>(label.data<float>()[n]);
    loss -= std::log(std::max(1e-12f, probabilities.data<float>()[n * kClasses + c]));
  }
  return loss / kBatch;
}

/// Small random weights (scaled by fan-in), zero biases.
void initialize(Executor &exec, std::mt19937 &rng) {
  for (auto &[name, array] : exec.argMap()) {
    if (name.size() < 7 || name.compare(name.size() - 7, 7, "_weight") != 0)
      continue;
    std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / array.shape()[1]));
    for (size_t i = 0; i < array.size(); ++i)
      array.data<float>()[i] = normal(rng);
  }
}

/// w -= lr * grad / batch for every parameter: SoftmaxOutput's gradient is a
/// sum over the batch, which MXNet's optimizers rescale (rescale_grad =
/// 1/batch_size). Data and label have gradients too; they are not updated.
void sgdStep(Executor &exec) {
  ArrayDict grads = exec.gradMap();
  for (auto &[name, array] : exec.argMap()) {
    if (name == "data" || name == "softmax_label")
      continue;
    const NDArray &grad = grads.at(name);
    for (size_t i = 0; i < array.size(); ++i)
      array.data<float>()[i] -= kLearningRate / kBatch * grad.data<float>()[i];
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: train-mlp MLP-TRAIN.so\n");
    return 1;
  }
  try {
    Executor exec = Executor::simpleBind(Artifact::load(argv[1]), Context::cpu(),
                                         {{"data", {kBatch, kFeatures}}}, "write");
    std::mt19937 rng(1);
    initialize(exec, rng);
    Dataset dataset;
    ArrayDict args = exec.argMap();
    double firstLoss = 0, loss = 0;
    for (int epoch = 1; epoch <= kEpochs; ++epoch) {
      loss = 0;
      for (int step = 0; step < kBatchesPerEpoch; ++step) {
        dataset.batch(args.at("data"), args.at("softmax_label"));
        loss += crossEntropy(exec.forward(true)[0], args.at("softmax_label"));
        exec.backward();
        sgdStep(exec);
      }
      loss /= kBatchesPerEpoch;
      std::printf("epoch %d: loss %.4f\n", epoch, loss);
      if (epoch == 1)
        firstLoss = loss;
    }
    if (!(loss < 0.5 * firstLoss)) {
      std::fprintf(stderr, "train-mlp: the loss did not fall (%.4f -> %.4f)\n", firstLoss, loss);
      return 2;
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "train-mlp: %s: %s\n", e.kind().c_str(), e.what());
    return 1;
  }
  return 0;
}
