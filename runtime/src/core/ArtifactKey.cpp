//===- ArtifactKey.cpp - where the predict API finds a compiled model -----===//
#include "symc/ArtifactKey.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace symc {
namespace {

/// FNV-1a, 64 bits: a lookup key, not a security digest.
uint64_t fnv1a(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

} // namespace

std::string artifactKey(std::string_view symbolJson, std::vector<ShapeText> shapes,
                        const std::vector<std::string> &outputs) {
  std::sort(shapes.begin(), shapes.end());
  std::string spec;
  for (const auto &[name, dims] : shapes)
    spec += name + "=" + dims + ";";
  for (const std::string &output : outputs)
    spec += "output=" + output + ";";
  return hex(fnv1a(symbolJson)) + "-" + hex(fnv1a(spec));
}

bool parseShapeText(const std::string &text, ShapeText &out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

} // namespace symc
