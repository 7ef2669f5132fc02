#include "http/request.hpp"

#include <utility>

namespace tollgate::http {
namespace {

constexpr std::pair<Method, std::string_view> kMethods[] = {
    {Method::Get, "GET"},         {Method::Head, "HEAD"},   {Method::Post, "POST"},
    {Method::Put, "PUT"},         {Method::Patch, "PATCH"}, {Method::Delete, "DELETE"},
    {Method::Options, "OPTIONS"},
};

}  // namespace

Method parseMethod(std::string_view text) {
  for (const auto& [m, name] : kMethods) {
    if (name == text) {
      return m;
    }
  }
  return Method::Other;
}

std::string_view methodName(Method m) {
  for (const auto& [known, name] : kMethods) {
    if (known == m) {
      return name;
    }
  }
  return "OTHER";
}

}  // namespace tollgate::http
