// One connection to the database, the only place that knows an engine: SQLite for one machine,
// PostgreSQL for several gateways. Statements are always parameterised ($1, $2, … in the text,
// written once for both engines); values travel as text or null. A Connection belongs to one
// thread at a time and blocks it: the gateway keeps it off its I/O threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tollgate::store {

enum class Engine { Sqlite, Postgres };

/// Milliseconds since the Unix epoch, the unit of every time in the store.
std::int64_t nowMs();
/// Milliseconds in a day, as the store counts days (Unix time has no leap seconds).
inline constexpr std::int64_t kMsPerDay = 86'400'000;

/// A failed statement or connection. Conflict is a unique or foreign-key violation, the only
/// kind that callers handle (as "already exists"); the rest end the operation.
class StoreError : public std::runtime_error {
 public:
  enum class Kind { Conflict, Unavailable, Other };
  StoreError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// A statement parameter: text, a whole number, or null. A number stays one (SQLite binds it as
/// such; PostgreSQL's text format writes it when the statement is sent).
class Param {
 public:
  Param() = default;                                           // null
  Param(std::string_view text) : value_(std::string(text)) {}  // NOLINT: implicit by design
  Param(const char* text) : value_(std::string(text)) {}       // NOLINT
  Param(const std::string& text) : value_(text) {}             // NOLINT
  Param(std::string&& text) : value_(std::move(text)) {}       // NOLINT
  Param(std::int64_t n) : value_(n) {}                         // NOLINT
  Param(std::optional<std::string> text) {                     // NOLINT
    if (text) {
      value_ = std::move(*text);
    }
  }

  /// Text the caller keeps as it is until the statement has run: not copied.
  static Param borrowed(std::string_view text) {
    Param p;
    p.value_ = text;
    return p;
  }

  bool isNull() const { return std::holds_alternative<std::monostate>(value_); }
  bool isInteger() const { return std::holds_alternative<std::int64_t>(value_); }
  /// The number; only when isInteger().
  std::int64_t integer() const { return std::get<std::int64_t>(value_); }
  /// The text; only when neither null nor a number.
  std::string_view text() const {
    const auto* owned = std::get_if<std::string>(&value_);
    return owned != nullptr ? std::string_view(*owned) : std::get<std::string_view>(value_);
  }
  /// The text NUL-terminated, when the param holds its own copy (not borrowed); else null.
  const char* terminated() const {
    const auto* owned = std::get_if<std::string>(&value_);
    return owned != nullptr ? owned->c_str() : nullptr;
  }

 private:
  std::variant<std::monostate, std::string, std::int64_t, std::string_view> value_;
};

/// One result row; columns in the statement's order.
class Row {
 public:
  explicit Row(std::vector<std::optional<std::string>> columns) : columns_(std::move(columns)) {}
  bool isNull(std::size_t i) const { return !columns_.at(i).has_value(); }
  /// The column's text; empty when null.
  const std::string& text(std::size_t i) const;
  std::optional<std::string> optionalText(std::size_t i) const { return columns_.at(i); }
  /// The column as a whole number; 0 when null. Throws StoreError when it is not one.
  std::int64_t integer(std::size_t i) const;
  std::optional<std::int64_t> optionalInteger(std::size_t i) const;

 private:
  std::vector<std::optional<std::string>> columns_;
};

using Rows = std::vector<Row>;

/// One statement of a pipeline: its SQL and its parameters.
struct Statement {
  std::string sql;
  std::vector<Param> params;
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Engine engine() const = 0;

  /// Runs one statement with its parameters; returns the rows it yields.
  virtual Rows query(std::string_view sql, std::span<const Param> params) = 0;
  Rows query(std::string_view sql, std::initializer_list<Param> params = {}) {
    return query(sql, std::span<const Param>(params.begin(), params.size()));
  }

  /// Runs `statements` in order, in the current transaction, and returns the rows of each.
  /// PostgreSQL sends them all before it reads an answer (one round trip for the lot); SQLite
  /// runs them one by one. The first that fails throws, and none after it takes effect.
  virtual std::vector<Rows> pipeline(std::span<const Statement> statements);

  /// Runs several statements without parameters (schema changes).
  virtual void script(std::string_view sql) = 0;

  /// Starts a transaction that writes: SQLite takes its write lock at once (BEGIN IMMEDIATE),
  /// so two writers never deadlock on upgrading a read lock; PostgreSQL sends its BEGIN with the
  /// transaction's first statement (one round trip fewer), and ends an empty one without a word.
  virtual void begin() = 0;
  virtual void commit() { script("COMMIT"); }
  virtual void rollback() { script("ROLLBACK"); }

  /// Serialises schema migrations between processes for the current transaction.
  virtual void lockSchema() = 0;

  /// Blocks until another connection may have changed the database, or `timeout` passes. True
  /// when something changed (SQLite: its data version moved; PostgreSQL: a notification on
  /// kChangeChannel arrived). A false positive is allowed; a missed change is not.
  virtual bool waitForChange(std::chrono::milliseconds timeout) = 0;

  /// An SQL expression for the database's clock in milliseconds since the epoch. Gateways'
  /// liveness is judged on this one clock, so hosts with skewed clocks still agree.
  virtual std::string_view nowMsSql() const = 0;

  /// Wakes every connection waiting in waitForChange once the current transaction commits.
  virtual void announceChange() = 0;

  /// Lets commits return before they reach the disk where the engine allows it: SQLite (WAL)
  /// then syncs at checkpoints only, so a commit survives a crash of the process but not a power
  /// cut, and leaves checkpoints to another connection (checkpoint()); PostgreSQL keeps its own
  /// settings. For the store's writer, whose every batch of charges would else wait for a disk
  /// flush on the request path.
  virtual void relaxDurability() {}

  /// What a checkpoint left: the write-ahead log's length, and whether all of it is now in the
  /// database (no reader of an older state held part of it back).
  struct LogState {
    std::int64_t bytes = 0;
    bool taken_in = true;
  };
  /// Copies what the write-ahead log holds into the database where the engine needs it done
  /// (SQLite, without waiting for readers or writers); nothing elsewhere.
  virtual LogState checkpoint() { return {}; }
};

/// Bytes the store keeps as base64 text (a body an upstream sent may be any bytes), decoded;
/// throws StoreError when they are not base64 (the store was written by hand). `table` names
/// where they were read, for the message.
std::string decodedBody(const std::string& stored, std::string_view table);

/// Where the database is: `sqlite://PATH` (relative to `base_dir` unless absolute) or a
/// `postgresql://` URL whose password, if any, comes from the environment (PGPASSWORD).
struct Location {
  Engine engine = Engine::Sqlite;
  std::string target;  ///< The SQLite file path, or the PostgreSQL connection URL.
};

/// Parses a storage URL; nullopt with `why` set when it is not one.
std::optional<Location> parseLocation(std::string_view url, std::string_view base_dir,
                                      std::string& why);

/// Opens a connection. SQLite: creates the file (mode 0600) and turns on WAL, foreign keys and a
/// busy timeout. Throws StoreError.
std::unique_ptr<Connection> connect(const Location& where);

/// Rolls back unless committed: `Transaction tx(c); …; tx.commit();`
class Transaction {
 public:
  explicit Transaction(Connection& c) : c_(c) { c_.begin(); }
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    c_.commit();
    done_ = true;
  }

 private:
  Connection& c_;
  bool done_ = false;
};

}  // namespace tollgate::store
