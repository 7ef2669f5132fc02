// The inference cache for embeddings, input by input: each text (or token array) of a batch is
// kept under its own key (the request's parameters and the item), so a batch of which some inputs
// were embedded before sends the upstream only the new ones, and is charged for those; a batch
// whose every input was found is answered from the cache, charged nothing. The upstream's answer
// for the new inputs is merged with the found ones, each at its place, before it leaves.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/cache_codec.hpp"
#include "http/writer.hpp"
#include "openai/embedding_request.hpp"

namespace tollgate::api {

class EmbeddingItems final : public CacheCodec {
 public:
  /// The items of `body`'s `input` (one for a string or a token array; one per member of an
  /// array of strings or of token arrays), keyed under `request_key`.
  EmbeddingItems(const rapidjson::Value& body, const std::string& request_key, bool billed);

  const std::vector<std::string>& keys() const { return keys_; }
  /// Takes what the cache found for keys(), in their order.
  void found(std::vector<std::optional<store::CacheEntry>> entries);
  bool allFound() const;
  bool anyFound() const;
  /// The counts the found items were charged when they were first embedded.
  exchange::TokenUsage foundUsage() const;
  /// The answer made of the found items alone (all found), to the model string `model`.
  std::string answer(std::string_view model) const;
  /// Leaves in `request`'s `input` only the items not found, in order (and counts them).
  void narrow(openai::EmbeddingRequest& request) const;
  /// The upstream's answer for the items not found, with the found ones put back in their
  /// places; `answer` as it is when it is not an embedding list of as many items, each at the
  /// place its index says (the provider's reading of an upstream's list puts them so).
  std::string merge(const std::string& answer) const;

  /// One entry per item the upstream embedded (the answer `sent` before it was merged), each
  /// with its share of the counts charged.
  std::vector<Kept> keep(const std::string& key, const exchange::Transcript& sent,
                         const exchange::TokenUsage& usage) const override;

 private:
  std::vector<std::string> keys_;
  std::vector<std::optional<store::CacheEntry>> found_;
  std::vector<std::size_t> missing_;  ///< Indexes of the items not found (all, until found()).
  bool single_ = false;               ///< `input` is one item, not an array of them.
  bool billed_;
};

/// Passes a response on with an EmbeddingItems' found items merged into its embedding list.
class MergingWriter final : public http::ResponseWriter {
 public:
  MergingWriter(http::ResponseWriter& inner, const EmbeddingItems& items)
      : inner_(inner), items_(items) {}
  boost::asio::awaitable<bool> send(http::Response response) override;
  boost::asio::awaitable<bool> beginStream(http::Response head) override;
  boost::asio::awaitable<bool> flush() override;
  boost::asio::awaitable<bool> write(std::string_view piece) override;
  boost::asio::awaitable<bool> endStream(std::string_view last) override;
  bool ok() const override { return inner_.ok(); }

 private:
  http::ResponseWriter& inner_;
  const EmbeddingItems& items_;
};

}  // namespace tollgate::api
