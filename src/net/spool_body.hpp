// A Beast body type that reads a request body into a Spool: memory up to the route's limit, a
// temporary file past it. Every request is read with it; JSON routes keep all in memory.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <boost/system/errc.hpp>
#include <cstdint>

#include "core/spool.hpp"

namespace tollgate::net {

struct SpoolBody {
  using value_type = Spool;

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>&, boost::beast::error_code& ec) { ec = {}; }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      std::size_t n = 0;
      for (auto it = boost::asio::buffer_sequence_begin(buffers);
           it != boost::asio::buffer_sequence_end(buffers); ++it) {
        const boost::asio::const_buffer b = *it;
        if (!body_.append({static_cast<const char*>(b.data()), b.size()})) {
          ec = boost::system::errc::make_error_code(boost::system::errc::no_space_on_device);
          return n;
        }
        n += b.size();
      }
      ec = {};
      return n;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace tollgate::net
