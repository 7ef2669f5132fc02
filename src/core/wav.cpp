#include "core/wav.hpp"

#include <algorithm>

namespace tollgate {
namespace {

constexpr std::size_t kRiffHeader = 12;
constexpr std::size_t kChunkHeader = 8;
constexpr std::size_t kFmtMinimum = 16;
constexpr std::int64_t kMsPerSecond = 1000;

std::uint32_t le32(std::string_view s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 4; i-- > 0;) {
    v = v << 8 | static_cast<unsigned char>(s[at + i]);
  }
  return v;
}

std::uint16_t le16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(s[at]) |
                                    static_cast<unsigned char>(s[at + 1]) << 8);
}

}  // namespace

std::optional<WavInfo> readWavHeader(std::string_view start, std::size_t file_bytes) {
  if (start.size() < kRiffHeader || start.substr(0, 4) != "RIFF" || start.substr(8, 4) != "WAVE") {
    return std::nullopt;
  }
  WavInfo info;
  bool has_format = false;
  for (std::size_t at = kRiffHeader; at + kChunkHeader <= start.size();) {
    const std::string_view id = start.substr(at, 4);
    const std::uint32_t size = le32(start, at + 4);
    const std::size_t body = at + kChunkHeader;
    if (id == "fmt ") {
      if (size < kFmtMinimum || body + kFmtMinimum > start.size()) {
        return std::nullopt;
      }
      info.channels = le16(start, body + 2);
      info.sample_rate = le32(start, body + 4);
      info.bits_per_sample = le16(start, body + 14);
      has_format = true;
    } else if (id == "data") {
      const std::int64_t bytes_per_second = static_cast<std::int64_t>(info.sample_rate) *
                                            info.channels * ((info.bits_per_sample + 7) / 8);
      if (!has_format || bytes_per_second <= 0) {
        return std::nullopt;
      }
      const std::size_t present = file_bytes > body ? file_bytes - body : 0;
      const auto bytes = static_cast<std::int64_t>(std::min<std::size_t>(size, present));
      info.duration_ms = (bytes * kMsPerSecond + bytes_per_second - 1) / bytes_per_second;
      return info;
    }
    at = body + size + (size & 1);  // Chunks are padded to an even size.
  }
  return std::nullopt;
}

}  // namespace tollgate
