// A request body kept in memory up to a limit and in an unnamed temporary file past it, so that
// a large upload costs the process a bounded amount of memory however many arrive at once. The
// file has no name (it disappears with its descriptor, even after a crash).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace tollgate {

class Spool {
 public:
  Spool() = default;
  ~Spool();
  Spool(Spool&& other) noexcept;
  Spool& operator=(Spool&& other) noexcept;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  /// Past this many bytes, the content moves to a temporary file. Set before the first append.
  void limitMemory(std::size_t bytes) { memory_limit_ = bytes; }

  /// Appends `bytes`; false when the temporary file cannot be written (the disk is full).
  bool append(std::string_view bytes);

  std::size_t size() const { return size_; }
  bool inFile() const { return fd_ >= 0; }

  /// The whole content while it is in memory (not inFile()): parsed in place by JSON handlers.
  std::string& memory() { return memory_; }

  /// Copies up to `out.size()` bytes from `offset` into `out`: how many (0 past the end).
  Result<std::size_t> read(std::size_t offset, std::span<char> out) const;

  /// Makes the spool empty (and in memory) again.
  void clear();

 private:
  bool moveToFile();

  std::string memory_;
  int fd_ = -1;
  std::size_t size_ = 0;
  std::size_t memory_limit_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace tollgate
