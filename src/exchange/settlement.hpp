// The Settlement port: what the inference stage asks of billing, to commit an answer's charge
// before the answer's last byte leaves (so a client never holds a complete answer that was not
// charged), and what it tells billing about the answer for that. Which model answered, and as
// which variant, is in the exchange's record (RequestContext::served, ::variant).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "exchange/request_context.hpp"

namespace tollgate::exchange {

/// What an exchange produced, as far as the client saw it.
struct Produced {
  int status = 0;                   ///< The status the client saw (499 when it left).
  std::optional<TokenUsage> usage;  ///< As the upstream reported it, if it did.
  std::int64_t chunks = 0;          ///< Streams: chunks relayed to the client.
  std::size_t answer_bytes = 0;     ///< Whole answers: the body's size.
  std::int64_t audio_ms = 0;        ///< Transcriptions: the audio's duration, if reported.
  /// Counts reported before the final usage, which never came (Exchange::interimUsage).
  std::optional<TokenUsage> interim_usage;
  /// What the answer's last write will send once the charge is committed: a whole body, or a
  /// stream's last events and its end. With what was sent before, the whole answer.
  std::string_view tail = {};
  std::string_view content_type = {};  ///< A whole body's media type.
  /// Streams: content has reached the client. Such an answer can no longer be withheld: its
  /// settlement always writes a spend row for what was relayed.
  bool relayed = false;
};

class Settlement {
 public:
  virtual ~Settlement() = default;
  /// Records what was produced and commits its charge; called at most once per exchange, before
  /// its last byte (a whole body, or a stream's [DONE] or error event). False when the charge
  /// could not be committed: the answer must then not be completed. Called even when the client
  /// has hung up (the handler is being cancelled): what it was sent is charged.
  virtual boost::asio::awaitable<bool> settle(const Produced& produced) = 0;
};

}  // namespace tollgate::exchange
