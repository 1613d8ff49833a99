//===- Json.h - the small JSON reader the runtime needs ---------*- C++ -*-===//
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

} // namespace symc::json

#endif
