#include "cli/store_setup.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "auth/server_secret.hpp"

namespace tollgate::cli {
namespace {

std::string defaultDataDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/tollgate";
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') {
    throw std::runtime_error("no data directory: set HOME or XDG_DATA_HOME, or pass --data-dir");
  }
  return std::string(home) + "/.local/share/tollgate";
}

/// mkdir -p, the last component private to the user.
void makeDirs(const std::string& dir) {
  for (std::size_t at = 1; at != std::string::npos;) {
    at = dir.find('/', at + 1);
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot create " + part + ": " + std::strerror(errno));
    }
  }
}

std::string folderOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

}  // namespace

StoreSetup resolveStore(const config::Config& config, const std::optional<std::string>& data_dir) {
  StoreSetup s;
  if (config.storage.url.empty()) {
    s.data_dir = data_dir ? *data_dir : defaultDataDir();
    while (s.data_dir.size() > 1 && s.data_dir.back() == '/') {
      s.data_dir.pop_back();
    }
    makeDirs(s.data_dir);
    s.location = {store::Engine::Sqlite, s.data_dir + "/tollgate.db"};
  } else {
    std::string why;
    const auto where = store::parseLocation(config.storage.url, config.source_dir, why);
    if (!where) {
      throw std::runtime_error("storage.url " + why);
    }
    s.location = *where;
  }
  s.server_secret = config.storage.server_secret;
  if (s.server_secret.empty()) {
    if (s.location.engine != store::Engine::Sqlite) {
      throw std::runtime_error("storage.server_secret is required with postgresql");
    }
    s.server_secret = auth::loadOrCreateSecretFile(folderOf(s.location.target) + "/server_secret");
  }
  return s;
}

}  // namespace tollgate::cli
