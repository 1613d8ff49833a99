//===- ArtifactSeal.cpp - the digest that ties an artifact together -------===//
#include "symc/ArtifactSeal.h"

#include "symc/ArtifactABI.h"

#include "FileIO.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <unistd.h>

namespace symc {
namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

uint32_t loadBigEndian(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

/// The SHA-256 of the first `size` bytes of `fd`.
bool digestPrefix(int fd, uint64_t size, std::array<uint8_t, 32> &digest) {
  Sha256 sha;
  std::vector<uint8_t> chunk(1 << 20);
  for (uint64_t done = 0; done < size;) {
    ssize_t n = ::pread(fd, chunk.data(), std::min<uint64_t>(chunk.size(), size - done), static_cast<off_t>(done));
    if (n <= 0)
      return false;
    sha.update(chunk.data(), static_cast<size_t>(n));
    done += static_cast<uint64_t>(n);
  }
  digest = sha.finish();
  return true;
}

} // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::compress(const uint8_t *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = loadBigEndian(block + 4 * i);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRoundConstants[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  uint32_t out[8] = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i)
    state_[i] += out[i];
}

void Sha256::update(const uint8_t *bytes, size_t size) {
  total_ += size;
  if (buffered_ != 0) {
    size_t take = std::min(size, 64 - buffered_);
    std::memcpy(buffer_ + buffered_, bytes, take);
    buffered_ += take, bytes += take, size -= take;
    if (buffered_ < 64)
      return;
    compress(buffer_);
    buffered_ = 0;
  }
  for (; size >= 64; bytes += 64, size -= 64)
    compress(bytes);
  if (size != 0)
    std::memcpy(buffer_, bytes, size);
  buffered_ = size;
}

std::array<uint8_t, 32> Sha256::finish() {
  uint64_t bits = total_ * 8;
  uint8_t padding[72] = {0x80};
  size_t padLength = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i)
    padding[padLength + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  update(padding, padLength + 8);
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      digest[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
  return digest;
}

std::string hexDigest(const std::array<uint8_t, 32> &digest) {
  std::string text;
  char byte[3];
  for (uint8_t b : digest) {
    std::snprintf(byte, sizeof(byte), "%02x", b);
    text += byte;
  }
  return text;
}

bool sealArtifact(const std::string &path, std::string &error) {
  uint64_t size = 0;
  int fd = openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  SymcArtifactSeal seal{};
  std::array<uint8_t, 32> digest;
  bool ok = digestPrefix(fd, size, digest);
  ::close(fd);
  std::memcpy(seal.sha256, digest.data(), digest.size());
  seal.sealed_bytes = size;
  std::memcpy(seal.magic, SYMC_ARTIFACT_SEAL_MAGIC, sizeof(seal.magic));
  FILE *out = ok ? std::fopen(path.c_str(), "ab") : nullptr;
  ok = out && std::fwrite(&seal, sizeof(seal), 1, out) == 1;
  if (out)
    ok = std::fclose(out) == 0 && ok;
  if (!ok)
    error = std::strerror(errno);
  return ok;
}

bool verifyArtifactSeal(const std::string &path, std::string &digest, std::string &error) {
  uint64_t size = 0;
  int fd = openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  SymcArtifactSeal seal{};
  bool hasSeal = size >= sizeof(seal) &&
                 ::pread(fd, &seal, sizeof(seal), static_cast<off_t>(size - sizeof(seal))) == sizeof(seal) &&
                 std::memcmp(seal.magic, SYMC_ARTIFACT_SEAL_MAGIC, sizeof(seal.magic)) == 0;
  std::array<uint8_t, 32> actual{};
  bool hashed = hasSeal && seal.sealed_bytes == size - sizeof(seal) && digestPrefix(fd, seal.sealed_bytes, actual);
  ::close(fd);
  if (!hasSeal) {
    error = "no symc seal at its end: the file is truncated, or was not written by symc compile "
                   "(artifacts compiled before symc sealed them have none: recompile it)";
    return false;
  }
  if (seal.sealed_bytes != size - sizeof(seal)) {
    error = "the file is " + std::to_string(size) + " bytes but its seal covers " +
            std::to_string(seal.sealed_bytes) + " before it: the file was cut or extended after symc compile wrote it";
    return false;
  }
  if (!hashed || std::memcmp(actual.data(), seal.sha256, actual.size()) != 0) {
    std::array<uint8_t, 32> sealed;
    std::memcpy(sealed.data(), seal.sha256, sealed.size());
    error = "the file does not match its seal (SHA-256 " + hexDigest(actual) + ", sealed " + hexDigest(sealed) +
            "): the file was modified or corrupted after symc compile wrote it";
    return false;
  }
  digest = hexDigest(actual);
  return true;
}

} // namespace symc
