//===- FuzzNpy.cpp - libFuzzer harness: numpy .npy files ------------------===//
//
// Any bytes: a symc::Error, or an array whose bytes are exactly the file's
// data section.
//
//===----------------------------------------------------------------------===//
#include "symc/NDArray.h"
#include "symc/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  try {
    symc::NDArray array = symc::parseNpy(bytes, "input.npy");
    if (array.nbytes() > size)
      std::abort();
  } catch (const symc::Error &) {
  }
  return 0;
}
