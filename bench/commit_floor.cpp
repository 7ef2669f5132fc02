// What SQLite alone costs for the billed path's transaction: the floor under the gateway's
// writer. Runs, in one thread and as fast as it can, the statements a ledger batch runs (the
// hold's and the team's updates, one spend row a request, the day's aggregates), each batch a
// commit as the gateway's writer makes them (WAL, synchronous=NORMAL: a commit survives the
// process's death, and the log is synced at checkpoints), with a second thread checkpointing
// every 50 ms as the gateway's does. Its CPU per request (user and system, both threads) is what
// the store asks for at that batch size with no gateway around it: no request, no thread
// hand-off, no C++ between the statements. Shapes, each dropping a part of the transaction:
//   gateway    the gateway's statements
//   one-index  the spend row in a table without its request-id index (the time index kept)
//   keyed      the spend row in a table stored by its request id (WITHOUT ROWID): the id still
//              unique, the time index kept, one B-tree fewer than the gateway's
//   no-daily   the gateway's, without the aggregates
//   row-only   the spend row alone (no hold, no team, no aggregates)
//   balance    the team's and the hold's updates alone
//   commit     an empty-handed commit (BEGIN IMMEDIATE; one number's update in a one-row table)
//   fsync      the gateway's with synchronous=FULL: the log synced at every commit, which a power
//              cut would need (the gateway does not: docs/billing.md)
// Then the commit's own latency: the gateway's shape, two requests a commit, paced at 2500
// commits a second (5000 requests a second) for 4 s, with and without the checkpointer: the
// time from BEGIN to COMMIT's return, which a charge waits for at the least.
//
//   g++ -O2 -std=c++20 -o commit_floor bench/commit_floor.cpp -lsqlite3
//   commit_floor DIR [REQUESTS]     # DIR: a directory on the disk to measure; REQUESTS a line
// Prints one line per shape and batch size: CPU us per request (user, system), commits a second;
// then the paced commits' latency percentiles. bench/run.sh runs it on the proxy's CPU.
#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void die(sqlite3* db, const char* what) {
  std::fprintf(stderr, "commit_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
  std::exit(1);
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "commit_floor: %s: %s\n", sql.c_str(), err);
    std::exit(1);
  }
}

sqlite3_stmt* prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) !=
      SQLITE_OK) {
    die(db, sql.c_str());
  }
  return s;
}

void run(sqlite3* db, sqlite3_stmt* s) {
  if (int rc = sqlite3_step(s); rc != SQLITE_DONE && rc != SQLITE_ROW) {
    die(db, sqlite3_sql(s));
  }
  sqlite3_reset(s);
}

/// The spend log's table `name` as the gateway's migrations leave it (store/migrations.cpp),
/// its request id `request_id` (the gateway's: TEXT PRIMARY KEY, a second index), and its
/// index for the listings; `options` follow the columns (" WITHOUT ROWID").
std::string spendTable(const std::string& name, const char* request_id, const char* options = "") {
  return "CREATE TABLE " + name + " (request_id " + request_id +
         ", created_at BIGINT NOT NULL, team_id TEXT NOT NULL REFERENCES teams (id), "
         "key_public_id TEXT NOT NULL, endpoint TEXT NOT NULL, model TEXT NOT NULL, provider "
         "TEXT NOT NULL, variant TEXT NOT NULL, episode_id TEXT NOT NULL, prompt_tokens BIGINT "
         "NOT NULL, completion_tokens BIGINT NOT NULL, cost BIGINT NOT NULL, tags TEXT NOT NULL, "
         "status BIGINT NOT NULL, upstream_ms BIGINT NOT NULL, streamed BIGINT NOT NULL, "
         "estimated BIGINT NOT NULL, cache_hit BIGINT NOT NULL, uncollected BIGINT NOT NULL "
         "DEFAULT 0, user_id TEXT NOT NULL DEFAULT '', cached_tokens BIGINT NOT NULL DEFAULT 0, "
         "cache_write_tokens BIGINT NOT NULL DEFAULT 0, cache_write_1h_tokens BIGINT NOT NULL "
         "DEFAULT 0, audio_prompt_tokens BIGINT NOT NULL DEFAULT 0, reasoning_tokens BIGINT NOT "
         "NULL DEFAULT 0, audio_completion_tokens BIGINT NOT NULL DEFAULT 0)" +
         options + "; CREATE INDEX " + name + "_team_time ON " + name + " (team_id, created_at);";
}

// The other tables the billed path writes, as the gateway's migrations leave them.
constexpr const char* kSchema = R"sql(
CREATE TABLE teams (id TEXT PRIMARY KEY, balance BIGINT NOT NULL, reserved BIGINT NOT NULL);
CREATE TABLE holds (id TEXT PRIMARY KEY, team_id TEXT NOT NULL, gateway_id TEXT NOT NULL,
  amount BIGINT NOT NULL, created_at BIGINT NOT NULL);
CREATE INDEX holds_gateway ON holds (gateway_id);
CREATE TABLE spend_daily (team_id TEXT NOT NULL, day TEXT NOT NULL, model TEXT NOT NULL,
  key_public_id TEXT NOT NULL, requests BIGINT NOT NULL, prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL, cost BIGINT NOT NULL,
  PRIMARY KEY (team_id, day, model, key_public_id));
CREATE TABLE spend_daily_tags (team_id TEXT NOT NULL, day TEXT NOT NULL, tag TEXT NOT NULL,
  value TEXT NOT NULL, requests BIGINT NOT NULL, prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL, cost BIGINT NOT NULL,
  PRIMARY KEY (team_id, day, tag, value));
CREATE TABLE one (n BIGINT NOT NULL);
INSERT INTO one VALUES (0);
INSERT INTO teams VALUES ('team_0000000000000000000000', 9000000000000000000, 1000000000000);
INSERT INTO holds VALUES ('hold_00000000000000000000000', 'team_0000000000000000000000',
  'gw_0000000000000000000000000', 1000000000000, 0);
)sql";

struct Statements {
  sqlite3_stmt* begin;
  sqlite3_stmt* commit;
  sqlite3_stmt* hold;
  sqlite3_stmt* team;
  sqlite3_stmt* spend;
  sqlite3_stmt* spend_one;
  sqlite3_stmt* spend_keyed;
  sqlite3_stmt* daily;
  sqlite3_stmt* tags;
  sqlite3_stmt* one;
};

std::string insert(const char* table) {
  return std::string("INSERT INTO ") + table +
         " (request_id, created_at, team_id, key_public_id, endpoint, model, provider, variant, "
         "episode_id, prompt_tokens, completion_tokens, cost, tags, status, upstream_ms, streamed, "
         "estimated, cache_hit, uncollected, user_id, cached_tokens, cache_write_tokens, "
         "cache_write_1h_tokens, audio_prompt_tokens, reasoning_tokens, audio_completion_tokens) "
         "VALUES (?1, ?2, 'team_0000000000000000000000', 'k7Qx2mPz9LrT', '/v1/chat/completions', "
         "'bench_model', 'mock', '', '', 421, 168, 163950000, '{}', 200, ?3, 0, 0, 0, 0, '', 0, "
         "0, 0, 0, 0, 0)";
}

std::string upsert(const char* table, const char* keys, const char* values) {
  return std::string("INSERT INTO ") + table + " (" + keys +
         ", requests, prompt_tokens, completion_tokens, cost) VALUES (" + values +
         ", ?1, ?2, ?3, ?4) ON CONFLICT (" + keys +
         ") DO UPDATE SET requests = requests + excluded.requests, prompt_tokens = prompt_tokens "
         "+ excluded.prompt_tokens, completion_tokens = completion_tokens + "
         "excluded.completion_tokens, cost = cost + excluded.cost";
}

enum class Shape { Gateway, OneIndex, Keyed, NoDaily, RowOnly, Balance, Commit, Fsync };

using Clock = std::chrono::steady_clock;

/// This process's CPU time so far (every thread's), user or system.
double cpuSeconds(bool user) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const timeval t = user ? u.ru_utime : u.ru_stime;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

std::int64_t next_id = 0;

// A request id as the gateway makes them: a UUIDv7's text, so time-ordered.
std::string requestId() {
  char buf[48];
  const auto n = ++next_id;
  std::snprintf(buf, sizeof buf, "019ac%03llx-%04llx-7%03llx-8abc-%012llx",
                static_cast<unsigned long long>((n >> 28) & 0xfff),
                static_cast<unsigned long long>((n >> 12) & 0xffff),
                static_cast<unsigned long long>(n & 0xfff), static_cast<unsigned long long>(n));
  return buf;
}

void batch(sqlite3* db, const Statements& s, Shape shape, int size) {
  run(db, s.begin);
  if (shape == Shape::Commit) {
    run(db, s.one);
    run(db, s.commit);
    return;
  }
  const std::int64_t cost = 163950000LL * size;
  if (shape != Shape::RowOnly) {
    sqlite3_bind_int64(s.hold, 1, cost);
    run(db, s.hold);
    sqlite3_bind_int64(s.team, 1, cost);
    run(db, s.team);
  }
  if (shape != Shape::Balance) {
    sqlite3_stmt* row = shape == Shape::OneIndex ? s.spend_one
                        : shape == Shape::Keyed  ? s.spend_keyed
                                                 : s.spend;
    for (int i = 0; i < size; ++i) {
      const std::string id = requestId();
      sqlite3_bind_text(row, 1, id.c_str(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
      sqlite3_bind_int64(row, 2, 1764200000000LL + next_id);
      sqlite3_bind_int64(row, 3, 4);
      run(db, row);
    }
  }
  if (shape == Shape::Gateway || shape == Shape::OneIndex || shape == Shape::Keyed ||
      shape == Shape::Fsync) {
    for (sqlite3_stmt* agg : {s.daily, s.tags}) {
      sqlite3_bind_int64(agg, 1, size);
      sqlite3_bind_int64(agg, 2, 421LL * size);
      sqlite3_bind_int64(agg, 3, 168LL * size);
      sqlite3_bind_int64(agg, 4, cost);
      run(db, agg);
    }
  }
  run(db, s.commit);
}

sqlite3* open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    die(db, "open");
  }
  sqlite3_busy_timeout(db, 10000);
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=0;");
  return db;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: commit_floor DIR [REQUESTS]\n");
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/floor.db";
  const int requests = argc > 2 ? std::atoi(argv[2]) : 20000;
  if (requests < 48) {
    std::fprintf(stderr,
                 "commit_floor: REQUESTS must be at least 48 (one commit of the largest)\n");
    return 2;
  }
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  sqlite3* db = open(path);
  exec(db, "PRAGMA foreign_keys=ON");  // As the gateway's connections.
  exec(db, kSchema);
  exec(db, spendTable("spend", "TEXT PRIMARY KEY"));
  exec(db, spendTable("spend_one", "TEXT NOT NULL"));
  exec(db, spendTable("spend_keyed", "TEXT PRIMARY KEY", " WITHOUT ROWID"));
  Statements s{prepare(db, "BEGIN IMMEDIATE"),
               prepare(db, "COMMIT"),
               prepare(db,
                       "UPDATE holds SET amount = amount - ?1 WHERE id = "
                       "'hold_00000000000000000000000' RETURNING team_id"),
               prepare(db,
                       "UPDATE teams SET balance = balance - ?1, reserved = reserved - ?1 WHERE "
                       "id = 'team_0000000000000000000000'"),
               prepare(db, insert("spend")),
               prepare(db, insert("spend_one")),
               prepare(db, insert("spend_keyed")),
               prepare(db, upsert("spend_daily", "team_id, day, model, key_public_id",
                                  "'team_0000000000000000000000', '2026-11-27', 'bench_model', "
                                  "'k7Qx2mPz9LrT'")),
               prepare(db, upsert("spend_daily_tags", "team_id, day, tag, value",
                                  "'team_0000000000000000000000', '2026-11-27', 'user', "
                                  "'support-session-4f1c9a'")),
               prepare(db, "UPDATE one SET n = n + 1")};

  // The checkpointer, as the gateway's: a passive checkpoint every 50 ms on its own connection.
  std::atomic<bool> checkpoints{true};
  std::atomic<bool> done{false};
  std::thread checkpointer([&] {
    sqlite3* c = open(path);
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (checkpoints.load()) {
        sqlite3_wal_checkpoint_v2(c, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      }
    }
    sqlite3_close(c);
  });

  const std::pair<Shape, const char*> shapes[] = {
      {Shape::Gateway, "gateway"},  {Shape::OneIndex, "one-index"}, {Shape::Keyed, "keyed"},
      {Shape::NoDaily, "no-daily"}, {Shape::RowOnly, "row-only"},   {Shape::Balance, "balance"},
      {Shape::Commit, "commit"},    {Shape::Fsync, "fsync"}};
  std::printf("%-10s %6s %10s %10s %10s %12s\n", "shape", "batch", "cpu_us/req", "user", "system",
              "commits/s");
  for (const auto& [shape, name] : shapes) {
    exec(db, shape == Shape::Fsync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    for (const int size : {1, 2, 4, 16, 48}) {
      for (int i = 0; i < 200 / size + 1; ++i) {
        batch(db, s, shape, size);  // Warm: the pages at hand, the log started over.
      }
      const int commits = requests / size;
      const double u0 = cpuSeconds(true), s0 = cpuSeconds(false);
      const auto t0 = Clock::now();
      for (int i = 0; i < commits; ++i) {
        batch(db, s, shape, size);
      }
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      const double u = cpuSeconds(true) - u0, sys = cpuSeconds(false) - s0;
      const double n = static_cast<double>(commits) * size;
      std::printf("%-10s %6d %10.1f %10.1f %10.1f %12.0f\n", name, size, (u + sys) * 1e6 / n,
                  u * 1e6 / n, sys * 1e6 / n, commits / wall);
      std::fflush(stdout);
    }
  }

  exec(db, "PRAGMA synchronous=NORMAL");
  for (const bool with_checkpoints : {true, false}) {
    checkpoints = with_checkpoints;
    constexpr int kCommits = 10000;
    constexpr auto kEvery = std::chrono::microseconds(400);  // 2500 commits a second
    std::vector<double> took;
    took.reserve(kCommits);
    auto due = Clock::now();
    for (int i = 0; i < kCommits; ++i) {
      std::this_thread::sleep_until(due);
      const auto t0 = Clock::now();
      batch(db, s, Shape::Gateway, 2);
      took.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      due = std::max(due + kEvery, Clock::now());
    }
    std::sort(took.begin(), took.end());
    const auto at = [&](double q) { return took[static_cast<std::size_t>(q * (kCommits - 1))]; };
    std::printf(
        "paced commits (2 requests each, 2500/s), %s checkpoints: p50 %.0f us, p90 %.0f, p99 %.0f, "
        "p99.9 %.0f, max %.0f\n",
        with_checkpoints ? "with" : "without", at(0.5), at(0.9), at(0.99), at(0.999), took.back());
    std::fflush(stdout);
  }
  done = true;
  checkpointer.join();
  sqlite3_close(db);
  return 0;
}
