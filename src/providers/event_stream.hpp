// AWS's event stream (`application/vnd.amazon.eventstream`), the binary framing of Bedrock's
// streamed answers: each message is a prelude (total length, headers length, their CRC-32), typed
// headers, a payload and the CRC-32 of all of it. Parsed incrementally from any chunking; a CRC
// that does not match, a length out of bounds or a malformed header refuses the stream. Sans I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers::eventstream {

/// The CRC-32 (IEEE 802.3, as zlib's) of `bytes`, continuing from `crc`.
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

/// Each complete message as one event, named by its headers:
/// - `:message-type` `event`: the `:event-type` (e.g. "contentBlockDelta"), the payload as data;
/// - `exception`: "exception:" and the `:exception-type` (e.g. "exception:throttlingException"),
///   the payload (a JSON object with a message) as data;
/// - `error`: "error:" and the `:error-code`, the `:error-message` as data.
class Parser {
 public:
  static constexpr std::size_t kMaxMessageBytes = 16 * 1024 * 1024;

  /// Consumes `bytes` and appends the events of the messages they complete to `out`. An
  /// UpstreamError for a frame that is not one; the parser is then unusable.
  Status feed(std::string_view bytes, std::vector<openai::SseEvent>& out);

  /// True when bytes of an unfinished message are buffered.
  bool pending() const { return !buffer_.empty(); }

 private:
  Status message(std::string_view frame, std::vector<openai::SseEvent>& out);

  std::string buffer_;
};

}  // namespace tollgate::providers::eventstream
