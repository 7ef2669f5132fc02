#include "openai/chat_request.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "openai/fields.hpp"

namespace tollgate::openai {
namespace {

constexpr std::size_t kMaxStopSequences = 64;
constexpr std::array<std::string_view, 4> kServiceTiers{"auto", "default", "priority", "flex"};

/// What one known field must look like.
enum class Shape {
  Model,
  Messages,
  Number,
  TokenLimit,
  N,
  Stop,
  Int32,
  String,
  ServiceTier,
  Bool,
  StreamOptions,
  ArrayOfObjects,
  StringOrObject,
  Object,
  Tags,
  CacheOptions,
  Uuid,
};

struct Field {
  std::string_view name;
  Shape shape;
  bool forwarded;  ///< Sent to an OpenAI-compatible upstream.
};

constexpr std::array kFields{
    Field{"model", Shape::Model, false},
    Field{"messages", Shape::Messages, true},
    Field{"temperature", Shape::Number, true},
    Field{"top_p", Shape::Number, true},
    Field{"max_tokens", Shape::TokenLimit, false},
    Field{"max_completion_tokens", Shape::TokenLimit, false},
    Field{"n", Shape::N, false},
    Field{"stop", Shape::Stop, true},
    Field{"presence_penalty", Shape::Number, true},
    Field{"frequency_penalty", Shape::Number, true},
    Field{"seed", Shape::Int32, true},
    Field{"reasoning_effort", Shape::String, true},
    Field{"verbosity", Shape::String, true},
    Field{"service_tier", Shape::ServiceTier, false},
    Field{"stream", Shape::Bool, true},
    Field{"stream_options", Shape::StreamOptions, false},
    Field{"tools", Shape::ArrayOfObjects, true},
    Field{"tool_choice", Shape::StringOrObject, true},
    Field{"parallel_tool_calls", Shape::Bool, true},
    Field{"response_format", Shape::Object, true},
    // OpenAI fields beyond the spec's table that upstreams understand, forwarded as they are.
    Field{"logit_bias", Shape::Object, true},
    Field{"logprobs", Shape::Bool, true},
    Field{"top_logprobs", Shape::Int32, true},
    Field{"user", Shape::String, true},
    Field{"tollgate::tags", Shape::Tags, false},
    Field{"tollgate::cache_options", Shape::CacheOptions, false},
    Field{"tollgate::dryrun", Shape::Bool, false},
    Field{"tollgate::variant_name", Shape::String, false},
    Field{"tollgate::episode_id", Shape::Uuid, false},
    Field{"tollgate::deny_unknown_fields", Shape::Bool, false},
    Field{"tollgate::include_raw_usage", Shape::Bool, false},
    Field{"tollgate::include_raw_response", Shape::Bool, false},
};

/// kFields by name, open addressing with linear probing: looked up for every member of every
/// request, twice, a linear search cost a tenth of the decoder's instructions.
constexpr std::size_t kFieldSlots = 128;  // A power of two, over twice kFields' size.
static_assert(kFields.size() * 2 < kFieldSlots);

constexpr std::size_t fieldHash(std::string_view name) {
  if (name.empty()) {
    return 0;
  }
  constexpr std::size_t kMix = 131;
  return (name.size() * kMix + static_cast<unsigned char>(name.front()) * kMix +
          static_cast<unsigned char>(name.back()) +
          static_cast<unsigned char>(name[name.size() / 2])) %
         kFieldSlots;
}

/// Each slot: 1 + the index in kFields, or 0 for an empty slot.
constexpr std::array<std::uint8_t, kFieldSlots> kFieldIndex = [] {
  std::array<std::uint8_t, kFieldSlots> slots{};
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    std::size_t at = fieldHash(kFields[i].name);
    while (slots[at] != 0) {
      at = (at + 1) % kFieldSlots;
    }
    slots[at] = static_cast<std::uint8_t>(i + 1);
  }
  return slots;
}();

const Field* findField(std::string_view name) {
  for (std::size_t at = fieldHash(name); kFieldIndex[at] != 0; at = (at + 1) % kFieldSlots) {
    const Field& f = kFields[kFieldIndex[at] - 1];
    if (f.name == name) {
      return &f;
    }
  }
  return nullptr;
}

std::optional<Error> checkMessages(const rapidjson::Value& v) {
  if (!v.IsArray()) {
    return invalidType("messages", "an array of message objects");
  }
  if (v.Empty()) {
    return invalidValue("messages", "messages must contain at least 1 item");
  }
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    // Named only for a refusal: most requests have none.
    const auto where = [i] { return "messages[" + std::to_string(i) + "]"; };
    if (!v[i].IsObject()) {
      return invalidType(where(), "an object");
    }
    const rapidjson::Value* role = json::member(v[i], "role");
    if (role == nullptr) {
      return Error{ErrorKind::MissingParameter, where() + ".role is required", where() + ".role"};
    }
    if (!role->IsString()) {
      return invalidType(where() + ".role", "a string");
    }
  }
  return std::nullopt;
}

/// The content parts of validated `messages` whose type is not "text".
/// Counts the content parts that are not text into req.media_parts, and the audio ones of them
/// into req.audio_parts.
void countMediaParts(const rapidjson::Value& messages, ChatRequest& req) {
  for (const auto& message : messages.GetArray()) {
    const rapidjson::Value* content = json::member(message, "content");
    if (content == nullptr || !content->IsArray()) {
      continue;
    }
    for (const auto& part : content->GetArray()) {
      const rapidjson::Value* type = part.IsObject() ? json::member(part, "type") : nullptr;
      const std::string_view name = type != nullptr && type->IsString() ? type->GetString() : "";
      req.media_parts += name != "text" ? 1 : 0;
      req.audio_parts += name == "input_audio" ? 1 : 0;
    }
  }
}

std::optional<Error> checkStop(const rapidjson::Value& v) {
  if (!v.IsArray()) {
    return invalidValue("stop", "stop must be an array of strings (a bare string is not accepted)");
  }
  if (v.Size() > kMaxStopSequences) {
    return invalidValue("stop",
                        "stop accepts at most " + std::to_string(kMaxStopSequences) + " sequences");
  }
  for (const auto& item : v.GetArray()) {
    if (!item.IsString()) {
      return invalidValue("stop", "stop must be an array of strings");
    }
  }
  return std::nullopt;
}

/// Validates one present, non-null field and records it in `out`.
std::optional<Error> apply(const Field& f, const rapidjson::Value& v, ChatRequest& out,
                           std::optional<std::int64_t>& max_tokens,
                           std::optional<std::int64_t>& max_completion_tokens) {
  const std::string_view name = f.name;
  switch (f.shape) {
    case Shape::Model:
      if (!v.IsString()) {
        return invalidType(name, "a string");
      }
      if (v.GetStringLength() == 0) {
        return invalidValue(name, "model must not be empty");
      }
      out.model = json::view(v);
      return std::nullopt;
    case Shape::Messages:
      return checkMessages(v);
    case Shape::Number:
      return v.IsNumber() ? std::nullopt : std::optional(invalidType(name, "a number"));
    case Shape::TokenLimit:
      if (!v.IsNumber() || !(v.IsInt64() || v.IsUint64())) {
        return invalidType(name, "an integer");
      }
      if (!v.IsInt() || v.GetInt() < 0) {
        return invalidValue(name, std::string(name) + " must be an integer from 0 to 2147483647");
      }
      (name == "max_tokens" ? max_tokens : max_completion_tokens) = v.GetInt();
      return std::nullopt;
    case Shape::N:
      if (!v.IsNumber() || !(v.IsInt64() || v.IsUint64())) {
        return invalidType(name, "an integer");
      }
      if (!v.IsInt() || v.GetInt() != 1) {
        return invalidValue(name, "n must be 1 or omitted: only one choice is generated");
      }
      return std::nullopt;
    case Shape::Stop:
      return checkStop(v);
    case Shape::Int32:
      if (!v.IsNumber() || !(v.IsInt64() || v.IsUint64())) {
        return invalidType(name, "an integer");
      }
      if (!v.IsInt()) {
        return invalidValue(name, std::string(name) + " must fit in a 32-bit signed integer");
      }
      return std::nullopt;
    case Shape::String:
      if (!v.IsString()) {
        return invalidType(name, "a string");
      }
      if (name == "tollgate::variant_name") {
        out.variant_name = json::view(v);
      }
      return std::nullopt;
    case Shape::ServiceTier: {
      if (!v.IsString()) {
        return invalidType(name, "a string");
      }
      const std::string_view tier = json::view(v);
      if (std::find(kServiceTiers.begin(), kServiceTiers.end(), tier) == kServiceTiers.end()) {
        return invalidValue(name, "service_tier must be one of auto, default, priority, flex");
      }
      out.service_tier = tier;
      return std::nullopt;
    }
    case Shape::Bool:
      if (!v.IsBool()) {
        return invalidType(name, "a boolean");
      }
      if (name == "stream") {
        out.stream = v.GetBool();
      } else if (name == "tollgate::dryrun") {
        out.dryrun = v.GetBool();
      } else if (name == "tollgate::include_raw_usage") {
        out.include_raw_usage = v.GetBool();
      } else if (name == "tollgate::include_raw_response") {
        out.include_raw_response = v.GetBool();
      }
      return std::nullopt;
    case Shape::StreamOptions: {
      if (!v.IsObject()) {
        return invalidType(name, "an object");
      }
      const rapidjson::Value* usage = json::member(v, "include_usage");
      if (usage != nullptr && !usage->IsNull()) {
        if (!usage->IsBool()) {
          return invalidType("stream_options.include_usage", "a boolean");
        }
        out.include_usage = usage->GetBool();
      }
      return std::nullopt;
    }
    case Shape::ArrayOfObjects:
      if (!v.IsArray()) {
        return invalidType(name, "an array of objects");
      }
      for (const auto& item : v.GetArray()) {
        if (!item.IsObject()) {
          return invalidType(name, "an array of objects");
        }
      }
      return std::nullopt;
    case Shape::StringOrObject:
      return v.IsString() || v.IsObject()
                 ? std::nullopt
                 : std::optional(invalidType(name, "a string or an object"));
    case Shape::Object:
      return v.IsObject() ? std::nullopt : std::optional(invalidType(name, "an object"));
    case Shape::Tags:
      return decodeTags(v, out.tags);
    case Shape::CacheOptions:
      return decodeCacheOptions(v, out.cache);
    case Shape::Uuid:
      if (!v.IsString()) {
        return invalidType(name, "a string");
      }
      if (!ids::isUuid(json::view(v))) {
        return invalidValue(name, "tollgate::episode_id must be a UUID");
      }
      out.episode_id = json::view(v);
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> sentValue(const ChatRequest& request, std::size_t i) {
  if (request.sent_values.size() != request.body.MemberCount() || i >= request.sent_values.size()) {
    return std::nullopt;
  }
  const json::Span at = request.sent_values[i];
  return std::string_view(request.sent).substr(at.begin, at.end - at.begin);
}

bool isForwardedField(std::string_view name) {
  const Field* f = findField(name);
  return f != nullptr && f->forwarded;
}

Result<ChatRequest> decodeChatRequest(std::string& body) {
  ChatRequest req;
  req.sent = body;  // Before `body` is parsed in place.
  std::optional<std::int64_t> max_tokens;
  std::optional<std::int64_t> max_completion_tokens;
  bool has_messages = false;
  auto unknown = decodeObjectBody(
      req.body, body, [](std::string_view name) { return findField(name) != nullptr; },
      [&](std::string_view name, const rapidjson::Value& v) {
        has_messages = has_messages || name == "messages";
        return apply(*findField(name), v, req, max_tokens, max_completion_tokens);
      },
      &req.sent_values);
  if (!unknown) {
    return std::move(unknown).error();
  }

  if (req.model.empty()) {
    return Error{ErrorKind::MissingParameter, "model is required", "model"};
  }
  if (!has_messages) {
    return Error{ErrorKind::MissingParameter, "messages is required", "messages"};
  }
  if (auto err = unknown->refusal()) {
    return std::move(*err);
  }
  if (req.include_raw_usage && req.stream && !req.include_usage) {
    return invalidValue("tollgate::include_raw_usage",
                        "tollgate::include_raw_usage requires stream_options.include_usage "
                        "when streaming");
  }
  countMediaParts(req.body["messages"], req);
  if (const rapidjson::Value* modalities = json::member(req.body, "modalities");
      modalities != nullptr && modalities->IsArray()) {
    for (const auto& m : modalities->GetArray()) {
      req.audio_output =
          req.audio_output || (m.IsString() && std::string_view(m.GetString()) == "audio");
    }
  }
  if (max_tokens && max_completion_tokens) {
    req.max_completion_tokens = std::min(*max_tokens, *max_completion_tokens);
  } else {
    req.max_completion_tokens = max_tokens ? max_tokens : max_completion_tokens;
  }
  return req;
}

}  // namespace tollgate::openai
