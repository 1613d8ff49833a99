//===- ThreadPool.h - the threads that run generated code's parallel loops -===//
//
// Artifacts call symcParallelFor (ArtifactABI.h) for each parallel loop. Each
// thread that runs generated code owns a team of worker threads, as an
// OpenMP master thread owns its team: executors run from several threads at
// once (an executor group) never share or wait for each other's workers.
//
//===----------------------------------------------------------------------===//
#ifndef SYMRT_CORE_THREADPOOL_H
#define SYMRT_CORE_THREADPOOL_H

namespace symc {

/// Sets how many threads (the calling one included) run the parallel loops of
/// generated code called from this thread; 0: the default, OMP_NUM_THREADS
/// where it is set, else the CPUs this process may run on.
void setParallelThreads(int threads);

/// The threads `setParallelThreads(0)` stands for.
int defaultParallelThreads();

} // namespace symc

#endif
