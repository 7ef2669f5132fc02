// `tollgate admin keys …`: make (the key shown once), list and revoke API keys.
#include <cstdio>

#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

void createKey(Admin& admin, const Args& a) {
  a.expect(0);
  const auto created = must(
      admin.accounts.createKey(admin.op, a.required("team"), a.required("name"), a.option("user")));
  reportLagging(created.propagation);
  std::fprintf(stderr, "created key %s (%s) for team %s; it is shown once:\n",
               created.key.public_id.c_str(), shown(created.key.name).c_str(),
               shown(created.key.team).c_str());
  std::printf("%s\n", created.full.c_str());
}

void listKeys(Admin& admin, const Args& a) {
  a.expect(0);
  const auto all = must(admin.accounts.listKeys(admin.op, a.option("team")));
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::ApiKey& k : all) {
      accounts::writeKey(w, k);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::ApiKey& k : all) {
    std::printf("%s\t%s\t%s\t%s\tcreated %s\tlast used %s\t%s\n", k.public_id.c_str(),
                shown(k.name).c_str(), shown(k.team).c_str(),
                shown(k.created_by.value_or("operator")).c_str(),
                text::utcTimestamp(k.created_at).c_str(),
                k.last_used_at ? text::utcTimestamp(*k.last_used_at).c_str() : "never",
                k.revoked_at ? "revoked" : "active");
  }
}

void revokeKey(Admin& admin, const Args& a) {
  a.expect(1);
  reportLagging(must(admin.accounts.revokeKey(admin.op, a.at(0, "PUBLIC_ID"))));
  std::printf("revoked\n");
}

constexpr Verb kKeyVerbs[] = {
    {"create", createKey},
    {"list", listKeys},
    {"revoke", revokeKey},
};

}  // namespace

const Noun kKeys{
    "keys",
    "  keys create --team TEAM --name NAME [--user EMAIL] | list [--team TEAM] [--json] |\n"
    "       revoke PUBLIC_ID\n",
    kKeyVerbs};

}  // namespace tollgate::cli::admin
