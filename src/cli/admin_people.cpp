// `tollgate admin users …`, `members …` and `invites …`: people, their roles in teams, and the
// invitations that bring them in.
#include <cstdio>

#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

void addUser(Admin& admin, const Args& a) {
  a.expect(1);
  const store::User u =
      must(admin.accounts.addUser(a.at(0, "EMAIL"), a.option("name").value_or("")));
  std::printf("added user %s\n", shown(u.email).c_str());
}

void unlinkUser(Admin& admin, const Args& a) {
  a.expect(1);
  const std::int64_t n = must(admin.accounts.unlinkUser(admin.op, a.at(0, "EMAIL")));
  std::printf(
      "unlinked %s from %lld identity-provider account(s): the next to sign in with the "
      "address is bound to it\n",
      shown(a.at(0, "EMAIL")).c_str(), static_cast<long long>(n));
}

void endSessions(Admin& admin, const Args& a) {
  a.expect(1);
  const std::int64_t n = must(admin.accounts.endSessions(admin.op, a.at(0, "EMAIL")));
  std::printf("ended %lld console session(s) of %s\n", static_cast<long long>(n),
              shown(a.at(0, "EMAIL")).c_str());
}

void addMember(Admin& admin, const Args& a) {
  a.expect(2);
  reportLagging(must(
      admin.accounts.addMember(admin.op, a.at(0, "TEAM"), a.at(1, "EMAIL"), a.required("role"))));
  std::printf("added %s to %s\n", shown(a.at(1, "EMAIL")).c_str(), shown(a.at(0, "TEAM")).c_str());
}

void setRole(Admin& admin, const Args& a) {
  a.expect(3);
  reportLagging(
      must(admin.accounts.setRole(admin.op, a.at(0, "TEAM"), a.at(1, "EMAIL"), a.at(2, "ROLE"))));
  std::printf("%s is now %s of %s\n", shown(a.at(1, "EMAIL")).c_str(),
              shown(a.at(2, "ROLE")).c_str(), shown(a.at(0, "TEAM")).c_str());
}

void removeMember(Admin& admin, const Args& a) {
  a.expect(2);
  reportLagging(must(admin.accounts.removeMember(admin.op, a.at(0, "TEAM"), a.at(1, "EMAIL"))));
  std::printf("removed %s from %s\n", shown(a.at(1, "EMAIL")).c_str(),
              shown(a.at(0, "TEAM")).c_str());
}

void listMembers(Admin& admin, const Args& a) {
  a.expect(1);
  const auto all = must(admin.accounts.listMembers(admin.op, a.at(0, "TEAM")));
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::Member& m : all) {
      accounts::writeMember(w, m);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::Member& m : all) {
    std::printf("%s\t%s\t%s\n", shown(m.user.email).c_str(), m.role.c_str(),
                shown(m.user.name).c_str());
  }
}

void createInvite(Admin& admin, const Args& a) {
  a.expect(1);
  const auto created = must(
      admin.accounts.createInvite(admin.op, a.at(0, "TEAM"), a.required("role"), a.option("email"),
                                  duration(a.option("expires").value_or("7d"))));
  std::fprintf(stderr, "invitation %s to %s as %s, expires %s; the token is shown once:\n",
               created.invite.id.c_str(), shown(created.invite.team).c_str(),
               created.invite.role.c_str(), text::utcTimestamp(created.invite.expires_at).c_str());
  std::printf("%s\n", created.token.c_str());
}

void listInvites(Admin& admin, const Args& a) {
  a.expect(1);
  const auto all = must(admin.accounts.listInvites(admin.op, a.at(0, "TEAM")));
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::Invite& i : all) {
      accounts::writeInvite(w, i);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::Invite& i : all) {
    std::printf("%s\t%s\t%s\t%s\texpires %s\n", i.id.c_str(), i.role.c_str(),
                accounts::inviteState(i).c_str(), shown(i.email.value_or("-")).c_str(),
                text::utcTimestamp(i.expires_at).c_str());
  }
}

void acceptInvite(Admin& admin, const Args& a) {
  a.expect(1);
  reportLagging(must(admin.accounts.acceptInvite(a.at(0, "TOKEN"), a.required("email"))));
  std::printf("accepted: %s joined the team\n", shown(a.required("email")).c_str());
}

void revokeInvite(Admin& admin, const Args& a) {
  a.expect(1);
  must(admin.accounts.revokeInvite(admin.op, a.at(0, "ID")));
  std::printf("revoked invitation %s\n", shown(a.at(0, "ID")).c_str());
}

constexpr Verb kUserVerbs[] = {
    {"add", addUser},
    {"unlink", unlinkUser},
    {"sessions-end", endSessions},
};

constexpr Verb kMemberVerbs[] = {
    {"add", addMember},
    {"role", setRole},
    {"remove", removeMember},
    {"list", listMembers},
};

constexpr Verb kInviteVerbs[] = {
    {"create", createInvite},
    {"list", listInvites},
    {"accept", acceptInvite},
    {"revoke", revokeInvite},
};

}  // namespace

const Noun kUsers{"users", "  users add EMAIL [--name NAME] | unlink EMAIL | sessions-end EMAIL\n",
                  kUserVerbs};

const Noun kMembers{
    "members",
    "  members add TEAM EMAIL --role ROLE | role TEAM EMAIL ROLE | remove TEAM EMAIL |\n"
    "          list TEAM [--json]\n",
    kMemberVerbs};

const Noun kInvites{
    "invites",
    "  invites create TEAM --role ROLE [--email EMAIL] [--expires 7d] | list TEAM [--json] |\n"
    "          accept TOKEN --email EMAIL | revoke ID\n",
    kInviteVerbs};

}  // namespace tollgate::cli::admin
