#include "api/routes.hpp"

#include "api/handlers.hpp"

namespace tollgate::api {
namespace {

using http::Access;
using http::Method;

/// Bodies of GET requests are ignored, but still bounded.
constexpr std::size_t kSmallBody = 64 * 1024;
/// An upload's form fields (model, prompt, …) beside its file; the file's own limit is checked
/// once the form is read.
constexpr std::size_t kFormAllowance = 1024 * 1024;
/// Uploads past this size are kept in a temporary file, not in memory.
constexpr std::size_t kUploadMemoryBytes = 256 * 1024;
/// JSON bodies are read whole into memory (never spooled).
constexpr std::size_t kNoSpool = std::numeric_limits<std::size_t>::max();

/// /health and /ready.
void addProbes(std::vector<http::Route>& routes, const Services& s) {
  routes.push_back({Method::Get, "/health", Access::Public, kSmallBody, {}, health});
  routes.push_back(
      {Method::Get, "/ready", Access::Public, kSmallBody, {}, [s](auto& ctx, auto& req, auto& out) {
         return ready(s, ctx, req, out);
       }});
}

}  // namespace

http::Router makeProbedRouter(const Services& s, std::vector<http::Route> routes) {
  addProbes(routes, s);
  return http::Router(std::move(routes), nullptr);
}

http::Router makeRouter(const Services& s, const http::Authenticator* authenticator,
                        std::vector<http::Route> more) {
  const std::size_t chat_body = s.config.gateway.max_body_bytes;
  std::vector<http::Route> routes = std::move(more);
  addProbes(routes, s);
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
       [s](auto& ctx, auto& req, auto& out) { return chatCompletions(s, ctx, req, out); },
       kNoSpool,
       true});
  routes.push_back({Method::Post,
                    "/v1/embeddings",
                    Access::ApiKey,
                    chat_body,
                    {"application/json"},
                    [s](auto& ctx, auto& req, auto& out) { return embeddings(s, ctx, req, out); },
                    kNoSpool,
                    true});
  routes.push_back({Method::Post,
                    "/v1/rerank",
                    Access::ApiKey,
                    chat_body,
                    {"application/json"},
                    [s](auto& ctx, auto& req, auto& out) { return rerank(s, ctx, req, out); },
                    kNoSpool,
                    true});
  routes.push_back(
      {Method::Post,
       "/v1/audio/transcriptions",
       Access::ApiKey,
       s.config.gateway.max_upload_bytes + kFormAllowance,
       {"multipart/form-data"},
       [s](auto& ctx, auto& req, auto& out) { return transcriptions(s, ctx, req, out); },
       kUploadMemoryBytes,
       true});
  return http::Router(std::move(routes), authenticator);
}

}  // namespace tollgate::api
