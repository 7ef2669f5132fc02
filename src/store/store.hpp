// The store: teams, users, memberships, invitations, API keys, the change sequence and the
// registry of running gateways, over one Connection (SQLite or PostgreSQL). It holds the SQL and
// nothing else: rules and permissions live in accounts/, key formats in auth/. Every method
// blocks its thread; the gateway calls it only from threads of its own.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

/// Milliseconds since the Unix epoch, the unit of every time in the store.
std::int64_t nowMs();

struct Team {
  std::string id;
  std::string name;
  std::string state;  ///< "active" or "suspended"
  std::int64_t created_at = 0;
  std::int64_t balance = 0;   ///< pico-USD
  std::int64_t reserved = 0;  ///< pico-USD held by requests in flight
  bool allow_dryrun = true;   ///< The team takes tollgate::dryrun requests.
};

struct User {
  std::string id;
  std::string email;
  std::string name;
  std::int64_t created_at = 0;
};

struct Member {
  User user;
  std::string role;  ///< "owner", "admin", "member" or "viewer"
  std::int64_t joined_at = 0;
};

struct Invite {
  std::string id;
  std::string team_id;
  std::string team;
  std::string role;
  std::optional<std::string> email;
  std::int64_t created_at = 0;
  std::int64_t expires_at = 0;
  std::optional<std::int64_t> accepted_at;
  std::optional<std::string> accepted_by;  ///< The accepting user's email.
  std::optional<std::int64_t> revoked_at;
  std::optional<std::string> created_by;  ///< The maker's user id; nullopt: the operator.
};

struct ApiKey {
  std::string id;
  std::string public_id;
  std::string secret_hash;  ///< Hex HMAC-SHA256 of the secret under the server secret.
  std::string name;
  std::string team_id;
  std::string team;
  std::optional<std::string> created_by;  ///< The creator's email; none for the operator.
  std::int64_t created_at = 0;
  std::optional<std::int64_t> last_used_at;
  std::optional<std::int64_t> revoked_at;
};

/// What the gateway's in-memory key table holds of one key.
struct KeyGrant {
  std::string public_id;
  std::string secret_hash;
  std::string team_id;
  std::string team;
  bool revoked = false;
  bool team_active = true;
  /// The key's creator is a member whose role may still create keys; true also for the
  /// operator's keys, which have no creator.
  bool creator_may_create = true;
  bool team_allows_dryrun = true;  ///< The team takes tollgate::dryrun requests.
  std::string creator_id;          ///< The creating user's id; empty for the operator's keys.
};

/// A signed-in console user's session: only a keyed hash of its id is stored.
struct ConsoleSession {
  std::string user_id;
  std::int64_t created_at = 0;
  std::int64_t seen_at = 0;     ///< Last use (moved at most about once a minute).
  std::int64_t expires_at = 0;  ///< The absolute end.
};

/// One change, as the audit log keeps it.
struct AuditEntry {
  std::string id = {};  ///< UUIDv7: ordered by time.
  std::int64_t at = 0;
  std::string actor = {};    ///< A user's email, or "operator".
  std::string team_id = {};  ///< Empty when the change concerns no team (a sign-in).
  std::string team = {};     ///< Read only.
  std::string action = {};   ///< e.g. "key.created", "member.removed", "signin.failed".
  std::string target = {};  ///< What it was done to: a key's public id, an email, an invitation id.
  std::string source = {};  ///< The client's address, or "cli".
};

struct AuditFilter {
  std::optional<std::string> team_id;
  std::optional<std::string> before_id;  ///< Only entries older than this one (paging).
  std::int64_t limit = 100;
};

/// Part of a team's balance held for one request in flight, by one gateway.
struct Hold {
  std::string id;
  std::string team_id;
  std::int64_t amount = 0;  ///< pico-USD
};

/// Whether a hold was taken, and if not why: the team is suspended (or gone), or `available`
/// (balance less what is held) did not cover it.
struct HoldOutcome {
  bool held = false;
  bool team_active = false;
  std::int64_t available = 0;
  std::int64_t extra = 0;  ///< Held beyond the amount asked for, when some was wanted.
  bool gone = false;       ///< The hold to add to was reclaimed: nothing was done.
};

/// What became of a settlement.
enum class SettleOutcome {
  Kept,       ///< Debited out of its hold, the spend row written.
  Reclaimed,  ///< Its hold was gone: debited what the balance had available, up to the cost (the
              ///< rest is the row's `uncollected`), the spend row written.
  Withheld,   ///< Its hold was gone and the balance could not cover it: nothing written.
};

/// The parts of a request's token totals by kind (core/usage.hpp: usage::Counts), as the spend
/// log, its daily aggregates and the inference cache keep them; 0 where nothing was reported
/// (and in rows written before they were kept).
struct TokenKinds {
  std::int64_t cached_tokens = 0;          ///< Input read from the provider's prompt cache.
  std::int64_t cache_write_tokens = 0;     ///< Input written to the cache, every duration.
  std::int64_t cache_write_1h_tokens = 0;  ///< Of cache_write_tokens, those kept for an hour.
  std::int64_t audio_prompt_tokens = 0;
  std::int64_t reasoning_tokens = 0;
  std::int64_t audio_completion_tokens = 0;

  bool operator==(const TokenKinds&) const = default;
};

/// Each kind with its name: the name of its column wherever the store keeps it, and of its
/// member and column wherever it is shown (JSON, CSV), in this order.
inline constexpr std::array<std::pair<std::string_view, std::int64_t TokenKinds::*>, 6> kTokenKinds{
    {{"cached_tokens", &TokenKinds::cached_tokens},
     {"cache_write_tokens", &TokenKinds::cache_write_tokens},
     {"cache_write_1h_tokens", &TokenKinds::cache_write_1h_tokens},
     {"audio_prompt_tokens", &TokenKinds::audio_prompt_tokens},
     {"reasoning_tokens", &TokenKinds::reasoning_tokens},
     {"audio_completion_tokens", &TokenKinds::audio_completion_tokens}}};

/// One billed request in the spend log.
struct SpendRow {
  std::string request_id;
  std::int64_t created_at = 0;
  std::string team_id;
  std::string team;           ///< Read only.
  std::string key_public_id;  ///< Empty in open mode and for the playground.
  std::string key_name;       ///< The key's name; read only, empty without a key.
  std::string user_id;        ///< The playground's user, or the key's creator; empty for neither.
  std::string endpoint;
  std::string model;
  std::string provider;
  std::string variant;
  std::string episode_id;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  TokenKinds kinds;              ///< The parts of the two totals by kind.
  std::int64_t cost = 0;         ///< pico-USD debited from the balance
  std::int64_t uncollected = 0;  ///< pico-USD of the priced usage the balance could not cover
  std::vector<std::pair<std::string, std::string>> tags;  ///< Written only; read as tags_json.
  std::string tags_json = "{}";
  std::int64_t status = 0;
  std::int64_t upstream_ms = 0;
  bool streamed = false;
  bool estimated = false;  ///< Usage estimated: the upstream did not report it.
  bool cache_hit = false;
};

/// An answer kept for an Idempotency-Key: what its client was sent.
struct KeptAnswer {
  std::int64_t status = 0;
  std::string content_type;
  bool streamed = false;
  std::string body;  ///< The bytes sent (a stream's whole event stream).
};

/// A charge to settle: its hold, its spend row, whether its answer can still be refused.
struct Settlement {
  std::string hold_id;  ///< Empty: no hold (a cache hit, charged nothing).
  SpendRow row;
  bool withholdable = false;
  /// Completes an Idempotency-Key's claim in the settlement's transaction, when set.
  struct Completion {
    std::string key;
    std::string claim_id;
    /// nullopt: not kept (a ZDR or TEE model): only the digest and the charge's request id stay.
    std::optional<KeptAnswer> answer;
    /// The attempt was not charged a complete answer: the claim is forgotten instead (in the
    /// same transaction, before the client hears of the failure), so a retry is a fresh try.
    bool release = false;
    /// What the team's kept answers may take in all, in bytes (0: no bound): an answer past it
    /// is not kept, as one of a ZDR model is not.
    std::int64_t max_bytes = 0;
  };
  std::optional<Completion> idempotency = {};
};

struct SpendFilter {
  std::string team_id = {};
  std::int64_t since_ms = 0;
  std::optional<std::int64_t> until_ms = {};  ///< Only rows before this time.
  std::optional<std::string> model = {};
  std::optional<std::pair<std::string, std::string>> tag = {};
  std::optional<std::string> key_public_id = {};
  std::optional<std::string> user_id = {};
  std::optional<std::string> request_id = {};  ///< Only that request's row.
  /// Newest first, from before this (created_at, request_id) on: the console's pages.
  bool newest_first = false;
  std::optional<std::pair<std::int64_t, std::string>> before = {};
  std::optional<std::int64_t> limit = {};
};

enum class SpendGroup { Day, Model, Key, Tag, User };

/// One group of a spend summary, from the daily aggregates.
struct SpendTotal {
  std::string group;  ///< The day, model, key public id, or tag=value.
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cost = 0;
  TokenKinds kinds;  ///< Sums of each kind.
};

/// A claim of an Idempotency-Key for one attempt at a request.
struct IdempotencyClaim {
  std::string team_id;
  std::string key;         ///< The header's value.
  std::string digest;      ///< Of the decoded request.
  std::string claim_id;    ///< This attempt's id.
  std::string gateway_id;  ///< The gateway running the attempt.
  std::int64_t now = 0;
  std::int64_t window_ms = 0;  ///< A record older than this is forgotten: the key is new again.
  /// A running claim whose gateway was not seen within this (by the gateways table's seen_at, on
  /// the store's clock; or that is not registered at all) is taken over.
  std::int64_t alive_window_ms = 0;
  /// A running claim older than this is taken over even from a live gateway: no attempt runs
  /// that long, so its release was lost. 0: never.
  std::int64_t lease_ms = 0;
};

enum class ClaimOutcome {
  Claimed,    ///< New (or taken over from an expired record or a dead gateway's claim): go on.
  Running,    ///< Another attempt with the same digest holds it and its gateway is alive.
  Mismatch,   ///< The key was used for a different request (digest differs), running or completed,
              ///< within the window.
  Completed,  ///< Answered and charged: `answer` is what was sent.
  CompletedNotKept,    ///< Answered and charged, but its answer was not kept (a ZDR or TEE model).
  CompletedOverBound,  ///< Answered and charged, but its answer was not kept: the team's kept
                       ///< answers were at their bound.
};

struct ClaimReply {
  ClaimOutcome outcome = ClaimOutcome::Claimed;
  std::optional<KeptAnswer> answer;  ///< Completed only.
  std::string request_id;            ///< Completed*: the charged request's id.
};

/// One answer in the inference cache.
struct CacheEntry {
  std::string team_id;
  std::string key;       ///< Hex digest of the normalised request (or of one embeddings input).
  std::string endpoint;  ///< "chat", "embedding", "rerank"
  std::int64_t created_at = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string body;  ///< The answer as the cache keeps it.
  TokenKinds kinds;  ///< The parts of the counts by kind, which a hit's spend row records.
};

/// A running gateway, as it registered itself.
struct GatewayRecord {
  std::string id;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t seen_at = 0;
  std::int64_t applied_seq = 0;
  std::int64_t lease_ms = 0;  ///< How long one of its heartbeats lets it serve.
  /// Read back only: how long ago its last heartbeat committed, by the store's clock.
  std::int64_t silent_ms = 0;
};

class Store {
 public:
  explicit Store(std::unique_ptr<Connection> c) : c_(std::move(c)) {}
  Connection& connection() { return *c_; }

  // Teams. A team's and a key's name is stored with its UTS #39 skeleton, unique among teams and
  // among a team's active keys (a name kept from before skeletons that looks like an earlier one
  // has none: migrate() lists those).
  Team createTeam(const std::string& name);
  std::vector<Team> listTeams();
  std::optional<Team> findTeam(const std::string& name);
  /// The team whose name looks like `name` (has its skeleton), `name` itself included.
  std::optional<Team> findLookAlikeTeam(const std::string& name);
  std::optional<Team> findTeamById(const std::string& id);
  void setTeamState(const std::string& team_id, const std::string& state);
  void setTeamDryrun(const std::string& team_id, bool allow);
  void topUp(const std::string& team_id, std::int64_t amount);

  // Users and memberships.
  User addUser(const std::string& email, const std::string& name);
  std::optional<User> findUser(const std::string& email);
  std::optional<User> findUserById(const std::string& id);
  /// The user bound to `subject` at the identity provider `issuer`, if any.
  std::optional<std::string> userOfIdentity(const std::string& issuer, const std::string& subject);
  /// The subject `user_id` is bound to at `issuer`, if any.
  std::optional<std::string> identityAt(const std::string& user_id, const std::string& issuer);
  /// Binds `user_id` to (`issuer`, `subject`); throws Conflict when either side is bound.
  void bindIdentity(const std::string& issuer, const std::string& subject,
                    const std::string& user_id);
  /// Forgets every identity-provider binding of `user_id`; how many.
  std::int64_t unbindIdentities(const std::string& user_id);
  std::optional<std::string> roleOf(const std::string& team_id, const std::string& user_id);
  /// The teams `user_id` is a member of, by name, each with the role.
  std::vector<std::pair<Team, std::string>> teamsOf(const std::string& user_id);
  void addMember(const std::string& team_id, const std::string& user_id, const std::string& role);
  void setRole(const std::string& team_id, const std::string& user_id, const std::string& role);
  void removeMember(const std::string& team_id, const std::string& user_id);
  std::vector<Member> listMembers(const std::string& team_id);
  std::int64_t countOwners(const std::string& team_id);

  // Invitations.
  Invite createInvite(const std::string& team_id, const std::string& role,
                      const std::optional<std::string>& email, const std::string& token_hash,
                      std::int64_t expires_at, const std::optional<std::string>& created_by);
  std::vector<Invite> listInvites(const std::string& team_id);
  std::optional<Invite> findInviteByHash(const std::string& token_hash);
  std::optional<Invite> findInvite(const std::string& id);
  /// Marks the invitation accepted by `user_id` while it is open (unused, unrevoked, unexpired);
  /// false when it no longer is (another acceptance won).
  bool acceptInvite(const std::string& id, const std::string& user_id);
  /// Holds the team's row until the transaction ends, so that membership changes of one team
  /// run one after the other on every engine (SQLite's write transaction already does).
  void lockTeam(const std::string& team_id);
  void revokeInvite(const std::string& id);

  // API keys.
  ApiKey createKey(const std::string& public_id, const std::string& secret_hash,
                   const std::string& name, const std::string& team_id,
                   const std::optional<std::string>& created_by_user_id);
  std::vector<ApiKey> listKeys(const std::optional<std::string>& team_id);
  std::optional<ApiKey> findKey(const std::string& public_id);
  void revokeKey(const std::string& id);
  /// Every key with what authentication needs to know of its team and creator; `key_roles` are
  /// the roles that may create keys (the permission table's, given by the caller).
  std::vector<KeyGrant> loadGrants(const std::vector<std::string>& key_roles);
  /// Records when keys were last used (only moving the time forward).
  void touchKeys(const std::vector<std::pair<std::string, std::int64_t>>& public_id_at);

  // The change sequence: every write that authentication must see moves it, in its transaction.
  std::int64_t bumpChange();
  std::int64_t changeSeq();
  /// The change sequence, read so that no change commits before the current transaction ends
  /// (PostgreSQL: a share lock on its row; SQLite's write transaction already excludes every
  /// other writer). A heartbeat reads it so: a change commits before it or is seen by it.
  std::int64_t lockedChangeSeq();
  /// PostgreSQL: the server ends this connection's session should a transaction of it sit idle
  /// for `limit` (its process stopped mid-transaction), so that the locks it holds (a heartbeat's
  /// on the change sequence) never hold up others for longer. SQLite: nothing can.
  void endTransactionsIdleFor(std::chrono::milliseconds limit);

  // Holds and the spend log (store_billing.cpp). Each runs in the caller's transaction. A hold
  // row is one gateway's reservation for one team (its escrow): the sum of what that gateway's
  // requests in flight may cost, and what it keeps at hand for the next ones.
  /// Adds `h.amount` to hold `h.id` if the team is active and its balance less what is held
  /// covers it; then, if the team still has more than `only_above` available, up to `extra`
  /// more, at most a quarter of what it has left. The hold is made for `gateway_id` when new;
  /// one that is `existing` is added to only while it is still there (else `gone`): a hold that
  /// was reclaimed is never made again.
  HoldOutcome hold(const Hold& h, const std::string& gateway_id, std::int64_t extra,
                   std::int64_t only_above, bool existing);
  /// Takes `amount` back from hold `hold_id` into the balance; false when the hold is gone
  /// (reclaimed). A hold left at zero is removed.
  bool shrinkHold(const std::string& hold_id, std::int64_t amount);
  /// Settles each of `batch`: debits its `row.cost` from the team out of its hold and writes its
  /// spend row, the daily aggregates counting it. When its hold is gone (reclaimed from a gateway
  /// taken for dead) the balance less what is held still never goes below zero: an answer that is
  /// `withholdable` and not covered is Withheld; otherwise what is available is debited and the
  /// rest recorded as uncollected. A settlement without a hold (a cache hit) debits nothing: its
  /// row is written as Kept, its cost recorded as uncollected (it should be 0). A written row's
  /// `idempotency` claim, when set and still its own and running, is completed with it: with its
  /// answer when the team's kept answers stay within the completion's `max_bytes` (claims team
  /// by team, each seeing the ones before; on PostgreSQL not those other gateways are
  /// committing at the same time), else with the charge alone. One
  /// update per hold, per team and per aggregate row serves the whole batch, in two pipelines
  /// (on PostgreSQL, two round trips). Returns each one's outcome, in order.
  std::vector<SettleOutcome> settle(std::span<const Settlement> batch);
  /// Releases the holds of gateways not seen for `alive_window_ms`; returns how many.
  std::int64_t reclaimHolds(std::int64_t alive_window_ms);
  /// Deletes raw spend rows older than `before_ms` (aggregates stay); returns how many.
  std::int64_t pruneSpend(std::int64_t before_ms);
  std::vector<SpendRow> listSpend(const SpendFilter& f);
  /// Totals from the daily aggregates since `since_day` ("YYYY-MM-DD", UTC).
  std::vector<SpendTotal> summarizeSpend(const std::string& team_id, SpendGroup by,
                                         const std::string& since_day);

  // Idempotency keys and the inference cache (store_cache.cpp). Bodies are any bytes.
  /// Claims `c.key` for `c.team_id`, in the caller's transaction: an expired record forgotten,
  /// then one upsert that inserts the claim or takes the record over (the same digest's running
  /// claim of a dead gateway), then a read when it did neither. On PostgreSQL the upsert locks
  /// the record until the transaction ends: of gateways claiming at once, exactly one gets
  /// Claimed.
  ClaimReply claimIdempotencyKey(const IdempotencyClaim& c);
  /// Forgets a running claim (the attempt failed or was not charged): only if it is still
  /// `claim_id`'s and running.
  void releaseIdempotencyKey(const std::string& team_id, const std::string& key,
                             const std::string& claim_id);
  /// Forgets records created before `before_ms` (and the bytes of their teams' kept answers
  /// they took); how many.
  std::int64_t pruneIdempotencyKeys(std::int64_t before_ms);
  /// The entry of `key` for the team created at or after `not_before`, if any.
  std::optional<CacheEntry> findCacheEntry(const std::string& team_id, const std::string& key,
                                           std::int64_t not_before);
  /// Writes `entries` (a newer entry replaces one of the same team and key; an older one does
  /// not), then for each team written evicts its oldest entries until its bytes are at most
  /// `team_max_bytes` (0: no cap). In the caller's transaction, in one pipeline.
  void putCacheEntries(std::span<const CacheEntry> entries, std::int64_t team_max_bytes);
  /// Forgets entries created before `before_ms`; how many.
  std::int64_t pruneCache(std::int64_t before_ms);

  // The console (store_console.cpp): sessions, sign-in links, logins with an identity provider,
  // the audit log.
  void createSession(const std::string& id_hash, const ConsoleSession& s,
                     const std::string& source);
  std::optional<ConsoleSession> findSession(const std::string& id_hash);
  void touchSession(const std::string& id_hash, std::int64_t at);
  void deleteSession(const std::string& id_hash);
  /// Ends every session of `user_id`; how many.
  std::int64_t deleteSessionsOf(const std::string& user_id);
  /// Forgets what of signing in has ended: sessions idle since before `idle_before` or expired
  /// by `now`, and sign-in links used or expired by `now`; returns how many rows.
  std::int64_t forgetEndedSignIns(std::int64_t idle_before, std::int64_t now);
  void createLoginLink(const std::string& token_hash, const std::string& user_id,
                       std::int64_t expires_at);
  /// Whether a link with this hash exists, unused and unexpired (a read: no lock is taken).
  bool liveLoginLink(const std::string& token_hash, std::int64_t now);
  /// Marks an unused, unexpired link used; its user, or nullopt (unknown, used or expired).
  std::optional<std::string> useLoginLink(const std::string& token_hash, std::int64_t now);
  void appendAudit(const AuditEntry& e);
  std::vector<AuditEntry> listAudit(const AuditFilter& f);
  /// Deletes audit rows older than `before_ms`; returns how many.
  std::int64_t pruneAudit(std::int64_t before_ms);

  // Running gateways.
  /// Registers a gateway; its times are the store's clock, not the record's.
  void registerGateway(const GatewayRecord& g);
  /// Records that gateway `id` is alive and has applied `applied_seq`; false when the store has
  /// no row for it (forgotten: it must register again).
  bool heartbeat(const std::string& id, std::int64_t applied_seq);
  void unregisterGateway(const std::string& id);
  /// Gateways registered from `host`.
  std::vector<GatewayRecord> gatewaysOn(const std::string& host);
  /// Gateways that have not applied change `seq`, each with how long it has been silent.
  std::vector<GatewayRecord> laggingGateways(std::int64_t seq);
  void forgetGatewaysUnseenFor(std::int64_t ms);

 private:
  /// idempotency_keys.kept of an answer not kept because its team's kept answers were at their
  /// bound (1: kept; 0: not kept, its model retaining no data).
  static constexpr std::int64_t kKeptOverBound = 2;

  /// Appends to `out` the statements that write the spend rows and add them to their daily
  /// aggregates, one update per row of those.
  void spendWrites(std::span<const SpendRow* const> rows, std::vector<Statement>& out);
  /// Appends to `out` the statements that complete `done`'s claim with the charge of `row` (and
  /// its answer, within the team's bound), adding what it keeps to the team's sum.
  void completeClaim(const SpendRow& row, const Settlement::Completion& done,
                     std::vector<Statement>& out);

  std::unique_ptr<Connection> c_;
};

}  // namespace tollgate::store
