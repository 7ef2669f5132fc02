#include "cli/admin.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "cli/admin_command.hpp"
#include "core/text.hpp"
#include "store/migrations.hpp"

namespace tollgate::cli {
namespace admin {
namespace {

constexpr std::string_view kUsageHead =
    "usage: tollgate admin [--config FILE | --data-dir DIR] COMMAND\n";
constexpr std::string_view kUsageTail = "roles: owner, admin, member, viewer\n";

constexpr std::array<const Noun*, 9> kNouns{&kTeams, &kUsers, &kMembers, &kInvites,  &kKeys,
                                            &kSpend, &kAudit, &kAlerts,  &kLoginLink};

}  // namespace

std::span<const Noun* const> nouns() { return kNouns; }

const std::string& usage() {
  static const std::string text = [] {
    std::string t(kUsageHead);
    for (const Noun* n : kNouns) {
      t += n->usage;
    }
    t += kUsageTail;
    return t;
  }();
  return text;
}

}  // namespace admin

int runAdmin(std::span<const std::string> args, const config::Config& config,
             const StoreSetup& setup) {
  using admin::UsageError;
  using admin::UserError;
  if (args.size() < 2) {
    std::fputs(admin::usage().c_str(), stderr);
    return 2;
  }
  const std::string& noun_name = args[0];
  const std::string& verb_name = args[1];
  // A noun that is a command of its own (login-link EMAIL) takes every word after it.
  const auto noun = std::find_if(admin::nouns().begin(), admin::nouns().end(),
                                 [&](const admin::Noun* n) { return n->name == noun_name; });
  const bool direct = noun != admin::nouns().end() && (*noun)->direct != nullptr;
  try {
    const admin::Args a(args.subspan(direct ? 1 : 2),
                        {"name", "role", "email", "expires", "team", "user", "balance", "since",
                         "model", "tag", "by", "expires-at", "allowed-models", "rpm", "tpm",
                         "concurrent", "budget-usd", "budget-window"},
                        {"json", "csv"});
    store::Store st(store::connect(setup.location));
    store::migrate(st.connection());
    accounts::Accounts acc(st, setup.server_secret);
    admin::Admin context{acc, st, config};
    if (direct) {
      (*noun)->direct(context, a);
      return 0;
    }
    if (noun == admin::nouns().end()) {
      throw UsageError("unknown command " + text::printable(noun_name, 40));
    }
    const std::span<const admin::Verb> verbs = (*noun)->verbs;
    const auto verb = std::find_if(verbs.begin(), verbs.end(),
                                   [&](const admin::Verb& v) { return v.name == verb_name; });
    if (verb == verbs.end()) {
      throw UsageError("unknown command " + std::string((*noun)->name) + " " +
                       text::printable(verb_name, 40));
    }
    verb->run(context, a);
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "tollgate admin: %s\n%s", e.what(), admin::usage().c_str());
    return 2;
  } catch (const UserError& e) {
    std::fprintf(stderr, "tollgate admin: %s\n", e.what());
    return 1;
  } catch (const store::StoreError& e) {
    if (e.kind() == store::StoreError::Kind::Conflict) {
      std::fprintf(stderr,
                   "tollgate admin: it already exists (made at the same moment by another "
                   "command?)\n");
    } else {
      std::fprintf(stderr, "tollgate admin: the store failed: %s\n", e.what());
    }
    return 1;
  }
}

}  // namespace tollgate::cli
