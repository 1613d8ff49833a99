//===- DebugString.h - MXNet's Executor::Print text -------------*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_DEBUGSTRING_H
#define SYMC_RUNTIME_CORE_DEBUGSTRING_H

#include <cstddef>
#include <string>

namespace symc {

/// debug_str() of a graph given as MXNet symbol JSON (Symbol::Print's
/// format), closed by "Total N MB allocated" for `plannedBytes` and MXNet's
/// constant "Total 11 TempSpace resource requested".
std::string renderDebugString(const std::string &symbolJson, size_t plannedBytes);

} // namespace symc

#endif
