#include "http/recording_writer.hpp"

namespace tollgate::http {

boost::asio::awaitable<bool> RecordingWriter::send(Response response) {
  decorate(response);
  transcript_.status = response.status;
  transcript_.content_type = response.content_type;
  transcript_.streamed = false;
  transcript_.body = response.body;
  transcript_.complete = true;
  const bool sent = co_await inner_.send(std::move(response));
  co_return sent || outlive_client_;
}

boost::asio::awaitable<bool> RecordingWriter::beginStream(Response head) {
  decorate(head);
  transcript_.status = head.status;
  transcript_.content_type = head.content_type;
  transcript_.streamed = true;
  transcript_.body.clear();
  const bool begun = co_await inner_.beginStream(std::move(head));
  co_return begun || outlive_client_;
}

boost::asio::awaitable<bool> RecordingWriter::flush() {
  const bool flushed = co_await inner_.flush();
  co_return flushed || outlive_client_;
}

boost::asio::awaitable<bool> RecordingWriter::write(std::string_view piece) {
  transcript_.body += piece;
  // Once the client is gone there is no one to write to: the piece is only recorded.
  bool written = false;
  if (inner_.ok()) {
    written = co_await inner_.write(piece);
  }
  co_return written || outlive_client_;
}

boost::asio::awaitable<bool> RecordingWriter::endStream(std::string_view last) {
  transcript_.body += last;
  transcript_.complete = true;
  bool ended = false;
  if (inner_.ok()) {
    ended = co_await inner_.endStream(last);
  }
  co_return ended || outlive_client_;
}

}  // namespace tollgate::http
