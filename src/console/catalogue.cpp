// What a signed-in user may run: the models (each with its endpoint, prices and limits; the TEE
// and ZDR filters as /v1/models has them) and the functions with their variants, for the
// playground's picker.
#include "console/handlers.hpp"
#include "http/form.hpp"
#include "openai/models.hpp"

namespace tollgate::console {
namespace {

/// `allow_tee` / `allow_zdr`: absent or true includes the models tagged so, false leaves them out.
Result<bool> allowed(const http::Request& req, std::string_view name) {
  auto v = http::formValue(req.query, name);
  if (!v) {
    return v.error();
  }
  if (!*v || text::equalsIgnoreCase(**v, "true")) {
    return true;
  }
  if (text::equalsIgnoreCase(**v, "false")) {
    return false;
  }
  return Error{ErrorKind::InvalidValue, std::string(name) + " must be true or false",
               std::string(name)};
}

}  // namespace

Awaitable<void> listModels(const ConsoleServices&, exchange::RequestContext& ctx,
                           http::Request& req, http::ResponseWriter& out, const Caller&) {
  const auto tee = allowed(req, "allow_tee");
  const auto zdr = allowed(req, "allow_zdr");
  if (!tee || !zdr) {
    co_return co_await fail(ctx, out, !tee ? tee.error() : zdr.error());
  }
  json::Writer w;
  w.startObject();
  w.key("data");
  w.startArray();
  for (const config::Model& m : ctx.config.models) {
    if (!m.is_active || (m.tee && !*tee) || (m.zdr && !*zdr)) {
      continue;
    }
    w.startObject();
    w.field("id", m.id);
    w.field("display_name", m.display_name.empty() ? m.id : m.display_name);
    w.field("owned_by", m.owned_by);
    w.field("endpoint", config::endpointName(m.endpoint));
    w.field("tee", m.tee);
    w.field("zdr", m.zdr);
    accounts::usdField(w, "input_cost_per_token", m.prices.base.input);
    accounts::usdField(w, "output_cost_per_token", m.prices.base.output);
    if (!m.prices.has_cached_input) {
      // Always shown: a cache read's price is the input price unless configured (then below).
      accounts::usdField(w, "cached_input_cost_per_token", m.prices.base.cached_input);
    }
    openai::writeMorePrices(w, m.prices);
    accounts::usdField(w, "cost_per_audio_second", m.cost_per_audio_second);
    w.field("max_input_tokens", m.max_input_tokens);
    w.field("max_output_tokens", m.max_output_tokens);
    w.field("input_modalities", m.input_modalities);
    w.field("output_modalities", m.output_modalities);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  co_await sendJson(out, w);
}

Awaitable<void> listFunctions(const ConsoleServices&, exchange::RequestContext& ctx, http::Request&,
                              http::ResponseWriter& out, const Caller&) {
  json::Writer w;
  w.startObject();
  w.key("data");
  w.startArray();
  for (const config::Function& f : ctx.config.functions) {
    w.startObject();
    w.field("name", f.name);
    w.field("model", "tollgate::function_name::" + f.name);
    w.key("variants");
    w.startArray();
    for (const config::Variant& v : f.variants) {
      w.startObject();
      w.field("name", v.name);
      w.field("model", v.model);
      w.field("weight", v.weight);
      w.endObject();
    }
    w.endArray();
    w.field("fallback_variants", f.fallback_variants);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  co_await sendJson(out, w);
}

}  // namespace tollgate::console
