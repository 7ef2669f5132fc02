// The gateway's own stderr lines: text as it always was, or one JSON object a line.
#include "core/log.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace tollgate::log {
namespace {

/// What `write` put on stderr.
template <typename Write>
std::string written(Write write) {
  testing::internal::CaptureStderr();
  write();
  return testing::internal::GetCapturedStderr();
}

class LogTest : public ::testing::Test {
 protected:
  ~LogTest() override { useJson(false); }
};

TEST_F(LogTest, TextLinesAreTheGatewaysOwn) {
  EXPECT_EQ(written([] { line(Level::Info, "reloaded configuration a (was b)"); }),
            "tollgate: reloaded configuration a (was b)\n");
  EXPECT_EQ(written([] { event(Level::Warn, "shutdown deadline passed", "x\ny"); }),
            "{\"level\":\"warn\",\"msg\":\"shutdown deadline passed\",\"detail\":\"x\\\\x0ay\"}\n");
}

TEST_F(LogTest, JsonLinesAreOneObjectEach) {
  useJson(true);
  const std::string text = written([] {
    line(Level::Error, "the store cannot be used: line one\nline two");
    line(Level::Warn, "bad bytes \xff\xfe in a message");
    event(Level::Error, "connection handler failed", "boom");
  });
  std::vector<rapidjson::Document> lines;
  std::size_t start = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start)) {
    rapidjson::Document& d = lines.emplace_back();
    d.Parse(text.substr(start, end - start).c_str());
    ASSERT_FALSE(d.HasParseError()) << text.substr(start, end - start);
  }
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_TRUE(lines[0]["ts_ms"].IsInt64());
  EXPECT_STREQ(lines[0]["level"].GetString(), "error");
  EXPECT_STREQ(lines[0]["msg"].GetString(), "the store cannot be used: line one\nline two");
  EXPECT_STREQ(lines[1]["level"].GetString(), "warn");
  EXPECT_STREQ(lines[1]["msg"].GetString(), "bad bytes \\xff\\xfe in a message");
  EXPECT_STREQ(lines[2]["msg"].GetString(), "connection handler failed");
  EXPECT_STREQ(lines[2]["detail"].GetString(), "boom");
  EXPECT_TRUE(lines[2]["ts_ms"].IsInt64());
}

}  // namespace
}  // namespace tollgate::log
