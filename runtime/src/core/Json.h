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
