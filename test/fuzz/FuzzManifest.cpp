//===- FuzzManifest.cpp - libFuzzer harness: artifact manifests -----------===//
//
// Any text as the manifest of a linked-in artifact (entry points that do
// nothing): a symc::Error, or an artifact whose symbol graph and debug
// string can be read.
//
//===----------------------------------------------------------------------===//
#include "symc/Artifact.h"
#include "symc/NDArray.h"

#include "SymbolGraph.h"

namespace {

int32_t doNothing(void *const *, const int64_t *, void *, SymcRunError *) { return 0; }

const uint8_t *noParams(int64_t *size) {
  *size = 0;
  return nullptr;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  symc::Artifact::LinkedEntryPoints entries;
  entries.forward = entries.trainingForward = entries.backward = doNothing;
  entries.monitor = entries.trainingMonitor = entries.backwardMonitor = doNothing;
  entries.params = noParams;
  try {
    std::shared_ptr<const symc::Artifact> artifact = symc::Artifact::fromEntryPoints(text.c_str(), entries);
    if (!artifact->manifest().symbolJson.empty())
      symc::SymbolGraph::parse(artifact->manifest().symbolJson).debugString(0);
  } catch (const symc::Error &) {
  }
  return 0;
}
