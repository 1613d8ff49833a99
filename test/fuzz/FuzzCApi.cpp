//===- FuzzCApi.cpp - libFuzzer harness: bind, reshape and forward --------===//
//
// The C API driven with shapes taken from the input, on an artifact whose
// batch dim is dynamic (data=?,4): simple_bind at one shape, forward,
// reshape (partial shaping and up-sizing as the input says) to another,
// forward, and a backward the artifact refuses. Every call returns 0 or -1 with an
// error; nothing may crash. Shapes of more than 2^24 elements are skipped:
// they are legitimate and only cost memory.
//
//===----------------------------------------------------------------------===//
#include "symc/c_api.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Reads the input front to back; zeros once it runs out.
struct Input {
  const uint8_t *data;
  size_t size;
  template <typename T> T take() {
    T value{};
    size_t n = std::min(sizeof(T), size);
    std::memcpy(&value, data, n);
    data += n, size -= n;
    return value;
  }
};

struct Shape {
  std::string name;
  std::vector<int64_t> dims;
};

/// A name of the artifact's (or not), and up to 5 dims.
Shape takeShape(Input &in) {
  static const char *const names[] = {"data", "softmax_label", "fc_weight", "fc_bias", "nonexistent"};
  Shape shape{names[in.take<uint8_t>() % 5], {}};
  int ndim = in.take<uint8_t>() % 6;
  for (int i = 0; i < ndim; ++i) {
    // Mostly small dims, sometimes any int64 (negative, huge, overflowing).
    uint8_t kind = in.take<uint8_t>();
    shape.dims.push_back(kind < 200 ? kind % 9 : in.take<int64_t>());
  }
  return shape;
}

bool affordable(const std::vector<Shape> &shapes) {
  for (const Shape &s : shapes) {
    __int128 elements = 1;
    for (int64_t d : s.dims)
      if (d > 0)
        elements = std::min<__int128>(elements * d, __int128(1) << 40);
    if (elements > (1 << 24))
      return false;
  }
  return true;
}

struct ShapeArgs {
  std::vector<const char *> names;
  std::vector<int64_t> data;
  std::vector<int> ndim;
  explicit ShapeArgs(const std::vector<Shape> &shapes) {
    for (const Shape &s : shapes) {
      names.push_back(s.name.c_str());
      data.insert(data.end(), s.dims.begin(), s.dims.end());
      ndim.push_back(static_cast<int>(s.dims.size()));
    }
  }
};

std::vector<Shape> takeShapes(Input &in) {
  std::vector<Shape> shapes;
  for (int n = 1 + in.take<uint8_t>() % 3; n > 0; --n)
    shapes.push_back(takeShape(in));
  return shapes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static SymcArtifactHandle artifact = [] {
    SymcArtifactHandle a = nullptr;
    if (SymcArtifactLoad(SYMC_FUZZ_ARTIFACT, "symc", &a) != 0)
      std::abort();
    return a;
  }();
  Input in{data, size};
  std::vector<Shape> bindShapes = takeShapes(in), reshapeShapes = takeShapes(in);
  if (!affordable(bindShapes) || !affordable(reshapeShapes))
    return 0;
  uint8_t flags = in.take<uint8_t>();
  ShapeArgs bind(bindShapes);
  const char *reqNames[] = {"fc_weight"}, *reqTypes[] = {(flags & 4) ? "add" : "write"};
  SymcExecutorHandle exec = nullptr;
  if (SymcExecutorSimpleBind(artifact, 1, 0, static_cast<int>(bind.names.size()), bind.names.data(),
                             bind.data.data(), bind.ndim.data(), 1, reqNames, reqTypes, 0, nullptr, nullptr,
                             &exec) != 0)
    return 0;
  SymcExecutorForward(exec, flags & 1);
  SymcExecutorBackward(exec, 0, nullptr, 1);
  ShapeArgs reshape(reshapeShapes);
  SymcExecutorHandle child = nullptr;
  if (SymcExecutorReshape(exec, (flags >> 1) & 1, (flags >> 3) & 1, static_cast<int>(reshape.names.size()),
                          reshape.names.data(), reshape.data.data(), reshape.ndim.data(), &child) == 0) {
    SymcExecutorForward(child, flags & 1);
    SymcExecutorFree(child);
  }
  SymcExecutorFree(exec);
  return 0;
}
