//===- TextScanner.h - a cursor for the runtime's small parsers --*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_TEXTSCANNER_H
#define SYMC_RUNTIME_CORE_TEXTSCANNER_H

#include <cctype>
#include <string>

namespace symc {

/// A position in untrusted text, for the hand-written JSON and .npy header
/// parsers. `Derived` provides `[[noreturn]] void fail(const std::string &)`,
/// which names the byte at `pos`.
template <typename Derived> class TextScanner {
protected:
  explicit TextScanner(const std::string &text) : text(text) {}

  void skipSpace() {
    while (pos < text.size() && isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      static_cast<Derived *>(this)->fail(std::string("expected '") + c + "'");
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace symc

#endif
