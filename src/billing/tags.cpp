#include "billing/tags.hpp"

#include "core/json.hpp"

namespace tollgate::billing {

Tags spendTags(Tags tags, std::string_view user_agent, bool playground) {
  Tags out = std::move(tags);
  if (playground) {
    std::erase_if(out, [](const auto& tag) { return tag.first == "playground"; });
    out.emplace_back("playground", "true");
  }
  for (auto& [key, value] : out) {
    if (key == "source" && value == "playground") {
      key = "playground";
      value = "true";
    }
  }
  if (out.empty() && !user_agent.empty()) {
    // Printable ASCII only: a header may hold any byte, and the tag must be valid text.
    std::string ua;
    for (const char c : user_agent.substr(0, kMaxUserAgentTagBytes)) {
      if (c >= 0x20 && c < 0x7f) {
        ua += c;
      }
    }
    if (!ua.empty()) {
      out.emplace_back("user_agent", std::move(ua));
    }
  }
  return out;
}

std::string tagsJson(const Tags& tags) {
  // Quoted as json::Writer quotes, without its buffer: a spend row's tags are a few short pairs.
  std::string out = "{";
  for (const auto& [key, value] : tags) {
    if (out.size() > 1) {
      out += ',';
    }
    json::appendQuoted(key, out);
    out += ':';
    json::appendQuoted(value, out);
  }
  out += '}';
  return out;
}

}  // namespace tollgate::billing
