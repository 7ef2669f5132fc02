// The account operations for callers on an event loop (the console's handlers, on the gateway's
// I/O threads): each runs on the service's own thread, on its own store connection, while the
// caller co_awaits its Outcome and its thread serves other requests. One thread does: the store
// calls of an operation are short, and SQLite takes one writer at a time anyway. The wait for the
// gateways to apply a change holds no thread: between looks at the store (on the service's
// thread), the caller's coroutine waits on a timer of its own event loop.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "accounts/accounts.hpp"
#include "accounts/sessions.hpp"
#include "accounts/sign_in_guard.hpp"
#include "store/connection.hpp"

namespace tollgate::accounts {

/// What a console call asks before its operation, in one visit to the service: whose session
/// `session_id` is, whether `csrf_token` (for a change) is that session's CSRF token, and the
/// caller's role in team `team_id` (for a call on a team).
struct CallerQuery {
  std::string session_id;
  std::optional<std::string> csrf_token;
  std::optional<std::string> team_id;
};

/// Its answer: the first check that failed, in the order above, else the caller and (for a team)
/// their role in it.
struct CallerFound {
  enum class Refused { None, NotSignedIn, CsrfFailed, NotMember };
  Refused refused = Refused::None;
  SignedIn signed_in;
  std::optional<TeamRole> member;
};

class AccountService {
 public:
  template <class T>
  using Awaitable = boost::asio::awaitable<T>;

  /// Connects to the store (throws store::StoreError when it cannot) and starts the thread.
  AccountService(store::Location where, std::string server_secret, PropagationPolicy policy = {},
                 SessionPolicy sessions = {});
  /// Finishes the operations under way, then stops the thread. Destroy it once the event loops
  /// that await it have stopped, before they are destroyed.
  ~AccountService();
  AccountService(const AccountService&) = delete;
  AccountService& operator=(const AccountService&) = delete;

  /// Runs `op(accounts)` on the service's thread, then resumes the caller on its own executor
  /// with what it returned; a store::StoreError it threw is thrown there. `op` owns what it uses.
  template <class Op>
  Awaitable<std::invoke_result_t<Op&, Accounts&>> run(Op op) {
    // The value travels in an optional (an Outcome has no default), written on the service's
    // thread before the caller resumes. The work is a named variable, not a temporary of the
    // co_await expression: GCC 12 copies those into the callee's frame byte by byte.
    std::optional<std::invoke_result_t<Op&, Accounts&>> done;
    const std::function<void(Accounts&)> work = [&done, &op](Accounts& a) { done.emplace(op(a)); };
    co_await onThread(work);
    co_return std::move(*done);
  }
  /// How many times run() went to the service's thread: a caller's round trips, as tests count
  /// them.
  std::uint64_t visits() const { return visits_.load(std::memory_order_relaxed); }

  // The operations of Accounts (see there), their arguments copied into the call. Those that
  // change what gateways must see return once every live gateway applied it, or the wait ended.
  Awaitable<Outcome<store::Team>> createTeam(Actor actor, std::string name, money::Pico balance = 0,
                                             std::optional<std::int64_t> max_owned = std::nullopt);
  Awaitable<Outcome<std::vector<store::Team>>> listTeams(Actor actor);
  Awaitable<Outcome<store::Team>> showTeam(Actor actor, std::string name);
  Awaitable<Outcome<TeamSummary>> teamSummary(Actor actor, std::string name);
  Awaitable<Outcome<store::Team>> topUp(Actor actor, std::string name, money::Pico amount);
  Awaitable<Outcome<Propagation>> setTeamActive(Actor actor, std::string name, bool active);
  Awaitable<Outcome<Propagation>> setTeamDryrun(Actor actor, std::string name, bool allow);
  Awaitable<Outcome<Propagation>> setTeamLimits(Actor actor, std::string name,
                                                RateLimitsChange change,
                                                key_rules::RateLimits team_default);

  Awaitable<Outcome<store::User>> addUser(std::string email, std::string display_name);
  Awaitable<Outcome<Propagation>> addMember(Actor actor, std::string team, std::string email,
                                            std::string role);
  Awaitable<Outcome<Propagation>> setRole(Actor actor, std::string team, std::string email,
                                          std::string role);
  Awaitable<Outcome<Propagation>> removeMember(Actor actor, std::string team, std::string email);
  Awaitable<Outcome<std::vector<store::Member>>> listMembers(Actor actor, std::string team);

  Awaitable<Outcome<CreatedInvite>> createInvite(Actor actor, std::string team, std::string role,
                                                 std::optional<std::string> email,
                                                 std::chrono::milliseconds valid_for);
  Awaitable<Outcome<std::vector<store::Invite>>> listInvites(Actor actor, std::string team);
  Awaitable<Outcome<Propagation>> acceptInvite(std::string token, std::string email,
                                               std::string source = "");
  Awaitable<Outcome<Ok>> revokeInvite(Actor actor, std::string id);
  Awaitable<Outcome<InvitePreview>> previewInvite(std::string token, std::string email);

  Awaitable<Outcome<CreatedKey>> createKey(Actor actor, std::string team, std::string name,
                                           std::optional<std::string> user_email,
                                           key_rules::KeyRules rules = {});
  Awaitable<Outcome<std::vector<store::ApiKey>>> listKeys(Actor actor,
                                                          std::optional<std::string> team);
  Awaitable<Outcome<Propagation>> revokeKey(Actor actor, std::string which);
  Awaitable<Outcome<Propagation>> changeKeyRules(Actor actor, std::string public_id,
                                                 KeyRulesChange change);

  // The console's sign-in (sessions.hpp) and what it reads of a team once its caller was allowed.
  // (Coroutines call these rather than run() with a lambda of their own: GCC 12 copies a closure
  // made in a coroutine's co_await expression into run's frame byte by byte, and a short string
  // it captured is then freed from the wrong address.)
  Awaitable<CallerFound> findCaller(CallerQuery q);
  Awaitable<std::string> csrfToken(std::string id);
  Awaitable<Outcome<NewSession>> redeemLoginLink(std::string token, std::string source);
  Awaitable<bool> closeSession(std::string id);
  /// How long anonymous sign-ins from `source` are refused (SignInGuard), when they are: asked
  /// before any store access.
  std::optional<std::chrono::seconds> signInThrottled(std::string_view source);
  /// Counts an anonymous sign-in that failed from `source`; writes the summary row when due.
  Awaitable<void> signInFailed(std::string source);
  /// Counts a sign-in that failed for no fault of its source (the identity provider could not be
  /// reached): never held against the source.
  void signInUnavailable() { sign_in_failures_.fetch_add(1, std::memory_order_relaxed); }
  /// Console sign-ins since start: those that opened a session, and those that failed (refused
  /// before or after the identity provider vouched for someone, or the provider unreachable).
  struct SignIns {
    std::uint64_t succeeded = 0;
    std::uint64_t failed = 0;
  };
  SignIns signIns() const {
    return {sign_ins_.load(std::memory_order_relaxed),
            sign_in_failures_.load(std::memory_order_relaxed)};
  }
  Awaitable<Outcome<NewSession>> openWithProvider(ProviderIdentity who, bool allow_signup,
                                                  std::string source);
  Awaitable<bool> recordSignInFailure(std::string who, std::string reason, std::string source);
  Awaitable<std::vector<TeamRole>> teamsOf(store::User user);
  Awaitable<std::vector<store::SpendTotal>> summarizeSpend(std::string team_id,
                                                           store::SpendGroup by,
                                                           std::string since_day);
  Awaitable<std::vector<store::SpendRow>> listSpend(store::SpendFilter f);
  Awaitable<std::string> spendCsv(store::SpendFilter f);
  Awaitable<std::vector<store::AuditEntry>> listAudit(store::AuditFilter f);
  /// The team's alerts' deliveries, newest first, at most `limit`.
  Awaitable<std::vector<store::AlertRow>> listAlerts(std::string team_id, std::int64_t limit);

 private:
  /// Runs `work` on the service's thread and resumes the caller on its own executor; a
  /// store::StoreError it threw is thrown there. (Asio's thread pool, co_spawn and timers stay
  /// in the .cpp: this header is parsed by every console file.)
  Awaitable<void> onThread(const std::function<void(Accounts&)>& work);
  /// onThread's part on the service's thread. (A coroutine function, not a lambda: GCC 12
  /// mishandles the captures of a coroutine lambda given to co_spawn, a double free under ASan.)
  Awaitable<void> runHere(const std::function<void(Accounts&)>& work);
  /// What `change` did, once no live gateway lags behind it or the policy's wait is over.
  template <class T>
  Awaitable<Outcome<T>> propagated(Awaitable<Outcome<T>> change);
  Awaitable<Outcome<NewSession>> openOnThread(ProviderIdentity who, bool allow_signup,
                                              std::string source);
  /// The sign-in link redeemed on the service's thread.
  Awaitable<Outcome<NewSession>> redeemOnThread(std::string token, std::string source);
  /// Counts a sign-in from `source` with the guard: a success forgets the source's failures, a
  /// failure is counted and the summary written when due.
  Awaitable<void> counted(bool succeeded, std::string source);
  Awaitable<bool> recordFailures(SignInFailures f);
  /// On the service's thread: writes what failed since the last summary, once a minute.
  Awaitable<void> flushFailures();
  /// The service thread's operations, connected again after a failure dropped them.
  Accounts& accounts();
  /// Drops the connection after a failure of the store itself (not a conflict), so that the next
  /// operation connects again.
  void forget(const store::StoreError& e);

  store::Location where_;
  std::string server_secret_;
  PropagationPolicy policy_;
  SessionPolicy sessions_;
  // Used on the service's thread only (made in the constructor, before it has work).
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> accounts_;
  SignInGuard guard_;
  /// The service's thread, and the timer of the failures' summary (used on that thread only).
  struct Thread;
  std::unique_ptr<Thread> thread_;
  bool stopping_ = false;  ///< Used on the service's thread only.
  std::atomic<std::uint64_t> visits_{0};
  std::atomic<std::uint64_t> sign_ins_{0};
  std::atomic<std::uint64_t> sign_in_failures_{0};
};

}  // namespace tollgate::accounts
