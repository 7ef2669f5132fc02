#include "config/console_config.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>

#include "core/text.hpp"
#include "core/unicode.hpp"

namespace tollgate::config {
namespace {

constexpr std::int64_t kMaxSessionSeconds = 90LL * 24 * 3600;
constexpr std::int64_t kMaxTeamsPerUser = 1'000'000;
constexpr unsigned kHttpPort = 80;
constexpr unsigned kHttpsPort = 443;
constexpr unsigned kMaxPort = 65535;

/// An absolute http(s) URL without credentials, query or fragment; its scheme and host.
boost::urls::url_view absoluteUrl(const TableReader& r, std::string_view key,
                                  const std::string& text) {
  const auto parsed = boost::urls::parse_absolute_uri(text);
  if (!parsed) {
    r.fail(key, "must be an absolute URL such as https://gateway.example.com");
  }
  const boost::urls::url_view u = *parsed;
  if (u.scheme_id() != boost::urls::scheme::http && u.scheme_id() != boost::urls::scheme::https) {
    r.fail(key, "must be an http:// or https:// URL");
  }
  if (u.has_userinfo() || u.has_query() || u.has_fragment()) {
    r.fail(key, "must not carry credentials, a query or a fragment");
  }
  if (u.host().empty()) {
    r.fail(key, "must name a host");
  }
  return u;
}

/// `text` with an internationalised host written in ASCII, so that a URL parser reads it: the
/// text of its host (after "://", up to a port, path, query or fragment) when it holds non-ASCII
/// bytes, converted by UTS #46; `text` as it is otherwise.
std::string withAsciiHost(const TableReader& r, std::string_view key, const std::string& text) {
  const std::size_t scheme_end = text.find("://");
  if (scheme_end == std::string::npos) {
    return text;
  }
  const std::size_t start = scheme_end + 3;
  const std::size_t end = text.find_first_of(":/?#", start);
  const std::string_view host = std::string_view(text).substr(start, end - start);
  if (std::all_of(host.begin(), host.end(), [](char c) { return (c & 0x80) == 0; })) {
    return text;
  }
  const std::optional<std::string> ascii =
      text::isValidUtf8(host) ? unicode::hostToAscii(host) : std::nullopt;
  if (!ascii) {
    r.fail(key, "\"" + unicode::visible(host, 80) + "\" is not a valid host name");
  }
  return text.substr(0, start) + *ascii + (end == std::string::npos ? "" : text.substr(end));
}

/// The origin of `text` as a browser sends it in Origin: the scheme and host in lower case, the
/// host in ASCII, the port only when it is not the scheme's default.
std::string publicUrl(const TableReader& r, const std::string& text) {
  const std::string ascii = withAsciiHost(r, "public_url", text);
  const boost::urls::url_view u = absoluteUrl(r, "public_url", ascii);
  if (!u.encoded_path().empty() && u.encoded_path() != "/") {
    r.fail("public_url", "must be an origin (scheme, host and port) without a path, not \"" +
                             text::printable(u.encoded_path(), 80) +
                             "\" (the console is served under /console of that origin)");
  }
  const bool https = u.scheme_id() == boost::urls::scheme::https;
  const std::string scheme = https ? "https" : "http";
  std::string host = text::lowerAscii(u.encoded_host());
  if (u.host_type() == boost::urls::host_type::name) {
    const std::optional<std::string> name = unicode::hostToAscii(u.host());
    if (!name) {
      r.fail("public_url",
             "\"" + text::printable(u.encoded_host(), 80) + "\" is not a valid host name");
    }
    host = *name;
  }
  std::string origin = scheme + "://" + host;
  if (u.has_port() && !u.port().empty()) {
    const std::string_view digits = u.port();
    unsigned port = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (error != std::errc{} || end != digits.data() + digits.size() || port == 0 ||
        port > kMaxPort) {
      r.fail("public_url", "the port must be from 1 to 65535");
    }
    if (port != (https ? kHttpsPort : kHttpPort)) {
      origin += ":" + std::to_string(port);
    }
  }
  return origin;
}

Oidc parseOidc(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"issuer", "client_id", "client_secret"});
  Oidc o;
  o.issuer = r.string("issuer").value_or("");
  if (o.issuer.empty()) {
    r.fail("issuer", "is required: the provider's issuer URL");
  }
  const boost::urls::url_view u = absoluteUrl(r, "issuer", o.issuer);
  if (u.scheme_id() == boost::urls::scheme::http && !isLoopbackHost(u.encoded_host())) {
    r.fail("issuer", "must be https (http only for a provider on this machine's loopback)");
  }
  o.client_id = r.string("client_id").value_or("");
  if (o.client_id.empty() || text::hasControlCharacters(o.client_id)) {
    r.fail("client_id", "is required: the client id the provider registered for Tollgate");
  }
  o.client_secret = envSecret(r, "client_secret", env);
  if (o.client_secret.empty()) {
    r.fail("client_secret", "is required (write env::VARIABLE_NAME)");
  }
  return o;
}

}  // namespace

std::string listenAddress(const Gateway& g) {
  const bool v6 = g.host.find(':') != std::string::npos;
  return (v6 ? "[" + g.host + "]" : g.host) + ":" + std::to_string(g.port);
}

std::string consoleOrigin(const Config& c) {
  if (!c.console.public_url.empty()) {
    return c.console.public_url;
  }
  if (c.console.ownListener()) {
    Gateway own;
    own.host = c.console.host;
    own.port = c.console.port;
    return "http://" + listenAddress(own);
  }
  return "http://" + listenAddress(c.gateway);
}

bool isLoopbackHost(std::string_view host) {
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]";
}

Console parseConsole(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"enabled", "listen", "public_url", "owner_email", "allow_signup",
               "allowed_email_domains", "login_links", "session_idle_seconds",
               "session_lifetime_seconds", "max_teams_per_user", "oidc"});
  Console c;
  c.enabled = r.boolean("enabled").value_or(true);
  parseListen(r, c.host, c.port);
  if (const auto url = r.string("public_url")) {
    c.public_url = publicUrl(r, *url);
  }
  if (const auto owner = r.string("owner_email")) {
    const std::size_t at = owner->find('@');
    if (at == 0 || at == std::string::npos || at + 1 == owner->size() ||
        owner->find_first_of(" \t\r\n") != std::string::npos || owner->size() > 254) {
      r.fail("owner_email", "must be an email address");
    }
    c.owner_email = text::lowerAscii(*owner);
  }
  c.allow_signup = r.boolean("allow_signup").value_or(false);
  for (const std::string& d :
       r.strings("allowed_email_domains").value_or(std::vector<std::string>{})) {
    if (d.empty() || d.find_first_of("@ /:\t") != std::string::npos || d.size() > 253) {
      r.fail("allowed_email_domains", "\"" + text::printable(d, 80) + "\" is not a domain");
    }
    c.allowed_email_domains.push_back(text::lowerAscii(d));
  }
  if (const auto idle = r.integer("session_idle_seconds", 1, kMaxSessionSeconds)) {
    c.session_idle = Millis(*idle * 1000);
  }
  if (const auto life = r.integer("session_lifetime_seconds", 1, kMaxSessionSeconds)) {
    c.session_lifetime = Millis(*life * 1000);
  }
  if (const auto teams = r.integer("max_teams_per_user", 0, kMaxTeamsPerUser)) {
    c.max_teams_per_user = *teams;
  }
  if (const toml::table* o = r.table("oidc")) {
    c.oidc = parseOidc(TableReader(*o, r.qualified("oidc"), r.file()), env);
    if (c.public_url.empty()) {
      r.fail("public_url",
             "is required with [console.oidc]: the provider redirects browsers there");
    }
  }
  c.login_links = r.boolean("login_links").value_or(!c.oidc.has_value());
  return c;
}

}  // namespace tollgate::config
