#include "providers/openai/stream.hpp"

#include <cstring>

namespace tollgate::providers {

ChunkRewriter::ChunkRewriter(const openai::ResponseMeta& meta) : meta_(meta), writer_(meta) {}

Result<ChunkRewriter::Kind> ChunkRewriter::rewrite(const std::string& data, std::string& out,
                                                   std::optional<openai::Usage>& usage) {
  // Line breaks may separate tokens (they join multi-line data): the output must not carry
  // them, so such events take the slow path, which re-encodes.
  if (std::memchr(data.data(), '\n', data.size()) != nullptr) {
    return Kind::Other;
  }
  const auto scan = splice::scan(data, splice::Shape::Chunk, reader_);
  if (!scan || scan->fault != splice::Fault::None) {
    return Error{ErrorKind::UpstreamError,
                 "the upstream answered with a stream event that is not a JSON object", ""};
  }
  if (scan->error) {
    return Kind::Error;
  }
  if (model_.empty()) {
    model_ = splice::modelOf(data, *scan);
  }
  const bool first_usage = scan->sawUsage() && !usage_read_;
  if (first_usage) {
    usage = scan->usage;  // nullopt when not to be trusted: the charge is then estimated.
    usage_read_ = true;
  }
  const bool keep_usage = meta_.include_usage && first_usage;
  if (scan->sawUsage() && !keep_usage && scan->choices == 0) {
    return Kind::UsageOnly;
  }
  out.append("data: ");
  writer_.head(out, "chat.completion.chunk", data, *scan);
  if (keep_usage) {
    writer_.usage(out, data, *scan, usage, "{}");
    writer_.rawUsage(out, scan->value(data, splice::kUsage, splice::Type::Object, "{}"));
  }
  writer_.close(out, data);
  out.append("\n\n");
  return Kind::Chunk;
}

std::string oneLine(std::string_view data) {
  std::string out(data);
  bool in_string = false;
  bool escaped = false;
  for (char& c : out) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '\n') {
      c = ' ';
    }
  }
  return out;
}

}  // namespace tollgate::providers
