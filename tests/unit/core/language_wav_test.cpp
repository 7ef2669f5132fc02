#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/language.hpp"
#include "core/wav.hpp"

namespace tollgate {
namespace {

TEST(IsIso639Code, CurrentTwoLetterCodesInLowerCase) {
  for (const char* code : {"aa", "de", "en", "fr", "ja", "yo", "zh", "zu"}) {
    EXPECT_TRUE(isIso639Code(code)) << code;
  }
}

TEST(IsIso639Code, RefusesEverythingElse) {
  for (const char* code :
       {"", "e", "EN", "En", "eng", "en-US", "en_US", "xx", "sh", "zz", " en", "en ", "e\n"}) {
    EXPECT_FALSE(isIso639Code(code)) << code;
  }
  EXPECT_FALSE(isIso639Code(std::string_view("en\0", 3)));
}

void le16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>(v >> 8);
}

void le32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    out += static_cast<char>(v >> (8 * i) & 0xFF);
  }
}

/// A chunk: its id, the size it declares, and `body` (shorter than `size` to stand for a chunk
/// whose rest lies beyond the bytes given), padded to an even size when `pad`.
std::string chunk(std::string_view id, std::uint32_t size, std::string_view body = "",
                  bool pad = false) {
  std::string out(id);
  le32(out, size);
  out += body;
  if (pad) {
    out += '\0';
  }
  return out;
}

std::string fmt(std::uint32_t rate, std::uint16_t channels, std::uint16_t bits,
                std::uint16_t format = 1) {
  const std::uint16_t block = static_cast<std::uint16_t>(channels * ((bits + 7) / 8));
  std::string body;
  le16(body, format);
  le16(body, channels);
  le32(body, rate);
  le32(body, rate * block);
  le16(body, block);
  le16(body, bits);
  return chunk("fmt ", static_cast<std::uint32_t>(body.size()), body);
}

std::string riff(std::string_view chunks, std::string_view form = "WAVE") {
  std::string out = "RIFF";
  le32(out, static_cast<std::uint32_t>(4 + chunks.size()));
  out += form;
  out += chunks;
  return out;
}

TEST(ReadWavHeader, MonoSixteenKilohertzSixteenBitTwoSeconds) {
  // Only the data chunk's header need be given, not its samples.
  const auto info = readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 64'000)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->sample_rate, 16'000u);
  EXPECT_EQ(info->channels, 1);
  EXPECT_EQ(info->bits_per_sample, 16);
  EXPECT_EQ(info->duration_ms, 2000);
}

TEST(ReadWavHeader, StereoCdAudio) {
  const auto info = readWavHeader(riff(fmt(44'100, 2, 16) + chunk("data", 44'100 * 4 * 3)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->sample_rate, 44'100u);
  EXPECT_EQ(info->channels, 2);
  EXPECT_EQ(info->duration_ms, 3000);
}

TEST(ReadWavHeader, TwentyFourBitSamplesTakeThreeBytes) {
  const auto info = readWavHeader(riff(fmt(48'000, 1, 24) + chunk("data", 48'000 * 3)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->duration_ms, 1000);
}

TEST(ReadWavHeader, SkipsChunksBeforeData) {
  const std::string list =
      chunk("LIST", 26, std::string_view("INFOISFT\x0e\0\0\0Lavf58.76.100\0", 26));
  ASSERT_EQ(list.size(), 8u + 26u);
  const auto info = readWavHeader(riff(fmt(8000, 1, 8) + list + chunk("data", 8000)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->duration_ms, 1000);
  // And a chunk before fmt.
  const auto first = readWavHeader(riff(list + fmt(8000, 1, 8) + chunk("data", 4000)));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->duration_ms, 500);
}

TEST(ReadWavHeader, OddSizedChunksArePadded) {
  const std::string odd = chunk("junk", 3, "abc", true);
  const auto info = readWavHeader(riff(fmt(16'000, 1, 16) + odd + chunk("data", 32'000)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->duration_ms, 1000);
  // Without the pad byte, the data chunk is not where the chunk sizes say.
  EXPECT_FALSE(
      readWavHeader(riff(fmt(16'000, 1, 16) + chunk("junk", 3, "abc") + chunk("data", 32'000)))
          .has_value());
}

TEST(ReadWavHeader, AnExtensibleFmtChunkIsRead) {
  std::string body;
  le16(body, 0xFFFE);
  le16(body, 2);
  le32(body, 16'000);
  le32(body, 64'000);
  le16(body, 4);
  le16(body, 16);
  le16(body, 22);  // cbSize, then 22 bytes of extension:
  le16(body, 16);  // valid bits,
  le32(body, 3);   // channel mask,
  le16(body, 1);   // and the sub-format GUID, which starts with the format: PCM.
  body += std::string(14, '\x01');
  const auto info = readWavHeader(
      riff(chunk("fmt ", static_cast<std::uint32_t>(body.size()), body) + chunk("data", 64'000)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->channels, 2);
  EXPECT_EQ(info->duration_ms, 1000);
}

TEST(ReadWavHeader, DurationIsRoundedUp) {
  // 32,000 bytes a second: 32,002 bytes are 1000.0625 ms.
  EXPECT_EQ(readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 32'002))).value().duration_ms,
            1001);
  EXPECT_EQ(readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 2))).value().duration_ms, 1);
  EXPECT_EQ(readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 32))).value().duration_ms, 1);
  EXPECT_EQ(readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 64))).value().duration_ms, 2);
  EXPECT_EQ(readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 0))).value().duration_ms, 0);
}

TEST(ReadWavHeader, TheDataIsAtMostWhatTheFileHolds) {
  // 44 bytes of header, then the data: a file of 32,044 bytes holds one second at 32,000 bytes a
  // second, whatever its data chunk states.
  const std::string head = riff(fmt(16'000, 1, 16) + chunk("data", 0xFFFFFFFF));
  ASSERT_EQ(head.size(), 44u);
  EXPECT_EQ(readWavHeader(head, 32'044).value().duration_ms, 1000);
  EXPECT_EQ(readWavHeader(head, 44).value().duration_ms, 0);
  // A chunk stating less than the file holds is not taken at its word: decoders read to the
  // end, and an upstream bills what it decoded.
  EXPECT_EQ(
      readWavHeader(riff(fmt(16'000, 1, 16) + chunk("data", 2)), 32'044 * 2).value().duration_ms,
      2002);
}

TEST(ReadWavHeader, OnlyPlainPcmIsRead) {
  // Compressed audio in a WAV: its bytes hold far more seconds than PCM's would.
  for (const std::uint16_t format : {0x0002, 0x0011, 0x0031, 0x0055}) {  // ADPCM, IMA, GSM, MP3
    EXPECT_FALSE(readWavHeader(riff(fmt(8000, 1, 16, format) + chunk("data", 8000)), 100'000))
        << format;
  }
  EXPECT_TRUE(readWavHeader(riff(fmt(16'000, 1, 32, 3) + chunk("data", 64'000))).has_value());
  // A header claiming a rate or channels that shrink the duration of the bytes given.
  EXPECT_FALSE(readWavHeader(riff(fmt(192'000, 8, 16) + chunk("data", 8000))).has_value());
  EXPECT_FALSE(readWavHeader(riff(fmt(96'000, 1, 16) + chunk("data", 8000))).has_value());
  EXPECT_FALSE(readWavHeader(riff(fmt(16'000, 6, 16) + chunk("data", 8000))).has_value());
  // A byte rate or block size that disagrees with the samples.
  std::string lying = fmt(16'000, 1, 16);
  lying[8 + 8] = '\x7f';  // The byte rate's low byte.
  EXPECT_FALSE(readWavHeader(riff(lying + chunk("data", 8000))).has_value());
  std::string block = fmt(16'000, 1, 16);
  block[8 + 12] = 4;
  EXPECT_FALSE(readWavHeader(riff(block + chunk("data", 8000))).has_value());
}

TEST(ReadWavHeader, TheLargestDataChunkDoesNotOverflow) {
  const auto info = readWavHeader(riff(fmt(8000, 1, 8) + chunk("data", 0xFFFFFFFF)));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->duration_ms, (std::int64_t{0xFFFFFFFF} * 1000 + 7999) / 8000);
}

struct NotWav {
  std::string name;
  std::string bytes;
};

void PrintTo(const NotWav& c, std::ostream* os) { *os << c.name; }

class NotAWav : public testing::TestWithParam<NotWav> {};

TEST_P(NotAWav, IsNullopt) { EXPECT_FALSE(readWavHeader(GetParam().bytes).has_value()); }

/// A valid file's chunks, for the variations below.
const std::string kChunks = fmt(16'000, 1, 16) + chunk("data", 32'000);

INSTANTIATE_TEST_SUITE_P(
    All, NotAWav,
    testing::Values(NotWav{"empty", ""}, NotWav{"short", "RIFF"},
                    NotWav{"not_riff", "RIFX" + riff(kChunks).substr(4)},
                    NotWav{"not_wave", riff(kChunks, "AVI ")}, NotWav{"riff_header_only", riff("")},
                    NotWav{"no_fmt", riff(chunk("data", 32'000))},
                    NotWav{"data_before_fmt", riff(chunk("data", 32'000) + fmt(16'000, 1, 16))},
                    NotWav{"no_data", riff(fmt(16'000, 1, 16))},
                    NotWav{"zero_rate", riff(fmt(0, 1, 16) + chunk("data", 32'000))},
                    NotWav{"zero_channels", riff(fmt(16'000, 0, 16) + chunk("data", 32'000))},
                    NotWav{"zero_bits", riff(fmt(16'000, 1, 0) + chunk("data", 32'000))},
                    NotWav{"fmt_too_small", riff(chunk("fmt ", 14, std::string(14, '\x01')) +
                                                 chunk("data", 32'000))},
                    NotWav{"fmt_truncated", riff(fmt(16'000, 1, 16)).substr(0, 12 + 8 + 10)},
                    NotWav{"data_header_truncated",
                           riff(kChunks).substr(0, riff(kChunks).size() - 2)},
                    // A chunk whose declared size puts the data chunk past the bytes given.
                    NotWav{"data_beyond_the_bytes",
                           riff(fmt(16'000, 1, 16) + chunk("LIST", 5000, std::string(100, 'x')) +
                                chunk("data", 32'000))},
                    NotWav{"data_beyond_the_header_bytes",
                           riff(fmt(16'000, 1, 16) + chunk("LIST", 5000, std::string(5000, 'x')) +
                                chunk("data", 32'000))
                               .substr(0, kWavHeaderBytes)}),
    [](const testing::TestParamInfo<NotWav>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate
