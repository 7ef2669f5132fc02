// The tags a spend row records (spec §4.1 tollgate::tags): the request's tags as sent, except
// `source = "playground"`, which becomes the tag `playground = "true"`; with no tags, the
// request's User-Agent as `user_agent` (printable ASCII, at most 256 bytes).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tollgate::billing {

using Tags = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::size_t kMaxUserAgentTagBytes = 256;

/// The tags to record for a request whose validated `tollgate::tags` is `tags` (empty when
/// absent) and whose User-Agent header is `user_agent` (may be empty); a request from the
/// console's `playground` is always tagged playground=true.
Tags spendTags(Tags tags, std::string_view user_agent, bool playground = false);

/// `tags` as a JSON object, for the spend row.
std::string tagsJson(const Tags& tags);

}  // namespace tollgate::billing
