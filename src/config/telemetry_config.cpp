#include "config/telemetry_config.hpp"

#include <algorithm>
#include <array>

#include "core/text.hpp"

namespace tollgate::config {
namespace {

constexpr std::string_view kEnvPrefix = "env::";
constexpr std::string_view kDefaultTracesPath = "/v1/traces";
constexpr std::int64_t kMaxQueueSpans = 1'000'000;
/// Headers the exporter writes itself, or that would change how its request is framed.
constexpr std::array<std::string_view, 6> kReservedHeaders{
    "host", "content-length", "content-type", "transfer-encoding", "connection", "te"};

bool isTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// A header's value, `env::VARIABLE`: the variable's value, not empty, free of control
/// characters and of spaces at either end (inner spaces are allowed: `Bearer TOKEN`).
std::string headerValue(const TableReader& r, std::string_view name, const toml::node& node,
                        const EnvLookup& env) {
  if (!node.is_string()) {
    r.fail(name, "must be a string: env::VARIABLE_NAME");
  }
  const std::string& ref = node.as_string()->get();
  if (!ref.starts_with(kEnvPrefix) || ref.size() == kEnvPrefix.size()) {
    r.fail(name, "header values are secrets from the environment: write env::VARIABLE_NAME");
  }
  const std::string var = ref.substr(kEnvPrefix.size());
  const auto value = env(var);
  if (!value || value->empty()) {
    r.fail(name, "environment variable " + var + " is not set");
  }
  const bool control = std::any_of(value->begin(), value->end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (control || value->front() == ' ' || value->back() == ' ') {
    r.fail(name,
           "environment variable " + var + " contains control characters or spaces at either end");
  }
  return *value;
}

std::vector<std::pair<std::string, std::string>> parseHeaders(const TableReader& r,
                                                              const EnvLookup& env) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [key, node] : r.table()) {
    const std::string_view name = key.str();
    if (name.empty() || !std::all_of(name.begin(), name.end(), isTokenChar)) {
      r.fail(name, "is not a header name");
    }
    const std::string lower = text::lowerAscii(name);
    if (std::find(kReservedHeaders.begin(), kReservedHeaders.end(), lower) !=
        kReservedHeaders.end()) {
      r.fail(name, "is set by the exporter itself");
    }
    headers.emplace_back(std::string(name), headerValue(r, name, node, env));
  }
  return headers;
}

}  // namespace

Traces parseTraces(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"endpoint", "headers", "sample_ratio", "max_queue_spans"});
  Traces t;
  if (const auto text = r.string("endpoint")) {
    UpstreamUrl url = parseHttpUrl(r, "endpoint", *text);
    if (!url.tls && !isLoopbackUrlHost(url.host)) {
      r.fail("endpoint", "must be https (http only for a collector on this machine's loopback)");
    }
    if (url.path.empty()) {
      url.path = kDefaultTracesPath;
    }
    t.endpoint = std::move(url);
  }
  if (const toml::table* h = r.table("headers")) {
    if (!t.endpoint) {
      r.fail("headers", "needs an endpoint to send them to");
    }
    t.headers = parseHeaders(TableReader(*h, r.qualified("headers"), r.file()), env);
  }
  t.sample_ratio = r.numberIn("sample_ratio", 0.0, 1.0).value_or(t.sample_ratio);
  t.max_queue_spans = r.integer("max_queue_spans", 1, kMaxQueueSpans).value_or(t.max_queue_spans);
  return t;
}

Log parseLog(const TableReader& r) {
  r.allowOnly({"format"});
  Log l;
  if (const auto format = r.string("format")) {
    if (*format == "json") {
      l.format = LogFormat::Json;
    } else if (*format != "text") {
      r.fail("format", "must be \"text\" or \"json\"");
    }
  }
  return l;
}

}  // namespace tollgate::config
