#include "config/config.hpp"

#include <arpa/inet.h>
#include <openssl/sha.h>
#include <rapidjson/document.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "config/alerts_config.hpp"
#include "config/console_config.hpp"
#include "config/limits_config.hpp"
#include "config/price_config.hpp"
#include "config/provider_config.hpp"
#include "config/routing_config.hpp"
#include "config/table_reader.hpp"
#include "config/telemetry_config.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::config {
namespace {

constexpr std::int64_t kMaxWorkers = 256;

/// A port of 1 to 5 ASCII digits (no sign, no spaces) within [min, 65535].
std::optional<std::uint16_t> parsePort(std::string_view text, long min) {
  constexpr long kMaxPort = 65535;
  constexpr std::size_t kMaxDigits = 5;
  if (text.empty() || text.size() > kMaxDigits ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  const long value = std::stol(std::string(text));
  if (value < min || value > kMaxPort) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

bool isIpAddress(const std::string& host, int family) {
  std::array<unsigned char, sizeof(in6_addr)> out{};
  return inet_pton(family, host.c_str(), out.data()) == 1;
}

/// `HOST:PORT` where HOST is an IPv4 address, an IPv6 address in brackets, or `localhost`; the
/// result is exactly what the listener binds, so serve can never refuse what this accepted.
void parseListenKey(const TableReader& r, std::string& out_host, std::uint16_t& out_port) {
  const auto listen = r.string("listen");
  if (!listen) {
    return;
  }
  const std::size_t colon = listen->rfind(':');
  if (colon == std::string::npos || colon == 0) {
    r.fail("listen", "must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080");
  }
  std::string host = listen->substr(0, colon);
  const auto port = parsePort(std::string_view(*listen).substr(colon + 1), 0);
  if (!port) {
    r.fail("listen", "port must be a number from 0 to 65535 (0 picks a free port)");
  }
  if (host == "localhost") {
    host = "127.0.0.1";
  } else if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (!isIpAddress(host, AF_INET6)) {
      r.fail("listen", "\"" + host + "\" is not an IPv6 address");
    }
  } else if (!isIpAddress(host, AF_INET)) {
    r.fail("listen",
           "host must be an IPv4 address, an IPv6 address in brackets, or localhost, not \"" +
               host + "\"");
  }
  out_host = host;
  out_port = *port;
}

Gateway parseGateway(const TableReader& r) {
  r.allowOnly({"listen", "auth", "open_team", "allow_dryrun", "workers", "max_header_bytes",
               "max_body_bytes", "max_upload_bytes", "header_timeout_ms", "body_timeout_ms",
               "idle_timeout_ms", "shutdown_timeout_ms", "trusted_proxies", "lease_ms"});
  Gateway g;
  parseListenKey(r, g.host, g.port);
  if (const auto auth = r.string("auth")) {
    if (*auth == "open") {
      g.auth = AuthMode::Open;
    } else if (*auth != "required") {
      r.fail("auth", "must be \"required\" (every /v1 request needs an API key) or \"open\"");
    }
  }
  g.open_team = r.string("open_team").value_or("");
  if (!g.open_team.empty() && g.auth != AuthMode::Open) {
    r.fail("open_team", "applies only with auth = \"open\" (keys name their team otherwise)");
  }
  g.allow_dryrun = r.boolean("allow_dryrun").value_or(true);
  g.workers = static_cast<unsigned>(r.integer("workers", 0, kMaxWorkers).value_or(0));
  constexpr std::int64_t kMinHeader = 1024;
  constexpr std::int64_t kMaxHeader = 1024 * 1024;
  constexpr std::int64_t kMaxBody = 1024LL * 1024 * 1024;
  g.max_header_bytes = static_cast<std::size_t>(
      r.integer("max_header_bytes", kMinHeader, kMaxHeader).value_or(g.max_header_bytes));
  g.max_body_bytes =
      static_cast<std::size_t>(r.integer("max_body_bytes", 1, kMaxBody).value_or(g.max_body_bytes));
  g.max_upload_bytes = static_cast<std::size_t>(
      r.integer("max_upload_bytes", 1, kMaxBody).value_or(g.max_upload_bytes));
  g.header_timeout = r.millis("header_timeout_ms", g.header_timeout);
  g.body_timeout = r.millis("body_timeout_ms", g.body_timeout);
  g.idle_timeout = r.millis("idle_timeout_ms", g.idle_timeout);
  g.shutdown_timeout = r.millis("shutdown_timeout_ms", g.shutdown_timeout);
  for (const std::string& range :
       r.strings("trusted_proxies").value_or(std::vector<std::string>{})) {
    const auto cidr = address::parseCidr(range);
    if (!cidr) {
      r.fail("trusted_proxies", "\"" + text::printable(range, 64) +
                                    "\" is not an address or a range such as 10.0.0.0/8 (its "
                                    "bits past the prefix zero)");
    }
    g.trusted_proxies.push_back(*cidr);
  }
  // At most 8 s: a gateway silent for 10 s has its holds reclaimed, which must come after its
  // lease ran out (docs/billing.md).
  constexpr std::int64_t kMinLeaseMs = 500;
  constexpr std::int64_t kMaxLeaseMs = 8'000;
  g.lease = Millis(r.integer("lease_ms", kMinLeaseMs, kMaxLeaseMs).value_or(g.lease.count()));
  return g;
}

}  // namespace

bool hasControlOrSpace(std::string_view text) {
  constexpr unsigned char kDelete = 0x7f;
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= ' ' || u == kDelete;
  });
}

namespace {

bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool isAsciiHexDigit(char c) {
  return isAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// A label the system resolver reads as a number (decimal, or hex with 0x), so that a name ending
/// in it is taken as a shorthand IPv4 address: 127.1 and 0x7f000001 both reach 127.0.0.1.
bool isNumericLabel(std::string_view label) {
  if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
    return std::all_of(label.begin() + 2, label.end(), isAsciiHexDigit);
  }
  return std::all_of(label.begin(), label.end(), isAsciiDigit);
}

/// A host name as DNS has them: ASCII letters, digits and hyphens in dot-separated labels of 1 to
/// 63 characters, none starting or ending with a hyphen, 253 characters at most in all.
bool isHostName(std::string_view name) {
  constexpr std::size_t kMaxName = 253;
  constexpr std::size_t kMaxLabel = 63;
  if (name.empty() || name.size() > kMaxName) {
    return false;
  }
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > kMaxLabel || label.front() == '-' || label.back() == '-' ||
        !std::all_of(label.begin(), label.end(),
                     [](char c) { return text::isAsciiAlnum(c) || c == '-'; })) {
      return false;
    }
    start = dot + 1;
  }
  return true;
}

}  // namespace

void parseListen(const TableReader& r, std::string& host, std::uint16_t& port) {
  parseListenKey(r, host, port);
}

UpstreamUrl parseHttpUrl(const TableReader& r, std::string_view key, const std::string& text) {
  if (hasControlOrSpace(text)) {
    r.fail(key, "must not contain spaces or control characters");
  }
  const auto parsed = boost::urls::parse_uri(text);
  if (!parsed) {
    r.fail(key, "is not a valid URL (" + parsed.error().message() + ")");
  }
  const boost::urls::url_view u = *parsed;
  UpstreamUrl url;
  if (u.scheme_id() == boost::urls::scheme::https) {
    url.tls = true;
  } else if (u.scheme_id() != boost::urls::scheme::http) {
    r.fail(key, "must start with http:// or https://");
  }
  if (u.has_userinfo() || u.has_query() || u.has_fragment()) {
    r.fail(key, "must not carry credentials, a query or a fragment");
  }
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
    case boost::urls::host_type::ipv6:
      url.host = u.encoded_host_address();  // Without brackets: the request head adds them.
      break;
    case boost::urls::host_type::name: {
      const std::string_view name = u.encoded_host();
      if (!isHostName(name)) {
        r.fail(key, "host must be an ASCII host name (letters, digits, hyphens, dots)");
      }
      if (isNumericLabel(name.substr(name.rfind('.') + 1))) {
        r.fail(key, "host \"" + std::string(name) +
                        "\" ends in a number but is not an IPv4 address (write a.b.c.d)");
      }
      url.host = name;
      break;
    }
    default:
      r.fail(key, "must name a host");
  }
  if (u.has_port()) {
    const auto port = parsePort(u.port(), 1);
    if (!port) {
      r.fail(key, "port must be a number from 1 to 65535");
    }
    url.port = std::to_string(*port);  // 080 connects to 80: write it as such in Host too.
  } else {
    url.port = url.tls ? "443" : "80";
  }
  // Segments as the upstream decodes them: an encoded slash splits a segment for some servers
  // and not others, and a dot segment is removed by some and passed on by others.
  for (const std::string segment : u.segments()) {
    if (segment.find_first_of("/\\") != std::string::npos) {
      r.fail(key, "path must not contain percent-encoded slashes");
    }
    if (segment == "." || segment == "..") {
      r.fail(key, "path must not contain . or .. segments");
    }
  }
  std::string_view path = u.encoded_path();
  while (path.ends_with('/')) {
    path.remove_suffix(1);
  }
  url.path = path;
  return url;
}

bool isLoopbackUrlHost(const std::string& host) {
  if (host == "localhost") {
    return true;
  }
  const auto ip = address::parseIp(host);
  if (!ip) {
    return false;
  }
  for (const std::string_view range : {"127.0.0.0/8", "::1/128"}) {
    if (address::contains(*address::parseCidr(range), *ip)) {
      return true;
    }
  }
  return false;
}

std::string envSecret(const TableReader& r, std::string_view key, const EnvLookup& env) {
  const auto ref = r.string(key);
  if (!ref) {
    return {};
  }
  if (!ref->starts_with(kEnvPrefix) || ref->size() == kEnvPrefix.size()) {
    r.fail(key, "secrets come from the environment: write env::VARIABLE_NAME");
  }
  const std::string var = ref->substr(kEnvPrefix.size());
  const auto value = env(var);
  if (!value || value->empty()) {
    r.fail(key, "environment variable " + var + " is not set");
  }
  if (hasControlOrSpace(*value)) {
    r.fail(key, "environment variable " + var + " contains spaces or control characters");
  }
  return *value;
}

namespace {

Storage parseStorage(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"url", "server_secret", "spend_retention_days", "audit_retention_days"});
  Storage st;
  st.url = r.string("url").value_or("");
  const std::string_view url = st.url;
  if (url.starts_with("sqlite://")) {
    if (url.size() == std::string_view("sqlite://").size()) {
      r.fail("url", "sqlite:// needs a file path, e.g. sqlite://tollgate.db");
    }
  } else if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed) {
      r.fail("url", "is not a valid postgresql:// URL");
    }
    if (parsed->has_password() || url.find("password=") != std::string_view::npos) {
      r.fail("url", "must not hold a password: set PGPASSWORD in the environment instead");
    }
  } else if (!url.empty()) {
    r.fail("url", "must start with sqlite:// or postgresql://");
  }
  constexpr std::int64_t kMaxRetentionDays = 36'500;
  st.spend_retention_days = r.integer("spend_retention_days", 0, kMaxRetentionDays).value_or(0);
  st.audit_retention_days = r.integer("audit_retention_days", 0, kMaxRetentionDays).value_or(0);
  st.server_secret = envSecret(r, "server_secret", env);
  constexpr std::size_t kMinSecret = 32;
  if (!st.server_secret.empty() && st.server_secret.size() < kMinSecret) {
    r.fail("server_secret", "must be at least 32 characters (e.g. openssl rand -hex 32)");
  }
  if (st.server_secret.empty() && !url.empty() && !url.starts_with("sqlite://")) {
    r.fail("server_secret", "is required with postgresql (write env::VARIABLE_NAME)");
  }
  return st;
}

Cache parseCache(const TableReader& r) {
  r.allowOnly(
      {"memory_bytes", "team_max_bytes", "retention_seconds", "idempotency_window_seconds"});
  Cache c;
  constexpr std::int64_t kMaxBytes = 1LL << 40;
  constexpr std::int64_t kMaxSeconds = 10LL * 365 * 24 * 3600;
  c.memory_bytes = r.integer("memory_bytes", 0, kMaxBytes).value_or(c.memory_bytes);
  c.team_max_bytes = r.integer("team_max_bytes", 0, kMaxBytes).value_or(c.team_max_bytes);
  c.retention_seconds =
      r.integer("retention_seconds", 1, kMaxSeconds).value_or(c.retention_seconds);
  c.idempotency_window_seconds = r.integer("idempotency_window_seconds", 1, kMaxSeconds)
                                     .value_or(c.idempotency_window_seconds);
  return c;
}

Metrics parseMetrics(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"enabled", "allow", "token", "team_labels", "max_teams"});
  Metrics m;
  m.enabled = r.boolean("enabled").value_or(true);
  for (const std::string& range :
       r.strings("allow").value_or(std::vector<std::string>{"127.0.0.0/8", "::1/128"})) {
    const auto cidr = address::parseCidr(range);
    if (!cidr) {
      r.fail("allow", "\"" + text::printable(range, 64) +
                          "\" is not an address or a range such as 10.0.0.0/8 (its bits past the "
                          "prefix zero)");
    }
    m.allow.push_back(*cidr);
  }
  m.token = envSecret(r, "token", env);
  constexpr std::size_t kMinToken = 16;
  if (!m.token.empty() && m.token.size() < kMinToken) {
    r.fail("token", "must be at least 16 characters (e.g. openssl rand -hex 32)");
  }
  m.team_labels = r.boolean("team_labels").value_or(false);
  constexpr std::int64_t kMaxTeams = 10'000;
  m.max_teams = r.integer("max_teams", 1, kMaxTeams).value_or(m.max_teams);
  return m;
}

/// The table as compact JSON; empty when it cannot be one (nested deeper than json::kMaxDepth).
std::string tableToJson(const toml::table& table) {
  std::ostringstream out;
  out << toml::json_formatter{table};
  rapidjson::Document doc;
  if (json::parse(doc, out.str())) {
    return {};
  }
  return json::serialize(doc);
}

Model parseModel(const TableReader& r, const std::string& id, const EnvLookup& env) {
  std::vector<std::string_view> keys{"display_name",
                                     "owned_by",
                                     "created",
                                     "endpoint",
                                     "is_active",
                                     "security",
                                     "cost_per_audio_second",
                                     "max_audio_seconds",
                                     "max_input_tokens",
                                     "max_output_tokens",
                                     "default_max_tokens",
                                     "input_modalities",
                                     "output_modalities",
                                     "model_info",
                                     "routing",
                                     "providers",
                                     "retries",
                                     "timeouts",
                                     "limits"};
  keys.insert(keys.end(), kPriceKeys.begin(), kPriceKeys.end());
  r.allowOnly(keys);
  Model m;
  m.id = id;
  m.display_name = r.string("display_name").value_or(id);
  m.owned_by = r.string("owned_by").value_or("tollgate");
  m.created = r.integer("created", 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
  if (const auto endpoint = r.string("endpoint")) {
    constexpr std::array kEndpoints{Endpoint::Chat, Endpoint::Embedding, Endpoint::Rerank,
                                    Endpoint::Transcription};
    const auto* found = std::find_if(kEndpoints.begin(), kEndpoints.end(),
                                     [&](Endpoint e) { return endpointName(e) == *endpoint; });
    if (found == kEndpoints.end()) {
      r.fail("endpoint", "must be \"chat\", \"embedding\", \"rerank\" or \"transcription\"");
    }
    m.endpoint = *found;
  }
  m.is_active = r.boolean("is_active").value_or(true);
  for (const std::string& tag : r.strings("security").value_or(std::vector<std::string>{})) {
    if (tag == "tee") {
      m.tee = true;
    } else if (tag == "zdr") {
      m.zdr = true;
    } else {
      r.fail("security", "tags must be \"tee\" or \"zdr\", not \"" + tag + "\"");
    }
  }
  m.prices = parsePrices(r);
  m.cost_per_audio_second = r.usd("cost_per_audio_second").value_or(0);
  if (m.cost_per_audio_second != 0 && m.endpoint != Endpoint::Transcription) {
    r.fail("cost_per_audio_second", "applies only to endpoint = \"transcription\"");
  }
  if (const auto s = r.integer("max_audio_seconds", 1, std::numeric_limits<std::int32_t>::max())) {
    if (m.endpoint != Endpoint::Transcription) {
      r.fail("max_audio_seconds", "applies only to endpoint = \"transcription\"");
    }
    m.max_audio_seconds = *s;
  }
  constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
  m.max_input_tokens = r.integer("max_input_tokens", 0, kMaxTokens).value_or(0);
  m.max_output_tokens = r.integer("max_output_tokens", 0, kMaxTokens).value_or(0);
  m.default_max_tokens = m.max_output_tokens > 0 ? m.max_output_tokens : kDefaultMaxTokens;
  if (const auto d = r.integer("default_max_tokens", 1, kMaxTokens)) {
    if (m.endpoint != Endpoint::Chat) {
      r.fail("default_max_tokens", "applies only to chat models");
    }
    if (m.max_output_tokens > 0 && *d > m.max_output_tokens) {
      r.fail("default_max_tokens",
             "must not exceed max_output_tokens (" + std::to_string(m.max_output_tokens) + ")");
    }
    m.default_max_tokens = *d;
  }
  m.input_modalities = r.strings("input_modalities").value_or(m.input_modalities);
  m.output_modalities = r.strings("output_modalities").value_or(m.output_modalities);
  if (const toml::table* info = r.table("model_info")) {
    m.model_info_json = tableToJson(*info);
    if (m.model_info_json.empty()) {
      r.fail("model_info", "nests deeper than " + std::to_string(json::kMaxDepth) + " levels");
    }
  }

  m.retries = parseRetries(r, m.retries);
  m.timeouts = parseTimeouts(r, m.timeouts);
  if (const toml::table* limits = r.table("limits")) {
    m.limits = parseLimits(TableReader(*limits, r.qualified("limits"), r.file()), false);
  }
  const auto routing = r.strings("routing");
  if (!routing || routing->empty()) {
    r.fail("routing", "is required: the provider names, in the order to try them");
  }
  const toml::table* providers = r.table("providers");
  if (providers == nullptr) {
    r.fail("providers", "is required: at least one [models." + id + ".providers.NAME] table");
  }
  const TableReader pr(*providers, r.qualified("providers"), r.file());
  for (const auto& [name, node] : *providers) {
    if (!node.is_table()) {
      pr.fail(name.str(), "must be a table");
    }
    if (std::find(routing->begin(), routing->end(), name.str()) == routing->end()) {
      pr.fail(name.str(), "is not listed in routing");
    }
  }
  for (const std::string& name : *routing) {
    if (std::count(routing->begin(), routing->end(), name) > 1) {
      r.fail("routing", "lists \"" + name + "\" twice");
    }
    const toml::table* t = pr.table(name);
    if (t == nullptr) {
      r.fail("routing", "names provider \"" + name + "\", which has no table");
    }
    m.providers.push_back(parseProvider(TableReader(*t, pr.qualified(name), r.file()), name, env));
    m.providers.back().max_output_tokens = m.max_output_tokens;
    m.providers.back().default_max_tokens = m.default_max_tokens;
  }
  return m;
}

/// The first 16 hex digits of the SHA-256 of `bytes`.
std::string sha256Prefix(std::string_view bytes) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  constexpr std::size_t kHexDigits = 16;
  return text::hex(std::span(digest).first(kHexDigits / 2));
}

}  // namespace

std::int64_t outputTokenLimit(std::optional<std::int64_t> requested, std::int64_t max_output_tokens,
                              std::int64_t default_max_tokens) {
  const std::int64_t limit = requested.value_or(default_max_tokens);
  return max_output_tokens > 0 ? std::min(limit, max_output_tokens) : limit;
}

std::vector<std::string> providerSecrets(const std::vector<Model>& models) {
  std::vector<std::string> secrets;
  for (const Model& m : models) {
    for (const Provider& p : m.providers) {
      for (const std::string* secret :
           {&p.api_key, &p.aws.secret_access_key, &p.aws.session_token}) {
        if (secret->size() >= kMinSecretBytes &&
            std::find(secrets.begin(), secrets.end(), *secret) == secrets.end()) {
          secrets.push_back(*secret);
        }
      }
    }
  }
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return secrets;
}

ConfigError::ConfigError(std::string file, std::string key, std::string reason)
    : std::runtime_error(file + ": " + key + ": " + reason),
      file_(std::move(file)),
      key_(std::move(key)),
      reason_(std::move(reason)) {}

std::string_view endpointName(Endpoint e) {
  switch (e) {
    case Endpoint::Chat:
      return "chat";
    case Endpoint::Embedding:
      return "embedding";
    case Endpoint::Rerank:
      return "rerank";
    case Endpoint::Transcription:
      return "transcription";
  }
  return "chat";
}

const Model* Config::findModel(std::string_view id) const {
  const auto it = std::lower_bound(models.begin(), models.end(), id,
                                   [](const Model& m, std::string_view v) { return m.id < v; });
  return it != models.end() && it->id == id ? &*it : nullptr;
}

const Function* Config::findFunction(std::string_view name) const {
  const auto it =
      std::lower_bound(functions.begin(), functions.end(), name,
                       [](const Function& f, std::string_view v) { return f.name < v; });
  return it != functions.end() && it->name == name ? &*it : nullptr;
}

const Variant* Function::findVariant(std::string_view name) const {
  const auto it = std::lower_bound(variants.begin(), variants.end(), name,
                                   [](const Variant& v, std::string_view n) { return v.name < n; });
  return it != variants.end() && it->name == name ? &*it : nullptr;
}

std::optional<std::string> processEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

bool isModelId(std::string_view id) {
  if (id.empty() || id.front() == '_' || id.back() == '_') {
    return false;
  }
  char previous = 0;
  for (const char c : id) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!word && !(c == '_' && previous != '_')) {
      return false;
    }
    previous = c;
  }
  return true;
}

Config parseConfig(std::string_view toml, const std::string& source, const EnvLookup& env) {
  toml::table root;
  try {
    root = toml::parse(toml, source);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(source, "line " + std::to_string(where.line), std::string(e.description()));
  }
  const TableReader r(root, "", source);
  r.allowOnly({"gateway", "storage", "cache", "console", "traces", "alerts", "log", "metrics",
               "limits", "models", "functions"});
  Config config;
  if (const toml::table* g = r.table("gateway")) {
    config.gateway = parseGateway(TableReader(*g, "gateway", source));
  }
  if (const toml::table* st = r.table("storage")) {
    config.storage = parseStorage(TableReader(*st, "storage", source), env);
  }
  if (const toml::table* c = r.table("cache")) {
    config.cache = parseCache(TableReader(*c, "cache", source));
  }
  if (const toml::table* m = r.table("metrics")) {
    config.metrics = parseMetrics(TableReader(*m, "metrics", source), env);
  } else {
    config.metrics = parseMetrics(TableReader(toml::table{}, "metrics", source), env);
  }
  if (const toml::table* c = r.table("console")) {
    config.console = parseConsole(TableReader(*c, "console", source), env);
    if (config.console.ownListener() && config.console.port != 0 &&
        config.console.port == config.gateway.port && config.console.host == config.gateway.host) {
      TableReader(*c, "console", source).fail("listen", "must differ from [gateway] listen");
    }
  }
  if (const toml::table* t = r.table("traces")) {
    config.traces = parseTraces(TableReader(*t, "traces", source), env);
  }
  if (const toml::table* l = r.table("limits")) {
    config.limits = parseLimitDefaults(TableReader(*l, "limits", source));
  }
  if (const toml::table* a = r.table("alerts")) {
    config.alerts = parseAlerts(TableReader(*a, "alerts", source), env);
  }
  if (const toml::table* l = r.table("log")) {
    config.log = parseLog(TableReader(*l, "log", source));
  }
  const toml::table* models = r.table("models");
  if (models == nullptr || models->empty()) {
    r.fail("models", "at least one model is required");
  }
  const TableReader mr(*models, "models", source);
  for (const auto& [id, node] : *models) {
    if (!isModelId(id.str())) {
      mr.fail(id.str(), "model ids are lowercase words joined by underscores, e.g. gpt_4o_mini");
    }
    if (!node.is_table()) {
      mr.fail(id.str(), "must be a table");
    }
    config.models.push_back(parseModel(
        TableReader(*node.as_table(), mr.qualified(id.str()), source), std::string(id.str()), env));
  }
  std::sort(config.models.begin(), config.models.end(),
            [](const Model& a, const Model& b) { return a.id < b.id; });
  if (const toml::table* functions = r.table("functions")) {
    config.functions = parseFunctions(TableReader(*functions, "functions", source), config.models);
  }
  config.provider_secrets = providerSecrets(config.models);
  return config;
}

Config loadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path, "file", "cannot be read");
  }
  std::ostringstream text;
  text << in.rdbuf();
  Config config = parseConfig(text.str(), path);
  config.source_file = path;
  config.hash = sha256Prefix(text.str());
  const std::size_t slash = path.rfind('/');
  config.source_dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  return config;
}

}  // namespace tollgate::config
