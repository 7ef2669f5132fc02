// `tollgate admin …`: teams, users, members, invitations and API keys from the command line,
// acting as the operator on the same store the gateways use. Output for people by default,
// `--json` where documented (docs/admin.md); new secrets alone on a stdout line; exit 0 on
// success, 1 with one line on stderr for a user error, 2 for a usage error.
#pragma once

#include <span>
#include <string>

#include "cli/store_setup.hpp"
#include "config/config.hpp"

namespace tollgate::cli {

/// Runs one admin command; `args` follow `admin` and its store options.
int runAdmin(std::span<const std::string> args, const config::Config& config,
             const StoreSetup& setup);

}  // namespace tollgate::cli
