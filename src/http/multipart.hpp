// A strict, incremental (sans-I/O) `multipart/form-data` parser (RFC 7578 over RFC 2046): the
// boundary of a Content-Type, and a parser fed the body in any split that streams each part's head
// and content to a sink, with exact body offsets, holding only a bounded number of bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/result.hpp"

namespace tollgate::http {

/// The boundary of a `multipart/form-data` Content-Type (media type case-insensitive, parameter
/// `boundary` possibly quoted; 1..70 chars of RFC 2046 bchars, not ending in a space).
/// Errors (ErrorKind::InvalidMultipart, param ""): not multipart/form-data, no boundary, a bad
/// boundary.
Result<std::string> multipartBoundary(std::string_view content_type);

/// The head of one part, from its header block.
struct PartHead {
  std::string name;                     ///< Content-Disposition: form-data; name="…"
  std::optional<std::string> filename;  ///< filename="…" when given (filename*=UTF-8''… percent-
                                        ///< decoded also accepted, and preferred when both are).
  std::string content_type;  ///< The part's Content-Type, empty when absent.
};

/// Parses one `multipart/form-data` body fed in pieces; build one per request.
class MultipartParser {
 public:
  struct Limits {
    std::size_t max_parts = 64;
    std::size_t max_head_bytes = 8 * 1024;  ///< Header block of one part, CRLFs included.
    std::size_t max_preamble_bytes = 4 * 1024;
  };

  /// Receives the parts in order. Any error returned stops the parser; feed() returns it.
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual std::optional<Error> partBegin(const PartHead& head) = 0;
    /// Bytes of the current part's content; `offset` is the absolute offset of data[0] in the
    /// whole body (counting from the first byte ever fed). A part's content may arrive in many
    /// calls; `data` is never empty.
    virtual std::optional<Error> partData(std::string_view data, std::size_t offset) = 0;
    virtual std::optional<Error> partEnd() = 0;
  };

  /// `boundary` as multipartBoundary() returned it; `sink` must outlive the parser.
  MultipartParser(std::string boundary, Sink& sink, Limits limits);
  /// With the default Limits.
  MultipartParser(std::string boundary, Sink& sink);

  /// Feeds the next bytes of the body, in any split (a boundary may be split across calls).
  std::optional<Error> feed(std::string_view bytes);
  /// The body ended: an error unless the closing delimiter `--boundary--` was seen.
  std::optional<Error> finish();

 private:
  enum class State { Preamble, AfterDelimiter, Headers, Content, Epilogue };

  /// Consumes what it can of `data` (whose first byte is at body offset `pos_`) and returns how
  /// many bytes it consumed; the rest must be fed again with what follows. Sets error_ on failure.
  std::size_t process(std::string_view data);
  std::size_t processPreamble(std::string_view data);
  std::size_t processAfterDelimiter(std::string_view data);
  std::size_t processHeaders(std::string_view data);
  std::size_t processContent(std::string_view data);
  /// Records the header line `line` (its CRLF removed) in head_.
  std::optional<Error> headerLine(std::string_view line);
  /// The header block ended: checks head_ and begins the part.
  std::optional<Error> headEnd();
  std::optional<Error> fail(Error error);

  std::string delimiter_;  ///< "\r\n--" + boundary.
  Sink& sink_;
  Limits limits_;
  State state_ = State::Preamble;
  std::string buffer_;   ///< Bytes fed but not consumed yet: a possible delimiter or header line.
  std::size_t pos_ = 0;  ///< Body offset of the first byte not consumed.
  std::size_t parts_ = 0;
  bool padding_ = false;  ///< Transport padding seen after the current delimiter.
  std::size_t head_bytes_ = 0;
  std::optional<std::string> disposition_;  ///< Raw headers of the part being read.
  std::optional<std::string> content_type_;
  bool finished_ = false;
  std::optional<Error> error_;
};

}  // namespace tollgate::http
