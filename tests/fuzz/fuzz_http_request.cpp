// The server's request reader fed as a session feeds it: the bytes arrive in pieces (their size
// taken from the first input byte), requests are pipelined (each next reader goes on with what
// is left in the buffer), and the buffer is bounded. Invariants: the buffer never grows past the
// reader's bound, a failure is one of the request errors, an accepted head obeys the framing rules.
#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "fuzz_check.hpp"
#include "net/http_readers.hpp"

namespace {

using tollgate::fuzz::check;

constexpr std::size_t kMaxHeader = 1024;
constexpr std::size_t kMaxBody = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using tollgate::ErrorKind;
  using tollgate::net::RequestReader;
  if (size == 0) {
    return 0;
  }
  const std::size_t piece = 1 + data[0] % 200;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  boost::beast::flat_buffer buffer;
  std::optional<RequestReader> reader;
  reader.emplace(kMaxHeader, kMaxBody);
  std::size_t pos = 0;
  for (;;) {
    const RequestReader::Step step = reader->parse(buffer);
    if (step == RequestReader::Step::Failed) {
      const ErrorKind kind = reader->error().kind;
      check(kind == ErrorKind::InvalidValue || kind == ErrorKind::HeadersTooLarge ||
            kind == ErrorKind::PayloadTooLarge);
      return 0;
    }
    if (step == RequestReader::Step::HeadDone) {
      check(!tollgate::net::checkRequestFraming(reader->request().fields(),
                                                reader->request().version()));
      continue;
    }
    if (step == RequestReader::Step::Complete) {
      check(reader->request().body().size() <= kMaxBody);
      reader.emplace(kMaxHeader, kMaxBody);  // The next pipelined request.
      if (pos == input.size() && buffer.size() == 0) {
        return 0;
      }
      continue;
    }
    check(buffer.size() <= reader->bufferLimit());
    if (pos == input.size()) {
      return 0;  // The client stopped sending.
    }
    const std::size_t room = tollgate::net::readRoom(buffer, reader->bufferLimit());
    check(room > 0);  // A full buffer must have made the reader fail.
    const std::size_t n = std::min({piece, room, input.size() - pos});
    boost::asio::buffer_copy(buffer.prepare(n), boost::asio::buffer(input.data() + pos, n));
    buffer.commit(n);
    pos += n;
  }
}
