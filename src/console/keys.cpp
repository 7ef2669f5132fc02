// API keys through the console: created by a signed-in member (the secret shown once), listed
// without secrets (with why one that is not revoked does not work), revoked (at once on every
// gateway on the store).
#include "console/handlers.hpp"

namespace tollgate::console {

Awaitable<void> listKeys(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                         http::ResponseWriter& out, const MemberCaller& m) {
  const auto all = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  // A key that is not revoked works while its creator is a member who may create keys.
  const auto members = co_await s.accounts.listMembers(m.who.actor, m.member.team.name);
  if (!members) {
    const Error refused = refusalError(members.error());
    co_return co_await fail(ctx, out, refused);
  }
  const auto write = [&members](json::Writer& w, const store::ApiKey& k) {
    accounts::writeKey(w, k, accounts::keyInactiveReason(k, *members));
  };
  co_await answerList(ctx, out, all, write);
}

Awaitable<void> createKey(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  auto body = jsonBody(req, {.required = {"name"}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  // A user's key is their own: it works while they may create keys in the team.
  const std::string name = *stringOf(*body, "name");
  const auto made =
      co_await s.accounts.createKey(m.who.actor, m.member.team.name, name, std::nullopt);
  co_await answer(
      ctx, out, made,
      [](json::Writer& w, const accounts::CreatedKey& k) {
        w.startObject();
        w.key("key");
        accounts::writeKey(w, k.key);
        w.field("secret", k.full);  // Shown this once; only its keyed hash is stored.
        w.endObject();
      },
      201);
}

Awaitable<void> revokeKey(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  // Only a key of this team: another team's is "not found", never "forbidden".
  const std::string public_id(req.params.get("key"));
  const auto all = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  const bool ours = all && std::any_of(all->begin(), all->end(), [&](const store::ApiKey& k) {
                      return k.public_id == public_id;
                    });
  if (!ours) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such key", "key");
  }
  // Accounts decides: any key for those who may revoke any, else only one's own.
  const auto done = co_await s.accounts.revokeKey(m.who.actor, public_id);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation& p) {
    w.startObject();
    w.field("revoked", public_id);
    w.field("gateways_lagging", static_cast<std::int64_t>(p.lagging.size()));
    w.endObject();
  });
}

}  // namespace tollgate::console
