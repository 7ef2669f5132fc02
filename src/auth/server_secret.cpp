#include "auth/server_secret.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "auth/api_key.hpp"

namespace tollgate::auth {
namespace {

constexpr std::size_t kSecretChars = 64;

std::string readSecret(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::runtime_error("cannot read the server secret " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw std::runtime_error("the server secret " + path + " is readable by others: chmod 600 it");
  }
  std::ifstream in(path);
  std::string secret;
  std::getline(in, secret);
  if (secret.size() < kSecretChars / 2) {
    throw std::runtime_error("the server secret " + path + " is too short or unreadable");
  }
  return secret;
}

}  // namespace

std::string loadOrCreateSecretFile(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) {
    return readSecret(path);
  }
  // Written under a private name and linked into place, so that a concurrent start never reads
  // a half-written file and exactly one secret wins.
  const std::string secret = randomBase62(kSecretChars);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw std::runtime_error("cannot create the server secret " + path + ": " +
                             std::strerror(errno));
  }
  const std::string line = secret + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  const bool linked = written && (::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST);
  ::unlink(tmp.c_str());
  if (!linked) {
    throw std::runtime_error("cannot create the server secret " + path);
  }
  return readSecret(path);
}

}  // namespace tollgate::auth
