#include "core/json.hpp"

namespace tollgate::json {

namespace {

/// RapidJSON stops at the first NUL, so text after an embedded one would be silently ignored.
bool hasEmbeddedNul(rapidjson::Document& doc, const std::string& text) {
  if (text.find('\0') == std::string::npos) {
    return false;
  }
  doc.SetNull();
  return true;
}

}  // namespace

bool parse(rapidjson::Document& doc, const std::string& text) {
  if (hasEmbeddedNul(doc, text)) {
    return false;
  }
  doc.Parse(text.c_str());
  return !doc.HasParseError();
}

bool parseInPlace(rapidjson::Document& doc, std::string& text) {
  if (hasEmbeddedNul(doc, text)) {
    return false;
  }
  doc.ParseInsitu(text.data());
  return !doc.HasParseError();
}

std::string serialize(const rapidjson::Value& v) {
  Writer w;
  w.value(v);
  return w.take();
}

const rapidjson::Value* member(const rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) {
    return nullptr;
  }
  const auto it =
      object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string_view> stringMember(const rapidjson::Value& object,
                                             std::string_view name) {
  const rapidjson::Value* v = member(object, name);
  if (v == nullptr || !v->IsString()) {
    return std::nullopt;
  }
  return view(*v);
}

std::optional<std::int64_t> intMember(const rapidjson::Value& object, std::string_view name) {
  const rapidjson::Value* v = member(object, name);
  if (v == nullptr || !v->IsInt64()) {
    return std::nullopt;
  }
  return v->GetInt64();
}

}  // namespace tollgate::json
