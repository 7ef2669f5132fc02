#include "core/spool.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace tollgate {
namespace {

/// Where temporary files go: $TMPDIR, else /tmp.
std::string tempDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

/// An unnamed file, readable by this process only; -1 when none can be made.
int unnamedFile() {
  const std::string dir = tempDir();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT)) {
    return fd;
  }
  // A file system without O_TMPFILE: a named file, unlinked at once.
  std::string path = dir + "/tollgate-upload-XXXXXX";
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) {
    ::unlink(path.c_str());
  }
  return fd;
}

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Spool::~Spool() { clear(); }

Spool::Spool(Spool&& other) noexcept
    : memory_(std::move(other.memory_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)),
      memory_limit_(other.memory_limit_) {}

Spool& Spool::operator=(Spool&& other) noexcept {
  if (this != &other) {
    clear();
    memory_ = std::move(other.memory_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
    memory_limit_ = other.memory_limit_;
  }
  return *this;
}

bool Spool::moveToFile() {
  fd_ = unnamedFile();
  if (fd_ < 0 || !writeAll(fd_, memory_)) {
    return false;
  }
  std::string().swap(memory_);  // Gives the memory back, not only the size.
  return true;
}

bool Spool::append(std::string_view bytes) {
  if (fd_ < 0 && size_ + bytes.size() > memory_limit_ && !moveToFile()) {
    return false;
  }
  if (fd_ >= 0) {
    if (!writeAll(fd_, bytes)) {
      return false;
    }
  } else {
    memory_.append(bytes);
  }
  size_ += bytes.size();
  return true;
}

Result<std::size_t> Spool::read(std::size_t offset, std::span<char> out) const {
  if (offset >= size_) {
    return std::size_t{0};
  }
  const std::size_t want = std::min(out.size(), size_ - offset);
  if (want == 0) {
    return std::size_t{0};
  }
  if (fd_ < 0) {
    std::memcpy(out.data(), memory_.data() + offset, want);
    return want;
  }
  for (;;) {
    const ssize_t n = ::pread(fd_, out.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return Error{ErrorKind::Internal, "the stored upload could not be read back", ""};
    }
    return static_cast<std::size_t>(n);
  }
}

void Spool::clear() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  memory_.clear();
  size_ = 0;
}

}  // namespace tollgate
