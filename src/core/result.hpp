// Result<T>: a value or an Error, the return type of every request-path function. Result<T, E>:
// the same with a layer's own kind of failure (accounts' refusals).
#pragma once

#include <utility>
#include <variant>

#include "core/error.hpp"

namespace tollgate {

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const E& error() const& { return std::get<1>(v_); }
  E&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

/// Result of an operation that yields nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace tollgate
