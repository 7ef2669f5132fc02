// Spans of an exchange, and their OTLP/HTTP JSON encoding (an ExportTraceServiceRequest): one
// server-kind span for the exchange and one client-kind span per upstream attempt, its child,
// named and attributed by the OpenTelemetry GenAI semantic conventions. Pure: the exporter
// (span_exporter.hpp) copies an ended exchange into ExchangeSpans on its I/O thread and encodes
// batches on its own. No text of a prompt or answer, no header, key or Idempotency-Key.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace_context.hpp"
#include "exchange/request_context.hpp"

namespace tollgate::telemetry {

/// One upstream attempt's span.
struct AttemptSpan {
  trace::SpanId span_id{};
  std::string provider;        ///< The configured provider's name.
  std::string server_address;  ///< Its host; empty for an in-process provider.
  std::int64_t server_port = 0;
  std::int64_t start_ns = 0;  ///< Unix time in nanoseconds.
  std::int64_t end_ns = 0;
  int status = 0;                 ///< The HTTP status it answered; 0: it failed.
  std::string error_type;         ///< The catalogue code of its failure.
  std::int64_t input_tokens = 0;  ///< The answering attempt's usage.
  std::int64_t output_tokens = 0;
};

/// What the spans of one ended exchange say, copied out of its record.
struct ExchangeSpans {
  trace::TraceId trace_id{};
  trace::SpanId span_id{};
  std::optional<trace::SpanId> parent;
  std::string operation;       ///< gen_ai.operation.name: chat, embeddings, rerank, transcription.
  std::string request_model;   ///< The configured model that served; empty when none did.
  std::string response_model;  ///< The model its answering upstream named; empty: none.
  std::string provider;        ///< The provider that answered (or was last tried).
  std::string method;
  std::string path;
  std::string request_id;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  int status = 0;
  std::string error_type;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::vector<AttemptSpan> attempts;

  /// How many spans this is: the exchange's and one per attempt.
  std::size_t count() const { return 1 + attempts.size(); }
};

/// The GenAI operation of an exchange: by the endpoint of the model that served, else by its
/// path; empty for an exchange that is not an inference (the model list, health, the console).
std::string_view operationOf(const exchange::RequestContext& ctx);

/// The spans of `ctx`, which ended at `end_ns` (Unix time in nanoseconds), `steady_end` on its
/// steady clock; nullopt when it is no inference (operationOf).
std::optional<ExchangeSpans> spansOf(const exchange::RequestContext& ctx, std::int64_t end_ns,
                                     exchange::RequestContext::Clock::time_point steady_end);

/// An ExportTraceServiceRequest in OTLP's JSON encoding holding `batch`, from the resource
/// `tollgate` of `version`.
std::string encode(std::span<const ExchangeSpans> batch, std::string_view version);

}  // namespace tollgate::telemetry
