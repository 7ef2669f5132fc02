// The typed audio transcription request (spec §4.4): a multipart/form-data body decoded from the
// spooled upload. The audio itself is not copied: the request records where in the body its
// bytes are, and adapters send that range on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/spool.hpp"
#include "core/wav.hpp"
#include "openai/fields.hpp"

namespace tollgate::openai {

/// The `file` part: a byte range of the request body.
struct AudioFile {
  std::size_t offset = 0;
  std::size_t size = 0;
  std::string filename;      ///< As the client named it; "audio" when it gave none.
  std::string content_type;  ///< As the client gave it; application/octet-stream by default.
};

struct TranscriptionRequest {
  std::string model;
  AudioFile file;
  const Spool* body = nullptr;  ///< Holds the file's bytes.
  std::optional<WavInfo> wav;   ///< What the file's header says, when it is a WAV file.
  std::string response_format = "json";
  /// The OpenAI fields to forward besides `model` and `file`, as sent and in order (language,
  /// prompt, response_format, temperature, timestamp_granularities[], include[], …).
  std::vector<std::pair<std::string, std::string>> fields;
  bool dryrun = false;
  Tags tags;
};

/// The media type a response in `response_format` has: application/json for json and
/// verbose_json, text/plain for text, srt and vtt.
std::string_view transcriptionContentType(std::string_view response_format);

/// Decodes and validates a multipart/form-data body whose Content-Type is `content_type`:
/// `file` (exactly one) and `model` required (the file's WAV header, if it has one, is read);
/// `language` an ISO 639-1 code; `response_format` json, text, srt, verbose_json or vtt;
/// `temperature` a number from 0 to 1; `stream` only false; `tollgate::tags` a JSON object,
/// `tollgate::dryrun` true or false. Fields other than the file hold at most 64 KiB. Unknown fields
/// are refused (a form has no deny_unknown_fields switch, and a misspelt field would otherwise be
/// silently ignored).
Result<TranscriptionRequest> decodeTranscriptionRequest(const Spool& body,
                                                        std::string_view content_type);

}  // namespace tollgate::openai
