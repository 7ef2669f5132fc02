// Test helpers for account outcomes: the value of one expected to succeed, and a check that one
// was refused with a given kind and message.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "accounts/refusal.hpp"

namespace tollgate::accounts::test {

/// The value of an outcome expected to succeed; a refusal fails the test (as an exception).
template <class T>
T value(Outcome<T> outcome) {
  if (!outcome) {
    throw std::runtime_error("refused: " + outcome.error().message);
  }
  return std::move(outcome).value();
}

inline const char* kindName(RefusalKind kind) {
  switch (kind) {
    case RefusalKind::Invalid:
      return "Invalid";
    case RefusalKind::NotFound:
      return "NotFound";
    case RefusalKind::Forbidden:
      return "Forbidden";
    case RefusalKind::Conflict:
      return "Conflict";
    case RefusalKind::TeamLimit:
      return "TeamLimit";
  }
  return "?";
}

/// Success when `outcome` is a refusal of `kind` with exactly `message`.
template <class T>
::testing::AssertionResult refused(const Outcome<T>& outcome, RefusalKind kind,
                                   const std::string& message) {
  if (outcome) {
    return ::testing::AssertionFailure() << "not refused";
  }
  const Refusal& r = outcome.error();
  if (r.kind != kind || r.message != message) {
    return ::testing::AssertionFailure() << "refused " << kindName(r.kind) << ": " << r.message;
  }
  return ::testing::AssertionSuccess();
}

/// Success when `outcome` is a refusal of `kind`, whatever its message.
template <class T>
::testing::AssertionResult refused(const Outcome<T>& outcome, RefusalKind kind) {
  if (outcome) {
    return ::testing::AssertionFailure() << "not refused";
  }
  if (outcome.error().kind != kind) {
    return ::testing::AssertionFailure()
           << "refused " << kindName(outcome.error().kind) << ": " << outcome.error().message;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tollgate::accounts::test
