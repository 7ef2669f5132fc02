#include "core/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::log {
namespace {

std::atomic<bool> json_lines{false};

std::string_view levelName(Level level) {
  switch (level) {
    case Level::Info:
      return "info";
    case Level::Warn:
      return "warn";
    case Level::Error:
      break;
  }
  return "error";
}

/// Starts a JSON line: its time first when lines are JSON, then its level and message.
void begin(json::Writer& w, Level level, std::string_view msg) {
  w.startObject();
  if (json_lines.load(std::memory_order_relaxed)) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    w.field("ts_ms", static_cast<std::int64_t>(now.count()));
  }
  w.field("level", levelName(level));
  // A message may quote a store's or a library's bytes: a JSON line stays valid UTF-8.
  w.field("msg", text::isValidUtf8(msg) ? std::string(msg) : text::printable(msg, msg.size()));
}

void write(std::string text) {
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

void useJson(bool json) { json_lines.store(json, std::memory_order_relaxed); }

void line(Level level, std::string_view msg) {
  if (!json_lines.load(std::memory_order_relaxed)) {
    write("tollgate: " + std::string(msg));
    return;
  }
  json::Writer w;
  begin(w, level, msg);
  w.endObject();
  write(w.take());
}

void event(Level level, std::string_view msg, std::string_view detail) {
  json::Writer w;
  begin(w, level, msg);
  w.field("detail", text::printable(detail));
  w.endObject();
  write(w.take());
}

}  // namespace tollgate::log
