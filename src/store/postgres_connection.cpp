// PostgreSQL engine (libpq). Changes are announced with NOTIFY in the writing transaction, so
// listeners wake exactly when it commits; schema migrations take a transaction-scoped advisory
// lock so that replicas starting together migrate one at a time.
#include <libpq-fe.h>
#include <poll.h>

#include <optional>
#include <unordered_map>
#include <utility>

#include "store/engines.hpp"

namespace tollgate::store {
namespace {

constexpr std::string_view kChangeChannel = "tollgate_changes";
/// Any fixed number: the advisory lock that serialises migrations.
constexpr std::string_view kSchemaLockId = "7305736";

struct ClearResult {
  PGresult* r;
  ~ClearResult() { PQclear(r); }
};

class PostgresConnection final : public Connection {
 public:
  explicit PostgresConnection(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = conn_ != nullptr ? PQerrorMessage(conn_) : "out of memory";
      PQfinish(conn_);
      throw StoreError(StoreError::Kind::Unavailable, "postgresql: " + trimmed(why));
    }
    // Our statements send no notices worth reading; keep them off stderr.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
  }
  ~PostgresConnection() override { PQfinish(conn_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  Engine engine() const override { return Engine::Postgres; }

  Rows query(std::string_view sql, std::span<const Param> params) override {
    const Statement one{std::string(sql), std::vector<Param>(params.begin(), params.end())};
    return std::move(pipeline(std::span(&one, 1)).front());
  }

  /// The statements in one round trip (and the transaction's BEGIN, when it is still to send).
  /// Each SQL text is prepared once per connection (parsed and planned by the server once, not
  /// at every use), the first time it is sent, in the same round trip.
  std::vector<Rows> pipeline(std::span<const Statement> statements) override {
    const bool with_begin = std::exchange(pending_begin_, false);
    if (PQenterPipelineMode(conn_) != 1) {
      throw StoreError(StoreError::Kind::Unavailable,
                       "postgresql: " + trimmed(PQerrorMessage(conn_)));
    }
    // What each command sent answers: nothing the caller reads (BEGIN), a preparation (its SQL,
    // forgotten unless it succeeds), or a statement's rows.
    struct Sent {
      const std::string* preparing = nullptr;
      bool rows = false;
    };
    std::vector<Sent> sent;
    sent.reserve(statements.size() * 2 + 1);
    const auto lost = [this] {
      PQexitPipelineMode(conn_);  // Fails while results are pending: the connection is lost.
      return StoreError(StoreError::Kind::Unavailable,
                        "postgresql: " + trimmed(PQerrorMessage(conn_)));
    };
    if (with_begin) {
      if (PQsendQueryParams(conn_, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
        throw lost();
      }
      sent.push_back({});
    }
    for (const Statement& s : statements) {
      const Texts params = texts(s.params);
      const std::vector<const char*>& values = params.values;
      const int n = static_cast<int>(values.size());
      auto known = prepared_.find(s.sql);
      if (known == prepared_.end() && prepared_.size() < kMaxPrepared) {
        known = prepared_.emplace(s.sql, "tg" + std::to_string(next_name_++)).first;
        if (PQsendPrepare(conn_, known->second.c_str(), s.sql.c_str(), n, nullptr) != 1) {
          prepared_.erase(known);
          throw lost();
        }
        sent.push_back({.preparing = &known->first});
      }
      const int queued = known != prepared_.end()
                             ? PQsendQueryPrepared(conn_, known->second.c_str(), n, values.data(),
                                                   nullptr, nullptr, 0)
                             : PQsendQueryParams(conn_, s.sql.c_str(), n, nullptr, values.data(),
                                                 nullptr, nullptr, 0);
      if (queued != 1) {
        throw lost();
      }
      sent.push_back({.rows = true});
    }
    if (PQpipelineSync(conn_) != 1) {
      throw lost();
    }
    // Every answer is read up to the sync, even after a failure, so that the connection is idle
    // again (and the transaction can be rolled back) before the first failure is thrown.
    std::vector<Rows> out;
    out.reserve(statements.size());
    std::optional<StoreError> failure;
    std::size_t next = 0;
    for (;;) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) {
        if (PQstatus(conn_) != CONNECTION_OK) {
          throw StoreError(StoreError::Kind::Unavailable, "postgresql: connection lost");
        }
        continue;  // The end of one command's results.
      }
      const ClearResult res{r};
      const ExecStatusType status = PQresultStatus(r);
      if (status == PGRES_PIPELINE_SYNC) {
        break;
      }
      const Sent what = next < sent.size() ? sent[next++] : Sent{};
      if (what.preparing != nullptr && status != PGRES_COMMAND_OK) {
        prepared_.erase(*what.preparing);  // Not prepared: prepared again at its next use.
      }
      if (status == PGRES_PIPELINE_ABORTED) {
        continue;  // Not run: an earlier command failed.
      }
      try {
        check(r);
        if (what.rows) {
          out.push_back(rowsOf(r));
        }
      } catch (const StoreError& e) {
        failure = failure.value_or(e);
      }
    }
    PQexitPipelineMode(conn_);
    if (failure) {
      throw *failure;
    }
    return out;
  }

  /// The parameters as libpq takes them, NUL-terminated text or null: `values` points into the
  /// params' own text and into `written` (numbers and borrowed text written out; reserved whole,
  /// so never moved), which libpq copies when the statement is sent.
  struct Texts {
    std::vector<std::string> written;
    std::vector<const char*> values;
  };
  static Texts texts(std::span<const Param> params) {
    Texts t;
    t.written.reserve(params.size());
    t.values.reserve(params.size());
    for (const Param& p : params) {
      if (p.isNull()) {
        t.values.push_back(nullptr);
      } else if (const char* own = p.terminated()) {
        t.values.push_back(own);
      } else {
        t.values.push_back(
            t.written
                .emplace_back(p.isInteger() ? std::to_string(p.integer()) : std::string(p.text()))
                .c_str());
      }
    }
    return t;
  }

  static Rows rowsOf(PGresult* res) {
    Rows rows;
    const int n = PQntuples(res);
    const int columns = PQnfields(res);
    rows.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::vector<std::optional<std::string>> row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(res, i, c) != 0) {
          row.emplace_back();
        } else {
          row.emplace_back(
              std::string(PQgetvalue(res, i, c), static_cast<std::size_t>(PQgetlength(res, i, c))));
        }
      }
      rows.emplace_back(std::move(row));
    }
    return rows;
  }

  void script(std::string_view sql) override {
    if (std::exchange(pending_begin_, false)) {
      if (sql == "COMMIT" || sql == "ROLLBACK") {
        return;  // Nothing was sent: there is no transaction to end.
      }
      script("BEGIN");
    }
    const std::string text(sql);
    const ClearResult res{PQexec(conn_, text.c_str())};
    check(res.r);
  }

  /// Sent with the transaction's first statement rather than in a round trip of its own.
  void begin() override { pending_begin_ = true; }

  void lockSchema() override {
    query("SELECT pg_advisory_xact_lock(" + std::string(kSchemaLockId) + ")", {});
  }

  bool waitForChange(std::chrono::milliseconds timeout) override {
    if (!listening_) {
      script("LISTEN " + std::string(kChangeChannel));
      listening_ = true;
    }
    if (drainNotifications()) {
      return true;
    }
    pollfd p{PQsocket(conn_), POLLIN, 0};
    if (p.fd < 0) {
      throw StoreError(StoreError::Kind::Unavailable, "postgresql: connection lost");
    }
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready > 0 && PQconsumeInput(conn_) == 0) {
      throw StoreError(StoreError::Kind::Unavailable,
                       "postgresql: " + trimmed(PQerrorMessage(conn_)));
    }
    return drainNotifications();
  }

  std::string_view nowMsSql() const override {
    return "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";
  }

  void announceChange() override { script("NOTIFY " + std::string(kChangeChannel)); }

 private:
  bool drainNotifications() {
    bool any = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      PQfreemem(n);
      any = true;
    }
    return any;
  }

  void check(PGresult* res) const {
    const ExecStatusType status = PQresultStatus(res);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      return;
    }
    const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const std::string_view code = state != nullptr ? state : "";
    const auto kind = code == "23505" || code == "23503" ? StoreError::Kind::Conflict
                      : PQstatus(conn_) != CONNECTION_OK || code.starts_with("08") ||
                              code == "40001" || code == "40P01" || code.starts_with("57")
                          ? StoreError::Kind::Unavailable
                          : StoreError::Kind::Other;
    throw StoreError(kind, "postgresql: " + trimmed(PQerrorMessage(conn_)));
  }

  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
      text.pop_back();
    }
    return text;
  }

  /// Past this many distinct SQL texts, statements are sent unprepared (parsed at each use).
  static constexpr std::size_t kMaxPrepared = 256;

  PGconn* conn_;
  std::unordered_map<std::string, std::string> prepared_;  ///< SQL -> its statement's name
  std::uint64_t next_name_ = 0;
  bool listening_ = false;
  bool pending_begin_ = false;  ///< begin() was called; BEGIN not yet sent.
};

}  // namespace

std::unique_ptr<Connection> connectPostgres(const std::string& url) {
  return std::make_unique<PostgresConnection>(url);
}

}  // namespace tollgate::store
