// The inference cache for embeddings, input by input: each text (or token array) of a batch is
// kept under its own key (the request's parameters and the item), so a batch of which some inputs
// were embedded before sends the upstream only the new ones, and is charged for those; a batch
// whose every input was found is answered from the cache, charged nothing. The upstream's answer
// for the new inputs is merged with the found ones, each at its place, before it leaves.
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/codec.hpp"
#include "http/writer.hpp"
#include "openai/embedding_request.hpp"

namespace tollgate::cache {

class MergingWriter;

class EmbeddingItems final : public CacheCodec {
 public:
  /// The items of `request`'s `input` (one for a string or a token array; one per member of an
  /// array of strings or of token arrays), each keyed under the request's key. A partial read
  /// narrows `request` to the items not found.
  EmbeddingItems(openai::EmbeddingRequest& request, bool billed);
  ~EmbeddingItems() override;

  /// The items' keys under the request's `key`, in their order.
  std::vector<std::string> lookup(const std::string& key) override;
  /// Takes what the cache found for lookup()'s keys: the answer made of the found items when
  /// every one was found; else narrows the request to the items not found.
  std::optional<Hit> found(std::vector<std::optional<store::CacheEntry>> entries) override;
  bool partial() const override;
  /// `out`, or when the read was partial a writer that puts the found items back in the answer.
  http::ResponseWriter& writer(http::ResponseWriter& out) override;
  /// The upstream's answer for the items not found, with the found ones put back in their
  /// places; `answer` as it is when it is not an embedding list of as many items, each at the
  /// place its index says (the provider's reading of an upstream's list puts them so).
  std::string merge(const std::string& answer) const;

  /// One entry per item the upstream embedded (the answer `sent` before it was merged), each
  /// with its share of the counts charged.
  std::vector<Kept> keep(const std::string& key, const exchange::Transcript& sent,
                         const exchange::TokenUsage& usage) const override;

 private:
  std::vector<std::string> keysUnder(const std::string& key) const;
  /// Leaves in the request's `input` only the items not found, in order (and counts them).
  void narrow();
  /// The counts the found items were charged when they were first embedded.
  exchange::TokenUsage foundUsage() const;
  /// The answer made of the found items alone (all found), to the model string `model`.
  std::string answer(std::string_view model) const;

  openai::EmbeddingRequest& request_;
  std::vector<std::string> keys_;  ///< Those a read looked up (none: no read).
  std::vector<std::optional<store::CacheEntry>> found_;  ///< An entry or none per key read.
  std::vector<std::size_t> missing_;                     ///< Indexes of the items not found.
  bool single_ = false;  ///< `input` is one item, not an array of them.
  bool billed_;
  std::unique_ptr<MergingWriter> merging_;
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

}  // namespace tollgate::cache
