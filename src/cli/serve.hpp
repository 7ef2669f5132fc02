// `tollgate serve`: opens and migrates the store, makes the first team and key on a new store
// (printing the key once), follows the store's keys in the background, and runs the gateway.
#pragma once

#include "cli/store_setup.hpp"
#include "config/config.hpp"

namespace tollgate::cli {

/// Returns the process exit code.
int serve(const config::Config& config, const StoreSetup& setup);

}  // namespace tollgate::cli
