#include "providers/stream_decoder.hpp"

namespace tollgate::providers {

std::string_view streamContentType(StreamFraming framing) {
  return framing == StreamFraming::AwsEventStream ? "application/vnd.amazon.eventstream"
                                                  : "text/event-stream";
}

Status StreamDecoder::feed(std::string_view bytes, std::vector<openai::SseEvent>& out) {
  if (framing_ == StreamFraming::AwsEventStream) {
    return frames_.feed(bytes, out);
  }
  if (!sse_.feed(bytes, out)) {
    return Error{ErrorKind::UpstreamError, "an upstream stream event is too large", ""};
  }
  return Ok{};
}

}  // namespace tollgate::providers
