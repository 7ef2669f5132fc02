#include "cache/embedding_items.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "cache/cache_key.hpp"
#include "cache/codecs.hpp"
#include "core/json.hpp"
#include "openai/chat_response.hpp"

namespace tollgate::cache {
namespace {

constexpr int kStatusOk = 200;

/// Whether `input` is one item: a string, or an array of token ids.
bool isOneItem(const rapidjson::Value& input) {
  return !input.IsArray() || input.Empty() || !(input[0].IsString() || input[0].IsArray());
}

/// The `data` array of an embedding list, when `doc` is one with `n` items, each at the place
/// its index says.
const rapidjson::Value* listOf(const rapidjson::Document& doc, std::size_t n) {
  const rapidjson::Value* data = doc.IsObject() ? json::member(doc, "data") : nullptr;
  if (data == nullptr || !data->IsArray() || data->Size() != n) {
    return nullptr;
  }
  std::int64_t place = 0;
  for (const auto& item : data->GetArray()) {
    if (!item.IsObject() || json::member(item, "embedding") == nullptr ||
        json::intMember(item, "index") != place++) {
      return nullptr;
    }
  }
  return data;
}

void writeItem(json::Writer& w, std::size_t index, std::string_view embedding_json) {
  w.startObject();
  w.field("object", "embedding");
  w.field("index", static_cast<std::int64_t>(index));
  w.key("embedding");
  w.raw(embedding_json);
  w.endObject();
}

}  // namespace

EmbeddingItems::EmbeddingItems(openai::EmbeddingRequest& request, bool billed)
    : request_(request), billed_(billed) {
  const rapidjson::Value* input = json::member(request.body, "input");
  single_ = input == nullptr || isOneItem(*input);
}

EmbeddingItems::~EmbeddingItems() = default;

std::vector<std::string> EmbeddingItems::lookup(const std::string& key) {
  keys_ = keysUnder(key);
  return keys_;
}

std::vector<std::string> EmbeddingItems::keysUnder(const std::string& key) const {
  std::vector<std::string> keys;
  const rapidjson::Value* input = json::member(request_.body, "input");
  if (input == nullptr) {
    return keys;
  }
  if (single_) {
    keys.push_back(itemKey(key, *input));
    return keys;
  }
  for (const auto& item : input->GetArray()) {
    keys.push_back(itemKey(key, item));
  }
  return keys;
}

std::optional<Hit> EmbeddingItems::found(std::vector<std::optional<store::CacheEntry>> entries) {
  found_ = std::move(entries);
  missing_.clear();
  for (std::size_t i = 0; i < found_.size(); ++i) {
    if (!found_[i]) {
      missing_.push_back(i);
    }
  }
  if (!found_.empty() && missing_.empty()) {
    return Hit{Replay{false, "application/json", answer(request_.model)}, foundUsage()};
  }
  narrow();
  return std::nullopt;
}

bool EmbeddingItems::partial() const { return missing_.size() < found_.size(); }

http::ResponseWriter& EmbeddingItems::writer(http::ResponseWriter& out) {
  if (!partial()) {
    return out;
  }
  merging_ = std::make_unique<MergingWriter>(out, *this);
  return *merging_;
}

exchange::TokenUsage EmbeddingItems::foundUsage() const {
  // Saturated: counts read from the store are summed as untrusted ones are.
  exchange::TokenUsage usage;
  for (const auto& e : found_) {
    if (e &&
        __builtin_add_overflow(usage.prompt_tokens, std::max<std::int64_t>(e->prompt_tokens, 0),
                               &usage.prompt_tokens)) {
      usage.prompt_tokens = std::numeric_limits<std::int64_t>::max();
    }
  }
  return usage;
}

std::string EmbeddingItems::answer(std::string_view model) const {
  json::Writer w;
  w.startObject();
  w.field("object", "list");
  w.key("data");
  w.startArray();
  for (std::size_t i = 0; i < found_.size(); ++i) {
    writeItem(w, i, found_[i]->body);
  }
  w.endArray();
  w.field("model", model);
  const std::int64_t tokens = foundUsage().prompt_tokens;
  w.key("usage");
  w.startObject();
  w.field("prompt_tokens", tokens);
  w.field("total_tokens", tokens);
  if (billed_) {
    w.field(openai::kCostMember, std::int64_t{0});
  }
  w.endObject();
  w.key(kCacheHitMember);
  w.boolean(true);
  w.endObject();
  return w.take();
}

void EmbeddingItems::narrow() {
  rapidjson::Document& body = request_.body;
  auto input = body.FindMember("input");
  if (single_ || input == body.MemberEnd() || !partial()) {
    return;
  }
  rapidjson::Value kept(rapidjson::kArrayType);
  for (const std::size_t i : missing_) {
    kept.PushBack(
        rapidjson::Value(input->value[static_cast<rapidjson::SizeType>(i)], body.GetAllocator()),
        body.GetAllocator());
  }
  input->value = std::move(kept);
  request_.inputs = missing_.size();
}

std::string EmbeddingItems::merge(const std::string& answer) const {
  rapidjson::Document doc;
  const rapidjson::Value* data = json::parse(doc, answer) ? nullptr : listOf(doc, missing_.size());
  if (data == nullptr) {
    return answer;
  }
  json::Writer w;
  w.startObject();
  for (const auto& m : doc.GetObject()) {
    w.key(json::view(m.name));
    if (json::view(m.name) != "data") {
      w.value(m.value);
      continue;
    }
    w.startArray();
    std::size_t next = 0;  // The upstream's next item.
    for (std::size_t i = 0; i < found_.size(); ++i) {
      if (found_[i]) {
        writeItem(w, i, found_[i]->body);
      } else {
        const auto& item = (*data)[static_cast<rapidjson::SizeType>(next++)];
        writeItem(w, i, json::serialize(*json::member(item, "embedding")));
      }
    }
    w.endArray();
  }
  w.endObject();
  return w.take();
}

std::vector<Kept> EmbeddingItems::keep(const std::string& key, const exchange::Transcript& sent,
                                       const exchange::TokenUsage& usage) const {
  // The items the upstream embedded: those the read did not find, or all when there was none.
  const std::vector<std::string> keys = keys_.empty() ? keysUnder(key) : keys_;
  std::vector<std::size_t> embedded = missing_;
  if (found_.empty()) {
    embedded.resize(keys.size());
    std::iota(embedded.begin(), embedded.end(), std::size_t{0});
  }
  rapidjson::Document doc;
  const rapidjson::Value* data =
      sent.streamed || json::parse(doc, sent.body) ? nullptr : listOf(doc, embedded.size());
  if (data == nullptr || embedded.empty()) {
    return {};
  }
  // The upstream counts a batch's tokens, not each item's: shared out, the rest to the first.
  const auto n = static_cast<std::int64_t>(embedded.size());
  std::vector<Kept> kept;
  for (std::size_t j = 0; j < embedded.size(); ++j) {
    const std::int64_t share = usage.prompt_tokens / n + (j == 0 ? usage.prompt_tokens % n : 0);
    kept.push_back(Kept{
        keys[embedded[j]],
        json::serialize(*json::member((*data)[static_cast<rapidjson::SizeType>(j)], "embedding")),
        {share, 0}});
  }
  return kept;
}

boost::asio::awaitable<bool> MergingWriter::send(http::Response response) {
  decorate(response);
  if (response.status == kStatusOk) {
    response.body = items_.merge(response.body);
  }
  co_return co_await inner_.send(std::move(response));
}

boost::asio::awaitable<bool> MergingWriter::beginStream(http::Response head) {
  decorate(head);
  co_return co_await inner_.beginStream(std::move(head));
}

boost::asio::awaitable<bool> MergingWriter::flush() { co_return co_await inner_.flush(); }

boost::asio::awaitable<bool> MergingWriter::write(std::string_view piece) {
  co_return co_await inner_.write(piece);
}

boost::asio::awaitable<bool> MergingWriter::endStream(std::string_view last) {
  co_return co_await inner_.endStream(last);
}

}  // namespace tollgate::cache
