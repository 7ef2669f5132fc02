// The transcription form on arbitrary multipart bodies: the strict multipart parser and the form's
// rules, then the body the OpenAI-compatible adapter sends upstream. The first input byte picks
// where the body is kept (memory, or a temporary file past a few bytes) and the boundary's
// spelling in the Content-Type. Invariants: an accepted form's file lies inside the body, and the
// upstream body we build from it is a form our own decoder accepts, with the same fields in the
// same order and the same file bytes.
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/spool.hpp"
#include "fuzz_check.hpp"
#include "openai/transcription_request.hpp"
#include "providers/openai/endpoints.hpp"

namespace {

using tollgate::fuzz::check;

std::string fileBytes(const tollgate::openai::TranscriptionRequest& r) {
  std::string out(r.file.size, '\0');
  const auto n = r.body->read(r.file.offset, out);
  check(n.ok() && *n == r.file.size);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  if (size == 0) {
    return 0;
  }
  const std::uint8_t mode = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  Spool spool;
  spool.limitMemory((mode & 1) != 0 ? 16 : body.size() + 1);
  check(spool.append(body));
  const std::string_view content_type = (mode & 2) != 0
                                            ? "multipart/form-data; boundary=\"B\"; charset=utf-8"
                                            : "Multipart/Form-Data;boundary=B";
  const auto request = openai::decodeTranscriptionRequest(spool, content_type);
  if (!request) {
    return 0;
  }
  check(request->file.offset <= spool.size() &&
        request->file.size <= spool.size() - request->file.offset);

  config::Provider provider;
  provider.type = config::ProviderType::OpenAI;
  provider.model = "whisper-1";
  const auto exchange = providers::openAiTranscription(*request, provider);
  const providers::UpstreamRequest sent = exchange->request().value();
  check(sent.attachment.has_value() && sent.attachment->source == &spool);
  Spool upstream;
  check(upstream.append(sent.body));
  check(upstream.append(fileBytes(*request)));
  check(upstream.append(sent.attachment->trailer));
  check(upstream.size() == sent.contentLength());
  const auto again = openai::decodeTranscriptionRequest(upstream, sent.content_type);
  check(again.ok());
  check(again->model == provider.model);
  check(again->fields == request->fields);
  check(fileBytes(*again) == fileBytes(*request));
  return 0;
}
