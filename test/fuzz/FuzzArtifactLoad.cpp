//===- FuzzArtifactLoad.cpp - libFuzzer harness: artifact files -----------===//
//
// Any bytes as an artifact file: the seed artifacts load, anything else is
// refused by its seal before dlopen (a fuzzer cannot forge a SHA-256);
// never a crash on the way.
//
//===----------------------------------------------------------------------===//
#include "symc/Artifact.h"
#include "symc/NDArray.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/symc-fuzz-artifact-" + std::to_string(getpid()) + ".so";
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0)
    std::abort();
  try {
    symc::Artifact::load(path);
  } catch (const symc::Error &) {
  }
  return 0;
}
