//===- CApiTest.cpp - libsymrt's C API on compiled artifacts --------------===//
//
// What a C caller does: list an artifact's tensors, bind with its own
// buffers, gradients and per-argument grad_req, load and save .params, and
// read errors with their MXNet exception kind.
//
//===----------------------------------------------------------------------===//
#include "symc/c_api.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string artifactPath(const char *name) { return std::string(SYMC_E2E_DIR) + "/" + name + ".so"; }

/// Fails the test with the C API's error when `rc` is not 0.
#define ASSERT_OK(call) ASSERT_EQ((call), 0) << SymcGetLastErrorKind() << ": " << SymcGetLastError()

std::vector<float> floats(SymcNDArrayHandle array) {
  int ndim;
  const int64_t *shape;
  void *data;
  EXPECT_EQ(SymcNDArrayGetShape(array, &ndim, &shape), 0);
  EXPECT_EQ(SymcNDArrayGetData(array, &data), 0);
  int64_t size = 1;
  for (int i = 0; i < ndim; ++i)
    size *= shape[i];
  return std::vector<float>(static_cast<float *>(data), static_cast<float *>(data) + size);
}

struct Handles {
  SymcArtifactHandle artifact = nullptr;
  SymcExecutorHandle exec = nullptr;
  std::vector<SymcNDArrayHandle> arrays;
  ~Handles() {
    for (SymcNDArrayHandle a : arrays)
      SymcNDArrayFree(a);
    SymcExecutorFree(exec);
    SymcArtifactFree(artifact);
  }
  SymcNDArrayHandle keep(SymcNDArrayHandle a) {
    arrays.push_back(a);
    return a;
  }
};

TEST(CApi, Version) {
  const char *version;
  int abi;
  ASSERT_OK(SymcGetVersion(&version, &abi));
  EXPECT_STREQ(version, SYMC_VERSION_STRING);
  EXPECT_EQ(abi, 9);
}

TEST(CApi, ListsTensors) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("fc-softmax-dynamic").c_str(), nullptr, &h.artifact));
  int count;
  ASSERT_OK(SymcArtifactNumTensors(h.artifact, SYMC_ARGUMENTS, &count));
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    const char *name;
    ASSERT_OK(SymcArtifactGetTensor(h.artifact, SYMC_ARGUMENTS, i, &name, nullptr, nullptr, nullptr));
    names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"data", "fc_weight", "fc_bias", "softmax_label"}));
  int ndim, dtype;
  const int64_t *shape;
  const char *name;
  ASSERT_OK(SymcArtifactGetTensor(h.artifact, SYMC_OUTPUTS, 0, &name, &ndim, &shape, &dtype));
  EXPECT_STREQ(name, "softmax_output");
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[0], -1); // the dynamic batch
  EXPECT_EQ(shape[1], 6);
  EXPECT_EQ(dtype, 0);
  int hasBackward = 1;
  ASSERT_OK(SymcArtifactHasBackward(h.artifact, &hasBackward));
  EXPECT_EQ(hasBackward, 0);
  EXPECT_EQ(SymcArtifactGetTensor(h.artifact, SYMC_AUX_STATES, 0, &name, nullptr, nullptr, nullptr), -1);
  EXPECT_STREQ(SymcGetLastErrorKind(), "IndexError");
}

/// 2*a+b over the caller's buffers, gradients written for a and added for b.
TEST(CApi, ShapeVariants) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("conv-gap-sizes").c_str(), nullptr, &h.artifact));
  int count = 0;
  ASSERT_OK(SymcArtifactNumShapeVariants(h.artifact, &count));
  ASSERT_EQ(count, 3);
  SymcArtifactHandle variant = nullptr;
  ASSERT_OK(SymcArtifactGetShapeVariant(h.artifact, 2, &variant));
  int ndim;
  const int64_t *shape;
  ASSERT_OK(SymcArtifactGetTensor(variant, SYMC_ARGUMENTS, 0, nullptr, &ndim, &shape, nullptr));
  EXPECT_EQ(std::vector<int64_t>(shape, shape + ndim), (std::vector<int64_t>{-1, 2, 12, 12}));
  SymcArtifactFree(variant);
  EXPECT_NE(SymcArtifactGetShapeVariant(h.artifact, 3, &variant), 0);
  const char *names[] = {"data"};
  const int dims = 4;
  for (auto [image, fits] : {std::pair{int64_t(12), 1}, std::pair{int64_t(10), 0}}) {
    const int64_t data[] = {5, 2, 8, image};
    int got = -1;
    ASSERT_OK(SymcArtifactFits(h.artifact, 1, names, data, &dims, &got));
    EXPECT_EQ(got, fits) << image;
  }
}

TEST(CApi, ExecutorManagerWithBuckets) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("fc-softmax-train-sizes").c_str(), nullptr, &h.artifact));
  const int devTypes[] = {1, 1}, devIds[] = {0, 1};
  const char *inputs[] = {"data", "softmax_label"}, *params[] = {"fc_weight", "fc_bias"};
  const int64_t shapes[] = {5, 4, 5};
  const int ndims[] = {2, 1};
  auto symGen = [](const char *key, void *user) -> SymcArtifactHandle {
    return std::string(key) == "known" ? *static_cast<SymcArtifactHandle *>(user) : nullptr;
  };
  SymcExecutorManagerHandle manager = nullptr;
  ASSERT_OK(SymcExecutorManagerCreate(h.artifact, 2, devTypes, devIds, nullptr, 2, inputs, shapes, ndims, 2, params,
                                      symGen, &h.artifact, nullptr, &manager));
  SymcNDArrayHandle data = nullptr, label = nullptr;
  const int64_t dataShape[] = {5, 4}, labelShape[] = {5};
  ASSERT_OK(SymcNDArrayCreate(dataShape, 2, 0, 1, 0, &data));
  ASSERT_OK(SymcNDArrayCreate(labelShape, 1, 0, 1, 0, &label));
  SymcNDArrayHandle arrays[] = {h.keep(data), h.keep(label)};
  ASSERT_OK(SymcExecutorManagerLoadDataBatch(manager, "known", 2, inputs, arrays, 2, inputs, shapes, ndims));
  EXPECT_NE(SymcExecutorManagerLoadDataBatch(manager, "unknown", 2, inputs, arrays, 2, inputs, shapes, ndims), 0);
  EXPECT_STREQ(SymcGetLastError(), "sym_gen gave no artifact for bucket 'unknown'");
  SymcExecutorGroupHandle group = nullptr;
  ASSERT_OK(SymcExecutorManagerGetCurrentGroup(manager, &group));
  ASSERT_OK(SymcExecutorGroupForward(group, 1));
  ASSERT_OK(SymcExecutorGroupBackward(group));
  ASSERT_OK(SymcExecutorGroupAggregateGradients(group));
  ASSERT_OK(SymcExecutorGroupAggregateGradientsEx(group, "device"));
  EXPECT_NE(SymcExecutorGroupAggregateGradientsEx(group, nullptr), 0);
  EXPECT_STREQ(SymcGetLastError(), "null kvstore");
  int64_t begin = -1, end = -1;
  ASSERT_OK(SymcExecutorGroupGetSlice(group, 1, &begin, &end));
  EXPECT_EQ(begin, 2);
  EXPECT_EQ(end, 5);
  SymcExecutorGroupFree(group);
  SymcExecutorManagerFree(manager);
}

TEST(CApi, BindCallerMemoryWithGradients) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("axpb-train").c_str(), nullptr, &h.artifact));
  float a[2] = {1, 2}, b[2] = {2, 3}, gradA[2] = {9, 9}, gradB[2] = {1, 1};
  int64_t shape[1] = {2};
  SymcNDArrayHandle args[2], grads[2];
  for (auto [slot, data] : {std::pair{args + 0, a}, std::pair{args + 1, b}, std::pair{grads + 0, gradA},
                            std::pair{grads + 1, gradB}}) {
    ASSERT_OK(SymcNDArrayCreateFromData(data, shape, 1, 0, nullptr, nullptr, slot));
    h.keep(*slot);
  }
  int reqs[2] = {SYMC_GRAD_WRITE, SYMC_GRAD_ADD};
  ASSERT_OK(SymcExecutorBind(h.artifact, SYMC_CPU, 0, 2, args, grads, reqs, 0, nullptr, nullptr, 0, nullptr, &h.exec));
  a[0] = 10; // bound without a copy
  ASSERT_OK(SymcExecutorForward(h.exec, 1));
  SymcNDArrayHandle out;
  ASSERT_OK(SymcExecutorGetOutput(h.exec, 0, &out));
  h.keep(out);
  EXPECT_EQ(floats(out), (std::vector<float>{22, 7}));
  ASSERT_OK(SymcExecutorBackward(h.exec, 1, &out, 1));
  EXPECT_EQ(gradA[0], 44); // write: 2 * head
  EXPECT_EQ(gradA[1], 14);
  EXPECT_EQ(gradB[0], 23); // add: 1 + head
  EXPECT_EQ(gradB[1], 8);
  const int *bound;
  ASSERT_OK(SymcExecutorGetGradReqs(h.exec, &bound));
  EXPECT_EQ(bound[0], SYMC_GRAD_WRITE);
  EXPECT_EQ(bound[1], SYMC_GRAD_ADD);
}

TEST(CApi, MissingGradientArrayMeansNull) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("axpb-train").c_str(), nullptr, &h.artifact));
  int64_t shape[1] = {2};
  SymcNDArrayHandle args[2], grads[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK(SymcNDArrayCreate(shape, 1, 0, SYMC_CPU, 0, &args[i]));
    h.keep(args[i]);
  }
  ASSERT_OK(SymcNDArrayCreate(shape, 1, 0, SYMC_CPU, 0, &grads[1]));
  h.keep(grads[1]);
  ASSERT_OK(SymcExecutorBind(h.artifact, SYMC_CPU, 0, 2, args, grads, nullptr, 0, nullptr, nullptr, 0, nullptr, &h.exec));
  const int *bound;
  ASSERT_OK(SymcExecutorGetGradReqs(h.exec, &bound));
  EXPECT_EQ(bound[0], SYMC_GRAD_NULL);
  EXPECT_EQ(bound[1], SYMC_GRAD_WRITE);
  SymcNDArrayHandle grad = reinterpret_cast<SymcNDArrayHandle>(1);
  ASSERT_OK(SymcExecutorGetGrad(h.exec, "a", &grad));
  EXPECT_EQ(grad, nullptr);
}

TEST(CApi, SimpleBindGradReqForms) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("axpb-train").c_str(), nullptr, &h.artifact));
  const char *names[1] = {"b"}, *types[1] = {"add"};
  ASSERT_OK(SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 1, names, types, 0,
                                   nullptr, nullptr, &h.exec));
  const int *bound;
  ASSERT_OK(SymcExecutorGetGradReqs(h.exec, &bound));
  EXPECT_EQ(bound[0], SYMC_GRAD_NULL); // a dict: missing names are null
  EXPECT_EQ(bound[1], SYMC_GRAD_ADD);
  SymcExecutorHandle other;
  const char *bad[1] = {"sideways"};
  EXPECT_EQ(SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 1, nullptr, bad, 0,
                                   nullptr, nullptr, &other),
            -1);
  EXPECT_STREQ(SymcGetLastError(), "grad_req=sideways is not a valid input in simple_bind; only 'null', "
                                   "'write', and 'add' are supported");
  const char *typeNames[1] = {"a"};
  int typeCodes[1] = {1};
  EXPECT_EQ(SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 1,
                                   typeNames, typeCodes, &other),
            -1);
  EXPECT_STREQ(SymcGetLastErrorKind(), "RuntimeError");
}

TEST(CApi, ParamsRoundTripIntoExecutor) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("fc-softmax").c_str(), nullptr, &h.artifact));
  ASSERT_OK(SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 1, nullptr,
                                   (const char *[]){"null"}, 0, nullptr, nullptr, &h.exec));
  std::vector<float> weight(24, 1.0f), bias{1, 4, 4, 4, 5, 6};
  int64_t weightShape[2] = {6, 4}, biasShape[1] = {6};
  SymcNDArrayHandle arrays[2];
  ASSERT_OK(SymcNDArrayCreateFromData(weight.data(), weightShape, 2, 0, nullptr, nullptr, &arrays[0]));
  ASSERT_OK(SymcNDArrayCreateFromData(bias.data(), biasShape, 1, 0, nullptr, nullptr, &arrays[1]));
  h.keep(arrays[0]);
  h.keep(arrays[1]);
  std::string path = ::testing::TempDir() + "/capi-fc.params";
  const char *names[2] = {"arg:fc_weight", "arg:fc_bias"};
  ASSERT_OK(SymcNDListSave(path.c_str(), 2, names, arrays));

  SymcNDListHandle list;
  ASSERT_OK(SymcNDListLoad(path.c_str(), &list));
  int size;
  ASSERT_OK(SymcNDListSize(list, &size));
  ASSERT_EQ(size, 2);
  const char *name;
  SymcNDArrayHandle loaded;
  ASSERT_OK(SymcNDListGet(list, 1, &name, &loaded));
  EXPECT_STREQ(name, "arg:fc_bias");
  EXPECT_EQ(floats(loaded), bias);
  SymcNDArrayFree(loaded);
  SymcNDListFree(list);

  ASSERT_OK(SymcExecutorLoadParams(h.exec, path.c_str(), 0));
  SymcNDArrayHandle data;
  ASSERT_OK(SymcExecutorGetArray(h.exec, "data", &data));
  h.keep(data);
  std::vector<float> ones(4, 1.0f);
  int64_t dataShape[2] = {1, 4};
  SymcNDArrayHandle input;
  ASSERT_OK(SymcNDArrayCreateFromData(ones.data(), dataShape, 2, 0, nullptr, nullptr, &input));
  h.keep(input);
  ASSERT_OK(SymcNDArrayCopyFrom(data, input));
  ASSERT_OK(SymcExecutorForward(h.exec, 0));
  SymcNDArrayHandle out;
  ASSERT_OK(SymcExecutorGetTensor(h.exec, SYMC_OUTPUTS, 0, &name, &out));
  h.keep(out);
  EXPECT_STREQ(name, "softmax_output");
  EXPECT_NEAR(floats(out)[5], 0.5616011f, 1e-6);

  const char *extra[1] = {"nope"};
  EXPECT_EQ(SymcExecutorCopyParamsFrom(h.exec, 1, extra, arrays, 0, nullptr, nullptr, 0), -1);
  EXPECT_STREQ(SymcGetLastErrorKind(), "ValueError");
  EXPECT_STREQ(SymcGetLastError(), "Find name \"nope\" that is not in the arguments");
  std::remove(path.c_str());
}

TEST(CApi, ReleaseRunsWhenTheLastReferenceGoes) {
  static int released = 0;
  float value = 3;
  int64_t shape[1] = {1};
  SymcNDArrayHandle array;
  ASSERT_OK(SymcNDArrayCreateFromData(&value, shape, 1, 0, [](void *, void *arg) { ++*static_cast<int *>(arg); },
                                      &released, &array));
  EXPECT_EQ(released, 0);
  SymcNDArrayFree(array);
  EXPECT_EQ(released, 1);
}

/// One artifact shared by executors on several threads, one executor each.
TEST(CApi, ExecutorPerThreadOnASharedArtifact) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("axpb").c_str(), nullptr, &h.artifact));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      SymcExecutorHandle exec;
      const char *null[1] = {"null"};
      if (SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 1, nullptr, null, 0,
                                 nullptr, nullptr, &exec) != 0) {
        failures[t] = 1;
        return;
      }
      SymcNDArrayHandle a, out;
      SymcExecutorGetArray(exec, "a", &a);
      SymcExecutorGetOutput(exec, 0, &out);
      void *data;
      SymcNDArrayGetData(a, &data);
      for (int step = 0; step < 200; ++step) {
        static_cast<float *>(data)[0] = static_cast<float>(t * 1000 + step);
        SymcExecutorForward(exec, 0);
        if (floats(out)[0] != 2.0f * static_cast<float>(t * 1000 + step))
          ++failures[t];
      }
      SymcNDArrayFree(a);
      SymcNDArrayFree(out);
      SymcExecutorFree(exec);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(CApi, PrintAndOptimizedSymbol) {
  Handles h;
  ASSERT_OK(SymcArtifactLoad(artifactPath("axpb").c_str(), nullptr, &h.artifact));
  ASSERT_OK(SymcExecutorSimpleBind(h.artifact, SYMC_CPU, 0, 0, nullptr, nullptr, nullptr, 1, nullptr,
                                   (const char *[]){"null"}, 0, nullptr, nullptr, &h.exec));
  const char *text, *json;
  ASSERT_OK(SymcExecutorPrint(h.exec, &text));
  std::string printed = text;
  EXPECT_EQ(printed.rfind("Symbol Outputs:\n\toutput[0]=_plus0(0)\nVariable:a\n", 0), 0u) << printed;
  EXPECT_NE(printed.find("\nTotal 0 MB allocated\nTotal 11 TempSpace resource requested\n"), std::string::npos);
  ASSERT_OK(SymcExecutorGetOptimizedSymbol(h.exec, &json));
  EXPECT_NE(std::string(json).find("\"heads\":[[3,0,0]]"), std::string::npos) << json;
}

TEST(CApi, Errors) {
  SymcArtifactHandle artifact = nullptr;
  EXPECT_EQ(SymcArtifactLoad("/nonexistent.so", nullptr, &artifact), -1);
  EXPECT_NE(std::string(SymcGetLastError()).find("cannot load artifact /nonexistent.so"), std::string::npos);
  EXPECT_EQ(artifact, nullptr);
  int count;
  EXPECT_EQ(SymcExecutorNumOutputs(nullptr, &count), -1);
  EXPECT_STREQ(SymcGetLastError(), "null executor handle");
  int64_t shape[1] = {-2};
  SymcNDArrayHandle array;
  EXPECT_EQ(SymcNDArrayCreate(shape, 1, 0, SYMC_CPU, 0, &array), -1);
  EXPECT_EQ(SymcNDArrayCreate(shape, 0, 99, SYMC_CPU, 0, &array), -1);
  EXPECT_STREQ(SymcGetLastErrorKind(), "TypeError");
  // A gpu array needs a GPU: without one the error says what is missing.
  if (SymcNDArrayCreate(shape, 0, 0, SYMC_GPU, 0, &array) == 0)
    SymcNDArrayFree(array);
  else
    EXPECT_NE(std::string(SymcGetLastError()).find("gpu contexts need libsymrt_cuda and the NVIDIA driver"),
              std::string::npos)
        << SymcGetLastError();
}

} // namespace
