// libsymrt's host arrays: how their storage is laid out.
#include "symc/NDArray.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

uintptr_t address(const symc::NDArray &a) { return reinterpret_cast<uintptr_t>(a.data()); }

/// The VmFlags of the mapping that holds `at` (/proc/self/smaps), or "".
std::string mappingFlags(uintptr_t at) {
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2)
      inside = begin <= at && at < end;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(NDArray, SmallArraysAreZeroedOnCacheLines) {
  symc::NDArray a({3, 5}, symc::DType::Float32);
  EXPECT_EQ(address(a) % 64, 0u);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(static_cast<const float *>(a.data())[i], 0.0f);
}

TEST(NDArray, ArraysOfAHugePageOrMoreStartOnOne) {
  // A training workspace's size: it asks the kernel for huge pages (which
  // it gives where it has transparent huge pages, in madvise mode or always).
  symc::NDArray a({64 << 20}, symc::DType::UInt8);
  EXPECT_EQ(address(a) % (2 << 20), 0u);
  const auto *bytes = static_cast<const uint8_t *>(a.data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[(64 << 20) - 1], 0);
  std::string flags = mappingFlags(address(a));
  if (flags.empty())
    GTEST_SKIP() << "no /proc/self/smaps to read the mapping's flags from";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags; // advised huge pages
}

} // namespace
