#include "openai/sse.hpp"

#include <cstring>

namespace tollgate::openai {

bool SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (last_was_cr_ && p != end && *p == '\n') {
    ++p;  // The LF of a CRLF pair split across reads; the line already ended at the CR.
  }
  last_was_cr_ = false;
  while (p != end) {
    // The line ends at the first CR or LF; both searches are memchr's vectorised scans.
    const char* lf = static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', (lf ? lf : end) - p));
    const char* eol = cr != nullptr ? cr : lf;
    if (eol == nullptr) {
      line_.append(p, end);  // Unfinished: kept until the rest arrives.
      return line_.size() + current_.data.size() <= max_event_bytes_;
    }
    if (line_.empty()) {
      processLine(std::string_view(p, eol - p), out);
    } else {
      line_.append(p, eol);
      processLine(line_, out);
      line_.clear();
    }
    if (current_.data.size() > max_event_bytes_) {
      return false;
    }
    p = eol + 1;
    if (*eol == '\r') {
      if (p == end) {
        last_was_cr_ = true;
      } else if (*p == '\n') {
        ++p;
      }
    }
  }
  return true;
}

void SseParser::processLine(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    if (has_data_) {
      out.push_back(std::move(current_));
    }
    current_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') {
    return;  // A comment, e.g. a keep-alive ping.
  }
  const std::size_t colon = line.find(':');
  const std::string_view name = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
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
}

std::string sseData(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out.append("data: ").append(payload);
  // A line break inside the JSON (an upstream's event kept raw for tollgate::include_raw_response
  // may have them) would end the event early. In valid JSON a raw CR or LF can only be whitespace
  // between tokens, so a space says the same.
  for (std::size_t i = out.find_first_of("\r\n", 6); i != std::string::npos;
       i = out.find_first_of("\r\n", i + 1)) {
    out[i] = ' ';
  }
  out.append("\n\n");
  return out;
}

}  // namespace tollgate::openai
