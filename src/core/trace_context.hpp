// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// headers read strictly, the trace an exchange continues or begins, and the ids of its spans.
// Pure: no I/O; ids come from a per-thread generator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tollgate::trace {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

/// The longest `tracestate` passed on (the spec asks to pass on at least 512 characters); a
/// longer one is dropped whole rather than cut.
inline constexpr std::size_t kMaxTracestateBytes = 512;

/// A valid `traceparent` header's fields.
struct Parent {
  TraceId trace_id{};
  SpanId span_id{};  ///< The caller's span: the parent of ours.
  std::uint8_t flags = 0;
};

/// `value` read as a `traceparent`: version 00 exactly (`00-` 32 hex `-` 16 hex `-` 2 hex, 55
/// characters), or a later version (not ff) whose first 55 characters have that shape and are
/// followed by nothing or a `-`; lower-case hex only, neither id all zeros. nullopt otherwise.
std::optional<Parent> parseTraceparent(std::string_view value);

/// Whether `value` is a `tracestate` worth passing on: at most kMaxTracestateBytes and 32
/// list members, each `key=value` by the spec's grammar (empty members allowed).
bool validTracestate(std::string_view value);

/// The trace of one exchange: its own span, the caller's (when it sent a valid traceparent) and
/// whether it is sampled.
struct Context {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent;
  bool sampled = false;
  std::string tracestate;  ///< The caller's, passed on as it came; empty: none.
};

/// The trace of an exchange whose request carried `traceparent` and `tracestate` (empty when
/// absent): the caller's trace when `traceparent` is valid, its sampled flag honoured and a valid
/// `tracestate` kept; else a new trace, sampled with probability `sample_ratio` (0 to 1).
Context begin(std::string_view traceparent, std::string_view tracestate, double sample_ratio);

/// A new random span id, never all zeros.
SpanId newSpanId();

/// The `traceparent` value of a request sent from span `span` of `trace`: version 00, the
/// sampled flag as `trace`'s.
std::string traceparent(const Context& trace, const SpanId& span);

}  // namespace tollgate::trace
