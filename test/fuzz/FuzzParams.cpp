//===- FuzzParams.cpp - libFuzzer harness: MXNet .params files ------------===//
//
// Any bytes: a parse error or a file that writes back to a file parsing to
// the same arrays.
//
//===----------------------------------------------------------------------===//
#include "symc/Params.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  symc::ParamsFile file;
  std::string error;
  if (!symc::parseParams(data, size, file, error))
    return 0;
  std::vector<uint8_t> written = symc::serializeParams(file);
  symc::ParamsFile again;
  if (!symc::parseParams(written.data(), written.size(), again, error) || again.arrays.size() != file.arrays.size())
    std::abort();
  for (size_t i = 0; i < file.arrays.size(); ++i) {
    const symc::NDArrayRecord &a = file.arrays[i], &b = again.arrays[i];
    if (a.name != b.name || a.shape != b.shape || a.dtype != b.dtype || a.data != b.data || a.isNone != b.isNone)
      std::abort();
  }
  return 0;
}
