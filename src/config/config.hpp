// Typed, validated gateway configuration, loaded from TOML and shared read-only; a reload
// (live_config.hpp) swaps in a new one rather than changing one in place.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/address.hpp"
#include "core/key_rules.hpp"
#include "core/money.hpp"
#include "core/prices.hpp"

namespace tollgate::config {

using Millis = std::chrono::milliseconds;

/// How the gateway treats the Authorization header: "required" (the dev gateway: every /v1
/// request needs a valid key) or "open" (the prod gateway: the header is accepted and ignored).
enum class AuthMode { Required, Open };

enum class ProviderType { OpenAI, Anthropic, Azure, Gemini, Bedrock, Dummy };

/// Amazon Bedrock's credentials (docs/providers.md): keys from the configuration (the secret and
/// the session token from the environment), or a shared-credentials file re-read when it changes.
/// Empty when the provider uses an API key (`api_key`, sent as a bearer token) instead.
struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;        ///< Optional: temporary credentials.
  std::string credentials_file;     ///< AWS's shared-credentials format.
  std::string profile = "default";  ///< The file's section.
};

/// The API a model serves: a request to another endpoint is refused (400 model_wrong_endpoint).
enum class Endpoint { Chat, Embedding, Rerank, Transcription };

/// The name of `e` in config and spend rows: "chat", "embedding", "rerank", "transcription".
std::string_view endpointName(Endpoint e);

/// An upstream base address split into its parts, e.g. https://api.example.com/v1.
struct UpstreamUrl {
  bool tls = false;
  std::string host;
  std::string port;  ///< Decimal, 1 to 65535, e.g. "443".
  std::string path;  ///< Without a trailing slash, e.g. "/v1"; may be empty.

  bool operator==(const UpstreamUrl&) const = default;
};

/// When a provider is skipped: after `failures` consecutive failed attempts it is left alone for
/// `cooldown`, then one probe request is let through (per gateway process). 0 failures: never.
struct BreakerPolicy {
  std::int64_t failures = 5;
  Millis cooldown{30'000};
};

/// Retries of a provider attempt that failed in a way another try can fix (connect failure, 5xx,
/// 429, a timeout before the first byte): up to `num_retries` more tries, after an exponential
/// backoff with full jitter, or the upstream's Retry-After, never longer than `max_delay`.
struct RetryPolicy {
  std::int64_t num_retries = 0;
  Millis max_delay{10'000};
};

/// A model's (or variant's) own time limits, beside each provider's; zero: none. The total one is
/// the deadline of the whole request, across retries and fallbacks.
struct Timeouts {
  Millis non_streaming_total{0};
  Millis streaming_first_token{0};  ///< Until the first event of a stream, per attempt.
  Millis streaming_total{0};
};

/// The output limit of a chat request that sets none, for a model that declares neither
/// `default_max_tokens` nor `max_output_tokens`.
inline constexpr std::int64_t kDefaultMaxTokens = 4096;

/// A transcription model's max_audio_seconds unless configured: an hour.
inline constexpr std::int64_t kDefaultMaxAudioSeconds = 3600;

/// The output limit sent upstream with a chat request that asked for `requested` tokens at most
/// (nullopt: no limit), and so the output side of its hold: `requested`, or with no limit asked
/// for the model's `default_max_tokens`, no more than its `max_output_tokens` when it declares
/// one (> 0). An upstream is never sent a request without a limit.
std::int64_t outputTokenLimit(std::optional<std::int64_t> requested, std::int64_t max_output_tokens,
                              std::int64_t default_max_tokens);

struct Provider {
  std::string name;
  ProviderType type = ProviderType::Dummy;
  UpstreamUrl api_base;
  std::string model;    ///< Name sent upstream.
  std::string api_key;  ///< Resolved from the environment; empty when none.
  /// Anthropic: the `anthropic-version` header sent with every request; Azure: the `api-version`
  /// query parameter.
  std::string api_version;
  /// Bedrock: the region requests are signed for, and the credentials they are signed with.
  std::string region;
  AwsCredentials aws;
  /// The model's output limits (see outputTokenLimit), copied here for the adapters.
  std::int64_t max_output_tokens = 0;
  std::int64_t default_max_tokens = kDefaultMaxTokens;
  Millis connect_timeout{5'000};
  Millis first_byte_timeout{60'000};
  Millis total_timeout{600'000};
  /// How long an idle pooled keep-alive connection may be reused (Node and uvicorn close at 5 s).
  Millis pool_idle_timeout{4'000};
  BreakerPolicy breaker;
};

/// Rate limits of one scope (docs/limits.md); nullopt: not limited.
using Limits = key_rules::RateLimits;

/// [limits.key] and [limits.team]: the limits of every key and every team that has none of its
/// own. Nothing is limited unless configured.
struct LimitDefaults {
  Limits key;
  Limits team;
};

struct Model {
  std::string id;
  std::string display_name;
  std::string owned_by;
  std::int64_t created = 0;
  Endpoint endpoint = Endpoint::Chat;
  bool is_active = true;
  bool tee = false;
  bool zdr = false;
  /// USD per token of each kind, exact: input_cost_per_token and output_cost_per_token, cache,
  /// audio and long-context tiers (config/price_config.hpp).
  money::Prices prices;
  money::Pico cost_per_audio_second = 0;  ///< Transcription models: USD per second of audio.
  /// Transcription models: the most seconds a file is held for when the gateway cannot read its
  /// duration (anything but plain PCM WAV).
  std::int64_t max_audio_seconds = kDefaultMaxAudioSeconds;
  std::int64_t max_input_tokens = 0;
  std::int64_t max_output_tokens = 0;
  /// Chat models: the output limit of a request that sets none (outputTokenLimit).
  std::int64_t default_max_tokens = kDefaultMaxTokens;
  std::vector<std::string> input_modalities{"text"};
  std::vector<std::string> output_modalities{"text"};
  std::string model_info_json = "{}";  ///< Free-form object, as compact JSON.
  std::vector<Provider> providers;     ///< In routing order.
  RetryPolicy retries;
  Timeouts timeouts;
  Limits limits;  ///< The whole fleet's use of the model (rpm, tpm): the provider's quota.
};

/// One way to serve a function: a chat model, the parameters it defaults to (applied when the
/// client did not set them) and an optional system prompt put before the client's messages.
struct Variant {
  std::string name;
  std::string model;  ///< A chat model's id.
  double weight = 0;  ///< Share of new episodes; 0: only when pinned or as a fallback.
  std::string system_prompt;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<double> presence_penalty;
  std::optional<double> frequency_penalty;
  std::optional<std::int64_t> max_tokens;
  std::optional<std::int64_t> seed;
  std::optional<RetryPolicy> retries;  ///< Instead of the model's.
  std::optional<Timeouts> timeouts;    ///< Instead of the model's.
};

/// `tollgate::function_name::NAME`: variants chosen by weight, per episode; `fallback_variants`
/// are tried in order once the weighted candidates have failed.
struct Function {
  std::string name;
  std::vector<Variant> variants;  ///< Sorted by name.
  std::vector<std::string> fallback_variants;

  /// The variant with this name, or nullptr.
  const Variant* findVariant(std::string_view name) const;
};

struct Gateway {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  AuthMode auth = AuthMode::Required;
  /// Open mode: the team every request is billed to; empty: open requests are not billed.
  std::string open_team;
  /// Whether requests may set tollgate::dryrun (admitted as billed ones, nothing charged).
  bool allow_dryrun = true;
  unsigned workers = 0;  ///< 0: one per CPU this process may run on.
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  /// Audio uploads (POST /v1/audio/transcriptions), as OpenAI's limit.
  std::size_t max_upload_bytes = 25 * 1024 * 1024;
  Millis header_timeout{10'000};
  Millis body_timeout{30'000};
  Millis idle_timeout{60'000};
  Millis shutdown_timeout{10'000};
  /// How long one committed heartbeat lets the gateway serve (docs/operating.md: fencing); it
  /// heartbeats every quarter of it.
  Millis lease{2'000};
  /// Proxies whose X-Forwarded-For names a request's source (address::requestSource); empty: a
  /// request's source is its peer.
  std::vector<address::Cidr> trusted_proxies;
};

/// The inference cache (tollgate::cache_options) and Idempotency-Key records.
struct Cache {
  /// What the in-memory front of the cache may hold, in bytes (shared by every team).
  std::int64_t memory_bytes = 64LL * 1024 * 1024;
  /// What one team's entries may take in the store, its oldest going first; and, counted apart,
  /// what its Idempotency-Key answers may take, a new one past it keeping only its charge. 0: no
  /// cap.
  std::int64_t team_max_bytes = 256LL * 1024 * 1024;
  /// Entries older than this are forgotten, and never answered.
  std::int64_t retention_seconds = 7LL * 24 * 3600;
  /// How long an Idempotency-Key's answer is kept for a retry (24 hours, as the IETF draft).
  std::int64_t idempotency_window_seconds = 24LL * 3600;
};

/// Who may read GET /metrics, and which labels its money counters carry (docs/operating.md).
struct Metrics {
  /// Whether exchanges are recorded and GET /metrics is served at all (restart only).
  bool enabled = true;
  /// Sources (the request's source, behind trusted proxies) answered without the token.
  std::vector<address::Cidr> allow;
  /// A bearer token that is answered from any source (a secret from the environment); empty: none.
  std::string token;
  /// Whether the money counters carry a `team` label (the store's team names).
  bool team_labels = false;
  /// The most teams labelled by name; those seen after them are counted as `other`.
  std::int64_t max_teams = 100;
};

/// Where teams, keys and balances live.
struct Storage {
  /// `sqlite://PATH` (relative to the config file's folder) or `postgresql://…` (no password in
  /// it: libpq reads PGPASSWORD); empty: a SQLite file in the data directory.
  std::string url;
  /// The key of the keyed hash of API-key secrets, from the environment; empty: a file made
  /// beside the SQLite database (required with PostgreSQL).
  std::string server_secret;
  /// Raw spend rows older than this many days are deleted (daily aggregates stay); 0: kept.
  std::int64_t spend_retention_days = 0;
  /// Audit rows older than this many days are deleted; 0: kept.
  std::int64_t audit_retention_days = 0;
};

/// Signing in to the console with an OpenID Connect provider.
struct Oidc {
  std::string issuer;  ///< Exactly as the provider's discovery document gives it.
  std::string client_id;
  std::string client_secret;  ///< From the environment.
};

/// The web console: pages under /console/, its JSON API under /console/api/.
struct Console {
  bool enabled = true;
  /// A listener of the console's own (HOST:PORT), so that it can be kept off the inference
  /// port; empty host: served on the gateway's listener beside /v1.
  std::string host;
  std::uint16_t port = 0;
  /// The origin browsers reach the console at ("https://gw.example.com"): what sign-in links,
  /// redirect URIs, the Origin check and the cookie's Secure flag follow. Empty: the listener's
  /// own address over http.
  std::string public_url;
  /// The embedded default's first start makes this user an owner of team `default`.
  std::string owner_email = "owner@localhost";
  /// Anyone the identity provider vouches for may become a user (else: invited or added only).
  bool allow_signup = false;
  /// Only these email domains may sign in with the provider (empty: any).
  std::vector<std::string> allowed_email_domains;
  /// One-time sign-in links (`tollgate admin login-link`); on by default without a provider.
  bool login_links = true;
  Millis session_idle{12LL * 3600 * 1000};
  Millis session_lifetime{7LL * 24 * 3600 * 1000};
  std::optional<Oidc> oidc;
  /// How many teams a user may own and still create another in the console (0: only the
  /// operator creates teams).
  std::int64_t max_teams_per_user = 3;

  /// True when the console is served over https (the cookie is then Secure, __Host- named).
  bool https() const { return public_url.starts_with("https://"); }
  /// True when the console has a listener of its own.
  bool ownListener() const { return !host.empty(); }
};

/// Spans of each exchange sent to an OpenTelemetry collector over OTLP/HTTP in JSON ([traces];
/// docs/operating.md), and how new traces are sampled.
struct Traces {
  /// Where batches are POSTed (https, or http to a loopback address; /v1/traces when the URL
  /// has no path); none: nothing is exported.
  std::optional<UpstreamUrl> endpoint;
  /// Sent with every batch (the collector's credentials): values from the environment.
  std::vector<std::pair<std::string, std::string>> headers;
  /// The share of new traces sampled (a caller's traceparent decides for its own).
  double sample_ratio = 1.0;
  /// Spans waiting to be sent at most; past it new ones are dropped (and counted).
  std::int64_t max_queue_spans = 2048;
};

/// Signed events POSTed to a webhook when a team's balance falls below configured amounts
/// ([alerts]; docs/alerts.md).
struct Alerts {
  /// Where events are POSTed (https, or http to a loopback address); none: no alerts.
  std::optional<UpstreamUrl> webhook_url;
  /// The HMAC-SHA256 key of each event's Tollgate-Signature (from the environment).
  std::string webhook_secret;
  /// Amounts (pico-USD) a balance falling below fires an event for; distinct, largest first.
  std::vector<money::Pico> balance_below;
  /// Fractions of a key's budget (parts per million, 1 to 1,000,000) whose crossing by its spend
  /// in a window fires an event; distinct, smallest first.
  std::vector<std::int64_t> key_budget_ppm;
};

/// How the gateway's stderr lines other than the access log are written ([log] format).
enum class LogFormat { Text, Json };

struct Log {
  LogFormat format = LogFormat::Text;
};

struct Config {
  Gateway gateway;
  Storage storage;
  Cache cache;
  Console console;
  Traces traces;
  Alerts alerts;
  Log log;
  Metrics metrics;
  LimitDefaults limits;
  std::string source_file;  ///< The config file; empty for the embedded default.
  std::string source_dir;   ///< The config file's folder; empty for the embedded default.
  /// Which configuration this is: the first 16 hex digits of the SHA-256 of the file's bytes
  /// (`sha256sum FILE`), "embedded" for the embedded default.
  std::string hash = "embedded";
  /// Every provider's api_key of at least kMinSecretBytes, longest first: what is kept out of
  /// everything relayed (providers::SecretRedactor).
  std::vector<std::string> provider_secrets;
  std::vector<Model> models;        ///< Sorted by id.
  std::vector<Function> functions;  ///< Sorted by name.

  /// The model with this exact id, or nullptr.
  const Model* findModel(std::string_view id) const;
  /// The function with this exact name, or nullptr.
  const Function* findFunction(std::string_view name) const;
};

/// Secrets shorter than this are not searched for in relayed text: they would match ordinary
/// text.
inline constexpr std::size_t kMinSecretBytes = 8;

/// Every provider's api_key of at least kMinSecretBytes, once each, longest first (so that no
/// secret is masked half-way): Config::provider_secrets.
std::vector<std::string> providerSecrets(const std::vector<Model>& models);

/// A configuration problem, located by file and key.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, std::string key, std::string reason);
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_;
  std::string key_;
  std::string reason_;
};

/// Reads environment variables; replaceable in tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment.
std::optional<std::string> processEnv(const std::string& name);

/// Parses TOML text; `source` names the file in errors. Throws ConfigError.
Config parseConfig(std::string_view toml, const std::string& source,
                   const EnvLookup& env = processEnv);

/// Reads and parses a file. Throws ConfigError.
Config loadConfigFile(const std::string& path);

/// The embedded default: 127.0.0.1:8080 and the built-in `echo` model.
Config defaultConfig();

/// True for ids made of lowercase words (letters, digits) joined by single underscores.
bool isModelId(std::string_view id);

}  // namespace tollgate::config
