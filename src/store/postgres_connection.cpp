// PostgreSQL engine (libpq). Changes are announced with NOTIFY in the writing transaction, so
// listeners wake exactly when it commits; schema migrations take a transaction-scoped advisory
// lock so that replicas starting together migrate one at a time.
#include <libpq-fe.h>
#include <poll.h>

#include <optional>
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
    if (pending_begin_) {
      // The transaction's BEGIN goes with its first statement, in one round trip.
      const Statement first{std::string(sql), std::vector<Param>(params.begin(), params.end())};
      return std::move(pipeline(std::span(&first, 1)).front());
    }
    const std::vector<const char*> values = texts(params);
    const std::string text(sql);
    const ClearResult res{PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()),
                                       nullptr, values.data(), nullptr, nullptr, 0)};
    check(res.r);
    return rowsOf(res.r);
  }

  std::vector<Rows> pipeline(std::span<const Statement> statements) override {
    if (statements.size() < 2 && !pending_begin_) {
      return Connection::pipeline(statements);
    }
    const bool with_begin = std::exchange(pending_begin_, false);
    if (PQenterPipelineMode(conn_) != 1) {
      throw StoreError(StoreError::Kind::Unavailable,
                       "postgresql: " + trimmed(PQerrorMessage(conn_)));
    }
    if (with_begin &&
        PQsendQueryParams(conn_, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
      PQexitPipelineMode(conn_);
      throw StoreError(StoreError::Kind::Unavailable,
                       "postgresql: " + trimmed(PQerrorMessage(conn_)));
    }
    for (const Statement& s : statements) {
      const std::vector<const char*> values = texts(s.params);
      if (PQsendQueryParams(conn_, s.sql.c_str(), static_cast<int>(values.size()), nullptr,
                            values.data(), nullptr, nullptr, 0) != 1) {
        PQexitPipelineMode(conn_);  // Fails while results are pending: the connection is lost.
        throw StoreError(StoreError::Kind::Unavailable,
                         "postgresql: " + trimmed(PQerrorMessage(conn_)));
      }
    }
    if (PQpipelineSync(conn_) != 1) {
      throw StoreError(StoreError::Kind::Unavailable,
                       "postgresql: " + trimmed(PQerrorMessage(conn_)));
    }
    // Every answer is read up to the sync, even after a failure, so that the connection is idle
    // again (and the transaction can be rolled back) before the first failure is thrown.
    std::vector<Rows> out;
    out.reserve(statements.size());
    std::optional<StoreError> failure;
    bool begun = !with_begin;  // BEGIN's own answer is not one of the statements'.
    for (;;) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) {
        if (PQstatus(conn_) != CONNECTION_OK) {
          throw StoreError(StoreError::Kind::Unavailable, "postgresql: connection lost");
        }
        continue;  // The end of one statement's results.
      }
      const ClearResult res{r};
      const ExecStatusType status = PQresultStatus(r);
      if (status == PGRES_PIPELINE_SYNC) {
        break;
      }
      if (status == PGRES_PIPELINE_ABORTED) {
        continue;  // Not run: an earlier statement failed.
      }
      try {
        check(r);
        if (begun) {
          out.push_back(rowsOf(r));
        }
        begun = true;
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

  /// The parameters as libpq takes them: text, or null.
  static std::vector<const char*> texts(std::span<const Param> params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const Param& p : params) {
      values.push_back(p.text() ? p.text()->c_str() : nullptr);
    }
    return values;
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

  PGconn* conn_;
  bool listening_ = false;
  bool pending_begin_ = false;  ///< begin() was called; BEGIN not yet sent.
};

}  // namespace

std::unique_ptr<Connection> connectPostgres(const std::string& url) {
  return std::make_unique<PostgresConnection>(url);
}

}  // namespace tollgate::store
