// The console's pages: the HTML shell for /console/ and its client-side routes, and the built
// assets under /console/assets/ (assets.hpp).
#include "console/assets.hpp"
#include "console/handlers.hpp"

namespace tollgate::console {
namespace {

/// Paths under /console/ that are never pages: an unknown API call or asset is a 404, not the
/// shell.
bool reserved(std::string_view page) {
  return page == "api" || page.starts_with("api/") || page == "assets" ||
         page.starts_with("assets/");
}

}  // namespace

Awaitable<void> consolePage(const ConsoleServices&, exchange::RequestContext& ctx,
                            http::Request& req, http::ResponseWriter& out) {
  if (reserved(req.params.get("page"))) {
    co_return co_await fail(ctx, out, ErrorKind::RouteNotFound, "no such console page or call", "");
  }
  const std::span<const Asset> assets = builtAssets();
  const Asset* script = firstWithExtension(assets, ".js");
  const Asset* style = firstWithExtension(assets, ".css");
  http::Response page = shellResponse(script != nullptr ? script->name : std::string_view(),
                                      style != nullptr ? style->name : std::string_view());
  co_await out.send(std::move(page));
}

Awaitable<void> consoleAsset(const ConsoleServices&, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out) {
  const Asset* asset = findAsset(builtAssets(), req.params.get("name"));
  if (asset == nullptr) {
    co_return co_await fail(ctx, out, ErrorKind::RouteNotFound, "no such console asset", "");
  }
  http::Response r = assetResponse(*asset, req.header("Accept-Encoding"));
  co_await out.send(std::move(r));
}

}  // namespace tollgate::console
