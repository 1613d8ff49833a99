//===- ParamsTest.cpp - MXNet .params reader and writer -------------------===//
#include "symc/Params.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <cstring>

using namespace symc;

namespace {

template <typename T> void put(std::vector<uint8_t> &out, T value) {
  const auto *p = reinterpret_cast<const uint8_t *>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

NDArrayRecord floatArray(const std::string &name, std::vector<int64_t> shape,
                         std::vector<float> values) {
  NDArrayRecord a;
  a.name = name;
  a.shape = std::move(shape);
  const auto *bytes = reinterpret_cast<const uint8_t *>(values.data());
  a.data.assign(bytes, bytes + values.size() * sizeof(float));
  return a;
}

/// The 165-byte example of mxnet-semantics.md section 4.2, written byte by byte.
std::vector<uint8_t> mxnetExampleBytes() {
  std::vector<uint8_t> b;
  put<uint64_t>(b, 0x112);
  put<uint64_t>(b, 0);
  put<uint64_t>(b, 2);
  auto array = [&](std::vector<int64_t> shape, std::vector<float> values) {
    put<uint32_t>(b, 0xF993FAC9);
    put<int32_t>(b, 0);
    put<int32_t>(b, static_cast<int32_t>(shape.size()));
    for (int64_t d : shape)
      put<int64_t>(b, d);
    put<int32_t>(b, 1);
    put<int32_t>(b, 0);
    put<int32_t>(b, 0);
    for (float v : values)
      put<float>(b, v);
  };
  array({2}, {1, 2});
  array({1, 2}, {3, 4});
  put<uint64_t>(b, 2);
  for (std::string name : {"arg:fc_bias", "aux:bn_moving_mean"}) {
    put<uint64_t>(b, name.size());
    b.insert(b.end(), name.begin(), name.end());
  }
  return b;
}

ParamsFile parseOrFail(const std::vector<uint8_t> &bytes) {
  ParamsFile file;
  std::string error;
  EXPECT_TRUE(parseParams(bytes.data(), bytes.size(), file, error)) << error;
  return file;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  ParamsFile file;
  std::string error;
  EXPECT_FALSE(parseParams(bytes.data(), bytes.size(), file, error));
  return error;
}

} // namespace

TEST(Params, WritesMXNetsExampleByteForByte) {
  ParamsFile file;
  file.arrays.push_back(floatArray("arg:fc_bias", {2}, {1, 2}));
  file.arrays.push_back(floatArray("aux:bn_moving_mean", {1, 2}, {3, 4}));
  std::vector<uint8_t> expected = mxnetExampleBytes();
  EXPECT_EQ(expected.size(), 165u);
  EXPECT_EQ(serializeParams(file), expected);
}

TEST(Params, ReadsMXNetsExample) {
  ParamsFile file = parseOrFail(mxnetExampleBytes());
  ASSERT_EQ(file.arrays.size(), 2u);
  EXPECT_TRUE(file.named);
  EXPECT_EQ(file.arrays[1].name, "aux:bn_moving_mean");
  EXPECT_EQ(file.arrays[1].shape, (std::vector<int64_t>{1, 2}));
  float values[2];
  std::memcpy(values, file.arrays[1].data.data(), sizeof values);
  EXPECT_EQ(values[0], 3.0f);
  EXPECT_EQ(values[1], 4.0f);
}

TEST(Params, RoundTripsEveryDType) {
  ParamsFile file;
  for (int32_t code = 0; isValidDType(code); ++code) {
    NDArrayRecord a;
    a.name = std::string("arg:") + dtypeName(static_cast<DType>(code));
    a.dtype = static_cast<DType>(code);
    a.shape = {2, 3};
    a.data.resize(6 * dtypeSize(a.dtype));
    for (size_t i = 0; i < a.data.size(); ++i)
      a.data[i] = static_cast<uint8_t>(i * 7 + code);
    file.arrays.push_back(a);
  }
  EXPECT_EQ(file.arrays.size(), 13u);
  std::vector<uint8_t> bytes = serializeParams(file);
  ParamsFile back = parseOrFail(bytes);
  ASSERT_EQ(back.arrays.size(), file.arrays.size());
  for (size_t i = 0; i < file.arrays.size(); ++i) {
    EXPECT_EQ(back.arrays[i].name, file.arrays[i].name);
    EXPECT_EQ(back.arrays[i].dtype, file.arrays[i].dtype);
    EXPECT_EQ(back.arrays[i].shape, file.arrays[i].shape);
    EXPECT_EQ(back.arrays[i].data, file.arrays[i].data);
  }
  EXPECT_EQ(serializeParams(back), bytes);
}

TEST(Params, RoundTripsUnnamedListsScalarsAndNoneArrays) {
  ParamsFile file;
  file.named = false;
  file.arrays.push_back(floatArray("", {}, {5}));
  NDArrayRecord none;
  none.isNone = true;
  file.arrays.push_back(none);
  file.arrays.push_back(floatArray("", {0, 4}, {}));
  ParamsFile back = parseOrFail(serializeParams(file));
  ASSERT_EQ(back.arrays.size(), 3u);
  EXPECT_FALSE(back.named);
  // A 0-d array is written in MXNet's np-shape (V3) form and stays 0-d.
  EXPECT_FALSE(back.arrays[0].isNone);
  EXPECT_TRUE(back.arrays[0].shape.empty());
  EXPECT_EQ(back.arrays[0].data.size(), sizeof(float));
  EXPECT_TRUE(back.arrays[1].isNone);
  EXPECT_EQ(back.arrays[2].shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(back.arrays[2].data.empty());
}

TEST(Params, ReadsV1AndPreV1Layouts) {
  std::vector<uint8_t> b;
  put<uint64_t>(b, 0x112);
  put<uint64_t>(b, 0);
  put<uint64_t>(b, 2);
  // V1: magic, i32 ndim, i64 dims, ctx, dtype, data.
  put<uint32_t>(b, 0xF993FAC8);
  put<int32_t>(b, 1);
  put<int64_t>(b, 2);
  put<int32_t>(b, 2); // saved from gpu(1)
  put<int32_t>(b, 1);
  put<int32_t>(b, 4); // int32
  put<int32_t>(b, 7);
  put<int32_t>(b, -9);
  // pre-V1: u32 ndim, u32 dims, ctx, dtype, data.
  put<uint32_t>(b, 2);
  put<uint32_t>(b, 1);
  put<uint32_t>(b, 1);
  put<int32_t>(b, 1);
  put<int32_t>(b, 0);
  put<int32_t>(b, 1); // float64
  put<double>(b, 2.5);
  put<uint64_t>(b, 0);
  ParamsFile file = parseOrFail(b);
  ASSERT_EQ(file.arrays.size(), 2u);
  EXPECT_FALSE(file.named);
  EXPECT_EQ(file.arrays[0].dtype, DType::Int32);
  EXPECT_EQ(file.arrays[0].devType, 2);
  EXPECT_EQ(file.arrays[0].devId, 1);
  int32_t ints[2];
  std::memcpy(ints, file.arrays[0].data.data(), sizeof ints);
  EXPECT_EQ(ints[1], -9);
  EXPECT_EQ(file.arrays[1].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(file.arrays[1].dtype, DType::Float64);
}

TEST(Params, EveryTruncationIsAnErrorWithAnOffset) {
  std::vector<uint8_t> bytes = mxnetExampleBytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    std::string error = parseError(prefix);
    EXPECT_EQ(error.rfind("byte ", 0), 0u) << "prefix " << n << ": " << error;
  }
}

TEST(Params, RejectsCorruptHeadersAndFields) {
  auto corrupt = [](size_t offset, std::vector<uint8_t> value) {
    std::vector<uint8_t> b = mxnetExampleBytes();
    std::copy(value.begin(), value.end(), b.begin() + offset);
    return b;
  };
  EXPECT_NE(parseError(corrupt(0, {0x13})).find("not an MXNet NDArray file"), std::string::npos);
  EXPECT_NE(parseError(corrupt(16, {0xff, 0xff, 0xff, 0x7f})).find("exceeds"), std::string::npos);
  EXPECT_NE(parseError(corrupt(24, {0xde, 0xad, 0xbe, 0xef})).find("bad array magic"),
            std::string::npos);
  EXPECT_NE(parseError(corrupt(28, {1})).find("sparse storage (row_sparse)"), std::string::npos);
  EXPECT_NE(parseError(corrupt(28, {9})).find("unknown storage type 9"), std::string::npos);
  EXPECT_NE(parseError(corrupt(32, {0xfe, 0xff, 0xff, 0xff})).find("invalid number of dims -2"),
            std::string::npos);
  EXPECT_NE(parseError(corrupt(32, {40})).find("at most 32"), std::string::npos);
  EXPECT_NE(parseError(corrupt(36, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
                .find("negative shape dim"),
            std::string::npos);
  EXPECT_NE(parseError(corrupt(36, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0}))
                .find("file truncated while reading the array data"),
            std::string::npos);
  EXPECT_NE(parseError(corrupt(52, {99})).find("unknown dtype code 99"), std::string::npos);
  EXPECT_NE(parseError(corrupt(0x70, {1})).find("2 arrays but 1 names"), std::string::npos);
  std::string error = parseError(corrupt(0x78, {0xff, 0xff, 0xff}));
  EXPECT_NE(error.find("file truncated while reading a name"), std::string::npos) << error;
  std::vector<uint8_t> trailing = mxnetExampleBytes();
  trailing.push_back(0);
  EXPECT_NE(parseError(trailing).find("1 unexpected bytes"), std::string::npos);
}

/// A one-array file saved as `name` in the test's temporary directory.
ParamsFile savedFile(const std::string &name, std::string &path) {
  ParamsFile file;
  file.arrays.push_back(floatArray("arg:w", {3}, {1, 2, 3}));
  path = ::testing::TempDir() + name;
  std::string error;
  EXPECT_TRUE(saveParams(path, file, error)) << error;
  return file;
}

TEST(Params, LoadAndSaveFiles) {
  std::string path, error;
  ParamsFile file = savedFile("symc-params-test.params", path);
  ParamsFile back;
  ASSERT_TRUE(loadParams(path, back, error)) << error;
  EXPECT_EQ(back.arrays[0].data, file.arrays[0].data);
  EXPECT_FALSE(loadParams(path + ".missing", back, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST(Params, DigestBesideTheFileCatchesAFlippedBit) {
  std::string path, error;
  ParamsFile file = savedFile("symc-params-digest.params", path);
  std::vector<uint8_t> bytes = serializeParams(file);
  bytes[bytes.size() - 23] ^= 0x01; // in the last float (21 bytes of names follow): still well-formed
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  ParamsFile back;
  EXPECT_FALSE(loadParams(path, back, error));
  EXPECT_NE(error.find(".sha256 says"), std::string::npos) << error;
  // MXNet's files have no digest: none is required.
  std::remove((path + ".sha256").c_str());
  EXPECT_TRUE(loadParams(path, back, error)) << error;
}
