//===- ArtifactSeal.h - the digest that ties an artifact together -*- C++ -*-===//
//
// `symc compile` ends every artifact file with a seal (SymcArtifactSeal in
// ArtifactABI.h): the SHA-256 of every byte before it. The loader checks it
// before dlopen maps or runs anything, so a truncated file, a patched
// manifest or another model's manifest spliced in is refused with an error
// instead of a SIGBUS or a wrong run. A deployer checks an artifact they
// were sent with `symc verify FILE` (or `head -c -48 FILE | sha256sum`)
// against the digest the sender published.
//
// The functions return false and set `error` (which does not repeat the
// path) instead of throwing: the compiler, built without exceptions, calls
// them too.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_ARTIFACTSEAL_H
#define SYMC_RUNTIME_ARTIFACTSEAL_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace symc {

/// SHA-256 (FIPS 180-4), fed in pieces.
class Sha256 {
public:
  Sha256();
  void update(const uint8_t *bytes, size_t size);
  std::array<uint8_t, 32> finish();

private:
  void compress(const uint8_t *block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

std::string hexDigest(const std::array<uint8_t, 32> &digest);

/// Appends the seal to the file at `path`.
bool sealArtifact(const std::string &path, std::string &error);
/// Checks the seal of the file at `path`; on success sets `digest` to the
/// SHA-256 it holds, in hex.
bool verifyArtifactSeal(const std::string &path, std::string &digest, std::string &error);

} // namespace symc

#endif
