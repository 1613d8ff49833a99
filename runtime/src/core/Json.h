//===- Json.h - the small JSON reader and writer the runtime needs -*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_JSON_H
#define SYMC_RUNTIME_CORE_JSON_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace symc::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// Member `key` of an object; throws when absent.
  const Value &at(const std::string &key) const;
  bool has(const std::string &key) const { return object.count(key) != 0; }

  /// The value read as one kind; each throws symc::Error when it is another
  /// kind, so a malformed manifest is an error, never a default.
  const std::string &str() const;
  const std::vector<Value> &list() const;
  const std::map<std::string, Value> &members() const;
  bool flag() const;
  /// An integral number in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) const;
};

/// Parses `text`; throws symc::Error naming the byte offset on bad input.
Value parse(const std::string &text);
/// `value` as JSON text (object members in key order).
std::string write(const Value &value);

/// Constructors of values.
inline Value number(double n) {
  Value v;
  v.kind = Value::Number;
  v.number = n;
  return v;
}
inline Value string(std::string s) {
  Value v;
  v.kind = Value::String;
  v.string = std::move(s);
  return v;
}
inline Value array(std::vector<Value> items = {}) {
  Value v;
  v.kind = Value::Array;
  v.array = std::move(items);
  return v;
}
inline Value object(std::map<std::string, Value> members = {}) {
  Value v;
  v.kind = Value::Object;
  v.object = std::move(members);
  return v;
}

} // namespace symc::json

#endif
