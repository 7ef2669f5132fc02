#include "telemetry/otlp_json.hpp"

#include <charconv>
#include <chrono>

#include "core/json.hpp"
#include "telemetry/gen_ai_names.hpp"

namespace tollgate::telemetry {
namespace {

/// OTLP's SpanKind and StatusCode values.
constexpr int kSpanKindServer = 2;
constexpr int kSpanKindClient = 3;
constexpr int kStatusError = 2;
constexpr int kFirstServerError = 500;
constexpr std::int64_t kNanosPerMicro = 1000;

void stringAttribute(json::Writer& w, std::string_view key, std::string_view value) {
  w.startObject();
  w.field("key", key);
  w.key("value");
  w.startObject();
  w.field("stringValue", value);
  w.endObject();
  w.endObject();
}

/// An int64 attribute: OTLP's JSON writes 64-bit integers as decimal strings.
void intAttribute(json::Writer& w, std::string_view key, std::int64_t value) {
  w.startObject();
  w.field("key", key);
  w.key("value");
  w.startObject();
  w.field("intValue", std::to_string(value));
  w.endObject();
  w.endObject();
}

/// What a span says in common with its exchange's other spans, up to its attributes' list.
struct SpanHead {
  const trace::TraceId& trace_id;
  const trace::SpanId& span_id;
  const trace::SpanId* parent;
  std::string_view name;
  int kind;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

void beginSpan(json::Writer& w, const SpanHead& h) {
  w.startObject();
  w.field("traceId", trace::hex(h.trace_id));
  w.field("spanId", trace::hex(h.span_id));
  if (h.parent != nullptr) {
    w.field("parentSpanId", trace::hex(*h.parent));
  }
  w.field("name", h.name);
  w.field("kind", h.kind);
  w.field("startTimeUnixNano", std::to_string(h.start_ns));
  w.field("endTimeUnixNano", std::to_string(h.end_ns));
  w.key("attributes");
  w.startArray();
}

/// Ends the attributes' list and the span, its status an error when `error`.
void endSpan(json::Writer& w, bool error) {
  w.endArray();
  if (error) {
    w.key("status");
    w.startObject();
    w.field("code", kStatusError);
    w.endObject();
  }
  w.endObject();
}

void genAiAttributes(json::Writer& w, const ExchangeSpans& e, std::string_view provider) {
  stringAttribute(w, "gen_ai.operation.name", e.operation);
  if (!e.request_model.empty()) {
    stringAttribute(w, "gen_ai.request.model", e.request_model);
  }
  if (!provider.empty()) {
    stringAttribute(w, "gen_ai.provider.name", provider);
  }
}

/// The model the answering upstream named; none on a span whose attempt did not answer.
void responseModel(json::Writer& w, std::string_view model) {
  if (!model.empty()) {
    stringAttribute(w, "gen_ai.response.model", model);
  }
}

void usageAttributes(json::Writer& w, std::int64_t input, std::int64_t output) {
  if (input > 0 || output > 0) {
    intAttribute(w, "gen_ai.usage.input_tokens", input);
    intAttribute(w, "gen_ai.usage.output_tokens", output);
  }
}

void writeExchange(json::Writer& w, const ExchangeSpans& e, const std::string& name) {
  beginSpan(w, {e.trace_id, e.span_id, e.parent ? &*e.parent : nullptr, name, kSpanKindServer,
                e.start_ns, e.end_ns});
  genAiAttributes(w, e, e.provider);
  responseModel(w, e.response_model);
  usageAttributes(w, e.input_tokens, e.output_tokens);
  stringAttribute(w, "http.request.method", e.method);
  stringAttribute(w, "url.path", e.path);
  intAttribute(w, "http.response.status_code", e.status);
  stringAttribute(w, "tollgate.request_id", e.request_id);
  if (!e.error_type.empty()) {
    stringAttribute(w, "error.type", e.error_type);
  }
  endSpan(w, e.status >= kFirstServerError);
}

void writeAttempt(json::Writer& w, const ExchangeSpans& e, const AttemptSpan& a,
                  const std::string& name) {
  beginSpan(w, {e.trace_id, a.span_id, &e.span_id, name, kSpanKindClient, a.start_ns, a.end_ns});
  genAiAttributes(w, e, a.provider);
  if (&a == &e.attempts.back() && a.status != 0) {
    responseModel(w, e.response_model);
  }
  usageAttributes(w, a.input_tokens, a.output_tokens);
  if (!a.server_address.empty()) {
    stringAttribute(w, "server.address", a.server_address);
    intAttribute(w, "server.port", a.server_port);
  }
  if (a.status != 0) {
    intAttribute(w, "http.response.status_code", a.status);
  }
  if (!a.error_type.empty()) {
    stringAttribute(w, "error.type", a.error_type);
  }
  endSpan(w, a.status == 0 || a.status >= kFirstServerError);
}

}  // namespace

std::string_view operationOf(const exchange::RequestContext& ctx) {
  if (ctx.served != nullptr) {
    return genAiOperation(ctx.served->endpoint);
  }
  if (ctx.path == "/v1/chat/completions") {
    return "chat";
  }
  if (ctx.path == "/v1/embeddings") {
    return "embeddings";
  }
  if (ctx.path == "/v1/rerank") {
    return "rerank";
  }
  if (ctx.path == "/v1/audio/transcriptions") {
    return "transcription";
  }
  return {};
}

std::optional<ExchangeSpans> spansOf(const exchange::RequestContext& ctx, std::int64_t end_ns,
                                     exchange::RequestContext::Clock::time_point steady_end) {
  const std::string_view operation = operationOf(ctx);
  if (operation.empty()) {
    return std::nullopt;
  }
  ExchangeSpans e;
  e.trace_id = ctx.trace.trace_id;
  e.span_id = ctx.trace.span_id;
  e.parent = ctx.trace.parent;
  e.operation = operation;
  if (ctx.served != nullptr) {
    e.request_model = ctx.served->id;
  }
  e.provider = ctx.provider;
  e.response_model = ctx.response_model;
  e.method = ctx.method;
  e.path = ctx.path;
  e.request_id = ctx.request_id;
  e.start_ns =
      end_ns -
      std::chrono::duration_cast<std::chrono::nanoseconds>(steady_end - ctx.started).count();
  e.end_ns = end_ns;
  e.status = ctx.status;
  e.error_type = ctx.error_code;
  e.input_tokens = ctx.usage.prompt_tokens;
  e.output_tokens = ctx.usage.completion_tokens;
  e.attempts.reserve(ctx.attempt_log.size());
  for (const exchange::AttemptRecord& r : ctx.attempt_log) {
    AttemptSpan& a = e.attempts.emplace_back();
    a.span_id = r.span;
    a.provider = r.provider;
    if (r.api_base != nullptr) {
      a.server_address = r.api_base->host;
      const std::string& port = r.api_base->port;  // Validated: 1 to 65535.
      std::from_chars(port.data(), port.data() + port.size(), a.server_port);
    }
    a.start_ns = e.start_ns + r.started.count() * kNanosPerMicro;
    a.end_ns = r.ended.count() > 0 ? e.start_ns + r.ended.count() * kNanosPerMicro : end_ns;
    a.status = r.status;
    a.error_type = r.error_code;
  }
  if (!e.attempts.empty() && e.attempts.back().status != 0) {
    e.attempts.back().input_tokens = e.input_tokens;
    e.attempts.back().output_tokens = e.output_tokens;
  }
  return e;
}

std::string encode(std::span<const ExchangeSpans> batch, std::string_view version) {
  json::Writer w;
  w.startObject();
  w.key("resourceSpans");
  w.startArray();
  w.startObject();
  w.key("resource");
  w.startObject();
  w.key("attributes");
  w.startArray();
  stringAttribute(w, "service.name", "tollgate");
  stringAttribute(w, "service.version", version);
  w.endArray();
  w.endObject();
  w.key("scopeSpans");
  w.startArray();
  w.startObject();
  w.key("scope");
  w.startObject();
  w.field("name", "tollgate");
  w.field("version", version);
  w.endObject();
  w.key("spans");
  w.startArray();
  for (const ExchangeSpans& e : batch) {
    const std::string name =
        e.request_model.empty() ? e.operation : e.operation + " " + e.request_model;
    writeExchange(w, e, name);
    for (const AttemptSpan& a : e.attempts) {
      writeAttempt(w, e, a, name);
    }
  }
  w.endArray();
  w.endObject();
  w.endArray();
  w.endObject();
  w.endArray();
  w.endObject();
  return w.take();
}

}  // namespace tollgate::telemetry
