#include "api/routes.hpp"

#include "api/handlers.hpp"

namespace tollgate::api {
namespace {

using http::Access;
using http::Method;

/// Bodies of GET requests are ignored, but still bounded.
constexpr std::size_t kSmallBody = 64 * 1024;

}  // namespace

http::Router makeRouter(const Services& s, const http::Authenticator* authenticator) {
  const std::size_t chat_body = s.config.gateway.max_body_bytes;
  std::vector<http::Route> routes;
  routes.push_back({Method::Get, "/health", Access::Public, kSmallBody, {}, health});
  routes.push_back(
      {Method::Get, "/ready", Access::Public, kSmallBody, {}, [s](auto& ctx, auto& req, auto& out) {
         return ready(s, ctx, req, out);
       }});
  routes.push_back({Method::Get, "/v1/models", Access::ApiKey, kSmallBody, {}, listModels});
  // {id*}: a slash-style id (openai/gpt-4o) is a model that does not exist, not a missing route.
  routes.push_back(
      {Method::Get, "/v1/models/{id*}", Access::ApiKey, kSmallBody, {}, retrieveModel});
  routes.push_back(
      {Method::Post,
       "/v1/chat/completions",
       Access::ApiKey,
       chat_body,
       {"application/json"},
       [s](auto& ctx, auto& req, auto& out) { return chatCompletions(s, ctx, req, out); }});
  return http::Router(std::move(routes), authenticator);
}

}  // namespace tollgate::api
