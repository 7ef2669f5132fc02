#include "providers/transport.hpp"

#include "core/text.hpp"

namespace tollgate::providers {

boost::asio::awaitable<Result<std::string>> UpstreamCall::readAll(std::size_t limit) {
  std::string out;
  for (;;) {
    auto piece = co_await readSome();
    if (!piece) {
      co_return std::move(piece).error();
    }
    if (piece->empty()) {
      co_return out;
    }
    if (out.size() + piece->size() > limit) {
      co_return Error{ErrorKind::UpstreamError, "the upstream's answer is too large", ""};
    }
    out.append(*piece);
  }
}

std::string_view BufferedCall::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (text::equalsIgnoreCase(n, name)) {
      return v;
    }
  }
  return {};
}

boost::asio::awaitable<Result<std::string_view>> BufferedCall::readSome() {
  const bool first = !read_;
  read_ = true;
  co_return first ? std::string_view(body_) : std::string_view{};
}

}  // namespace tollgate::providers
