#include "openai/sse.hpp"

namespace tollgate::openai {

bool SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (const char c : bytes) {
    if (c == '\n' && last_was_cr_) {
      last_was_cr_ = false;  // The LF of a CRLF pair; the line already ended at the CR.
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      processLine(out);
      continue;
    }
    line_.push_back(c);
    if (line_.size() + current_.data.size() > max_event_bytes_) {
      return false;
    }
  }
  return true;
}

void SseParser::processLine(std::vector<SseEvent>& out) {
  if (line_.empty()) {
    if (has_data_) {
      out.push_back(std::move(current_));
    }
    current_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line_.front() == ':') {
    line_.clear();  // A comment, e.g. a keep-alive ping.
    return;
  }
  const std::size_t colon = line_.find(':');
  const std::string_view name = std::string_view(line_).substr(0, colon);
  std::string_view value;
  if (colon != std::string::npos) {
    value = std::string_view(line_).substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
  }
  if (name == "data") {
    if (has_data_) {
      current_.data.push_back('\n');
    }
    current_.data.append(value);
    has_data_ = true;
  } else if (name == "event") {
    current_.event = value;
  }
  line_.clear();
}

std::string sseData(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out.append("data: ").append(payload).append("\n\n");
  return out;
}

}  // namespace tollgate::openai
