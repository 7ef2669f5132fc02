#include "config/provider_config.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "config/routing_config.hpp"

namespace tollgate::config {
namespace {

constexpr std::string_view kAnthropicApiBase = "https://api.anthropic.com/v1";
constexpr std::string_view kAnthropicVersion = "2023-06-01";
constexpr std::string_view kGeminiApiBase = "https://generativelanguage.googleapis.com/v1beta";
constexpr std::string_view kTypesText =
    R"("openai", "anthropic", "azure", "gemini", "bedrock" or "dummy")";

constexpr std::array<std::pair<std::string_view, ProviderType>, 6> kTypes{{
    {"openai", ProviderType::OpenAI},
    {"anthropic", ProviderType::Anthropic},
    {"azure", ProviderType::Azure},
    {"gemini", ProviderType::Gemini},
    {"bedrock", ProviderType::Bedrock},
    {"dummy", ProviderType::Dummy},
}};

/// Keys only some types take, and those types.
struct TypeKeys {
  std::string_view key;
  std::initializer_list<ProviderType> types;
};
const std::array<TypeKeys, 7> kTypeKeys{{
    {"api_version", {ProviderType::Anthropic, ProviderType::Azure}},
    {"region", {ProviderType::Bedrock}},
    {"access_key_id", {ProviderType::Bedrock}},
    {"secret_access_key", {ProviderType::Bedrock}},
    {"session_token", {ProviderType::Bedrock}},
    {"credentials_file", {ProviderType::Bedrock}},
    {"profile", {ProviderType::Bedrock}},
}};

std::string_view typeName(ProviderType type) {
  for (const auto& [name, t] : kTypes) {
    if (t == type) {
      return name;
    }
  }
  return "dummy";
}

/// Refuses the keys of other types, naming the types they apply to.
void refuseOtherTypesKeys(const TableReader& r, ProviderType type) {
  for (const TypeKeys& k : kTypeKeys) {
    if (r.find(k.key) == nullptr ||
        std::find(k.types.begin(), k.types.end(), type) != k.types.end()) {
      continue;
    }
    std::string types;
    for (const ProviderType t : k.types) {
      types += (types.empty() ? "\"" : " and \"") + std::string(typeName(t)) + "\"";
    }
    r.fail(k.key, "applies only to type " + types);
  }
}

/// A version string sent in a header or a query parameter: no spaces, nothing to escape.
std::string versionOf(const TableReader& r, std::optional<std::string> text,
                      std::string_view what) {
  const std::string v = text.value_or("");
  const bool plain = std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
           c == '.' || c == '_';
  });
  if (v.empty() || !plain) {
    r.fail("api_version", "must be " + std::string(what));
  }
  return v;
}

/// A Bedrock region: lower-case letters, digits and dashes (e.g. us-east-1).
bool isRegion(std::string_view region) {
  return !region.empty() && region.size() <= 32 &&
         std::all_of(region.begin(), region.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
         });
}

/// The region of a Bedrock runtime host (bedrock-runtime.REGION.amazonaws.com); empty for another.
std::string regionOfHost(std::string_view host) {
  constexpr std::string_view kPrefix = "bedrock-runtime.";
  constexpr std::string_view kSuffix = ".amazonaws.com";
  if (!host.starts_with(kPrefix) || !host.ends_with(kSuffix) ||
      host.size() <= kPrefix.size() + kSuffix.size()) {
    return {};
  }
  return std::string(host.substr(kPrefix.size(), host.size() - kPrefix.size() - kSuffix.size()));
}

/// A value written plainly or as env::VARIABLE.
std::string plainOrEnv(const TableReader& r, std::string_view key, const EnvLookup& env) {
  const auto text = r.string(key);
  if (!text) {
    return {};
  }
  if (text->starts_with(kEnvPrefix)) {
    return envSecret(r, key, env);
  }
  if (text->empty() || hasControlOrSpace(*text)) {
    r.fail(key, "must not be empty or hold spaces or control characters");
  }
  return *text;
}

void readBedrock(const TableReader& r, Provider& p, const EnvLookup& env) {
  const auto region = r.string("region");
  if (region && !isRegion(*region)) {
    r.fail("region", "must be an AWS region such as \"us-east-1\"");
  }
  const auto base = r.string("api_base");
  if (!region && !base) {
    r.fail("region", "is required for type \"bedrock\" (or an api_base)");
  }
  p.api_base = parseHttpUrl(
      r, "api_base",
      base.value_or("https://bedrock-runtime." + region.value_or("") + ".amazonaws.com"));
  p.region = region ? *region : regionOfHost(p.api_base.host);
  AwsCredentials& aws = p.aws;
  aws.access_key_id = plainOrEnv(r, "access_key_id", env);
  aws.secret_access_key = envSecret(r, "secret_access_key", env);
  aws.session_token = envSecret(r, "session_token", env);
  aws.credentials_file = r.string("credentials_file").value_or("");
  const bool keys =
      !aws.access_key_id.empty() || !aws.secret_access_key.empty() || !aws.session_token.empty();
  const bool file = r.find("credentials_file") != nullptr;
  const bool bearer = r.find("api_key") != nullptr;
  if (keys + file + bearer != 1) {
    r.fail(bearer ? "api_key"
           : file ? "credentials_file"
                  : "access_key_id",
           "a bedrock provider takes one kind of credentials: access_key_id and "
           "secret_access_key (and session_token), or credentials_file, or api_key");
  }
  if (keys && (aws.access_key_id.empty() || aws.secret_access_key.empty())) {
    r.fail(aws.access_key_id.empty() ? "access_key_id" : "secret_access_key",
           "is required with the other (access_key_id and secret_access_key sign together)");
  }
  if (file && aws.credentials_file.empty()) {
    r.fail("credentials_file", "must name a file in AWS's shared-credentials format");
  }
  if (r.find("profile") != nullptr) {
    if (!file) {
      r.fail("profile", "applies only with credentials_file");
    }
    aws.profile = r.string("profile").value_or("");
    if (aws.profile.empty() || hasControlOrSpace(aws.profile)) {
      r.fail("profile", "must name a section of the credentials file");
    }
  }
  if (!bearer && p.region.empty()) {
    r.fail("region", "is required to sign requests when api_base is not an AWS host");
  }
}

}  // namespace

Provider parseProvider(const TableReader& r, const std::string& name, const EnvLookup& env) {
  r.allowOnly({"type", "api_base", "model", "api_key", "api_version", "region", "access_key_id",
               "secret_access_key", "session_token", "credentials_file", "profile",
               "connect_timeout_ms", "first_byte_timeout_ms", "total_timeout_ms",
               "pool_idle_timeout_ms", "circuit_breaker"});
  Provider p;
  p.name = name;
  const auto type = r.string("type");
  const auto* known = std::find_if(kTypes.begin(), kTypes.end(),
                                   [&](const auto& t) { return type && t.first == *type; });
  if (known == kTypes.end()) {
    r.fail("type",
           (type ? "must be " : "is required (") + std::string(kTypesText) + (type ? "" : ")"));
  }
  p.type = known->second;
  refuseOtherTypesKeys(r, p.type);
  if (p.type == ProviderType::Dummy) {
    for (std::string_view k : {"api_base", "api_key", "pool_idle_timeout_ms"}) {
      if (r.find(k) != nullptr) {
        r.fail(k, "is not used by type \"dummy\"");
      }
    }
    p.model = r.string("model").value_or("echo");
  } else {
    const auto base = r.string("api_base");
    if (!base && (p.type == ProviderType::OpenAI || p.type == ProviderType::Azure)) {
      r.fail("api_base", "is required for type \"" + *type + "\"");
    }
    if (p.type == ProviderType::Bedrock) {
      readBedrock(r, p, env);
    } else {
      p.api_base = parseHttpUrl(
          r, "api_base",
          base.value_or(
              std::string(p.type == ProviderType::Gemini ? kGeminiApiBase : kAnthropicApiBase)));
    }
    const auto model = r.string("model");
    if (!model || model->empty()) {
      r.fail("model", "is required for type \"" + *type + "\" (the upstream's model name)");
    }
    p.model = *model;
  }
  if (p.type == ProviderType::Anthropic) {
    p.api_version = versionOf(r, r.string("api_version").value_or(std::string(kAnthropicVersion)),
                              "a version date such as \"2023-06-01\"");
  } else if (p.type == ProviderType::Azure) {
    if (r.find("api_version") == nullptr) {
      r.fail("api_version", "is required for type \"azure\" (e.g. \"2024-10-21\")");
    }
    p.api_version = versionOf(r, r.string("api_version"), "an API version such as \"2024-10-21\"");
  }
  p.api_key = envSecret(r, "api_key", env);
  p.connect_timeout = r.millis("connect_timeout_ms", p.connect_timeout);
  p.first_byte_timeout = r.millis("first_byte_timeout_ms", p.first_byte_timeout);
  p.total_timeout = r.millis("total_timeout_ms", p.total_timeout);
  p.pool_idle_timeout = r.millis("pool_idle_timeout_ms", p.pool_idle_timeout);
  p.breaker = parseBreaker(r);
  for (const auto& [key, value] : {std::pair{"connect_timeout_ms", p.connect_timeout},
                                   std::pair{"first_byte_timeout_ms", p.first_byte_timeout}}) {
    if (value > p.total_timeout) {
      r.fail(key,
             "must not exceed total_timeout_ms (" + std::to_string(p.total_timeout.count()) + ")");
    }
  }
  return p;
}

}  // namespace tollgate::config
