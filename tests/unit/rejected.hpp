// The table-driven refusal tests of the request decoders: one case names a request body and the
// error it must get (its kind and the parameter it names), and one check says that an error is
// that refusal, a 400 with a message.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "core/error.hpp"

namespace tollgate::openai {

struct Rejected {
  std::string name;  ///< The case's name in the test's name.
  std::string body;
  ErrorKind kind;
  std::string param;
  std::string content_type;  ///< Where a decoder reads one; empty: the test's usual one.
};

inline void PrintTo(const Rejected& c, std::ostream* os) { *os << c.name; }

/// `e` is the refusal case `c` describes.
inline void expectRefusal(const Error& e, const Rejected& c) {
  EXPECT_EQ(e.kind, c.kind) << e.message;
  EXPECT_EQ(e.param, c.param) << e.message;
  EXPECT_EQ(e.status(), 400);
  EXPECT_FALSE(e.message.empty());
}

}  // namespace tollgate::openai
