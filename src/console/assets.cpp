#include "console/assets.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace tollgate::console {
namespace {

/// A year: the longest lifetime caches honour (RFC 9111 §5.2.2.1 suggests no more).
constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";

}  // namespace

const Asset* findAsset(std::span<const Asset> assets, std::string_view name) {
  const auto it =
      std::find_if(assets.begin(), assets.end(), [name](const Asset& a) { return a.name == name; });
  return it == assets.end() ? nullptr : &*it;
}

const Asset* firstWithExtension(std::span<const Asset> assets, std::string_view extension) {
  const auto it = std::find_if(assets.begin(), assets.end(),
                               [extension](const Asset& a) { return a.name.ends_with(extension); });
  return it == assets.end() ? nullptr : &*it;
}

bool acceptsGzip(std::string_view accept_encoding) {
  while (!accept_encoding.empty()) {
    const std::size_t comma = accept_encoding.find(',');
    std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view{} : accept_encoding.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string_view coding = text::trimOws(item.substr(0, semi));
    if (!text::equalsIgnoreCase(coding, "gzip") && !text::equalsIgnoreCase(coding, "x-gzip") &&
        coding != "*") {
      continue;
    }
    if (semi == std::string_view::npos) {
      return true;
    }
    // A weight of 0 (q=0, q=0.0, q=0.000) refuses the coding; any other accepts it.
    const std::string_view param = text::trimOws(item.substr(semi + 1));
    if (param.size() < 2 || text::lowerAscii(param[0]) != 'q' || param[1] != '=') {
      return true;
    }
    const std::string_view weight = text::trimOws(param.substr(2));
    const bool zero = !weight.empty() && weight[0] == '0' &&
                      weight.find_first_not_of("0.", 1) == std::string_view::npos;
    return !zero;
  }
  return false;
}

void addPageHeaders(http::Response& r) {
  r.header("Content-Security-Policy", std::string(kContentSecurityPolicy));
  r.header("X-Content-Type-Options", "nosniff");
  r.header("Referrer-Policy", "no-referrer");
}

http::Response assetResponse(const Asset& asset, std::string_view accept_encoding) {
  const bool gzip = !asset.gzip.empty() && acceptsGzip(accept_encoding);
  http::Response r{
      200, std::string(asset.content_type), {}, std::string(gzip ? asset.gzip : asset.plain)};
  if (gzip) {
    r.header("Content-Encoding", "gzip");
  }
  r.header("Vary", "Accept-Encoding");
  r.header("Cache-Control", std::string(kImmutable));
  addPageHeaders(r);
  return r;
}

http::Response shellResponse(std::string_view script, std::string_view style) {
  std::string html =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"referrer\" content=\"no-referrer\"><title>Tollgate console</title>";
  // Asset names are the build's (letters, digits, '-', '.'): nothing to escape.
  if (!style.empty()) {
    html.append("<link rel=\"stylesheet\" href=\"/console/assets/").append(style).append("\">");
  }
  if (!script.empty()) {
    html.append("<script type=\"module\" src=\"/console/assets/")
        .append(script)
        .append("\"></script>");
  }
  html +=
      "</head><body><div id=\"app\"><noscript>The Tollgate console needs JavaScript.</noscript>"
      "</div></body></html>";
  http::Response r{200, "text/html; charset=utf-8", {}, std::move(html)};
  r.header("Cache-Control", "no-store");
  addPageHeaders(r);
  return r;
}

}  // namespace tollgate::console
