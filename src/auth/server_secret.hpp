// The server secret: the key of the keyed hash under which API-key secrets and invitation
// tokens are stored. From the environment (config), or a file of its own beside the SQLite
// database, created once with mode 0600.
#pragma once

#include <string>

namespace tollgate::auth {

/// Reads the secret file at `path`, creating it (atomically, mode 0600) when absent. Throws
/// std::runtime_error when it cannot, or when the file is readable by others.
std::string loadOrCreateSecretFile(const std::string& path);

}  // namespace tollgate::auth
