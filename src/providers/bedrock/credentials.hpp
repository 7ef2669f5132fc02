// The keys a Bedrock request is signed with: the configuration's (read at start and at reload),
// or a profile of a file in AWS's shared-credentials format, re-read whenever the file changes,
// so that keys an agent rotates by rewriting the file are used without a restart.
#pragma once

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"

namespace tollgate::providers::bedrock {

struct Keys {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< Empty unless temporary credentials.
};

/// The keys of `profile` in `text`, a shared-credentials file: `[name]` (or `[profile name]`)
/// sections of `key = value` lines (aws_access_key_id, aws_secret_access_key,
/// aws_session_token); blank lines and lines starting with '#' or ';' are skipped. An error
/// naming what is missing (never a value) when the profile or either key is absent.
Result<Keys> parseCredentialsFile(std::string_view text, std::string_view profile);

/// The keys `aws` configures: its own, or its file's profile. A file is read again when its
/// modification time, size or inode changed since it was last read; thread-safe. An
/// UpstreamAuthFailed error for a file that cannot be read or lacks the profile: nothing is sent.
Result<Keys> currentKeys(const config::AwsCredentials& aws);

}  // namespace tollgate::providers::bedrock
