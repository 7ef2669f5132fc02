#include "openai/embedding_response.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#include "core/base64.hpp"
#include "core/json.hpp"

namespace tollgate::openai {
namespace {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);

Error badUpstream(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

void writeHead(json::Writer& w) {
  w.startObject();
  w.field("object", "list");
  w.key("data");
  w.startArray();
}

void writeTail(json::Writer& w, const EmbeddingMeta& meta, const std::optional<Usage>& usage) {
  w.endArray();
  w.field("model", meta.model);
  w.key("usage");
  w.startObject();
  const Usage u = usage.value_or(Usage{});
  w.field("prompt_tokens", u.prompt_tokens);
  w.field("total_tokens", u.total_tokens);
  if (meta.pricing && usage) {
    w.key(kCostMember);
    w.rawNumber(costText(*meta.pricing, u));
  }
  w.endObject();
  w.endObject();
}

void writeVector(json::Writer& w, std::span<const float> v, bool base64) {
  if (base64) {
    w.string(floatsToBase64(v));
    return;
  }
  w.startArray();
  for (float f : v) {
    w.number(static_cast<double>(f));
  }
  w.endArray();
}

void writeItem(json::Writer& w, std::int64_t index) {
  w.startObject();
  w.field("object", "embedding");
  w.field("index", index);
  w.key("embedding");
}

}  // namespace

std::string floatsToBase64(std::span<const float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]);
    for (std::size_t b = 0; b < sizeof(float); ++b) {
      bytes[i * sizeof(float) + b] = static_cast<char>(bits & 0xFF);
      bits >>= 8;
    }
  }
  return base64::encode(bytes);
}

std::optional<std::vector<float>> base64ToFloats(std::string_view text) {
  const auto bytes = base64::decode(text);
  if (!bytes || bytes->size() % sizeof(float) != 0) {
    return std::nullopt;
  }
  std::vector<float> out(bytes->size() / sizeof(float));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = sizeof(float); b-- > 0;) {
      bits = bits << 8 | static_cast<unsigned char>((*bytes)[i * sizeof(float) + b]);
    }
    out[i] = std::bit_cast<float>(bits);
  }
  return out;
}

Result<std::string> rewriteEmbeddingList(std::string& body, const EmbeddingMeta& meta,
                                         std::optional<Usage>& usage) {
  rapidjson::Document doc;
  if (json::parseInPlace(doc, body, json::Keys::AllowDuplicates) || !doc.IsObject()) {
    return badUpstream("a body that is not a JSON object");
  }
  const rapidjson::Value* data = json::member(doc, "data");
  if (data == nullptr || !data->IsArray()) {
    return badUpstream("an embedding list without data");
  }
  if (const rapidjson::Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
    Usage reported;
    reported.prompt_tokens = json::intMember(*u, "prompt_tokens").value_or(0);
    reported.total_tokens = json::intMember(*u, "total_tokens").value_or(reported.prompt_tokens);
    usage = reported;
  }
  json::Writer w;
  writeHead(w);
  std::vector<float> floats;
  std::int64_t position = 0;
  for (const rapidjson::Value& item : data->GetArray()) {
    const rapidjson::Value* e = item.IsObject() ? json::member(item, "embedding") : nullptr;
    if (e == nullptr) {
      return badUpstream("an embedding item without an embedding");
    }
    writeItem(w, json::intMember(item, "index").value_or(position++));
    if (e->IsString()) {
      auto decoded = base64ToFloats(json::view(*e));
      if (!decoded) {
        return badUpstream("an embedding that is not base64 of float32 values");
      }
      if (meta.base64) {
        w.value(*e);  // Already as asked: passed through.
      } else {
        writeVector(w, *decoded, false);
      }
    } else if (e->IsArray()) {
      if (!meta.base64) {
        for (const auto& x : e->GetArray()) {
          if (!x.IsNumber()) {
            return badUpstream("an embedding holding something other than numbers");
          }
        }
        w.value(*e);
      } else {
        floats.clear();
        for (const auto& x : e->GetArray()) {
          if (!x.IsNumber()) {
            return badUpstream("an embedding holding something other than numbers");
          }
          floats.push_back(static_cast<float>(x.GetDouble()));
        }
        writeVector(w, floats, true);
      }
    } else {
      return badUpstream("an embedding that is neither numbers nor base64");
    }
    w.endObject();
  }
  writeTail(w, meta, usage);
  return w.take();
}

std::string encodeEmbeddingList(const std::vector<std::vector<float>>& vectors,
                                const EmbeddingMeta& meta, const Usage& usage) {
  json::Writer w;
  writeHead(w);
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    writeItem(w, static_cast<std::int64_t>(i));
    writeVector(w, vectors[i], meta.base64);
    w.endObject();
  }
  writeTail(w, meta, usage);
  return w.take();
}

}  // namespace tollgate::openai
