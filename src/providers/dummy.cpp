#include "providers/dummy.hpp"

#include <rapidjson/document.h>

#include <chrono>
#include <vector>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::Value;

constexpr const char* kFingerprint = "dummy";

/// The text of the last user message: a string, or the text parts of a content array.
std::string lastUserText(const Value& messages) {
  for (auto it = messages.End(); it != messages.Begin();) {
    --it;
    if (json::stringMember(*it, "role") != "user") {
      continue;
    }
    const Value* content = json::member(*it, "content");
    if (content == nullptr) {
      return "";
    }
    if (content->IsString()) {
      return std::string(json::view(*content));
    }
    std::string text;
    if (content->IsArray()) {
      for (const Value& part : content->GetArray()) {
        if (auto t = json::stringMember(part, "text")) {
          text += (text.empty() ? "" : " ") + std::string(*t);
        }
      }
    }
    return text;
  }
  return "";
}

/// Splits text into pieces that each count as one token: words with their leading space.
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ' ') {
      out.emplace_back(text.substr(start, i - start));
      start = i;
    }
  }
  return out;
}

LocalReply badRequest(std::string_view message) {
  json::Writer w;
  w.startObject();
  w.key("error");
  w.startObject();
  w.field("message", message);
  w.field("type", "invalid_request_error");
  w.endObject();
  w.endObject();
  return {400, "application/json", w.take()};
}

}  // namespace

LocalReply respondLocally(const std::string& upstream_body) {
  rapidjson::Document req;
  const Value* messages =
      !json::parse(req, upstream_body) ? json::member(req, "messages") : nullptr;
  if (messages == nullptr || !messages->IsArray()) {
    return badRequest("messages is required");
  }
  // The answer is written with our own encoder: the adapter reads it like any upstream's.
  const openai::ResponseMeta meta{std::string(json::stringMember(req, "model").value_or("echo")),
                                  "", "default", false, false};
  std::vector<std::string> pieces = tokens(lastUserText(*messages));
  std::string finish_reason = "stop";
  openai::Usage usage;
  for (const Value& m : messages->GetArray()) {
    if (auto c = json::stringMember(m, "content")) {
      usage.prompt_tokens += static_cast<std::int64_t>(tokens(*c).size());
    }
  }
  if (auto limit = json::intMember(req, "max_completion_tokens");
      limit && static_cast<std::size_t>(*limit) < pieces.size()) {
    pieces.resize(static_cast<std::size_t>(*limit));
    finish_reason = "length";
  }
  usage.completion_tokens = static_cast<std::int64_t>(pieces.size());
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const std::string id = "chatcmpl-" + ids::uuidV7();
  const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();

  const Value* stream = json::member(req, "stream");
  if (stream == nullptr || !stream->IsBool() || !stream->GetBool()) {
    openai::Choice choice;
    choice.finish_reason = finish_reason;
    choice.content.emplace();
    for (const std::string& p : pieces) {
      choice.content->append(p);
    }
    openai::Completion c;
    c.id = id;
    c.created = created;
    c.system_fingerprint = kFingerprint;
    c.choices.push_back(std::move(choice));
    c.usage = usage;
    return {200, "application/json", openai::encodeCompletion(c, meta)};
  }

  std::string body;
  const auto event = [&](std::optional<openai::ChoiceDelta> delta, std::optional<openai::Usage> u) {
    openai::Chunk c;
    c.id = id;
    c.created = created;
    c.system_fingerprint = kFingerprint;
    if (delta) {
      c.choices.push_back(std::move(*delta));
    }
    c.usage = u;
    body += openai::sseData(openai::encodeChunk(c, meta));
  };
  openai::ChoiceDelta first;
  first.role = "assistant";
  first.content = "";
  event(std::move(first), std::nullopt);
  for (std::string& p : pieces) {
    openai::ChoiceDelta d;
    d.content = std::move(p);
    event(std::move(d), std::nullopt);
  }
  openai::ChoiceDelta last;
  last.finish_reason = finish_reason;
  event(std::move(last), std::nullopt);
  event(std::nullopt, usage);
  body += openai::kSseDone;
  return {200, "text/event-stream", body};
}

}  // namespace tollgate::providers
