// What the client of one exchange was sent (status, media type, whether streamed, every byte of
// the body), kept while it is sent for the answer's later uses: an Idempotency-Key's replay and
// the inference cache. http::RecordingWriter fills it in; billing reads it when it settles.
#pragma once

#include <string>

namespace tollgate::exchange {

struct Transcript {
  int status = 0;
  std::string content_type;
  bool streamed = false;
  std::string body;       ///< A whole body, or a stream's bytes so far.
  bool complete = false;  ///< The whole answer was sent (a stream's end included).
};

}  // namespace tollgate::exchange
