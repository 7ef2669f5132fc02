#include "providers/anthropic/tools.hpp"

#include "openai/fields.hpp"
#include "providers/anthropic/anthropic.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

constexpr std::string_view kJsonObjectTool = "json_object";

/// Whether a response_format asks for JSON.
bool asksForJson(const Value* format) {
  const Value* type = format != nullptr ? json::member(*format, "type") : nullptr;
  return equals(type, "json_schema") || equals(type, "json_object");
}

/// Writes `"input_schema":<schema>`, or an object schema when `schema` is not an object.
void inputSchema(json::Writer& w, const Value* schema) {
  w.key("input_schema");
  if (schema != nullptr && schema->IsObject()) {
    w.value(*schema);
    return;
  }
  w.startObject();
  w.field("type", "object");
  w.endObject();
}

std::optional<Error> writeFunctions(json::Writer& w, const Value& tools,
                                    CacheBreakpoints& breakpoints) {
  w.key("tools");
  w.startArray();
  for (const Value& tool : tools.GetArray()) {
    const Value* fn = json::member(tool, "function");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!equals(json::member(tool, "type"), "function") || !isString(name)) {
      return openai::invalidValue("tools",
                                  "an Anthropic provider accepts function tools with a name only");
    }
    w.startObject();
    copy(w, "name", *name);
    if (const Value* d = json::member(*fn, "description"); isString(d)) {
      copy(w, "description", *d);
    }
    inputSchema(w, json::member(*fn, "parameters"));
    if (auto e = breakpoints.write(w, tool, "tools")) {
      return e;
    }
    w.endObject();
  }
  w.endArray();
  return std::nullopt;
}

std::optional<Error> writeToolChoice(json::Writer& w, const Value* choice, bool parallel) {
  std::string_view type = "auto";
  const Value* name = nullptr;
  if (choice != nullptr && choice->IsString()) {
    const std::string_view c = json::view(*choice);
    type = c == "required" ? "any" : c == "none" ? "none" : "auto";
  } else if (choice != nullptr && choice->IsObject()) {
    const Value* fn = json::member(*choice, "function");
    name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!isString(name)) {
      return openai::invalidValue("tool_choice",
                                  "tool_choice must name a function: {\"type\":\"function\","
                                  "\"function\":{\"name\":…}}");
    }
    type = "tool";
  } else if (parallel) {
    return std::nullopt;  // Anthropic's default is auto, with parallel tool use.
  }
  w.key("tool_choice");
  w.startObject();
  w.field("type", type);
  if (name != nullptr) {
    copy(w, "name", *name);
  }
  if (!parallel && type != "none") {
    w.field("disable_parallel_tool_use", true);
  }
  w.endObject();
  return std::nullopt;
}

/// response_format json_schema / json_object as one forced tool.
void writeJsonTool(json::Writer& w, const Value& format) {
  const Value* spec = json::member(format, "json_schema");
  const Value* name = spec != nullptr ? json::member(*spec, "name") : nullptr;
  const Value* schema = spec != nullptr ? json::member(*spec, "schema") : nullptr;
  const std::string_view tool = isString(name) ? json::view(*name) : kJsonObjectTool;
  w.key("tools");
  w.startArray();
  w.startObject();
  w.field("name", tool);
  w.field("description", "Answer with JSON that matches this schema.");
  inputSchema(w, schema);
  w.endObject();
  w.endArray();
  w.key("tool_choice");
  w.startObject();
  w.field("type", "tool");
  w.field("name", tool);
  w.endObject();
}

}  // namespace

bool wantsJson(const openai::ChatRequest& request) {
  return asksForJson(json::member(request.body, "response_format"));
}

std::optional<Error> writeTools(json::Writer& w, const Value& body, CacheBreakpoints& breakpoints) {
  const Value* tools = json::member(body, "tools");
  const bool has_tools = tools != nullptr && tools->IsArray() && !tools->Empty();
  const Value* format = json::member(body, "response_format");
  if (asksForJson(format)) {
    if (has_tools) {
      return openai::invalidValue(
          "response_format",
          "an Anthropic provider serves response_format json_schema and json_object "
          "with a forced tool, so they cannot be combined with tools");
    }
    writeJsonTool(w, *format);
    return std::nullopt;
  }
  if (!has_tools) {
    return std::nullopt;
  }
  if (auto e = writeFunctions(w, *tools, breakpoints)) {
    return e;
  }
  const Value* parallel = json::member(body, "parallel_tool_calls");
  const bool allow_parallel = parallel == nullptr || !parallel->IsBool() || parallel->GetBool();
  return writeToolChoice(w, json::member(body, "tool_choice"), allow_parallel);
}

}  // namespace tollgate::providers::anthropic
