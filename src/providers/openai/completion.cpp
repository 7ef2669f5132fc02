#include "providers/openai/completion.hpp"

#include <algorithm>
#include <array>

#include "providers/openai/splice.hpp"

namespace tollgate::providers {
namespace {

/// What a whole answer without a usage object says it used.
constexpr std::string_view kNoUsage =
    R"({"prompt_tokens":0,"completion_tokens":0,"total_tokens":0})";

/// Room for the members we write beside the upstream's bytes, but for the model string and the
/// episode id.
constexpr std::size_t kOurMembersBytes = 256;

Error badUpstream(std::string_view what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + std::string(what), ""};
}

/// What a choice at fault is, by splice::Fault in the order of its values.
constexpr std::array<std::string_view, 4> kFaultText = {"", "a choice that is not an object",
                                                        "a choice without a message",
                                                        "a tool call without a function"};

}  // namespace

Result<std::string> spliceCompletion(const std::string& body, const openai::ResponseMeta& meta,
                                     std::optional<openai::Usage>& usage, std::string& model) {
  // The reader copies each string onto its stack: room for the longest from the start.
  constexpr std::size_t kMaxStartingStack = 64 * 1024;
  rapidjson::Reader reader(nullptr, std::min(body.size() + 1, kMaxStartingStack));
  const auto scan = splice::scan(body, splice::Shape::Completion, reader);
  if (!scan) {
    return badUpstream("a body that is not a JSON object");
  }
  if (scan->spans[splice::kChoices].type != splice::Type::Array || scan->choices == 0) {
    return badUpstream("no choices");
  }
  if (scan->fault != splice::Fault::None) {
    return badUpstream(kFaultText[static_cast<std::size_t>(scan->fault)]);
  }
  usage = scan->usage;
  model = splice::modelOf(body, *scan);
  const splice::Writer writer(meta);
  std::string out;
  out.reserve(body.size() + meta.model.size() + meta.episode_id.size() + kOurMembersBytes);
  writer.head(out, "chat.completion", body, *scan);
  writer.usage(out, body, *scan, usage, kNoUsage);
  // As the upstream wrote it, whatever it is; none when it sent none, or null.
  const splice::Span& raw = scan->spans[splice::kUsage];
  const std::string_view raw_usage = std::string_view(body).substr(raw.begin, raw.end - raw.begin);
  if (raw.type != splice::Type::None && raw_usage != "null") {
    writer.rawUsage(out, raw_usage);
  }
  writer.close(out, body);
  return out;
}

}  // namespace tollgate::providers
