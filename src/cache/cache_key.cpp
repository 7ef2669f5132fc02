#include "cache/cache_key.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cache {
namespace {

using rapidjson::SizeType;
using rapidjson::Value;
using Member = Value::Member;

/// Written first into every key, so that a change of the key's recipe changes every key.
constexpr std::string_view kKeyVersion = "tollgate-cache-key-1";
constexpr std::string_view kItemVersion = "tollgate-cache-item-1";
constexpr std::string_view kDigestVersion = "tollgate-request-digest-1";

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

/// Which top-level members of a body the canonical text leaves out.
struct TopFilter {
  std::span<const std::string_view> ignored;
  bool drop_nulls = false;

  bool leavesOut(const Member& m) const {
    const std::string_view name = json::view(m.name);
    return (drop_nulls && m.value.IsNull()) ||
           std::find(ignored.begin(), ignored.end(), name) != ignored.end();
  }
};

template <class T>
void appendChars(T v, std::string& out) {
  std::array<char, 32> buf{};  // The shortest double is at most 24 characters.
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), ec == std::errc() ? end : buf.data());
}

void appendNumber(const Value& v, std::string& out) {
  if (v.IsInt64()) {
    appendChars(v.GetInt64(), out);
    return;
  }
  if (v.IsUint64()) {
    appendChars(v.GetUint64(), out);
    return;
  }
  const double d = v.GetDouble();
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  // An integral double in range converts exactly; -0 becomes 0.
  if (d == std::trunc(d)) {
    if (d >= -kTwoTo63 && d < kTwoTo63) {
      appendChars(static_cast<std::int64_t>(d), out);
      return;
    }
    if (d > 0 && d < kTwoTo64) {
      appendChars(static_cast<std::uint64_t>(d), out);
      return;
    }
  }
  appendChars(d, out);
}

/// An object's members sorted by name, each name once (the first), less those `filter` leaves
/// out. The sort is stable, so the first occurrence of a name comes first.
std::vector<const Member*> canonicalMembers(const Value& object, const TopFilter* filter) {
  std::vector<const Member*> all;
  all.reserve(object.MemberCount());
  for (const Member& m : object.GetObject()) {
    all.push_back(&m);
  }
  std::stable_sort(all.begin(), all.end(), [](const Member* a, const Member* b) {
    return json::view(a->name) < json::view(b->name);
  });
  std::vector<const Member*> kept;
  kept.reserve(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && json::view(all[i]->name) == json::view(all[i - 1]->name)) {
      continue;  // A repeated name: only its first occurrence counts, kept or left out.
    }
    if (filter == nullptr || !filter->leavesOut(*all[i])) {
      kept.push_back(all[i]);
    }
  }
  return kept;
}

/// Appends the canonical text of `root`, its top-level members filtered by `filter` (nullptr:
/// none left out). An explicit stack of open containers replaces recursion.
void appendCanonical(const Value& root, const TopFilter* filter, std::string& out) {
  struct Frame {
    const Value* container;
    std::vector<const Member*> members;  // Objects only: in canonical order.
    std::size_t next = 0;
  };
  std::vector<Frame> stack;
  // Writes a scalar, or the opening of a container whose frame it pushes.
  const auto open = [&](const Value& v, const TopFilter* f) {
    switch (v.GetType()) {
      case rapidjson::kNullType:
        out += "null";
        return;
      case rapidjson::kFalseType:
        out += "false";
        return;
      case rapidjson::kTrueType:
        out += "true";
        return;
      case rapidjson::kStringType:
        json::appendQuoted(json::view(v), out);
        return;
      case rapidjson::kNumberType:
        appendNumber(v, out);
        return;
      case rapidjson::kObjectType:
        out += '{';
        stack.push_back(Frame{&v, canonicalMembers(v, f)});
        return;
      case rapidjson::kArrayType:
        out += '[';
        stack.push_back(Frame{&v, {}});
        return;
    }
  };
  open(root, filter);
  while (!stack.empty()) {
    Frame& top = stack.back();
    const bool object = top.container->IsObject();
    const std::size_t size = object ? top.members.size() : top.container->Size();
    if (top.next == size) {
      out += object ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (top.next > 0) {
      out += ',';
    }
    const Value* child = nullptr;
    if (object) {
      const Member* m = top.members[top.next];
      json::appendQuoted(json::view(m->name), out);
      out += ':';
      child = &m->value;
    } else {
      child = &(*top.container)[static_cast<SizeType>(top.next)];
    }
    ++top.next;
    open(*child, nullptr);  // May push: `top` is not used after this.
  }
}

void check(bool ok) {
  if (!ok) {
    throw std::runtime_error("SHA-256 failed");
  }
}

struct ContextDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

/// SHA-256 over a sequence of length-prefixed fields (`<decimal length>:<bytes>`), so that no
/// two different sequences hash the same bytes.
class FramedHash {
 public:
  FramedHash() : ctx_(EVP_MD_CTX_new()) {
    check(ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1);
  }

  FramedHash& field(std::string_view bytes) {
    std::array<char, 24> length{};
    const auto [end, ec] =
        std::to_chars(length.data(), length.data() + length.size() - 1, bytes.size());
    check(ec == std::errc());
    *end = ':';
    check(EVP_DigestUpdate(ctx_.get(), length.data(), end + 1 - length.data()) == 1 &&
          EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1);
    return *this;
  }

  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int n = 0;
    check(EVP_DigestFinal_ex(ctx_.get(), digest.data(), &n) == 1);
    return text::hex({digest.data(), n});
  }

 private:
  std::unique_ptr<EVP_MD_CTX, ContextDeleter> ctx_;
};

}  // namespace

std::string canonicalJson(const rapidjson::Value& v) {
  std::string out;
  appendCanonical(v, nullptr, out);
  return out;
}

std::string sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int n = 0;
  check(EVP_Digest(bytes.data(), bytes.size(), digest.data(), &n, EVP_sha256(), nullptr) == 1);
  return text::hex({digest.data(), n});
}

std::string requestKey(const KeyParts& parts, const rapidjson::Value& body) {
  const TopFilter filter{parts.ignored, true};
  std::string canonical;
  appendCanonical(body, &filter, canonical);
  return FramedHash()
      .field(kKeyVersion)
      .field(parts.team_id)
      .field(parts.endpoint)
      .field(parts.model_id)
      .field(parts.variant)
      .field(canonical)
      .hex();
}

std::string itemKey(std::string_view request_key, const rapidjson::Value& item) {
  return FramedHash().field(kItemVersion).field(request_key).field(canonicalJson(item)).hex();
}

std::string requestDigest(const rapidjson::Value& body,
                          std::span<const std::pair<std::string_view, std::string_view>> extra) {
  FramedHash h;
  h.field(kDigestVersion).field(canonicalJson(body));
  for (const auto& [name, value] : extra) {
    h.field(name).field(value);
  }
  return h.hex();
}

}  // namespace tollgate::cache
