#include "api/embedding_items.hpp"

#include <algorithm>
#include <limits>

#include "api/cache_codecs.hpp"
#include "cache/cache_key.hpp"
#include "core/json.hpp"
#include "openai/chat_response.hpp"

namespace tollgate::api {
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

EmbeddingItems::EmbeddingItems(const rapidjson::Value& body, const std::string& request_key,
                               bool billed)
    : billed_(billed) {
  const rapidjson::Value* input = json::member(body, "input");
  if (input == nullptr) {
    return;
  }
  single_ = isOneItem(*input);
  if (single_) {
    keys_.push_back(cache::itemKey(request_key, *input));
  } else {
    for (const auto& item : input->GetArray()) {
      keys_.push_back(cache::itemKey(request_key, item));
    }
  }
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    missing_.push_back(i);
  }
}

void EmbeddingItems::found(std::vector<std::optional<store::CacheEntry>> entries) {
  found_ = std::move(entries);
  found_.resize(keys_.size());
  missing_.clear();
  for (std::size_t i = 0; i < found_.size(); ++i) {
    if (!found_[i]) {
      missing_.push_back(i);
    }
  }
}

bool EmbeddingItems::allFound() const { return !keys_.empty() && missing_.empty(); }

bool EmbeddingItems::anyFound() const { return missing_.size() < keys_.size(); }

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

void EmbeddingItems::narrow(openai::EmbeddingRequest& request) const {
  rapidjson::Document& body = request.body;
  auto input = body.FindMember("input");
  if (single_ || input == body.MemberEnd() || !anyFound()) {
    return;
  }
  rapidjson::Value kept(rapidjson::kArrayType);
  for (const std::size_t i : missing_) {
    kept.PushBack(
        rapidjson::Value(input->value[static_cast<rapidjson::SizeType>(i)], body.GetAllocator()),
        body.GetAllocator());
  }
  input->value = std::move(kept);
  request.inputs = missing_.size();
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
    for (std::size_t i = 0; i < keys_.size(); ++i) {
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

std::vector<Kept> EmbeddingItems::keep(const std::string&, const exchange::Transcript& sent,
                                       const exchange::TokenUsage& usage) const {
  rapidjson::Document doc;
  const rapidjson::Value* data =
      sent.streamed || json::parse(doc, sent.body) ? nullptr : listOf(doc, missing_.size());
  if (data == nullptr || missing_.empty()) {
    return {};
  }
  // The upstream counts a batch's tokens, not each item's: shared out, the rest to the first.
  const auto n = static_cast<std::int64_t>(missing_.size());
  std::vector<Kept> kept;
  for (std::size_t j = 0; j < missing_.size(); ++j) {
    const std::int64_t share = usage.prompt_tokens / n + (j == 0 ? usage.prompt_tokens % n : 0);
    kept.push_back(Kept{
        keys_[missing_[j]],
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

}  // namespace tollgate::api
