#include "http/router.hpp"

#include <gtest/gtest.h>

namespace tollgate::http {
namespace {

boost::asio::awaitable<void> noop(exchange::RequestContext&, Request&, ResponseWriter&) {
  co_return;
}

/// Accepts the header "good", refuses anything else; counts its calls.
class CountingAuthenticator final : public Authenticator {
 public:
  std::optional<Error> authenticate(std::string_view authorization,
                                    exchange::Caller& caller) const override {
    ++calls;
    if (authorization != "good") {
      return Error{ErrorKind::InvalidApiKey, "no", ""};
    }
    caller.key_public_id = "pub";
    return std::nullopt;
  }
  mutable int calls = 0;
};

Router table(const Authenticator* authenticator = nullptr) {
  std::vector<Route> routes;
  routes.push_back({Method::Get, "/health", Access::Public, 10, {}, noop});
  routes.push_back({Method::Get, "/v1/models", Access::ApiKey, 20, {}, noop});
  routes.push_back({Method::Get, "/v1/models/{id*}", Access::ApiKey, 30, {}, noop});
  routes.push_back(
      {Method::Post, "/v1/chat/completions", Access::ApiKey, 4000, {"application/json"}, noop});
  routes.push_back({Method::Get, "/teams/{team}/keys/{key}", Access::ApiKey, 40, {}, noop});
  routes.push_back({Method::Delete, "/teams/{team}/keys/{key}", Access::ApiKey, 50, {}, noop});
  routes.push_back({Method::Post,
                    "/v1/audio/transcriptions",
                    Access::ApiKey,
                    25'000'000,
                    {"multipart/form-data"},
                    noop});
  return Router(std::move(routes), authenticator);
}

TEST(Router, LiteralPathsMatchExactly) {
  const Router r = table();
  const Routing hit = r.route(Method::Get, "/health", "");
  ASSERT_NE(hit.route, nullptr);
  EXPECT_EQ(hit.route->pattern, "/health");
  for (std::string_view miss : {"/health/", "/healthz", "/", "/v1", "//health", "/HEALTH"}) {
    const Routing m = r.route(Method::Get, miss, "");
    EXPECT_EQ(m.route, nullptr) << miss;
    EXPECT_EQ(m.refusal.status, 404) << miss;
    EXPECT_NE(m.refusal.body.find("\"code\":\"not_found\""), std::string::npos) << miss;
  }
}

TEST(Router, ParametersBindOneSegmentEach) {
  const Router r = table();
  const Routing hit = r.route(Method::Delete, "/teams/t1/keys/k2", "");
  ASSERT_NE(hit.route, nullptr);
  EXPECT_EQ(hit.route->body_limit, 50U);
  EXPECT_EQ(hit.params.get("team"), "t1");
  EXPECT_EQ(hit.params.get("key"), "k2");
  EXPECT_EQ(hit.params.get("other"), "");
  EXPECT_EQ(r.route(Method::Get, "/teams/t1/keys", "").route, nullptr);
  EXPECT_EQ(r.route(Method::Get, "/teams//keys/k", "").route, nullptr);  // Empty segment.
  EXPECT_EQ(r.route(Method::Get, "/teams/t/keys/k/x", "").route, nullptr);
}

TEST(Router, RestParameterTakesTheRestOfThePath) {
  const Router r = table();
  const Routing slash = r.route(Method::Get, "/v1/models/openai/gpt-4o", "");
  ASSERT_NE(slash.route, nullptr);
  EXPECT_EQ(slash.params.get("id"), "openai/gpt-4o");
  const Routing plain = r.route(Method::Get, "/v1/models/gpt_4o_mini", "");
  ASSERT_NE(plain.route, nullptr);
  EXPECT_EQ(plain.params.get("id"), "gpt_4o_mini");
  // The list itself is its own route, not the item route with an empty id.
  EXPECT_EQ(r.route(Method::Get, "/v1/models", "").route->pattern, "/v1/models");
}

TEST(Router, APathIsMatchedOnlyByPatternsWhoseLiteralStartItShares) {
  std::vector<Route> routes;
  routes.push_back({Method::Get, "/a/{x*}", Access::Public, 10, {}, noop});
  routes.push_back({Method::Get, "/a/b/{y}/c", Access::Public, 10, {}, noop});
  routes.push_back({Method::Get, "/{z}/d", Access::Public, 10, {}, noop});
  const Router r(std::move(routes), nullptr);
  // A rest parameter may be empty: its pattern's literal start is "/a", not "/a/".
  const Routing bare = r.route(Method::Get, "/a", "");
  ASSERT_NE(bare.route, nullptr);
  EXPECT_EQ(bare.route->pattern, "/a/{x*}");
  EXPECT_EQ(bare.params.get("x"), "");
  EXPECT_EQ(r.route(Method::Get, "/a/b/q/c", "").route->pattern, "/a/{x*}");  // The first.
  EXPECT_EQ(r.route(Method::Get, "/ab", "").route, nullptr);
  const Routing any = r.route(Method::Get, "/e/d", "");
  ASSERT_NE(any.route, nullptr);
  EXPECT_EQ(any.params.get("z"), "e");
  EXPECT_EQ(r.route(Method::Get, "/e/dd", "").route, nullptr);
}

TEST(Router, WrongMethodIs405WithAllow) {
  const Router r = table();
  const Routing m = r.route(Method::Post, "/health", "application/json");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.refusal.status, 405);
  ASSERT_EQ(m.refusal.headers.size(), 1U);
  EXPECT_EQ(m.refusal.headers[0].first, "Allow");
  EXPECT_EQ(m.refusal.headers[0].second, "GET, HEAD");
  const Routing chat = r.route(Method::Get, "/v1/chat/completions", "");
  EXPECT_EQ(chat.refusal.status, 405);
  EXPECT_EQ(chat.refusal.headers[0].second, "POST");
  // Several routes on one path: Allow lists them all.
  const Routing keys = r.route(Method::Put, "/teams/a/keys/b", "");
  EXPECT_EQ(keys.refusal.headers[0].second, "GET, HEAD, DELETE");
}

TEST(Router, TheFirstMatchingEntryInTheTableWinsLiteralOrNot) {
  // A literal path is looked up, not scanned for: the entries with a parameter declared before
  // it still come first, and Allow lists both kinds in table order.
  std::vector<Route> routes;
  routes.push_back({Method::Get, "/a/{x}", Access::Public, 1, {}, noop});
  routes.push_back({Method::Get, "/a/b", Access::Public, 2, {}, noop});
  routes.push_back({Method::Post, "/a/b", Access::Public, 3, {}, noop});
  routes.push_back({Method::Delete, "/a/{x}", Access::Public, 4, {}, noop});
  routes.push_back({Method::Put, "/c/d", Access::Public, 5, {}, noop});
  routes.push_back({Method::Put, "/c/{y}", Access::Public, 6, {}, noop});
  const Router r(std::move(routes));
  const Routing get = r.route(Method::Get, "/a/b", "");
  ASSERT_NE(get.route, nullptr);
  EXPECT_EQ(get.route->body_limit, 1U);
  EXPECT_EQ(get.params.get("x"), "b");
  const Routing post = r.route(Method::Post, "/a/b", "");
  ASSERT_NE(post.route, nullptr);
  EXPECT_EQ(post.route->body_limit, 3U);
  EXPECT_EQ(post.params.get("x"), "");  // The parameter entry tried first bound nothing here.
  EXPECT_EQ(r.route(Method::Delete, "/a/b", "").route->body_limit, 4U);
  EXPECT_EQ(r.route(Method::Put, "/a/b", "").refusal.headers[0].second, "GET, HEAD, POST, DELETE");
  EXPECT_EQ(r.route(Method::Put, "/c/d", "").route->body_limit, 5U);
  EXPECT_EQ(r.route(Method::Put, "/c/e", "").route->body_limit, 6U);
  EXPECT_EQ(r.route(Method::Put, "/c/d/", "").refusal.status, 404);
}

TEST(Router, HeadIsServedByGetRoutes) {
  const Router r = table();
  EXPECT_NE(r.route(Method::Head, "/v1/models", "").route, nullptr);
  EXPECT_EQ(r.route(Method::Head, "/v1/chat/completions", "").refusal.status, 405);
}

TEST(Router, ContentTypesAreChecked) {
  const Router r = table();
  EXPECT_NE(r.route(Method::Post, "/v1/chat/completions", "application/json").route, nullptr);
  EXPECT_NE(r.route(Method::Post, "/v1/chat/completions", "Application/JSON; charset=utf-8").route,
            nullptr);
  for (std::string_view ct : {"", "text/plain", "application/jsonx", "multipart/form-data"}) {
    const Routing m = r.route(Method::Post, "/v1/chat/completions", ct);
    EXPECT_EQ(m.route, nullptr) << ct;
    EXPECT_EQ(m.refusal.status, 415) << ct;
    EXPECT_NE(m.refusal.body.find("Content-Type must be application/json"), std::string::npos);
  }
  EXPECT_NE(
      r.route(Method::Post, "/v1/audio/transcriptions", "multipart/form-data; boundary=x").route,
      nullptr);
}

TEST(Router, BodyLimitsArePerRoute) {
  const Router r = table();
  EXPECT_EQ(r.maxBodyLimit(), 25'000'000U);
  EXPECT_EQ(r.route(Method::Post, "/v1/chat/completions", "application/json").route->body_limit,
            4000U);
  EXPECT_EQ(r.route(Method::Get, "/health", "").route->body_limit, 10U);
}

TEST(Router, KeyRoutesAskTheAuthenticatorAndPublicRoutesDoNot) {
  const CountingAuthenticator auth;
  const Router r = table(&auth);
  exchange::Caller caller;
  EXPECT_FALSE(r.admit(*r.route(Method::Get, "/health", "").route, "", caller));
  EXPECT_EQ(auth.calls, 0);
  const auto refused = r.admit(*r.route(Method::Get, "/v1/models", "").route, "bad", caller);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status(), 401);
  EXPECT_TRUE(caller.key_public_id.empty());
  EXPECT_FALSE(r.admit(*r.route(Method::Get, "/v1/models", "").route, "good", caller));
  EXPECT_EQ(caller.key_public_id, "pub");
  EXPECT_EQ(auth.calls, 2);
  // Open mode: no authenticator, every route is public.
  const Router open = table();
  EXPECT_FALSE(open.admit(*open.route(Method::Get, "/v1/models", "").route, "", caller));
}

TEST(Response, A401NamesTheBearerScheme) {
  const Response r = Response::error(Error{ErrorKind::MissingApiKey, "m", ""});
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "WWW-Authenticate");
  EXPECT_TRUE(Response::error(Error{ErrorKind::TeamSuspended, "m", ""}).headers.empty());
}

TEST(Router, MalformedPatternsAreRefusedAtStartup) {
  for (const char* pattern : {"", "health", "/a/{rest*}/b", "/a/b{c}", "/{a}/{b}/{c}/{d}/{e}"}) {
    std::vector<Route> routes;
    routes.push_back({Method::Get, pattern, Access::Public, 0, {}, noop});
    EXPECT_THROW(Router(std::move(routes)), std::invalid_argument) << pattern;
  }
}

TEST(Response, HeadCarriesHeadersFramingAndRequestId) {
  Response r = Response::json(429, "{}");
  r.header("Retry-After", "3");
  const std::string head = responseHead(r, {11, true, Framing::Length, 2, "req-1"});
  EXPECT_EQ(head,
            "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nRetry-After: 3\r\nx-request-id: req-1\r\n\r\n");
  Response s;
  s.content_type = "text/event-stream";
  EXPECT_EQ(responseHead(s, {11, false, Framing::Chunked, 0, ""}),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(responseHead(s, {10, true, Framing::UntilClose, 0, ""}),
            "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
  EXPECT_EQ(responseHead(s, {10, true, Framing::Length, 0, ""}),
            "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n"
            "Connection: keep-alive\r\n\r\n");
}

}  // namespace
}  // namespace tollgate::http
