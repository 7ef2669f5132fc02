// The upstream client's response reader fed as a pooled connection feeds it: bytes in pieces,
// the body drained through a small buffer, the end of input taken as the peer closing.
// Invariants: the buffer stays bounded, body bytes never exceed input bytes, and a connection
// is called reusable only when its answer is complete and nothing follows it; a Retry-After
// header is read as a wait of at most a day, or not at all.
#include <algorithm>
#include <array>
#include <boost/asio/buffer.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_check.hpp"
#include "net/http_readers.hpp"
#include "routing/backoff.hpp"

using tollgate::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using tollgate::net::ResponseReader;
  using Step = ResponseReader::Step;
  if (size == 0) {
    return 0;
  }
  const std::size_t piece = 1 + data[0] % 200;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  boost::beast::flat_buffer buffer;
  ResponseReader reader;
  std::array<char, 37> out;  // Small on purpose: bodies come out in many pieces.
  std::size_t pos = 0;
  std::size_t body_bytes = 0;
  bool head_done = false;
  for (;;) {
    Step step = Step::NeedMore;
    if (!head_done) {
      step = reader.parseHead(buffer);
      if (step == Step::HeadDone) {
        head_done = true;
        check(reader.status() >= 200 || reader.status() < 100);
        const auto wait = tollgate::routing::parseRetryAfter(
            reader.header("Retry-After"), std::chrono::system_clock::from_time_t(784111777));
        check(!wait || (wait->count() >= 0 && *wait <= std::chrono::hours(24)));
        continue;
      }
    } else {
      std::size_t written = 0;
      step = reader.parseBody(buffer, out, written);
      body_bytes += written;
      check(written <= out.size() && body_bytes <= input.size());
      if (step == Step::Body) {
        continue;
      }
    }
    if (step == Step::Failed) {
      check(!reader.reusable(buffer));
      return 0;
    }
    if (step == Step::Complete) {
      check(!reader.reusable(buffer) || buffer.size() == 0);
      return 0;
    }
    check(buffer.size() <= ResponseReader::bufferLimit());
    if (pos == input.size()) {
      if (head_done && reader.finishAtEof() == Step::Complete) {
        check(reader.complete());
      }
      return 0;
    }
    const std::size_t room = tollgate::net::readRoom(buffer, ResponseReader::bufferLimit());
    check(room > 0);
    const std::size_t n = std::min({piece, room, input.size() - pos});
    boost::asio::buffer_copy(buffer.prepare(n), boost::asio::buffer(input.data() + pos, n));
    buffer.commit(n);
    pos += n;
  }
}
