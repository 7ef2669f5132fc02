#include "providers/dummy.hpp"

#include <chrono>
#include <vector>

#include <rapidjson/document.h>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::Value;

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

struct Answer {
  std::vector<std::string> pieces;
  std::string finish_reason = "stop";
  std::int64_t prompt_tokens = 0;
};

void head(json::Writer& w, const std::string& id, std::int64_t created, std::string_view object,
          std::string_view model) {
  w.field("id", id);
  w.field("object", object);
  w.field("created", created);
  w.field("model", model);
  w.field("system_fingerprint", "dummy");
}

void usage(json::Writer& w, const Answer& a) {
  const auto completion = static_cast<std::int64_t>(a.pieces.size());
  w.key("usage");
  w.startObject();
  w.field("prompt_tokens", a.prompt_tokens);
  w.field("completion_tokens", completion);
  w.field("total_tokens", a.prompt_tokens + completion);
  w.endObject();
}

std::string chunk(const std::string& id, std::int64_t created, std::string_view model,
                  const std::string* role, const std::string* content, const std::string* finish) {
  json::Writer w;
  w.startObject();
  head(w, id, created, "chat.completion.chunk", model);
  w.key("choices");
  w.startArray();
  w.startObject();
  w.field("index", 0);
  w.key("delta");
  w.startObject();
  if (role != nullptr) {
    w.field("role", *role);
  }
  if (content != nullptr) {
    w.field("content", *content);
  }
  w.endObject();
  w.key("finish_reason");
  finish != nullptr ? w.string(*finish) : w.null();
  w.endObject();
  w.endArray();
  w.endObject();
  return openai::sseData(w.take());
}

}  // namespace

LocalReply respondLocally(const std::string& upstream_body) {
  rapidjson::Document req;
  const Value* messages = json::parse(req, upstream_body) ? json::member(req, "messages") : nullptr;
  if (messages == nullptr || !messages->IsArray()) {
    return badRequest("messages is required");
  }
  const std::string model(json::stringMember(req, "model").value_or("echo"));
  Answer a;
  a.pieces = tokens(lastUserText(*messages));
  for (const Value& m : messages->GetArray()) {
    if (auto c = json::stringMember(m, "content")) {
      a.prompt_tokens += static_cast<std::int64_t>(tokens(*c).size());
    }
  }
  if (auto limit = json::intMember(req, "max_completion_tokens");
      limit && static_cast<std::size_t>(*limit) < a.pieces.size()) {
    a.pieces.resize(static_cast<std::size_t>(*limit));
    a.finish_reason = "length";
  }
  const std::string id = "chatcmpl-" + ids::uuidV7();
  const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();

  const Value* stream = json::member(req, "stream");
  if (stream == nullptr || !stream->IsBool() || !stream->GetBool()) {
    std::string text;
    for (const std::string& p : a.pieces) {
      text += p;
    }
    json::Writer w;
    w.startObject();
    head(w, id, created, "chat.completion", model);
    w.key("choices");
    w.startArray();
    w.startObject();
    w.field("index", 0);
    w.key("message");
    w.startObject();
    w.field("role", "assistant");
    w.field("content", text);
    w.endObject();
    w.field("finish_reason", a.finish_reason);
    w.endObject();
    w.endArray();
    usage(w, a);
    w.endObject();
    return {200, "application/json", w.take()};
  }

  const std::string role = "assistant";
  const std::string empty;
  std::string body = chunk(id, created, model, &role, &empty, nullptr);
  for (const std::string& p : a.pieces) {
    body += chunk(id, created, model, nullptr, &p, nullptr);
  }
  body += chunk(id, created, model, nullptr, nullptr, &a.finish_reason);
  json::Writer w;
  w.startObject();
  head(w, id, created, "chat.completion.chunk", model);
  w.key("choices");
  w.startArray();
  w.endArray();
  usage(w, a);
  w.endObject();
  body += openai::sseData(w.take());
  body += openai::kSseDone;
  return {200, "text/event-stream", body};
}

}  // namespace tollgate::providers
