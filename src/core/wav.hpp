// What a WAV file's header says about its audio: the only audio format whose duration the
// gateway reads itself (for transcription holds and the built-in transcription model), and only
// when the header describes plain PCM consistently, so the duration is the file's, not a claim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace tollgate {

struct WavInfo {
  std::uint32_t sample_rate = 0;
  std::uint16_t channels = 0;
  std::uint16_t bits_per_sample = 0;
  std::int64_t duration_ms = 0;  ///< Of the data chunk, rounded up.
};

/// How many bytes of a file's start readWavHeader() looks at.
inline constexpr std::size_t kWavHeaderBytes = 4096;

/// The format and duration of a PCM RIFF/WAVE file from its first bytes; nullopt when it is not
/// one, or not plainly: a format other than integer or float PCM (MP3, GSM or ADPCM inside a
/// WAV), a byte rate or block size that disagrees with the sample format, more than two
/// channels or a rate past 48 kHz (which would shrink the duration read from a file of given
/// size), or a data chunk that does not start within them. `file_bytes` is the whole file's
/// size: the data is every byte after its chunk header, whatever size the header states
/// (streaming writers leave it at 0xFFFFFFFF, a client could state 2, and decoders read to the
/// end); when `file_bytes` is not given, the size the header states.
std::optional<WavInfo> readWavHeader(
    std::string_view start, std::size_t file_bytes = std::numeric_limits<std::size_t>::max());

}  // namespace tollgate
