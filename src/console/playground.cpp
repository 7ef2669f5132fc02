// The console's playground: a chat completion (streamed or not) made as the signed-in user in a
// team they belong to, through the same decoding, routing, billing and relay as
// /v1/chat/completions, billed to the team, tagged playground=true and recorded with the user.
// No API key is made for it.
#include "api/handlers.hpp"
#include "console/handlers.hpp"

namespace tollgate::console {

Awaitable<void> playground(const ConsoleServices& s, exchange::RequestContext& ctx,
                           http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  if (s.api.ledger == nullptr) {
    co_return co_await fail(ctx, out, ErrorKind::BillingUnavailable,
                            "this gateway bills nothing (open mode without [gateway] open_team): "
                            "the playground runs only where usage is billed",
                            "");
  }
  ctx.caller = {.key_public_id = "",
                .team_id = m.member.team.id,
                .team = m.member.team.name,
                .team_allows_dryrun = m.member.team.allow_dryrun,
                .user_id = m.who.user.id,
                .playground = true,
                .lease_epoch = std::nullopt,
                .allowed_models = nullptr,  // A member, not a key: no key's rules apply.
                .key_limits = {},
                .team_limits = m.member.team.limits,
                .budget = std::nullopt};
  co_await api::chatCompletions(s.api, ctx, req, out);
}

}  // namespace tollgate::console
