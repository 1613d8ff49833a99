//===- Json.cpp - the small JSON reader and writer the runtime needs ------===//
#include "Json.h"

#include "TextScanner.h"

#include "symc/NDArray.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace symc::json {
namespace {

/// Deeper documents are refused: the parser recurses once per level, and no
/// manifest nests past a dozen.
constexpr int kMaxDepth = 256;

class Parser : TextScanner<Parser> {
public:
  explicit Parser(const std::string &text) : TextScanner(text) {}

  Value parseDocument() {
    Value v = parseValue();
    skipSpace();
    if (pos != text.size())
      fail("trailing characters");
    return v;
  }

private:
  friend TextScanner;

  [[noreturn]] void fail(const std::string &what) const {
    throw Error("MXNetError", "manifest JSON, byte " + std::to_string(pos) + ": " + what);
  }
  bool consumeWord(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }

  Value parseValue() {
    skipSpace();
    if (pos >= text.size())
      fail("unexpected end");
    Value v;
    char c = text[pos];
    if (c == '{' || c == '[') {
      if (++depth > kMaxDepth)
        fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
      ++pos;
      if (c == '{')
        parseMembers(v);
      else
        parseItems(v);
      --depth;
    } else if (c == '"') {
      v.kind = Value::String;
      v.string = parseString();
    } else if (consumeWord("true") || consumeWord("false")) {
      v.kind = Value::Bool;
      v.boolean = text[pos - 1] == 'e' && text[pos - 2] == 'u';
    } else if (consumeWord("null")) {
      v.kind = Value::Null;
    } else {
      v.kind = Value::Number;
      v.number = parseNumber();
    }
    return v;
  }

  /// An object's members, after its '{'.
  void parseMembers(Value &v) {
    v.kind = Value::Object;
    if (consume('}'))
      return;
    do {
      skipSpace();
      std::string key = parseString();
      expect(':');
      v.object[key] = parseValue();
    } while (consume(','));
    expect('}');
  }

  /// An array's items, after its '['.
  void parseItems(Value &v) {
    v.kind = Value::Array;
    if (consume(']'))
      return;
    do
      v.array.push_back(parseValue());
    while (consume(','));
    expect(']');
  }

  /// JSON's number grammar (no inf, nan, hex or leading '+', which strtod
  /// would take), then strtod on exactly those characters.
  double parseNumber() {
    size_t start = pos;
    auto digits = [&] {
      size_t from = pos;
      while (pos < text.size() && isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      return pos > from;
    };
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    if (!digits())
      fail("unexpected character");
    if (pos < text.size() && text[pos] == '.' && (++pos, !digits()))
      fail("malformed number");
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        fail("malformed number");
    }
    return std::strtod(text.substr(start, pos - start).c_str(), nullptr);
  }

  /// The four hex digits after `\u`.
  unsigned parseHex4() {
    if (text.size() - pos < 4)
      fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i, ++pos) {
      int digit = hexDigit(text[pos]);
      if (digit < 0)
        fail("bad \\u escape");
      code = code << 4 | static_cast<unsigned>(digit);
    }
    return code;
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  /// A `\u` escape (a surrogate pair taking two) as UTF-8.
  void appendEscapedCodePoint(std::string &s) {
    unsigned code = parseHex4();
    if (code >= 0xDC00 && code <= 0xDFFF)
      fail("unpaired low surrogate in \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (text.compare(pos, 2, "\\u") != 0)
        fail("unpaired high surrogate in \\u escape");
      pos += 2;
      unsigned low = parseHex4();
      if (low < 0xDC00 || low > 0xDFFF)
        fail("unpaired high surrogate in \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    if (code < 0x80) {
      s += static_cast<char>(code);
    } else if (code < 0x800) {
      s += static_cast<char>(0xC0 | (code >> 6));
      s += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      s += static_cast<char>(0xE0 | (code >> 12));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (code >> 18));
      s += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parseString() {
    if (pos >= text.size() || text[pos] != '"')
      fail("expected a string");
    ++pos;
    std::string s;
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char e = text[pos++];
      switch (e) {
      case 'n': s += '\n'; break;
      case 't': s += '\t'; break;
      case 'r': s += '\r'; break;
      case 'b': s += '\b'; break;
      case 'f': s += '\f'; break;
      case 'u': appendEscapedCodePoint(s); break;
      case '"': case '\\': case '/': s += e; break;
      default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
    if (pos >= text.size())
      fail("unterminated string");
    ++pos;
    return s;
  }

  int depth = 0;
};

} // namespace

const Value &Value::at(const std::string &key) const {
  auto it = object.find(key);
  if (it == object.end())
    throw Error("MXNetError", "manifest: missing key '" + key + "'");
  return it->second;
}

static const char *kindName(Value::Kind kind) {
  static const char *const names[] = {"null", "a bool", "a number", "a string", "an array", "an object"};
  return names[kind];
}

static void expectKind(const Value &v, Value::Kind kind) {
  if (v.kind != kind)
    throw Error("MXNetError", std::string("manifest: expected ") + kindName(kind) + ", found " + kindName(v.kind));
}

const std::string &Value::str() const {
  expectKind(*this, String);
  return string;
}

const std::vector<Value> &Value::list() const {
  expectKind(*this, Array);
  return array;
}

const std::map<std::string, Value> &Value::members() const {
  expectKind(*this, Object);
  return object;
}

bool Value::flag() const {
  expectKind(*this, Bool);
  return boolean;
}

int64_t Value::integer(int64_t lo, int64_t hi) const {
  expectKind(*this, Number);
  // Range-checked as a double first: casting one outside int64 is undefined.
  bool integral = number >= -0x1p63 && number < 0x1p63 && std::trunc(number) == number;
  int64_t value = integral ? static_cast<int64_t>(number) : 0;
  if (!integral || value < lo || value > hi) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", number);
    throw Error("MXNetError", std::string("manifest: ") + text + " is not an integer in [" + std::to_string(lo) +
                                  ", " + std::to_string(hi) + "]");
  }
  return value;
}

Value parse(const std::string &text) { return Parser(text).parseDocument(); }

static void writeString(const std::string &s, std::string &out) {
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

static void write(const Value &v, std::string &out) {
  switch (v.kind) {
  case Value::Null: out += "null"; break;
  case Value::Bool: out += v.boolean ? "true" : "false"; break;
  case Value::Number: {
    char text[32];
    if (v.number == static_cast<double>(static_cast<long long>(v.number)))
      std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(v.number));
    else
      std::snprintf(text, sizeof(text), "%.17g", v.number);
    out += text;
    break;
  }
  case Value::String: writeString(v.string, out); break;
  case Value::Array:
    out += '[';
    for (size_t i = 0; i < v.array.size(); ++i) {
      if (i)
        out += ", ";
      write(v.array[i], out);
    }
    out += ']';
    break;
  case Value::Object: {
    out += '{';
    bool first = true;
    for (const auto &[key, member] : v.object) {
      if (!first)
        out += ", ";
      first = false;
      writeString(key, out);
      out += ": ";
      write(member, out);
    }
    out += '}';
    break;
  }
  }
}

std::string write(const Value &value) {
  std::string out;
  write(value, out);
  return out;
}

} // namespace symc::json
