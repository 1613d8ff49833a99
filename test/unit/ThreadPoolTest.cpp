// libsymrt's threads for generated code's parallel loops (symcParallelFor).
#include "ThreadPool.h"
#include "symc/ArtifactABI.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace symc;

namespace {

/// Runs `body(i)` for [0, count) through symcParallelFor.
template <typename Body> void parallelFor(int64_t count, Body body) {
  symcParallelFor(
      [](void *context, int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          (*static_cast<Body *>(context))(i);
      },
      &body, count);
}

/// The threads that ran iterations of a loop of `count`, each with the first
/// iteration it ran; each iteration waits until `wanted` threads have
/// arrived (or a second has passed).
std::map<std::thread::id, int64_t> threadsOfLoop(int64_t count, size_t wanted) {
  std::mutex mutex;
  std::map<std::thread::id, int64_t> first;
  parallelFor(count, [&](int64_t i) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      first.emplace(std::this_thread::get_id(), i);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < deadline) {
      std::lock_guard<std::mutex> lock(mutex);
      if (first.size() >= wanted)
        break;
    }
  });
  return first;
}

class ThreadPool : public ::testing::Test {
protected:
  void TearDown() override { setParallelThreads(0); }
};

TEST_F(ThreadPool, RunsEveryIterationOnce) {
  setParallelThreads(4);
  for (int64_t count : {1, 2, 3, 7, 64, 1000, 100003}) {
    std::vector<std::atomic<int>> runs(count);
    parallelFor(count, [&](int64_t i) { runs[i].fetch_add(1); });
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(runs[i].load(), 1) << "iteration " << i << " of " << count;
  }
}

TEST_F(ThreadPool, EmptyLoopsCallNothing) {
  std::atomic<int> calls{0};
  parallelFor(0, [&](int64_t) { calls++; });
  parallelFor(-5, [&](int64_t) { calls++; });
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(ThreadPool, RunsOnTheThreadsAsked) {
  setParallelThreads(3);
  EXPECT_EQ(threadsOfLoop(64, 3).size(), 3u);
  setParallelThreads(2); // fewer than the team has now
  EXPECT_EQ(threadsOfLoop(64, 2).size(), 2u);
}

// Each thread starts on a contiguous share of its own, the caller on the
// first: the threads wait for one another in their first iteration, so none
// can have run out of its share and taken another's before all started.
TEST_F(ThreadPool, EachThreadStartsOnItsOwnShare) {
  setParallelThreads(2);
  for (int round = 0; round < 3; ++round) {
    std::map<std::thread::id, int64_t> first = threadsOfLoop(64, 2);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[std::this_thread::get_id()], 0);
    std::set<int64_t> starts;
    for (auto [thread, index] : first)
      starts.insert(index);
    EXPECT_EQ(starts, (std::set<int64_t>{0, 32}));
  }
}

TEST_F(ThreadPool, OneThreadIsTheCaller) {
  setParallelThreads(1);
  std::map<std::thread::id, int64_t> seen = threadsOfLoop(64, 1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.begin()->first, std::this_thread::get_id());
}

TEST_F(ThreadPool, NestedLoopsRunOnTheirCaller) {
  setParallelThreads(4);
  std::atomic<int> foreign{0}, inner{0};
  parallelFor(8, [&](int64_t) {
    std::thread::id outer = std::this_thread::get_id();
    parallelFor(16, [&](int64_t) {
      inner++;
      if (std::this_thread::get_id() != outer)
        foreign++;
    });
  });
  EXPECT_EQ(inner.load(), 8 * 16);
  EXPECT_EQ(foreign.load(), 0);
}

TEST_F(ThreadPool, CallersRunLoopsAtOnceOnTeamsOfTheirOwn) {
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      setParallelThreads(2 + c % 2);
      for (int round = 0; round < 200; ++round)
        parallelFor(37, [&](int64_t i) { total += i; });
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(total.load(), 4 * 200 * (36 * 37 / 2));
}

TEST_F(ThreadPool, AForkedChildRunsLoops) {
  setParallelThreads(2);
  std::atomic<int> sum{0};
  parallelFor(100, [&](int64_t i) { sum += static_cast<int>(i); }); // the parent's team exists
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20); // a hang fails the test rather than stalling it
    std::atomic<int> childSum{0};
    parallelFor(100, [&](int64_t i) { childSum += static_cast<int>(i); });
    _exit(childSum.load() == 4950 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(sum.load(), 4950);
}

} // namespace
