// A client's W3C trace context: its `traceparent` (the first line) and `tracestate` (the rest)
// through core/trace_context. Invariants: a traceparent accepted is continued (its trace id and
// sampled flag, its span as the parent) and what the gateway sends upstream reads back as the
// same trace, the attempt's span and the same flag; a refused one starts a new trace without a
// parent or state; a state passed on is valid and within its bound; ids are never all zeros.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/trace_context.hpp"
#include "fuzz_check.hpp"

namespace {

using tollgate::fuzz::check;
namespace trace = tollgate::trace;

template <typename Id>
bool zero(const Id& id) {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\n');
  const std::string_view parent = input.substr(0, cut);
  const std::string_view state = cut == std::string_view::npos ? "" : input.substr(cut + 1);

  const auto parsed = trace::parseTraceparent(parent);
  const trace::Context c = trace::begin(parent, state, 0.5);
  check(!zero(c.trace_id) && !zero(c.span_id));
  if (parsed) {
    check(!zero(parsed->trace_id) && !zero(parsed->span_id));
    check(c.trace_id == parsed->trace_id && c.parent == parsed->span_id);
    check(c.sampled == ((parsed->flags & 1) != 0));
    check(c.tracestate.empty() || c.tracestate == state);
  } else {
    check(!c.parent && c.tracestate.empty());
  }
  if (!c.tracestate.empty()) {
    check(trace::validTracestate(c.tracestate));
    check(c.tracestate.size() <= trace::kMaxTracestateBytes);
  }
  const trace::SpanId span = trace::newSpanId();
  const auto sent = trace::parseTraceparent(trace::traceparent(c, span));
  check(sent.has_value());
  check(sent->trace_id == c.trace_id && sent->span_id == span);
  check(((sent->flags & 1) != 0) == c.sampled);
  return 0;
}
