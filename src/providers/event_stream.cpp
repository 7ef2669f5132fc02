#include "providers/event_stream.hpp"

#include <array>

namespace tollgate::providers::eventstream {
namespace {

constexpr std::size_t kPreludeBytes = 12;  // Total length, headers length, the prelude's CRC.
constexpr std::size_t kCrcBytes = 4;       // The message's CRC, last.

constexpr std::array<std::uint32_t, 256> kCrcTable = [] {
  constexpr std::uint32_t kPolynomial = 0xEDB88320U;  // IEEE 802.3, reflected.
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < table.size(); ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1U) != 0 ? kPolynomial ^ (c >> 1U) : c >> 1U;
    }
    table[i] = c;
  }
  return table;
}();

std::uint32_t bigEndian32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v = (v << 8U) | static_cast<unsigned char>(bytes[at + i]);
  }
  return v;
}

Error badFrame(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream's event stream has " + std::move(what), ""};
}

/// Bytes a header value of `type` takes after its type byte, for the fixed-size types; 0 for
/// the two length-prefixed ones (6: bytes, 7: string); -1 for an unknown type.
int fixedValueBytes(unsigned char type) {
  constexpr std::array<int, 10> kSizes{0, 0, 1, 2, 4, 8, 0, 0, 8, 16};
  return type < kSizes.size() ? kSizes[type] : -1;
}

}  // namespace

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
  crc = ~crc;
  for (const char b : bytes) {
    crc = kCrcTable[(crc ^ static_cast<unsigned char>(b)) & 0xFFU] ^ (crc >> 8U);
  }
  return ~crc;
}

Status Parser::feed(std::string_view bytes, std::vector<openai::SseEvent>& out) {
  buffer_.append(bytes);
  std::size_t at = 0;
  while (buffer_.size() - at >= kPreludeBytes) {
    const std::string_view rest = std::string_view(buffer_).substr(at);
    const std::uint32_t total = bigEndian32(rest, 0);
    const std::uint32_t headers = bigEndian32(rest, 4);
    if (crc32(rest.substr(0, 8)) != bigEndian32(rest, 8)) {
      return badFrame("a message whose prelude fails its CRC");
    }
    if (total < kPreludeBytes + kCrcBytes || total > kMaxMessageBytes ||
        headers > total - kPreludeBytes - kCrcBytes) {
      return badFrame("a message of an impossible length");
    }
    if (rest.size() < total) {
      break;  // Unfinished: kept until the rest arrives.
    }
    const std::string_view frame = rest.substr(0, total);
    if (crc32(frame.substr(0, total - kCrcBytes)) != bigEndian32(frame, total - kCrcBytes)) {
      return badFrame("a message that fails its CRC");
    }
    if (auto ok = message(frame, out); !ok) {
      return ok;
    }
    at += total;
  }
  buffer_.erase(0, at);
  return Ok{};
}

Status Parser::message(std::string_view frame, std::vector<openai::SseEvent>& out) {
  const std::size_t headers_end = kPreludeBytes + bigEndian32(frame, 4);
  std::string_view message_type;
  std::string_view name;  // The event's, exception's or error's type.
  std::string_view error_message;
  for (std::size_t at = kPreludeBytes; at < headers_end;) {
    const auto name_size = static_cast<unsigned char>(frame[at]);
    if (name_size == 0 || at + 1 + name_size + 1 > headers_end) {
      return badFrame("a malformed header");
    }
    const std::string_view header = frame.substr(at + 1, name_size);
    at += 1 + name_size;
    const auto type = static_cast<unsigned char>(frame[at++]);
    const int fixed = fixedValueBytes(type);
    std::string_view value;
    if (fixed < 0) {
      return badFrame("a header of an unknown type");
    }
    if (type == 6 || type == 7) {
      if (at + 2 > headers_end) {
        return badFrame("a malformed header");
      }
      const std::size_t size =
          (static_cast<std::size_t>(static_cast<unsigned char>(frame[at])) << 8U) |
          static_cast<unsigned char>(frame[at + 1]);
      at += 2;
      if (at + size > headers_end) {
        return badFrame("a malformed header");
      }
      value = frame.substr(at, size);
      at += size;
    } else {
      if (at + static_cast<std::size_t>(fixed) > headers_end) {
        return badFrame("a malformed header");
      }
      at += static_cast<std::size_t>(fixed);
    }
    if (type != 7) {
      continue;  // The headers we read are strings.
    }
    if (header == ":message-type") {
      message_type = value;
    } else if (header == ":event-type" || header == ":exception-type" || header == ":error-code") {
      name = value;
    } else if (header == ":error-message") {
      error_message = value;
    }
  }
  const std::string_view payload =
      frame.substr(headers_end, frame.size() - headers_end - kCrcBytes);
  if (message_type == "event" && !name.empty()) {
    out.push_back(openai::SseEvent{std::string(name), std::string(payload)});
  } else if (message_type == "exception") {
    out.push_back(openai::SseEvent{"exception:" + std::string(name), std::string(payload)});
  } else if (message_type == "error") {
    out.push_back(openai::SseEvent{"error:" + std::string(name), std::string(error_message)});
  } else {
    return badFrame("a message without a known :message-type and its type");
  }
  return Ok{};
}

}  // namespace tollgate::providers::eventstream
