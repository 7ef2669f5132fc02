// The framing of an upstream's streamed answer, decoded into events an Exchange reads one at a
// time: Server-Sent Events (OpenAI, Anthropic, Gemini's alt=sse, Azure) or AWS's binary event
// stream (Bedrock). Each Exchange declares its framing; the relay decodes with this. Sans I/O.
#pragma once

#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "openai/sse.hpp"
#include "providers/event_stream.hpp"

namespace tollgate::providers {

enum class StreamFraming { Sse, AwsEventStream };

/// The media type an upstream's stream of `framing` is declared as.
std::string_view streamContentType(StreamFraming framing);

class StreamDecoder {
 public:
  explicit StreamDecoder(StreamFraming framing) : framing_(framing) {}

  /// Consumes `bytes` and appends every event they complete to `out`. An UpstreamError for an
  /// event too large or a frame that is not one; the decoder is then unusable.
  Status feed(std::string_view bytes, std::vector<openai::SseEvent>& out);

  /// True when bytes of an unfinished event are buffered (a body ending now was cut mid-event).
  bool pending() const {
    return framing_ == StreamFraming::AwsEventStream ? frames_.pending() : sse_.pending();
  }

 private:
  StreamFraming framing_;
  openai::SseParser sse_;
  eventstream::Parser frames_;
};

}  // namespace tollgate::providers
