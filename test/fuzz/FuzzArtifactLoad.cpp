//===- FuzzArtifactLoad.cpp - libFuzzer harness: artifact files -----------===//
//
// Any bytes as an artifact file, loaded as a deployer who pinned the
// digests of the seed artifacts would load it: the seeds load, anything else
// is refused before dlopen. (A seal alone cannot stop this fuzzer: it reads
// the digest the loader compares with and writes it into the seal, as an
// attacker could. A sealed file is native code, trusted once its digest is.)
//
//===----------------------------------------------------------------------===//
#include "symc/Artifact.h"
#include "symc/ArtifactSeal.h"
#include "symc/NDArray.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

namespace {

/// The digests of the seed artifacts (make_corpora.py writes them): the
/// artifacts "published".
std::set<std::string> pinnedDigests() {
  std::set<std::string> digests;
  std::ifstream pins(SYMC_FUZZ_PINS);
  for (std::string line; std::getline(pins, line);) // "DIGEST  NAME", as sha256sum writes
    digests.insert(line.substr(0, line.find(' ')));
  if (digests.empty())
    std::abort();
  return digests;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::set<std::string> pinned = pinnedDigests();
  static const std::string path = "/tmp/symc-fuzz-artifact-" + std::to_string(getpid()) + ".so";
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0)
    std::abort();
  std::string digest, error;
  bool sealed = symc::verifyArtifactSeal(path, digest, error);
  // A forged seal is checked against a pinned digest; an unsealed file needs none to be refused.
  std::string pin = sealed && pinned.count(digest) ? digest : *pinned.begin();
  try {
    symc::Artifact::load(path, "symc", pin);
  } catch (const symc::Error &) {
    return 0;
  }
  if (!sealed || !pinned.count(digest))
    std::abort(); // loaded a file that was not one of the pinned artifacts
  return 0;
}
