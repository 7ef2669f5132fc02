// The SSE parser on arbitrary streams. Invariant: how the bytes are split across reads (at a
// point taken from the first input byte) never changes the events parsed.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "openai/sse.hpp"

namespace {

using tollgate::fuzz::check;

constexpr std::size_t kMaxEvent = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using tollgate::openai::SseEvent;
  using tollgate::openai::SseParser;
  if (size == 0) {
    return 0;
  }
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t split = input.empty() ? 0 : data[0] % (input.size() + 1);
  SseParser whole_parser(kMaxEvent);
  std::vector<SseEvent> whole;
  const bool whole_ok = whole_parser.feed(input, whole);
  SseParser split_parser(kMaxEvent);
  std::vector<SseEvent> pieces;
  const bool split_ok = split_parser.feed(input.substr(0, split), pieces) &&
                        split_parser.feed(input.substr(split), pieces);
  check(whole_ok == split_ok);
  if (!whole_ok) {
    return 0;
  }
  check(whole.size() == pieces.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    check(whole[i].event == pieces[i].event && whole[i].data == pieces[i].data);
    check(whole[i].data.size() <= kMaxEvent);
  }
  check(whole_parser.pending() == split_parser.pending());
  return 0;
}
