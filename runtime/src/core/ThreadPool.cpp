//===- ThreadPool.cpp - the threads that run generated code's parallel loops -===//
#include "ThreadPool.h"
#include "symc/ArtifactABI.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <system_error>
#include <thread>
#include <vector>

namespace symc {
namespace {

/// How long an idle worker spins before it sleeps: longer than the gap
/// between two layers' loops, so that a forward never waits for a wake-up,
/// and short enough not to take a shared machine's cores between runs.
constexpr std::chrono::microseconds kSpinTime(500);
/// The most threads one loop runs on.
constexpr int kMaxThreads = 1024;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Bumped in a forked child, whose teams' workers did not survive the fork.
std::atomic<unsigned> forkEpoch{0};

thread_local int requestedThreads = 0;
thread_local bool insideLoop = false; // a nested loop runs on its caller alone

/// A share of a loop's iterations, [next, end), taken `grain` at a time.
struct alignas(64) Share {
  std::atomic<int64_t> next{0};
  int64_t end = 0;
  int64_t grain = 1;
};

/// One parallel loop: each thread starts on a share of its own, the same
/// contiguous range of iterations for the same thread in every loop of that
/// count (a layer's rows stay in the cache of the core that wrote them in
/// the layer before), then takes what is left of the others' shares (a
/// shared machine slows one core, not both).
struct Loop {
  SymcParallelBody body = nullptr;
  void *context = nullptr;
  int threads = 0;
  std::vector<Share> shares; // at least `threads`; kept for the next loop
  std::atomic<int> running{0}; // workers not yet done with it

  void split(int64_t count, int participants);
};

/// Shares the iterations [0, count) evenly between `participants` threads.
void Loop::split(int64_t count, int participants) {
  if (static_cast<int>(shares.size()) < participants)
    shares = std::vector<Share>(participants); // (a move of the buffer: shares hold atomics)
  threads = participants;
  for (int t = 0; t < participants; ++t) {
    int64_t begin = count * t / participants, end = count * (t + 1) / participants;
    shares[t].next.store(begin, std::memory_order_relaxed);
    shares[t].end = end;
    shares[t].grain = std::max<int64_t>(1, (end - begin) / 8);
  }
}

/// Runs what is left of `share`.
void drain(Loop &loop, Share &share) {
  for (;;) {
    int64_t begin = share.next.fetch_add(share.grain, std::memory_order_relaxed);
    if (begin >= share.end)
      return;
    loop.body(loop.context, begin, std::min(begin + share.grain, share.end));
  }
}

/// Thread `self`'s share first, then the others'.
void runIterations(Loop &loop, int self) {
  insideLoop = true;
  for (int i = 0; i < loop.threads; ++i)
    drain(loop, loop.shares[(self + i) % loop.threads]);
  insideLoop = false;
}

/// The workers of one calling thread. Each worker waits on a ticket of its
/// own, so a loop wakes only the workers it needs.
class Team {
public:
  Team() : epoch_(forkEpoch.load()) {}
  ~Team();
  bool forked() const { return epoch_ != forkEpoch.load(); }
  void run(SymcParallelBody body, void *context, int64_t count, int threads);

private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> ticket{0};
  };
  int grow(int workers);
  void work(Slot &slot, int self);
  uint64_t awaitTicket(Slot &slot, uint64_t seen);
  void wake(Slot &slot);

  unsigned epoch_;
  Loop loop_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wakeUp_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> workers_;
};

Team::~Team() {
  stopping_.store(true);
  for (const std::unique_ptr<Slot> &slot : slots_)
    wake(*slot);
  for (std::thread &worker : workers_)
    worker.join();
}

/// Starts workers up to `workers`; returns how many there are (fewer where
/// the system refuses a thread: the loop then runs on those it has).
int Team::grow(int workers) {
  while (static_cast<int>(workers_.size()) < workers) {
    slots_.push_back(std::make_unique<Slot>());
    Slot &slot = *slots_.back();
    int self = static_cast<int>(slots_.size()); // the caller is thread 0
    try {
      workers_.emplace_back([this, &slot, self] { work(slot, self); });
    } catch (const std::system_error &) {
      slots_.pop_back();
      break;
    }
  }
  return std::min(workers, static_cast<int>(workers_.size()));
}

void Team::work(Slot &slot, int self) {
  uint64_t seen = 0;
  for (;;) {
    seen = awaitTicket(slot, seen);
    if (stopping_.load())
      return;
    runIterations(loop_, self);
    loop_.running.fetch_sub(1, std::memory_order_release);
  }
}

uint64_t Team::awaitTicket(Slot &slot, uint64_t seen) {
  auto spinUntil = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned spins = 1;; ++spins) {
    uint64_t ticket = slot.ticket.load(std::memory_order_acquire);
    if (ticket != seen)
      return ticket;
    cpuRelax();
    if (spins % 256 == 0 && std::chrono::steady_clock::now() > spinUntil)
      break;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1);
  wakeUp_.wait(lock, [&] { return slot.ticket.load() != seen; });
  sleepers_.fetch_sub(1);
  return slot.ticket.load(std::memory_order_acquire);
}

void Team::wake(Slot &slot) {
  // Sequentially consistent with the sleeper's count and check: either it
  // sees the new ticket, or this sees it asleep and notifies under the lock.
  slot.ticket.fetch_add(1);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wakeUp_.notify_all();
  }
}

void Team::run(SymcParallelBody body, void *context, int64_t count, int threads) {
  int workers = grow(static_cast<int>(std::min<int64_t>(threads, count)) - 1);
  loop_.body = body;
  loop_.context = context;
  loop_.split(count, workers + 1);
  loop_.running.store(workers, std::memory_order_relaxed);
  for (int i = 0; i < workers; ++i)
    wake(*slots_[i]);
  runIterations(loop_, 0);
  for (unsigned spins = 1; loop_.running.load(std::memory_order_acquire) != 0; ++spins)
    if (spins % 1024 == 0)
      std::this_thread::yield(); // a worker's core was taken by another process
    else
      cpuRelax();
}

Team &callerTeam() {
  static std::once_flag atFork;
  std::call_once(atFork, [] { pthread_atfork(nullptr, nullptr, [] { forkEpoch.fetch_add(1); }); });
  thread_local std::unique_ptr<Team> team;
  if (team && team->forked())
    (void)team.release(); // its workers are the parent's; destroying it would join them
  if (!team)
    team = std::make_unique<Team>();
  return *team;
}

int threadsOfEnvironment() {
  const char *value = std::getenv("OMP_NUM_THREADS"); // "4" or a nesting list, "4,2"
  if (!value)
    return 0;
  char *end = nullptr;
  long threads = std::strtol(value, &end, 10);
  return end != value && threads > 0 ? static_cast<int>(std::min<long>(threads, kMaxThreads)) : 0;
}

int threadsOfAffinity() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return CPU_COUNT(&cpus);
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

int defaultParallelThreads() {
  static const int threads = [] {
    int fromEnvironment = threadsOfEnvironment();
    return fromEnvironment > 0 ? fromEnvironment : threadsOfAffinity();
  }();
  return threads;
}

void setParallelThreads(int threads) { requestedThreads = std::clamp(threads, 0, kMaxThreads); }

} // namespace symc

extern "C" void symcParallelFor(SymcParallelBody body, void *context, int64_t count) {
  if (count <= 0)
    return;
  int threads = symc::requestedThreads > 0 ? symc::requestedThreads : symc::defaultParallelThreads();
  if (threads <= 1 || count == 1 || symc::insideLoop) {
    body(context, 0, count);
    return;
  }
  symc::callerTeam().run(body, context, count, threads);
}
