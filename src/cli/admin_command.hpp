// The commands of `tollgate admin` as tables: a noun (teams, users, members, invites, keys,
// spend, audit, alerts) has its usage lines and a table from verb to the function that runs it,
// or is a command of its own (login-link). Each noun's table is defined beside its functions
// (admin_teams.cpp, admin_people.cpp, admin_keys.cpp, admin_spend.cpp, admin_console.cpp,
// admin_alerts.cpp); admin.cpp finds the command and prints what goes wrong.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "accounts/accounts.hpp"
#include "cli/admin_args.hpp"
#include "config/config.hpp"
#include "store/store.hpp"

namespace tollgate::cli::admin {

/// What every command works with: the account operations, acting as the operator, and the store
/// (for the spend log).
struct Admin {
  accounts::Accounts& accounts;
  store::Store& store;
  const config::Config& config;
  const accounts::Actor op{};
};

/// Runs one verb: prints what it did, or throws UsageError or UserError.
using Handler = void (*)(Admin& admin, const Args& a);

struct Verb {
  std::string_view name;
  Handler run;
};

struct Noun {
  std::string_view name;
  /// Its lines of the usage text, each ending in a newline: every verb of `verbs`, with its words.
  std::string_view usage;
  std::span<const Verb> verbs;
  /// A noun that is a command of its own (`login-link EMAIL`): run with the words after it.
  Handler direct = nullptr;
};

extern const Noun kTeams;
extern const Noun kUsers;
extern const Noun kMembers;
extern const Noun kInvites;
extern const Noun kKeys;
extern const Noun kSpend;
extern const Noun kAudit;
extern const Noun kAlerts;
extern const Noun kLoginLink;

/// Every noun, in the order the usage text lists them.
std::span<const Noun* const> nouns();

/// The usage text: the command line, each noun's lines, the roles.
const std::string& usage();

/// The rate limits --rpm, --tpm and --concurrent set (a whole number from 1 to 10^12); the word
/// `none` clears one (the configured default applies).
accounts::RateLimitsChange limitsOf(const Args& a);

/// The value of an account operation; its refusal is a UserError.
template <class T>
T must(accounts::Outcome<T> outcome) {
  if (!outcome) {
    throw UserError(outcome.error().message);
  }
  return std::move(outcome).value();
}

}  // namespace tollgate::cli::admin
