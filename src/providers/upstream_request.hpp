// What an adapter asks a transport to send: method, path, headers, body (and a spooled upload
// to stream after it), with the request's own deadlines. Plain data, free of Asio, so adapters
// and their tests never compile the coroutine machinery.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/spool.hpp"

namespace tollgate::providers {

struct UpstreamRequest;

/// Signs a request as it is sent: the transport calls it once, with the Host header it writes and
/// the time, after every other header is set (AWS's SigV4 covers the host, the time and the body;
/// credentials that rotate are read then). An error sends nothing.
class Signer {
 public:
  virtual ~Signer() = default;
  virtual Status sign(UpstreamRequest& request, std::string_view host,
                      std::chrono::system_clock::time_point now) = 0;
};

/// What an adapter asks a transport to send. The transport adds Host, Content-Length and
/// User-Agent; everything else is here.
struct UpstreamRequest {
  std::string method = "POST";
  /// Absolute path on the provider's host, with its query when it has one, e.g.
  /// "/v1/chat/completions". Percent-encoded by the adapter.
  std::string path;
  /// Names and values are the gateway's own (config load keeps control characters out).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;

  /// Sent after `body`: a byte range of a spooled upload (an audio file), then `trailer`. The
  /// range is read piece by piece as it is sent, never whole into memory.
  struct Attachment {
    const Spool* source = nullptr;
    std::size_t offset = 0;
    std::size_t size = 0;
    std::string trailer;
  };
  std::optional<Attachment> attachment;

  /// Signs the request as it is sent (Bedrock's SigV4); owned by the attempt's Exchange, which
  /// outlives the call. None for a request whose headers are already complete.
  Signer* signer = nullptr;

  /// The request's own limits, beside the provider's timeouts (the earlier one applies): the whole
  /// answer must be in by `deadline`, and the first bytes of its body by `first_body_deadline`
  /// (a stream's first event). Default: none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point first_body_deadline =
      std::chrono::steady_clock::time_point::max();

  /// The Content-Length of the whole request body.
  std::size_t contentLength() const {
    return body.size() + (attachment ? attachment->size + attachment->trailer.size() : 0);
  }
};

}  // namespace tollgate::providers
