#include "providers/bedrock/credentials.hpp"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace tollgate::providers::bedrock {
namespace {

/// A file larger than this is not a credentials file.
constexpr std::size_t kMaxFileBytes = 1024 * 1024;

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

Error authError(std::string message) {
  return Error{ErrorKind::UpstreamAuthFailed, std::move(message), ""};
}

/// What identifies one version of a file.
struct Stamp {
  std::int64_t mtime_ns = -1;
  std::int64_t size = -1;
  std::uint64_t inode = 0;
  bool operator==(const Stamp&) const = default;
};

struct Cached {
  Stamp stamp;
  std::string text;
};

std::mutex g_mutex;
std::map<std::string, Cached> g_files;  ///< By path: the text last read.

}  // namespace

Result<Keys> parseCredentialsFile(std::string_view text, std::string_view profile) {
  Keys keys;
  bool in_profile = false;
  bool found = false;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.front() == '#' || line.front() == ';') {
      continue;
    }
    if (line.front() == '[') {
      if (line.back() != ']') {
        in_profile = false;
        continue;
      }
      std::string_view name = trim(line.substr(1, line.size() - 2));
      if (name.starts_with("profile ")) {
        name = trim(name.substr(8));
      }
      in_profile = name == profile;
      found = found || in_profile;
      continue;
    }
    const std::size_t eq = line.find('=');
    if (!in_profile || eq == std::string_view::npos) {
      continue;
    }
    const std::string_view key = trim(line.substr(0, eq));
    const std::string value(trim(line.substr(eq + 1)));
    if (key == "aws_access_key_id") {
      keys.access_key_id = value;
    } else if (key == "aws_secret_access_key") {
      keys.secret_access_key = value;
    } else if (key == "aws_session_token") {
      keys.session_token = value;
    }
  }
  const std::string name(profile);
  if (!found) {
    return authError("the gateway's Bedrock credentials file has no profile [" + name + "]");
  }
  if (keys.access_key_id.empty() || keys.secret_access_key.empty()) {
    return authError("profile [" + name +
                     "] of the gateway's Bedrock credentials file needs aws_access_key_id and "
                     "aws_secret_access_key");
  }
  return keys;
}

Result<Keys> currentKeys(const config::AwsCredentials& aws) {
  if (aws.credentials_file.empty()) {
    return Keys{aws.access_key_id, aws.secret_access_key, aws.session_token};
  }
  const std::string& path = aws.credentials_file;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > kMaxFileBytes) {
    return authError(
        "the gateway's Bedrock credentials file cannot be read (missing, not a file, or too "
        "large); an operator must check its credentials_file");
  }
  const Stamp stamp{
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
      static_cast<std::int64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino)};
  std::string text;
  {
    std::lock_guard lock(g_mutex);
    auto it = g_files.find(path);
    if (it != g_files.end() && it->second.stamp == stamp) {
      text = it->second.text;
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        return authError(
            "the gateway's Bedrock credentials file cannot be read; an operator must check its "
            "credentials_file");
      }
      std::ostringstream all;
      all << in.rdbuf();
      text = all.str();
      g_files[path] = Cached{stamp, text};
    }
  }
  auto keys = parseCredentialsFile(text, aws.profile);
  if (!keys) {
    return authError(keys.error().message + "; an operator must check its credentials_file");
  }
  return keys;
}

}  // namespace tollgate::providers::bedrock
