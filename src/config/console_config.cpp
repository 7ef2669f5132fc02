#include "config/console_config.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "core/text.hpp"

namespace tollgate::config {
namespace {

constexpr std::int64_t kMaxSessionSeconds = 90LL * 24 * 3600;
constexpr std::int64_t kMaxTeamsPerUser = 1'000'000;

/// An absolute http(s) URL without credentials, query or fragment; its scheme and host.
boost::urls::url_view absoluteUrl(const TableReader& r, std::string_view key,
                                  const std::string& text) {
  const auto parsed = boost::urls::parse_absolute_uri(text);
  if (!parsed) {
    r.fail(key, "must be an absolute URL such as https://gateway.example.com");
  }
  const boost::urls::url_view u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https") {
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

std::string publicUrl(const TableReader& r, const std::string& text) {
  const boost::urls::url_view u = absoluteUrl(r, "public_url", text);
  if (!u.encoded_path().empty() && u.encoded_path() != "/") {
    r.fail("public_url", "must be an origin (scheme, host and port) without a path");
  }
  std::string origin = text::lowerAscii(std::string(u.scheme())) + "://" +
                       text::lowerAscii(std::string(u.encoded_host_and_port()));
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
  if (u.scheme() == "http" && !isLoopbackHost(u.encoded_host())) {
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
