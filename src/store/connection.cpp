#include "store/connection.hpp"

#include <charconv>
#include <chrono>

#include "core/base64.hpp"
#include "store/engines.hpp"

namespace tollgate::store {

std::int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const std::string& Row::text(std::size_t i) const {
  static const std::string kEmpty;
  const auto& c = columns_.at(i);
  return c ? *c : kEmpty;
}

std::optional<std::int64_t> Row::optionalInteger(std::size_t i) const {
  const auto& c = columns_.at(i);
  if (!c) {
    return std::nullopt;
  }
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(c->data(), c->data() + c->size(), v);
  if (ec != std::errc() || end != c->data() + c->size()) {
    throw StoreError(StoreError::Kind::Other, "column " + std::to_string(i) + " is not a number");
  }
  return v;
}

std::int64_t Row::integer(std::size_t i) const { return optionalInteger(i).value_or(0); }

std::vector<Rows> Connection::pipeline(std::span<const Statement> statements) {
  std::vector<Rows> out;
  out.reserve(statements.size());
  for (const Statement& s : statements) {
    out.push_back(query(s.sql, s.params));
  }
  return out;
}

std::optional<Location> parseLocation(std::string_view url, std::string_view base_dir,
                                      std::string& why) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url.starts_with(kSqlite)) {
    const std::string_view path = url.substr(kSqlite.size());
    if (path.empty()) {
      why = "sqlite:// needs a file path, e.g. sqlite://tollgate.db";
      return std::nullopt;
    }
    if (path.front() == '/' || base_dir.empty()) {
      return Location{Engine::Sqlite, std::string(path)};
    }
    return Location{Engine::Sqlite, std::string(base_dir) + "/" + std::string(path)};
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return Location{Engine::Postgres, std::string(url)};
  }
  why = "must start with sqlite:// or postgresql://";
  return std::nullopt;
}

std::unique_ptr<Connection> connect(const Location& where) {
  return where.engine == Engine::Sqlite ? connectSqlite(where.target)
                                        : connectPostgres(where.target);
}

Transaction::~Transaction() {
  if (!done_) {
    try {
      c_.rollback();
    } catch (const StoreError&) {
      // The connection is gone; the server rolls the transaction back by itself.
    }
  }
}

std::string decodedBody(const std::string& stored, std::string_view table) {
  std::optional<std::string> bytes = base64::decode(stored);
  if (!bytes) {
    throw StoreError(StoreError::Kind::Other, "a body in " + std::string(table) + " is not base64");
  }
  return std::move(*bytes);
}

}  // namespace tollgate::store
