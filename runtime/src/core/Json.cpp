//===- Json.cpp - the small JSON reader and writer the runtime needs ------===//
#include "Json.h"

#include "symc/NDArray.h"

#include <cstdio>
#include <cstdlib>

namespace symc::json {
namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  Value parseDocument() {
    Value v = parseValue();
    skipSpace();
    if (pos != text.size())
      fail("trailing characters");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error("MXNetError", "manifest JSON, byte " + std::to_string(pos) + ": " + what);
  }
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
      fail(std::string("expected '") + c + "'");
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
    if (c == '{') {
      v.kind = Value::Object;
      ++pos;
      if (consume('}'))
        return v;
      do {
        skipSpace();
        std::string key = parseString();
        expect(':');
        v.object[key] = parseValue();
      } while (consume(','));
      expect('}');
    } else if (c == '[') {
      v.kind = Value::Array;
      ++pos;
      if (consume(']'))
        return v;
      do
        v.array.push_back(parseValue());
      while (consume(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::String;
      v.string = parseString();
    } else if (consumeWord("true") || consumeWord("false")) {
      v.kind = Value::Bool;
      v.boolean = text[pos - 1] == 'e' && text[pos - 2] == 'u';
    } else if (consumeWord("null")) {
      v.kind = Value::Null;
    } else {
      char *end = nullptr;
      v.kind = Value::Number;
      v.number = std::strtod(text.c_str() + pos, &end);
      if (end == text.c_str() + pos)
        fail("unexpected character");
      pos = end - text.c_str();
    }
    return v;
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
      case 'u': {
        unsigned code = std::stoul(text.substr(pos, 4), nullptr, 16);
        pos += 4;
        // Names are ASCII in practice; encode the BMP as UTF-8.
        if (code < 0x80) {
          s += static_cast<char>(code);
        } else if (code < 0x800) {
          s += static_cast<char>(0xC0 | (code >> 6));
          s += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          s += static_cast<char>(0xE0 | (code >> 12));
          s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          s += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default: s += e;
      }
    }
    if (pos >= text.size())
      fail("unterminated string");
    ++pos;
    return s;
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

const Value &Value::at(const std::string &key) const {
  auto it = object.find(key);
  if (it == object.end())
    throw Error("MXNetError", "manifest: missing key '" + key + "'");
  return it->second;
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
