// A ResponseWriter that passes a response on to another while keeping a copy of it in an
// exchange::Transcript: what an Idempotency-Key's retry is answered with, and what the inference
// cache keeps. When it outlives its client (a request with an Idempotency-Key), a client that
// left does not end the exchange: writes keep succeeding, only recorded, so that the answer runs
// to its end and is kept (and charged) whole.
#pragma once

#include "exchange/transcript.hpp"
#include "http/writer.hpp"

namespace tollgate::http {

class RecordingWriter final : public ResponseWriter {
 public:
  RecordingWriter(ResponseWriter& inner, exchange::Transcript& transcript, bool outlive_client)
      : inner_(inner), transcript_(transcript), outlive_client_(outlive_client) {}

  boost::asio::awaitable<bool> send(Response response) override;
  boost::asio::awaitable<bool> beginStream(Response head) override;
  boost::asio::awaitable<bool> flush() override;
  boost::asio::awaitable<bool> write(std::string_view piece) override;
  boost::asio::awaitable<bool> endStream(std::string_view last) override;
  bool ok() const override { return outlive_client_ || inner_.ok(); }

 private:
  ResponseWriter& inner_;
  exchange::Transcript& transcript_;
  bool outlive_client_;
};

}  // namespace tollgate::http
