// Which store an invocation (serve, admin, migrate) uses: the config's [storage], else a SQLite
// database in the data directory (--data-dir, else $XDG_DATA_HOME/tollgate, else
// ~/.local/share/tollgate), and the server secret that goes with it.
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"
#include "store/connection.hpp"

namespace tollgate::cli {

struct StoreSetup {
  store::Location location;
  std::string server_secret;
  std::string data_dir;  ///< The data directory in use; empty when the config names the store.
};

/// Resolves (and creates, mode 0700, when used) the data directory and the secret file. Throws
/// std::runtime_error with a one-line reason.
StoreSetup resolveStore(const config::Config& config, const std::optional<std::string>& data_dir);

}  // namespace tollgate::cli
