//===- ArtifactKey.h - where the predict API finds a compiled model -*- C++ -*-===//
//
// MXPredCreate receives a symbol's JSON text and its input shapes, not an
// artifact. symc compiles ahead of time, so the predict library looks the
// artifact up by a key made of a digest of the JSON bytes, the input shapes
// and the selected outputs (MXPredCreatePartialOut); `symc compile
// --predict-dir DIR` writes DIR/<key>.so for the same JSON and shapes.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_ARTIFACTKEY_H
#define SYMC_RUNTIME_ARTIFACTKEY_H

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symc {

/// An input's shape as `symc compile --shape` writes it: NAME and its dims
/// ("1,3,224,224"; '?' for a dynamic dim).
using ShapeText = std::pair<std::string, std::string>;

/// The artifact's file name without `.so`: hex digests of the JSON bytes and
/// of the shapes (in any order) and output keys (in order).
std::string artifactKey(std::string_view symbolJson, std::vector<ShapeText> shapes,
                        const std::vector<std::string> &outputs);

/// Splits `NAME=D0,D1,...`; false when there is no '=' or no name.
bool parseShapeText(const std::string &text, ShapeText &out);

} // namespace symc

#endif
