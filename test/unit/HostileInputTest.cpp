//===- HostileInputTest.cpp - malformed .npy, manifests and arrays --------===//
//
// One case per crash class of the hostile-input issue that the runtime's
// readers had: each is now a symc::Error with a message naming what is
// wrong, and nothing is allocated from an unchecked size.
//
//===----------------------------------------------------------------------===//
#include "symc/Artifact.h"
#include "symc/NDArray.h"
#include "symc/Npy.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace symc;

namespace {

/// A format 1.0 .npy: the header dict padded to 64 bytes, then `data`.
std::vector<uint8_t> npy(std::string dict, size_t dataBytes = 0) {
  dict += std::string((64 - (10 + dict.size() + 1) % 64) % 64, ' ') + "\n";
  std::vector<uint8_t> bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(dict.size() & 0xFF),
                             static_cast<uint8_t>(dict.size() >> 8)};
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  bytes.resize(bytes.size() + dataBytes);
  return bytes;
}

std::string npyError(const std::vector<uint8_t> &bytes) {
  try {
    parseNpy(bytes, "x.npy");
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::string withShape(const std::string &shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

int32_t doNothing(void *const *, const int64_t *, void *, SymcRunError *) { return 0; }

std::string manifestError(const std::string &manifest, bool withPrepare = false) {
  Artifact::LinkedEntryPoints entries;
  entries.forward = doNothing;
  if (withPrepare)
    entries.prepare = doNothing;
  try {
    Artifact::fromEntryPoints(manifest.c_str(), entries);
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

/// The manifest of a one-argument identity, with `patch` spliced in first.
std::string manifest(const std::string &patch = "") {
  return "{" + patch + R"("abi_version": )" + std::to_string(kArtifactAbiVersion) + R"(, "prefix": "m", "arguments": [{"name": "x", "shape": [2], "dtype": "float32"}],
"aux_states": [], "outputs": [{"name": "y", "shape": [2], "dtype": "float32"}], "nodes": [],
"train_sensitive_nodes": [], "fixed_gammas": [], "checks": [], "workspace_bytes": 0, "cpu_features": [],
"embedded_params": false, "backward": null, "variants": [{"name": "inference", "is_train": false, "entry": "m_forward"}]})";
}

} // namespace

TEST(HostileNpy, LongFieldsAreScannedWithoutRecursion) {
  // std::regex recursed once per character of a field this long.
  EXPECT_NE(npyError(npy("{'descr': '" + std::string(60000, '<') + "', 'fortran_order': False, 'shape': (1,), }"))
                .find("unsupported dtype"),
            std::string::npos);
  EXPECT_NE(npyError(npy(withShape("(" + std::string(60000, '1') + ",)"))).find("dim in 'shape' exceeds 2^63"),
            std::string::npos);
}

TEST(HostileNpy, TwentyDigitDimIsAnError) {
  EXPECT_EQ(npyError(npy(withShape("(12345678901234567890,)"))), "x.npy: byte 80: dim in 'shape' exceeds 2^63");
}

TEST(HostileNpy, WrappingSizesAreRefused) {
  // (2^62, 4) float32 wrapped to 0 bytes before; a forward then overflowed the heap.
  EXPECT_EQ(npyError(npy(withShape("(4611686018427387904, 4)"), 64)),
            "x.npy: byte 128: shape (4611686018427387904, 4) of float32 needs more than 2^62 data bytes, the file has 64");
}

TEST(HostileNpy, DeclaredSizeIsCheckedBeforeAllocating) {
  // 2 GB declared, none present: refused before any array exists.
  EXPECT_EQ(npyError(npy(withShape("(500000000,)"))),
            "x.npy: byte 128: shape (500000000,) of float32 needs 2000000000 data bytes, the file has 0");
}

TEST(HostileNpy, NegativeDimIsAnError) {
  EXPECT_EQ(npyError(npy(withShape("(-1, 4)"), 16)), "x.npy: byte 61: negative dim in 'shape'");
}

TEST(HostileManifest, PreparedArraysNeedTheirEntryAndExistingInputs) {
  auto prepare = [](const std::string &inputs) {
    return R"("prepare": {"entry": "m_prepare", "arrays": [{"shape": [2], "dtype": "float32", "inputs": )" + inputs +
           R"(, "what": "w"}]}, )";
  };
  EXPECT_EQ(manifestError(manifest(prepare("[0]"))), "the linked-in artifact's entry point m_prepare was not given");
  EXPECT_EQ(manifestError(manifest(prepare("[1]")), /*withPrepare=*/true),
            "manifest: prepared array 'w' reads input 1 of 1 (arguments and aux states)");
  EXPECT_EQ(manifestError(manifest(prepare("[-1]")), /*withPrepare=*/true),
            "manifest: prepared array 'w' reads input -1 of 1 (arguments and aux states)");
}

TEST(HostileManifest, BadUnicodeEscapeIsASymcError) {
  EXPECT_EQ(manifestError(manifest(R"("x\uZZZZ": 1, )")), "manifest JSON, byte 5: bad \\u escape");
  EXPECT_EQ(manifestError(manifest(R"("x\uD800": 1, )")), "manifest JSON, byte 9: unpaired high surrogate in \\u escape");
}

TEST(HostileManifest, DeepNestingIsBounded) {
  EXPECT_EQ(manifestError(std::string(100000, '[') + std::string(100000, ']')),
            "manifest JSON, byte 256: nested deeper than 256 levels");
}

TEST(HostileManifest, OutOfRangeNumbersAreNotCast) {
  std::string text = manifest();
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    return t.replace(t.find(from), from.size(), to);
  };
  EXPECT_EQ(manifestError(replaced("\"workspace_bytes\": 0", "\"workspace_bytes\": 1e300")),
            "manifest: 1.0000000000000001e+300 is not an integer in [0, 4611686018427387904]");
  EXPECT_EQ(manifestError(replaced("\"shape\": [2]", "\"shape\": [2.5]")),
            "manifest: 2.5 is not an integer in [-1, 4611686018427387904]");
  EXPECT_EQ(manifestError(replaced("\"shape\": [2]", "\"shape\": [-7]")),
            "manifest: -7 is not an integer in [-1, 4611686018427387904]");
  EXPECT_EQ(manifestError(replaced("\"embedded_params\": false", "\"embedded_params\": 0")),
            "manifest: expected a bool, found a number");
  // A monitored node's output must be one of the monitor's values (or -1: none).
  EXPECT_EQ(manifestError(manifest(R"("monitor": {"variants": [], "values": [], "nodes": [{"name": "n", "inputs": [], "outputs": [5]}]}, )")),
            "manifest: 5 is not an integer in [-1, -1]");
}

TEST(HostileArrays, ImpossibleShapesAreRefusedBeforeAllocating) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{-1, 4}, {int64_t(1) << 62, 4}, {1 << 30, 1 << 30, 1 << 30}})
    EXPECT_THROW(NDArray(shape, DType::Float32), Error) << shapeToString(shape);
  EXPECT_THROW(NDArray({2, 2}).reshape({int64_t(1) << 62, 4, 0, -1}), Error);
}

TEST(HostileArrays, ZeroSizeArraysCopyWithoutTouchingNull) {
  // memcpy from a null pointer was undefined even for 0 bytes (UBSan's nonnull).
  NDArray empty = NDArray::fromData({0, 4}, DType::Float32, nullptr);
  NDArray other({0, 4});
  other.copyFrom(empty);
  EXPECT_EQ(other.nbytes(), 0u);
}

TEST(HostileArrays, ShapeMismatchNamesTheArray) {
  try {
    NDArray({2}).copyFrom(NDArray({3}), "argument 'w'");
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "argument 'w': operands shape mismatch from.shape = (3,) to.shape = (2,)");
  }
}
