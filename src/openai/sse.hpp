// Server-Sent Events: an incremental parser for upstream streams (any chunking, LF/CRLF/CR line
// ends, comments, multi-line data) and the writer for our own events.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::openai {

struct SseEvent {
  std::string event;  ///< The `event:` field; empty for the default "message".
  std::string data;   ///< `data:` lines joined by '\n'.
};

class SseParser {
 public:
  static constexpr std::size_t kDefaultMaxEventBytes = 8 * 1024 * 1024;

  explicit SseParser(std::size_t max_event_bytes = kDefaultMaxEventBytes)
      : max_event_bytes_(max_event_bytes) {}

  /// Consumes `bytes` and appends every event they complete to `out`. Returns false when one
  /// event grows past the size limit; the parser is then unusable.
  bool feed(std::string_view bytes, std::vector<SseEvent>& out);

  /// True when bytes of an unfinished event are buffered.
  bool pending() const { return !line_.empty() || has_data_; }

 private:
  void processLine(std::string_view line, std::vector<SseEvent>& out);

  std::size_t max_event_bytes_;
  std::string line_;
  SseEvent current_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

/// `data: <payload>\n\n` for a JSON payload: its line breaks (whitespace) become spaces.
std::string sseData(std::string_view payload);

/// The end-of-stream marker `data: [DONE]\n\n`.
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace tollgate::openai
