// Teams, their members and invitations, through the console: the same operations of accounts/
// as `tollgate admin`, with the signed-in user as the actor.
#include "config/limits_config.hpp"
#include "console/handlers.hpp"

namespace tollgate::console {
namespace {

using accounts::Action;

/// How long an invitation lasts unless the call says (hours).
constexpr std::int64_t kDefaultInviteHours = 7 * 24;
constexpr std::int64_t kMaxInviteHours = 90 * 24;

void writeTeam(json::Writer& w, const store::Team& t, std::optional<accounts::Role> role) {
  w.startObject();
  w.field("id", t.id);
  w.field("name", t.name);
  w.field("state", t.state);
  accounts::timeField(w, "created_at", t.created_at);
  if (role) {
    w.field("role", accounts::roleName(*role));
  }
  w.endObject();
}

/// The invitation link to show once: the console's page that accepts it.
std::string inviteLink(const config::Console& c, const http::Request& req,
                       const std::string& token) {
  const std::string origin =
      !c.public_url.empty() ? c.public_url : "http://" + std::string(req.header("Host"));
  return origin + "/console/invite?token=" + token;
}

/// The member {user} of the caller's team, by user id; nullopt once refused (404 alike for an
/// unknown user and one of another team).
Awaitable<std::optional<store::Member>> memberOfPath(const ConsoleServices& s,
                                                     exchange::RequestContext& ctx,
                                                     const http::Request& req,
                                                     http::ResponseWriter& out,
                                                     const MemberCaller& m) {
  const std::string user_id(req.params.get("user"));
  auto members = co_await s.accounts.listMembers(m.who.actor, m.member.team.name);
  if (members) {
    for (store::Member& x : *members) {
      if (x.user.id == user_id) {
        co_return std::move(x);
      }
    }
  }
  co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such member of the team", "user");
  co_return std::nullopt;
}

}  // namespace

Awaitable<void> listTeams(const ConsoleServices& s, exchange::RequestContext&, http::Request&,
                          http::ResponseWriter& out, const Caller& who) {
  const auto teams = co_await s.accounts.teamsOf(who.user);
  json::Writer w;
  w.startArray();
  for (const accounts::TeamRole& t : teams) {
    writeTeam(w, t.team, t.role);
  }
  w.endArray();
  co_await sendJson(out, w);
}

Awaitable<void> createTeam(const ConsoleServices& s, exchange::RequestContext& ctx,
                           http::Request& req, http::ResponseWriter& out, const Caller& who) {
  auto body = jsonBody(req, {.required = {"name"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  // The creator is its owner; its balance starts at 0 (top-ups are the operator's).
  const std::string name = *stringOf(*body, "name");
  const auto made =
      co_await s.accounts.createTeam(who.actor, name, 0, ctx.config.console.max_teams_per_user);
  co_await answer(
      ctx, out, made,
      [](json::Writer& w, const store::Team& t) { writeTeam(w, t, accounts::Role::Owner); }, 201);
}

Awaitable<void> showTeam(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                         http::ResponseWriter& out, const MemberCaller& m) {
  const auto summary = co_await s.accounts.teamSummary(m.who.actor, m.member.team.name);
  const bool money = accounts::allowed(m.member.role, Action::ReadSpend);
  co_await answer(ctx, out, summary, [&](json::Writer& w, const accounts::TeamSummary& t) {
    w.startObject();
    w.field("id", t.team.id);
    w.field("name", t.team.name);
    w.field("state", t.team.state);
    accounts::timeField(w, "created_at", t.team.created_at);
    w.field("role", accounts::roleName(m.member.role));
    w.field("members", t.members);
    w.field("active_keys", t.active_keys);
    w.field("allow_dryrun", t.team.allow_dryrun);
    accounts::writeRateLimits(w, t.team.limits);  // Its own, each only when set.
    if (money) {
      accounts::usdField(w, "balance", t.team.balance);
      accounts::usdField(w, "reserved", t.team.reserved);
      accounts::usdField(w, "available",
                         std::max<money::Pico>(t.team.balance - t.team.reserved, 0));
    }
    w.endObject();
  });
}

Awaitable<void> setTeamActive(const ConsoleServices& s, exchange::RequestContext& ctx,
                              http::Request&, http::ResponseWriter& out, const MemberCaller& m,
                              bool active) {
  const auto done = co_await s.accounts.setTeamActive(m.who.actor, m.member.team.name, active);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation&) {
    w.startObject();
    w.field("id", m.member.team.id);
    w.field("state", active ? "active" : "suspended");
    w.endObject();
  });
}

Awaitable<void> changeTeamLimits(const ConsoleServices& s, exchange::RequestContext& ctx,
                                 http::Request& req, http::ResponseWriter& out,
                                 const MemberCaller& m) {
  auto body = jsonBody(req, {.required = {}, .counts = {"rpm", "tpm", "concurrent"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  accounts::RateLimitsChange change;
  for (const auto& [name, to] : {std::pair{"rpm", &change.rpm}, std::pair{"tpm", &change.tpm},
                                 std::pair{"concurrent", &change.concurrent}}) {
    const rapidjson::Value* v = json::member(*body, name);
    if (v == nullptr) {
      continue;
    }
    to->emplace();
    if (v->IsNull()) {
      continue;  // Refused by accounts: only the operator removes a limit.
    }
    if (v->GetInt64() < 1 || v->GetInt64() > config::kMaxLimit) {
      const Error refused{
          ErrorKind::InvalidValue,
          std::string(name) + " must be from 1 to " + std::to_string(config::kMaxLimit), name};
      co_return co_await fail(ctx, out, refused);
    }
    **to = v->GetInt64();
  }
  const auto done = co_await s.accounts.setTeamLimits(m.who.actor, m.member.team.name, change,
                                                      ctx.config.limits.team);
  const key_rules::RateLimits after = change.applied(m.member.team.limits);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation& p) {
    w.startObject();
    w.field("id", m.member.team.id);
    accounts::writeRateLimits(w, after);
    w.field("gateways_lagging", static_cast<std::int64_t>(p.lagging.size()));
    w.endObject();
  });
}

Awaitable<void> listMembers(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                            http::ResponseWriter& out, const MemberCaller& m) {
  const auto all = co_await s.accounts.listMembers(m.who.actor, m.member.team.name);
  co_await answerList(ctx, out, all, accounts::writeMember);
}

Awaitable<void> changeMember(const ConsoleServices& s, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  auto body = jsonBody(req, {.required = {"role"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const auto target = co_await memberOfPath(s, ctx, req, out, m);
  if (!target) {
    co_return;
  }
  const std::string role = *stringOf(*body, "role");
  // A suspended team allows a lower role only (an unknown one is refused by accounts/).
  const std::optional<accounts::Role> to = accounts::parseRole(role);
  const std::optional<accounts::Role> from = accounts::parseRole(target->role);
  if (m.member.team.state != "active" && to && from && !accounts::lowers(*from, *to)) {
    co_return co_await failSuspended(ctx, out);
  }
  const auto done =
      co_await s.accounts.setRole(m.who.actor, m.member.team.name, target->user.email, role);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation&) {
    store::Member changed = *target;
    changed.role = role;
    accounts::writeMember(w, changed);
  });
}

Awaitable<void> removeMember(const ConsoleServices& s, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  const auto target = co_await memberOfPath(s, ctx, req, out, m);
  if (!target) {
    co_return;
  }
  const auto done =
      co_await s.accounts.removeMember(m.who.actor, m.member.team.name, target->user.email);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation&) {
    w.startObject();
    w.field("removed", target->user.id);
    w.endObject();
  });
}

Awaitable<void> listInvitations(const ConsoleServices& s, exchange::RequestContext& ctx,
                                http::Request&, http::ResponseWriter& out, const MemberCaller& m) {
  const auto all = co_await s.accounts.listInvites(m.who.actor, m.member.team.name);
  co_await answerList(ctx, out, all, accounts::writeInvite);
}

Awaitable<void> createInvitation(const ConsoleServices& s, exchange::RequestContext& ctx,
                                 http::Request& req, http::ResponseWriter& out,
                                 const MemberCaller& m) {
  auto body =
      jsonBody(req, {.required = {"role"}, .optional = {"email"}, .counts = {"valid_hours"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const std::int64_t hours = json::intMember(*body, "valid_hours").value_or(kDefaultInviteHours);
  if (hours < 1 || hours > kMaxInviteHours) {
    const std::string why = "valid_hours must be from 1 to " + std::to_string(kMaxInviteHours);
    co_return co_await fail(ctx, out, ErrorKind::InvalidValue, why, "valid_hours");
  }
  const std::string role = *stringOf(*body, "role");
  const std::optional<std::string> email = stringOf(*body, "email");
  const auto made = co_await s.accounts.createInvite(m.who.actor, m.member.team.name, role, email,
                                                     std::chrono::hours(hours));
  co_await answer(
      ctx, out, made,
      [&](json::Writer& w, const accounts::CreatedInvite& c) {
        w.startObject();
        w.key("invitation");
        accounts::writeInvite(w, c.invite);
        w.field("token", c.token);
        w.field("link", inviteLink(ctx.config.console, req, c.token));
        w.endObject();
      },
      201);
}

Awaitable<void> revokeInvitation(const ConsoleServices& s, exchange::RequestContext& ctx,
                                 http::Request& req, http::ResponseWriter& out,
                                 const MemberCaller& m) {
  // Only an invitation of this team: another team's is "not found", never "forbidden".
  const std::string id(req.params.get("invitation"));
  const auto all = co_await s.accounts.listInvites(m.who.actor, m.member.team.name);
  const bool ours = all && std::any_of(all->begin(), all->end(),
                                       [&](const store::Invite& i) { return i.id == id; });
  if (!ours) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such invitation",
                            "invitation");
  }
  const auto done = co_await s.accounts.revokeInvite(m.who.actor, id);
  co_await answer(ctx, out, done, [&](json::Writer& w, const Ok&) {
    w.startObject();
    w.field("revoked", id);
    w.endObject();
  });
}

Awaitable<void> acceptInvitation(const ConsoleServices& s, exchange::RequestContext& ctx,
                                 http::Request& req, http::ResponseWriter& out, const Caller& who) {
  auto body = jsonBody(req, {.required = {"token"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const std::string token = *stringOf(*body, "token");
  const auto done = co_await s.accounts.acceptInvite(token, who.user.email, who.actor.source);
  const auto teams = co_await s.accounts.teamsOf(who.user);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation&) {
    w.startArray();
    for (const accounts::TeamRole& t : teams) {
      writeTeam(w, t.team, t.role);
    }
    w.endArray();
  });
}

Awaitable<void> previewInvitation(const ConsoleServices& s, exchange::RequestContext& ctx,
                                  http::Request& req, http::ResponseWriter& out,
                                  const Caller& who) {
  auto body = jsonBody(req, {.required = {"token"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const std::string token = *stringOf(*body, "token");
  const auto found = co_await s.accounts.previewInvite(token, who.user.email);
  co_await answer(ctx, out, found, [](json::Writer& w, const accounts::InvitePreview& p) {
    w.startObject();
    w.field("team", p.team);
    w.field("role", p.role);
    w.field("invited_by", p.invited_by);
    w.endObject();
  });
}

}  // namespace tollgate::console
