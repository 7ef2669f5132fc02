// What an adapter asks a transport to send: method, path, headers, body (and a spooled upload
// to stream after it), with the request's own deadlines. Plain data, free of Asio, so adapters
// and their tests never compile the coroutine machinery.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/spool.hpp"

namespace tollgate::providers {

/// What an adapter asks a transport to send. The transport adds Host, Content-Length and
/// User-Agent; everything else is here.
struct UpstreamRequest {
  std::string method = "POST";
  std::string path;  ///< Absolute path on the provider's host, e.g. "/v1/chat/completions".
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
