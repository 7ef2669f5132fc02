#include "accounts/account_service.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "accounts/records_json.hpp"
#include "core/address.hpp"
#include "core/log.hpp"

namespace tollgate::accounts {
namespace {

namespace asio = boost::asio;

Propagation& propagationOf(Propagation& p) { return p; }
Propagation& propagationOf(CreatedKey& k) { return k.propagation; }

}  // namespace

struct AccountService::Thread {
  asio::thread_pool pool{1};
  asio::steady_timer flush_timer{pool};
};

AccountService::AccountService(store::Location where, std::string server_secret,
                               PropagationPolicy policy, SessionPolicy sessions)
    : where_(std::move(where)),
      server_secret_(std::move(server_secret)),
      policy_(policy),
      sessions_(sessions),
      thread_(std::make_unique<Thread>()) {
  accounts();
  asio::co_spawn(thread_->pool, flushFailures(), [](const std::exception_ptr& e) {
    if (e) {
      log::line(log::Level::Error, "writing the failed sign-ins' summary stopped");
    }
  });
}

AccountService::~AccountService() {
  asio::post(thread_->pool, [this] {
    stopping_ = true;
    thread_->flush_timer.cancel();
  });
  thread_->pool.join();
}

AccountService::Awaitable<void> AccountService::onThread(
    const std::function<void(Accounts&)>& work) {
  visits_.fetch_add(1, std::memory_order_relaxed);
  // Not cancelled from the caller's side: the work is one synchronous call, and Boost 1.81's
  // co_spawn passes a cancellation to another executor by posting it with a pointer to a signal
  // that is freed once the work completes. A client that hung up while its console call ran
  // (the hang-up watch cancels the session) could make that posted emit run after the work had
  // ended: a use after free on the service's thread, seen as a crash under the browser tests.
  // The caller still sees its cancellation at its next operation.
  co_await asio::co_spawn(
      thread_->pool, runHere(work),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
}

AccountService::Awaitable<void> AccountService::runHere(
    const std::function<void(Accounts&)>& work) {
  try {
    work(accounts());
  } catch (const store::StoreError& e) {
    forget(e);
    throw;
  }
  co_return;
}

Accounts& AccountService::accounts() {
  if (!accounts_) {
    store_ = std::make_unique<store::Store>(store::connect(where_));
    // The operation only looks once at the gateways; propagated() waits for them.
    PropagationPolicy look_once = policy_;
    look_once.wait = std::chrono::milliseconds::zero();
    accounts_ = std::make_unique<Accounts>(*store_, server_secret_, look_once, sessions_);
  }
  return *accounts_;
}

void AccountService::forget(const store::StoreError& e) {
  if (e.kind() != store::StoreError::Kind::Conflict) {
    accounts_.reset();
    store_.reset();
  }
}

template <class T>
AccountService::Awaitable<Outcome<T>> AccountService::propagated(Awaitable<Outcome<T>> change) {
  Outcome<T> done = co_await std::move(change);
  if (!done) {
    co_return done;
  }
  Propagation& p = propagationOf(*done);
  const auto deadline = std::chrono::steady_clock::now() + policy_.wait;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!allFenced(p, policy_) && std::chrono::steady_clock::now() < deadline) {
    timer.expires_after(policy_.poll);
    co_await timer.async_wait(asio::use_awaitable);
    p.lagging = co_await run([seq = p.seq](Accounts& a) { return a.laggingGateways(seq); });
  }
  co_return done;
}

AccountService::Awaitable<Outcome<store::Team>> AccountService::createTeam(
    Actor actor, std::string name, money::Pico balance, std::optional<std::int64_t> max_owned) {
  return run([actor = std::move(actor), name = std::move(name), balance, max_owned](Accounts& a) {
    return a.createTeam(actor, name, balance, max_owned);
  });
}

AccountService::Awaitable<Outcome<std::vector<store::Team>>> AccountService::listTeams(
    Actor actor) {
  return run([actor = std::move(actor)](Accounts& a) { return a.listTeams(actor); });
}

AccountService::Awaitable<Outcome<store::Team>> AccountService::showTeam(Actor actor,
                                                                         std::string name) {
  return run([actor = std::move(actor), name = std::move(name)](Accounts& a) {
    return a.showTeam(actor, name);
  });
}

AccountService::Awaitable<Outcome<TeamSummary>> AccountService::teamSummary(Actor actor,
                                                                            std::string name) {
  return run([actor = std::move(actor), name = std::move(name)](Accounts& a) {
    return a.teamSummary(actor, name);
  });
}

AccountService::Awaitable<Outcome<store::Team>> AccountService::topUp(Actor actor, std::string name,
                                                                      money::Pico amount) {
  return run([actor = std::move(actor), name = std::move(name), amount](Accounts& a) {
    return a.topUp(actor, name, amount);
  });
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::setTeamActive(Actor actor,
                                                                              std::string name,
                                                                              bool active) {
  return propagated(run([actor = std::move(actor), name = std::move(name), active](Accounts& a) {
    return a.setTeamActive(actor, name, active);
  }));
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::setTeamLimits(
    Actor actor, std::string name, RateLimitsChange change, key_rules::RateLimits team_default) {
  return propagated(
      run([actor = std::move(actor), name = std::move(name), change, team_default](Accounts& a) {
        return a.setTeamLimits(actor, name, change, team_default);
      }));
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::setTeamDryrun(Actor actor,
                                                                              std::string name,
                                                                              bool allow) {
  return propagated(run([actor = std::move(actor), name = std::move(name), allow](Accounts& a) {
    return a.setTeamDryrun(actor, name, allow);
  }));
}

AccountService::Awaitable<Outcome<store::User>> AccountService::addUser(std::string email,
                                                                        std::string display_name) {
  return run([email = std::move(email), display_name = std::move(display_name)](Accounts& a) {
    return a.addUser(email, display_name);
  });
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::addMember(Actor actor,
                                                                          std::string team,
                                                                          std::string email,
                                                                          std::string role) {
  return propagated(
      run([actor = std::move(actor), team = std::move(team), email = std::move(email),
           role = std::move(role)](Accounts& a) { return a.addMember(actor, team, email, role); }));
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::setRole(Actor actor,
                                                                        std::string team,
                                                                        std::string email,
                                                                        std::string role) {
  return propagated(
      run([actor = std::move(actor), team = std::move(team), email = std::move(email),
           role = std::move(role)](Accounts& a) { return a.setRole(actor, team, email, role); }));
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::removeMember(Actor actor,
                                                                             std::string team,
                                                                             std::string email) {
  return propagated(
      run([actor = std::move(actor), team = std::move(team),
           email = std::move(email)](Accounts& a) { return a.removeMember(actor, team, email); }));
}

AccountService::Awaitable<Outcome<std::vector<store::Member>>> AccountService::listMembers(
    Actor actor, std::string team) {
  return run([actor = std::move(actor), team = std::move(team)](Accounts& a) {
    return a.listMembers(actor, team);
  });
}

AccountService::Awaitable<Outcome<CreatedInvite>> AccountService::createInvite(
    Actor actor, std::string team, std::string role, std::optional<std::string> email,
    std::chrono::milliseconds valid_for) {
  return run([actor = std::move(actor), team = std::move(team), role = std::move(role),
              email = std::move(email), valid_for](Accounts& a) {
    return a.createInvite(actor, team, role, email, valid_for);
  });
}

AccountService::Awaitable<Outcome<std::vector<store::Invite>>> AccountService::listInvites(
    Actor actor, std::string team) {
  return run([actor = std::move(actor), team = std::move(team)](Accounts& a) {
    return a.listInvites(actor, team);
  });
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::acceptInvite(std::string token,
                                                                             std::string email,
                                                                             std::string source) {
  return propagated(
      run([token = std::move(token), email = std::move(email), source = std::move(source)](
              Accounts& a) { return a.acceptInvite(token, email, source); }));
}

AccountService::Awaitable<Outcome<InvitePreview>> AccountService::previewInvite(std::string token,
                                                                                std::string email) {
  return run([token = std::move(token), email = std::move(email)](Accounts& a) {
    return a.previewInvite(token, email);
  });
}

AccountService::Awaitable<Outcome<Ok>> AccountService::revokeInvite(Actor actor, std::string id) {
  return run([actor = std::move(actor), id = std::move(id)](Accounts& a) {
    return a.revokeInvite(actor, id);
  });
}

AccountService::Awaitable<Outcome<CreatedKey>> AccountService::createKey(
    Actor actor, std::string team, std::string name, std::optional<std::string> user_email,
    key_rules::KeyRules rules) {
  return propagated(
      run([actor = std::move(actor), team = std::move(team), name = std::move(name),
           user_email = std::move(user_email), rules = std::move(rules)](Accounts& a) {
        return a.createKey(actor, team, name, user_email, rules);
      }));
}

AccountService::Awaitable<Outcome<std::vector<store::ApiKey>>> AccountService::listKeys(
    Actor actor, std::optional<std::string> team) {
  return run([actor = std::move(actor), team = std::move(team)](Accounts& a) {
    return a.listKeys(actor, team);
  });
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::revokeKey(Actor actor,
                                                                          std::string which) {
  return propagated(run([actor = std::move(actor), which = std::move(which)](Accounts& a) {
    return a.revokeKey(actor, which);
  }));
}

AccountService::Awaitable<Outcome<Propagation>> AccountService::changeKeyRules(
    Actor actor, std::string public_id, KeyRulesChange change) {
  return propagated(
      run([actor = std::move(actor), public_id = std::move(public_id), change = std::move(change)](
              Accounts& a) { return a.changeKeyRules(actor, public_id, change); }));
}

AccountService::Awaitable<CallerFound> AccountService::findCaller(CallerQuery q) {
  return run([q = std::move(q)](Accounts& a) {
    using Refused = CallerFound::Refused;
    CallerFound found;
    auto signed_in = a.sessions().resolve(q.session_id);
    if (!signed_in) {
      found.refused = Refused::NotSignedIn;
      return found;
    }
    found.signed_in = *std::move(signed_in);
    if (q.csrf_token && !a.sessions().csrfMatches(q.session_id, *q.csrf_token)) {
      found.refused = Refused::CsrfFailed;
      return found;
    }
    if (q.team_id) {
      auto m = a.memberOf(found.signed_in.user, *q.team_id);
      if (!m) {
        found.refused = Refused::NotMember;
        return found;
      }
      found.member = *std::move(m);
    }
    return found;
  });
}

AccountService::Awaitable<std::string> AccountService::csrfToken(std::string id) {
  return run([id = std::move(id)](Accounts& a) { return a.sessions().csrfToken(id); });
}

AccountService::Awaitable<Outcome<NewSession>> AccountService::redeemLoginLink(std::string token,
                                                                               std::string source) {
  Outcome<NewSession> opened = co_await redeemOnThread(std::move(token), source);
  co_await counted(static_cast<bool>(opened), std::move(source));
  co_return opened;
}

AccountService::Awaitable<Outcome<NewSession>> AccountService::redeemOnThread(std::string token,
                                                                              std::string source) {
  return run([token = std::move(token), source = std::move(source)](Accounts& a) {
    return a.sessions().redeemLoginLink(token, source);
  });
}

std::optional<std::chrono::seconds> AccountService::signInThrottled(std::string_view source) {
  const auto wait = guard_.throttledFor(address::throttleKey(source), SignInGuard::Clock::now());
  return wait > std::chrono::seconds::zero() ? std::optional(wait) : std::nullopt;
}

AccountService::Awaitable<void> AccountService::signInFailed(std::string source) {
  return counted(false, std::move(source));
}

AccountService::Awaitable<void> AccountService::counted(bool succeeded, std::string source) {
  const std::string key = address::throttleKey(source);
  if (succeeded) {
    sign_ins_.fetch_add(1, std::memory_order_relaxed);
    guard_.succeeded(key);
    co_return;
  }
  sign_in_failures_.fetch_add(1, std::memory_order_relaxed);
  guard_.failed(key, SignInGuard::Clock::now());
  if (auto summary = guard_.takeSummary(SignInGuard::Clock::now())) {
    co_await recordFailures(*std::move(summary));
  }
}

AccountService::Awaitable<bool> AccountService::recordFailures(SignInFailures f) {
  return run([f = std::move(f)](Accounts& a) {
    a.sessions().recordFailures(f);
    return true;
  });
}

AccountService::Awaitable<void> AccountService::flushFailures() {
  // Failures after the last summary are written a minute later at the latest, even when no
  // further failure comes to write them.
  while (!stopping_) {
    thread_->flush_timer.expires_after(SignInGuard::kSummaryEvery);
    co_await thread_->flush_timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (auto summary = guard_.takeSummary(SignInGuard::Clock::now())) {
      try {
        accounts().sessions().recordFailures(*summary);
      } catch (const store::StoreError& e) {
        forget(e);  // The count is lost with the store; the next one is written.
      }
    }
  }
}

AccountService::Awaitable<bool> AccountService::closeSession(std::string id) {
  return run([id = std::move(id)](Accounts& a) {
    a.sessions().close(id);
    return true;
  });
}

AccountService::Awaitable<Outcome<NewSession>> AccountService::openWithProvider(
    ProviderIdentity who, bool allow_signup, std::string source) {
  Outcome<NewSession> opened = co_await openOnThread(std::move(who), allow_signup, source);
  if (opened) {
    co_await counted(true, std::move(source));
  } else {
    // Not held against the source: the provider vouched for the person, who is refused here.
    sign_in_failures_.fetch_add(1, std::memory_order_relaxed);
  }
  co_return opened;
}

AccountService::Awaitable<Outcome<NewSession>> AccountService::openOnThread(ProviderIdentity who,
                                                                            bool allow_signup,
                                                                            std::string source) {
  return run([who = std::move(who), allow_signup, source = std::move(source)](Accounts& a) {
    return a.sessions().openWithProvider(who, allow_signup, source);
  });
}

AccountService::Awaitable<bool> AccountService::recordSignInFailure(std::string who,
                                                                    std::string reason,
                                                                    std::string source) {
  sign_in_failures_.fetch_add(1, std::memory_order_relaxed);  // Not held against the source.
  return run(
      [who = std::move(who), reason = std::move(reason), source = std::move(source)](Accounts& a) {
        a.sessions().recordFailure(who, reason, source);
        return true;
      });
}

AccountService::Awaitable<std::vector<TeamRole>> AccountService::teamsOf(store::User user) {
  return run([user = std::move(user)](Accounts& a) { return a.teamsOf(user); });
}

AccountService::Awaitable<std::vector<store::SpendTotal>> AccountService::summarizeSpend(
    std::string team_id, store::SpendGroup by, std::string since_day) {
  return run([team_id = std::move(team_id), by, since_day = std::move(since_day)](Accounts& a) {
    return a.store().summarizeSpend(team_id, by, since_day);
  });
}

AccountService::Awaitable<std::vector<store::SpendRow>> AccountService::listSpend(
    store::SpendFilter f) {
  return run([f = std::move(f)](Accounts& a) { return a.store().listSpend(f); });
}

AccountService::Awaitable<std::string> AccountService::spendCsv(store::SpendFilter f) {
  return run(
      [f = std::move(f)](Accounts& a) { return accounts::spendCsv(a.store().listSpend(f)); });
}

AccountService::Awaitable<std::vector<store::AuditEntry>> AccountService::listAudit(
    store::AuditFilter f) {
  return run([f = std::move(f)](Accounts& a) { return a.store().listAudit(f); });
}

AccountService::Awaitable<std::vector<store::AlertRow>> AccountService::listAlerts(
    std::string team_id, std::int64_t limit) {
  return run([team_id = std::move(team_id), limit](Accounts& a) {
    return a.store().listAlerts(team_id, limit);
  });
}

}  // namespace tollgate::accounts
