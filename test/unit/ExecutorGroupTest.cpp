//===- ExecutorGroupTest.cpp - splitting a batch over devices -------------===//
//
// _split_input_slice's table in shared/mxnet-semantics.md 3.1, computed by
// MXNet 1.9.1 under Python 3 (half-to-even rounding).
//
//===----------------------------------------------------------------------===//
#include "symc/ExecutorGroup.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace symc;

namespace {

std::vector<BatchSlice> split(int64_t batch, std::vector<double> workLoad) {
  return splitInputSlice(batch, workLoad);
}

TEST(SplitInputSlice, MXNetsTable) {
  using S = std::vector<BatchSlice>;
  EXPECT_EQ(split(7, {1, 1}), (S{{0, 4}, {4, 7}})); // round(3.5) = 4 twice, the surplus clipped
  EXPECT_EQ(split(5, {1, 1}), (S{{0, 2}, {2, 5}})); // round(2.5) = 2
  EXPECT_EQ(split(10, {1, 1, 1}), (S{{0, 3}, {3, 6}, {6, 10}}));
  EXPECT_EQ(split(5, {1, 1, 1}), (S{{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(split(11, {1, 1, 1, 1}), (S{{0, 3}, {3, 6}, {6, 9}, {9, 11}}));
  EXPECT_EQ(split(9, {1, 2}), (S{{0, 3}, {3, 9}}));
  EXPECT_EQ(split(10, {3, 1}), (S{{0, 8}, {8, 10}})); // round(7.5) = 8
}

TEST(SplitInputSlice, EmptySplitsAreAnError) {
  for (auto [batch, devices] : {std::pair{6, 4}, std::pair{3, 4}, std::pair{1, 2}}) {
    try {
      split(batch, std::vector<double>(devices, 1));
      ADD_FAILURE() << batch << " on " << devices;
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), "ValueError");
      EXPECT_STREQ(e.what(), "Too many slices. Some splits are empty.");
    }
  }
}

TEST(SplitInputSlice, WorkLoadsMustBePositive) {
  auto kindOf = [](std::vector<double> workLoad) -> std::string {
    try {
      split(4, workLoad);
    } catch (const Error &e) {
      return e.kind();
    }
    return "";
  };
  EXPECT_EQ(kindOf({0, 0}), "ZeroDivisionError");
  EXPECT_EQ(kindOf({1, -1}), "ValueError");
  EXPECT_EQ(kindOf({1, std::nan("")}), "ValueError");
}

} // namespace
