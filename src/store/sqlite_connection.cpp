// SQLite engine: WAL (readers never wait for the writer), foreign keys on, a busy timeout so
// concurrent writers (a gateway and `tollgate admin`) queue instead of failing, FULL sync so a
// committed transaction survives a power cut. A database file deleted or replaced while the
// process has it open is noticed before the next transaction, which then fails: SQLite would
// otherwise write on to the unlinked file, and every charge after it would be lost.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "store/engines.hpp"

namespace tollgate::store {
namespace {

/// How long a connection waits for another's write lock before its statement fails as busy.
constexpr std::chrono::milliseconds kBusyTimeout{10'000};
/// Its first pause, doubled at each look up to the longest. SQLite's own handler sleeps 1, 2, 5,
/// 10 ms and on, so a charge behind a heartbeat that held the lock for a tenth of a millisecond
/// waited three milliseconds or more.
constexpr std::chrono::microseconds kFirstBusyPause{25};
constexpr std::chrono::microseconds kLongestBusyPause{2'000};
constexpr std::chrono::milliseconds kPollInterval{20};
/// Prepared statements kept per connection (the store's writer runs the ledger's same few
/// thousands of times a second); statements past this many are prepared for one use.
constexpr std::size_t kMaxCachedStatements = 64;

/// Whether this process has opened the database at `path` before (and notes that it has now):
/// if it is missing then, it was deleted under us, and creating an empty one would hide that.
bool openedBefore(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> opened;
  const std::lock_guard lock(mu);
  return !opened.insert(path).second;
}

/// The file at `path`, by device and inode; nullopt when there is none.
std::optional<std::pair<dev_t, ino_t>> fileIdentity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return std::pair{st.st_dev, st.st_ino};
}

StoreError fileGone(const std::string& path) {
  return StoreError(StoreError::Kind::Unavailable,
                    "the database file " + path +
                        " was deleted or replaced while this process had it open; nothing is "
                        "billed or recorded until it is back and the gateway is restarted");
}

/// SQLite's process-wide settings, made once before its first connection opens (it initializes
/// itself then, after which they can no longer change): no count of the memory it holds, which
/// took a lock of the whole process around each of its allocations (about 190 for a settlement
/// committed alone). Nothing here reads the count, nor sets the soft heap limit that needs it.
void configureOnce() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

/// SQLite numbers its parameters ?1, ?2, …; the shared statements say $1, $2, ….
std::string sqliteParams(std::string_view sql) {
  std::string out(sql);
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '$' && out[i + 1] >= '0' && out[i + 1] <= '9') {
      out[i] = '?';
    }
  }
  return out;
}

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(const std::string& path) : path_(path) {
    if (openedBefore(path) && !fileIdentity(path)) {
      throw fileGone(path);
    }
    // Create the file ourselves so that it is never readable by others, even for a moment;
    // SQLite gives its -wal and -shm files the database file's mode. Only when it is new: closing
    // a descriptor of a file drops every POSIX lock this process holds on it, so closing one of
    // an open database would strip the locks of this process's other connections, and the next
    // connection to close anywhere would take itself for the last one and delete the WAL.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
    } else if (errno != EEXIST) {
      throw StoreError(StoreError::Kind::Unavailable, "cannot open " + path);
    }
    configureOnce();
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK) {
      const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw StoreError(StoreError::Kind::Unavailable, "cannot open " + path + ": " + why);
    }
    try {
      sqlite3_busy_handler(db_, &SqliteConnection::busy, this);
      script("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;");
      data_version_ = dataVersion();
      identity_ = fileIdentity(path);
    } catch (const StoreError&) {
      sqlite3_close(db_);
      throw;
    }
  }
  ~SqliteConnection() override {
    for (auto& [sql, stmt] : cache_) {
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db_);
  }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Engine engine() const override { return Engine::Sqlite; }

  Rows query(std::string_view sql, std::span<const Param> params) override {
    sqlite3_stmt* stmt = nullptr;
    bool cached = false;
    // Found by the statement as the caller wrote it: no copy, no conversion on a hit.
    Recent& recent =
        recent_[(reinterpret_cast<std::uintptr_t>(sql.data()) >> kRecentShift) % recent_.size()];
    if (recent.text != nullptr && *recent.text == sql) {
      stmt = recent.stmt;
      cached = true;
    } else if (const auto it = cache_.find(sql); it != cache_.end()) {
      stmt = it->second;
      cached = true;
      recent = {&it->first, stmt};
    } else {
      const std::string text = sqliteParams(sql);
      if (sqlite3_prepare_v2(db_, text.c_str(), static_cast<int>(text.size()), &stmt, nullptr) !=
          SQLITE_OK) {
        fail();
      }
      // A PRAGMA may be evaluated when prepared (data_version would never move again).
      if (cache_.size() < kMaxCachedStatements && !text.starts_with("PRAGMA")) {
        recent = {&cache_.emplace(std::string(sql), stmt).first->first, stmt};
        cached = true;
      }
    }
    const Release guard{stmt, !cached};
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i + 1);
      const Param& value = params[i];
      int rc = SQLITE_OK;
      if (value.isNull()) {
        rc = sqlite3_bind_null(stmt, at);
      } else if (value.isInteger()) {
        rc = sqlite3_bind_int64(stmt, at, value.integer());
      } else {
        // Not copied: the bindings are cleared (Release) before `params` can go.
        const std::string_view text = value.text();
        rc = sqlite3_bind_text(stmt, at, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      }
      if (rc != SQLITE_OK) {
        fail();
      }
    }
    Rows rows;
    const int columns = sqlite3_column_count(stmt);
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) {
        break;
      }
      if (rc != SQLITE_ROW) {
        fail();
      }
      std::vector<std::optional<std::string>> row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          row.emplace_back();
        } else {
          const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row.emplace_back(std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
      rows.emplace_back(std::move(row));
    }
    return rows;
  }

  void script(std::string_view sql) override {
    const std::string text(sql);
    if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      fail();
    }
  }

  void begin() override {
    if (fileIdentity(path_) != identity_) {
      throw fileGone(path_);
    }
    query("BEGIN IMMEDIATE", {});
  }
  // The transaction's statements are prepared once and kept with the others: sqlite3_exec
  // would parse them for every transaction.
  void commit() override { query("COMMIT", {}); }
  void rollback() override { query("ROLLBACK", {}); }
  void lockSchema() override {}  // BEGIN IMMEDIATE already holds the only write lock.

  bool waitForChange(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const std::int64_t v = dataVersion();
      if (v != data_version_) {
        data_version_ = v;
        return true;
      }
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        return false;
      }
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(left, kPollInterval));
    }
  }

  std::string_view nowMsSql() const override {
    return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
  }

  void announceChange() override {}  // Every other connection sees its data version move.

  void relaxDurability() override {
    // No journal_size_limit: the log file keeps its longest length when the log starts over, as
    // cutting it back cost more than a checkpoint (a truncation is a discard of its blocks).
    script("PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0");
  }

  LogState checkpoint() override {
    int frames = 0;
    int taken_in = 0;
    const int rc =
        sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &frames, &taken_in);
    if (rc == SQLITE_BUSY) {
      return {0, false};  // Another connection's checkpoint is running.
    }
    if (rc != SQLITE_OK) {
      fail();
    }
    if (page_bytes_ == 0) {
      page_bytes_ = query("PRAGMA page_size", {}).at(0).integer(0);
    }
    return {std::int64_t{frames} * page_bytes_, taken_in == frames};
  }

 private:
  /// After a query: a cached statement is reset for its next use, another one finalized.
  struct Release {
    sqlite3_stmt* stmt;
    bool finalize;
    ~Release() {
      if (finalize) {
        sqlite3_finalize(stmt);
      } else {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
      }
    }
  };

  [[noreturn]] void fail() const {
    const int code = sqlite3_extended_errcode(db_) & 0xff;
    const auto kind = code == SQLITE_CONSTRAINT ? StoreError::Kind::Conflict
                      : code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_IOERR ||
                              code == SQLITE_FULL || code == SQLITE_CANTOPEN
                          ? StoreError::Kind::Unavailable
                          : StoreError::Kind::Other;
    throw StoreError(kind, std::string("sqlite: ") + sqlite3_errmsg(db_));
  }

  std::int64_t dataVersion() { return query("PRAGMA data_version", {}).at(0).integer(0); }

  /// SQLite's busy handler: nonzero to look again after a pause, 0 to give up. `looks` counts
  /// this wait's earlier calls.
  static int busy(void* self, int looks) {
    auto& since = static_cast<SqliteConnection*>(self)->busy_since_;
    const auto now = std::chrono::steady_clock::now();
    if (looks == 0) {
      since = now;
    } else if (now - since >= kBusyTimeout) {
      return 0;
    }
    std::this_thread::sleep_for(std::min(kFirstBusyPause * (1 << std::min(looks, 16)),
                                         std::chrono::microseconds(kLongestBusyPause)));
    return 1;
  }

  std::string path_;
  std::optional<std::pair<dev_t, ino_t>> identity_;  ///< The file opened, checked at each begin.
  sqlite3* db_ = nullptr;
  std::int64_t data_version_ = 0;
  std::int64_t page_bytes_ = 0;  ///< The database's page size, once a checkpoint has asked.
  std::chrono::steady_clock::time_point busy_since_;  ///< When the current busy wait began.
  /// Statements by their text, looked up by a view of it.
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::unordered_map<std::string, sqlite3_stmt*, TextHash, std::equal_to<>> cache_;
  /// A cached statement and its text (a key of cache_, which keeps its nodes in place and
  /// drops none while it lives).
  struct Recent {
    const std::string* text = nullptr;
    sqlite3_stmt* stmt = nullptr;
  };
  /// The statements found last, each in the slot of where its text lay: the writer runs the same
  /// strings thousands of times a second, and a hit compares the text instead of hashing it
  /// (a spend row's insert is several hundred bytes). A slot is only a guess: it is taken when its
  /// text is the text asked for, wherever that lies.
  /// Heap blocks are 16-byte aligned: the lowest four bits of where a text lies tell nothing.
  static constexpr unsigned kRecentShift = 4;
  std::array<Recent, 32> recent_{};
};

}  // namespace

std::unique_ptr<Connection> connectSqlite(const std::string& path) {
  return std::make_unique<SqliteConnection>(path);
}

}  // namespace tollgate::store
