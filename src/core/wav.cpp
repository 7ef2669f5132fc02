#include "core/wav.hpp"

#include <algorithm>

namespace tollgate {
namespace {

constexpr std::size_t kRiffHeader = 12;
constexpr std::size_t kChunkHeader = 8;
constexpr std::size_t kFmtMinimum = 16;
constexpr std::int64_t kMsPerSecond = 1000;
constexpr std::uint16_t kFormatPcm = 1;
constexpr std::uint16_t kFormatFloat = 3;
constexpr std::uint16_t kFormatExtensible = 0xFFFE;
constexpr std::size_t kExtensibleSubformat = 24;  ///< Offset of the sub-format GUID in `fmt `.
constexpr std::uint32_t kMinRate = 8'000;
constexpr std::uint32_t kMaxRate = 48'000;
constexpr std::uint16_t kMaxChannels = 2;

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
      std::uint16_t format = le16(start, body);
      if (format == kFormatExtensible) {
        if (size < kExtensibleSubformat + 2 || body + kExtensibleSubformat + 2 > start.size()) {
          return std::nullopt;
        }
        format = le16(start, body + kExtensibleSubformat);
      }
      info.channels = le16(start, body + 2);
      info.sample_rate = le32(start, body + 4);
      const std::uint32_t byte_rate = le32(start, body + 8);
      const std::uint16_t block_align = le16(start, body + 12);
      info.bits_per_sample = le16(start, body + 14);
      const std::uint16_t bits = info.bits_per_sample;
      const bool plain =
          (format == kFormatPcm || format == kFormatFloat) && bits % 8 == 0 && bits >= 8 &&
          bits <= 32 && info.channels >= 1 && info.channels <= kMaxChannels &&
          info.sample_rate >= kMinRate && info.sample_rate <= kMaxRate &&
          block_align == info.channels * (bits / 8) && byte_rate == info.sample_rate * block_align;
      if (!plain) {
        return std::nullopt;
      }
      has_format = true;
    } else if (id == "data") {
      if (!has_format) {
        return std::nullopt;
      }
      const std::int64_t bytes_per_second =
          static_cast<std::int64_t>(info.sample_rate) * info.channels * (info.bits_per_sample / 8);
      // Unknown file size (the default): the size the header states is all there is to go by.
      const std::size_t present = file_bytes == std::numeric_limits<std::size_t>::max() ? size
                                  : file_bytes > body ? file_bytes - body
                                                      : 0;
      const auto bytes = static_cast<std::int64_t>(present);
      info.duration_ms = (bytes * kMsPerSecond + bytes_per_second - 1) / bytes_per_second;
      return info;
    }
    at = body + size + (size & 1);  // Chunks are padded to an even size.
  }
  return std::nullopt;
}

}  // namespace tollgate
