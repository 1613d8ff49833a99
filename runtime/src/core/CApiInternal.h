//===- CApiInternal.h - the C API's handles for libsymrt's companions -*- C++ -*-===//
//
// libsymrt_mpi adds C functions over libsymrt's handles; these let it report
// errors through SymcGetLastError and reach the objects behind the handles.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_CORE_CAPIINTERNAL_H
#define SYMC_RUNTIME_CORE_CAPIINTERNAL_H

#include "symc/ExecutorGroup.h"
#include "symc/c_api.h"

#include <functional>

namespace symc::capi {

/// Runs `body`: 0, or -1 with its error for SymcGetLastError(Kind).
int runGuarded(const std::function<void()> &body);
/// The group behind a handle (a null handle is an error).
DataParallelExecutorGroup &executorGroup(SymcExecutorGroupHandle group);

} // namespace symc::capi

#endif
