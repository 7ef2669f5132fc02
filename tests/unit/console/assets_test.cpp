// The console's asset table and page responses: which Accept-Encoding values get the gzipped
// bytes, the long cache lifetime of hashed names, the shell that loads the built bundle, the
// strict Content-Security-Policy on every page, and the assets this binary was built with.
#include "console/assets.hpp"

#include <gtest/gtest.h>

#include <array>

namespace tollgate::console {
namespace {

std::string_view headerOf(const http::Response& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) {
      return v;
    }
  }
  return {};
}

constexpr std::array kFake{
    Asset{"main-ABC123.js", "text/javascript; charset=utf-8", "plain-js", "gz-js"},
    Asset{"main-DEF456.css", "text/css; charset=utf-8", "plain-css", "gz-css"},
};

TEST(ConsoleAssets, FindsByExactNameOnly) {
  EXPECT_EQ(findAsset(kFake, "main-ABC123.js"), &kFake[0]);
  EXPECT_EQ(findAsset(kFake, "main-DEF456.css"), &kFake[1]);
  EXPECT_EQ(findAsset(kFake, "main-ABC123.js.gz"), nullptr);
  EXPECT_EQ(findAsset(kFake, "../main-ABC123.js"), nullptr);
  EXPECT_EQ(findAsset(kFake, ""), nullptr);
  EXPECT_EQ(firstWithExtension(kFake, ".css"), &kFake[1]);
  EXPECT_EQ(firstWithExtension(kFake, ".png"), nullptr);
}

TEST(ConsoleAssets, AcceptEncodingChoosesGzip) {
  struct Case {
    std::string_view header;
    bool gzip;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"gzip", true},
           {"gzip, deflate, br", true},
           {"br;q=1.0, GZIP;q=0.5", true},
           {"x-gzip", true},
           {"*", true},
           {" deflate , gzip ; q=0.001", true},
           {"", false},
           {"identity", false},
           {"br, deflate", false},
           {"gzip;q=0", false},
           {"gzip; q=0.000", false},
           {"gzipped", false},
       }) {
    EXPECT_EQ(acceptsGzip(c.header), c.gzip) << "Accept-Encoding: " << c.header;
  }
}

TEST(ConsoleAssets, AnAssetIsGzippedWhenAcceptedAndCachedForAYear) {
  const http::Response gz = assetResponse(kFake[0], "gzip, br");
  EXPECT_EQ(gz.status, 200);
  EXPECT_EQ(gz.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(gz.body, "gz-js");
  EXPECT_EQ(headerOf(gz, "Content-Encoding"), "gzip");
  EXPECT_EQ(headerOf(gz, "Vary"), "Accept-Encoding");
  EXPECT_EQ(headerOf(gz, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(headerOf(gz, "X-Content-Type-Options"), "nosniff");

  const http::Response plain = assetResponse(kFake[1], "identity");
  EXPECT_EQ(plain.body, "plain-css");
  EXPECT_EQ(headerOf(plain, "Content-Encoding"), "");
  EXPECT_EQ(headerOf(plain, "Vary"), "Accept-Encoding");
}

TEST(ConsoleAssets, TheShellLoadsTheBundleUnderAStrictPolicy) {
  const http::Response r = shellResponse("main-ABC123.js", "main-DEF456.css");
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<script type=\"module\" src=\"/console/assets/main-ABC123.js\">"),
            std::string::npos);
  EXPECT_NE(r.body.find("<link rel=\"stylesheet\" href=\"/console/assets/main-DEF456.css\">"),
            std::string::npos);
  EXPECT_EQ(r.body.find("<style"), std::string::npos) << "no inline style";
  EXPECT_EQ(r.body.find("<script>"), std::string::npos) << "no inline script";
  EXPECT_EQ(headerOf(r, "Cache-Control"), "no-store");
  EXPECT_EQ(headerOf(r, "Content-Security-Policy"),
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  EXPECT_EQ(headerOf(r, "Referrer-Policy"), "no-referrer");
  EXPECT_EQ(headerOf(r, "X-Content-Type-Options"), "nosniff");
}

TEST(ConsoleAssets, TheBinaryCarriesOneScriptAndOneStylesheetBothGzipped) {
  const std::span<const Asset> built = builtAssets();
  const Asset* js = firstWithExtension(built, ".js");
  const Asset* css = firstWithExtension(built, ".css");
  ASSERT_NE(js, nullptr);
  ASSERT_NE(css, nullptr);
  for (const Asset* a : {js, css}) {
    EXPECT_FALSE(a->plain.empty()) << a->name;
    ASSERT_GE(a->gzip.size(), 2u) << a->name;
    EXPECT_EQ(static_cast<unsigned char>(a->gzip[0]), 0x1f) << a->name << " is gzip";
    EXPECT_EQ(static_cast<unsigned char>(a->gzip[1]), 0x8b) << a->name << " is gzip";
    EXPECT_LT(a->gzip.size(), a->plain.size()) << a->name;
    // Content-hashed: main-<hash>.<ext>.
    EXPECT_TRUE(a->name.starts_with("main-")) << a->name;
  }
}

}  // namespace
}  // namespace tollgate::console
