#include "telemetry/otlp_json.hpp"

#include <charconv>
#include <chrono>

#include "core/json.hpp"
#include "core/text.hpp"
#include "telemetry/gen_ai_names.hpp"

namespace tollgate::telemetry {
namespace {

/// OTLP's SpanKind and StatusCode values.
constexpr int kSpanKindServer = 2;
constexpr int kSpanKindClient = 3;
constexpr int kStatusError = 2;
constexpr int kFirstServerError = 500;
constexpr std::int64_t kNanosPerMicro = 1000;

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

/// Appends one span's JSON to a batch's text: written directly, the fixed parts as literals, as
/// the exporter encodes every sampled exchange (RapidJSON's writer cost most of a span's CPU).
class SpanText {
 public:
  explicit SpanText(std::string& out) : out_(out) {}

  /// Starts a span, up to its attributes' list.
  void begin(const SpanHead& h) {
    out_ += R"({"traceId":")";
    out_ += text::hex(h.trace_id);
    out_ += R"(","spanId":")";
    out_ += text::hex(h.span_id);
    if (h.parent != nullptr) {
      out_ += R"(","parentSpanId":")";
      out_ += text::hex(*h.parent);
    }
    out_ += R"(","name":)";
    json::appendQuoted(h.name, out_);
    out_ += R"(,"kind":)";
    out_ += std::to_string(h.kind);
    out_ += R"(,"startTimeUnixNano":")";
    out_ += std::to_string(h.start_ns);
    out_ += R"(","endTimeUnixNano":")";
    out_ += std::to_string(h.end_ns);
    out_ += R"(","attributes":[)";
    first_ = true;
  }

  void string(std::string_view key, std::string_view value) {
    head(key);
    out_ += R"("stringValue":)";
    json::appendQuoted(value, out_);
    out_ += "}}";
  }

  /// An int64 attribute: OTLP's JSON writes 64-bit integers as decimal strings.
  void integer(std::string_view key, std::int64_t value) {
    head(key);
    out_ += R"("intValue":")";
    out_ += std::to_string(value);
    out_ += R"("}})";
  }

  /// Ends the attributes' list and the span, its status an error when `error`.
  void end(bool error) {
    out_ += ']';
    if (error) {
      out_ += R"(,"status":{"code":)";
      out_ += std::to_string(kStatusError);
      out_ += '}';
    }
    out_ += '}';
  }

 private:
  /// An attribute up to its value's member; `key` is one of ours, which needs no escape.
  void head(std::string_view key) {
    out_ += first_ ? R"({"key":")" : R"(,{"key":")";
    first_ = false;
    out_ += key;
    out_ += R"(","value":{)";
  }

  std::string& out_;
  bool first_ = true;
};

void genAiAttributes(SpanText& w, const ExchangeSpans& e, std::string_view provider) {
  w.string("gen_ai.operation.name", e.operation);
  if (!e.request_model.empty()) {
    w.string("gen_ai.request.model", e.request_model);
  }
  if (!provider.empty()) {
    w.string("gen_ai.provider.name", provider);
  }
}

/// The model the answering upstream named; none on a span whose attempt did not answer.
void responseModel(SpanText& w, std::string_view model) {
  if (!model.empty()) {
    w.string("gen_ai.response.model", model);
  }
}

void usageAttributes(SpanText& w, std::int64_t input, std::int64_t output) {
  if (input > 0 || output > 0) {
    w.integer("gen_ai.usage.input_tokens", input);
    w.integer("gen_ai.usage.output_tokens", output);
  }
}

void writeExchange(SpanText& w, const ExchangeSpans& e, std::string_view name) {
  w.begin({e.trace_id, e.span_id, e.parent ? &*e.parent : nullptr, name, kSpanKindServer,
           e.start_ns, e.end_ns});
  genAiAttributes(w, e, e.provider);
  responseModel(w, e.response_model);
  usageAttributes(w, e.input_tokens, e.output_tokens);
  w.string("http.request.method", e.method);
  w.string("url.path", e.path);
  w.integer("http.response.status_code", e.status);
  w.string("tollgate.request_id", e.request_id);
  if (!e.error_type.empty()) {
    w.string("error.type", e.error_type);
  }
  w.end(e.status >= kFirstServerError);
}

void writeAttempt(SpanText& w, const ExchangeSpans& e, const AttemptSpan& a,
                  std::string_view name) {
  w.begin({e.trace_id, a.span_id, &e.span_id, name, kSpanKindClient, a.start_ns, a.end_ns});
  genAiAttributes(w, e, a.provider);
  if (&a == &e.attempts.back() && a.status != 0) {
    responseModel(w, e.response_model);
  }
  usageAttributes(w, a.input_tokens, a.output_tokens);
  if (!a.server_address.empty()) {
    w.string("server.address", a.server_address);
    w.integer("server.port", a.server_port);
  }
  if (a.status != 0) {
    w.integer("http.response.status_code", a.status);
  }
  if (!a.error_type.empty()) {
    w.string("error.type", a.error_type);
  }
  w.end(a.status == 0 || a.status >= kFirstServerError);
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
  constexpr std::size_t kBytesPerSpan = 1024;  // About what a chat exchange's spans take.
  std::string out;
  std::size_t spans = 0;
  for (const ExchangeSpans& e : batch) {
    spans += e.count();
  }
  out.reserve((spans + 1) * kBytesPerSpan);
  out += R"({"resourceSpans":[{"resource":{"attributes":[)";
  out += R"({"key":"service.name","value":{"stringValue":"tollgate"}},)";
  out += R"({"key":"service.version","value":{"stringValue":)";
  json::appendQuoted(version, out);
  out += R"(}}]},"scopeSpans":[{"scope":{"name":"tollgate","version":)";
  json::appendQuoted(version, out);
  out += R"(},"spans":[)";
  SpanText w(out);
  std::string name;
  bool first = true;
  for (const ExchangeSpans& e : batch) {
    name = e.operation;
    if (!e.request_model.empty()) {
      name += ' ';
      name += e.request_model;
    }
    if (!first) {
      out += ',';
    }
    first = false;
    writeExchange(w, e, name);
    for (const AttemptSpan& a : e.attempts) {
      out += ',';
      writeAttempt(w, e, a, name);
    }
  }
  out += "]}]}]}";
  return out;
}

}  // namespace tollgate::telemetry
