#include "core/json.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "core/text.hpp"

namespace tollgate::json {
namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParse, AcceptsNestingUpToTheLimit) {
  rapidjson::Document doc;
  EXPECT_FALSE(parse(doc, nested(kMaxDepth)));
  std::string text = nested(kMaxDepth);
  EXPECT_FALSE(parseInPlace(doc, text));
}

TEST(JsonParse, RefusesNestingPastTheLimitWithoutRecursing) {
  for (const std::size_t depth : {kMaxDepth + 1, std::size_t{150'000}, std::size_t{3'000'000}}) {
    rapidjson::Document doc;
    std::string text = std::string(depth, '[');  // Unterminated, as an attacker sends it.
    const auto failure = parseInPlace(doc, text);
    ASSERT_TRUE(failure) << depth;
    EXPECT_NE(failure->reason.find("deeper than 128"), std::string::npos) << failure->reason;
    EXPECT_TRUE(doc.IsNull());
  }
  rapidjson::Document doc;
  EXPECT_TRUE(parse(doc, R"({"a":)" + std::string(100'000, '{')));
}

TEST(JsonParse, ReportsSyntaxErrorsWithTheirOffset) {
  rapidjson::Document doc;
  const auto failure = parse(doc, R"({"a": 1,})");
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->reason.find("at offset 8"), std::string::npos) << failure->reason;
  EXPECT_TRUE(parse(doc, std::string("{\"a\":\"x\0y\"}", 11)));
  EXPECT_TRUE(parse(doc, "{} {}"));
}

TEST(JsonParse, RefusesDuplicateKeysOnlyWhenAsked) {
  const std::string text = R"({"stream":true,"stream":false})";
  rapidjson::Document doc;
  EXPECT_FALSE(parse(doc, text));
  const auto failure = parse(doc, text, Keys::Unique);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->path, "stream");
  EXPECT_NE(failure->reason.find("duplicate key \"stream\""), std::string::npos);
}

TEST(JsonParse, NamesTheNestedPathOfADuplicateKey) {
  rapidjson::Document doc;
  auto failure =
      parse(doc, R"({"messages":[{"role":"user"},{"role":"user","role":"x"}]})", Keys::Unique);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->path, "messages[1].role");
  // Many keys: the sorted check finds the repeat too.
  std::string big = "{";
  for (int i = 0; i < 100; ++i) {
    big += "\"k" + std::to_string(i) + "\":1,";
  }
  big += R"("k42":2})";
  failure = parse(doc, big, Keys::Unique);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->path, "k42");
  // Keys are compared as they decode, read in place too; the same key in two objects is no repeat.
  std::string escaped = R"({"k":{"a":{"k":1},"b":{"k":1}},"x":{"\u0061":1,"a":2}})";
  failure = parseInPlace(doc, escaped, Keys::Unique);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->path, "x.a");
  std::string siblings = R"({"a":{"k":1,"j":[{"k":1}]},"b":{"k":1},"k":1})";
  EXPECT_FALSE(parseInPlace(doc, siblings, Keys::Unique));
}

TEST(JsonParse, RefusesInvalidUtf8AndLoneSurrogates) {
  rapidjson::Document doc;
  for (const std::string& bad :
       {std::string("{\"a\":[\"ok\",\"\xC3\x28\"]}"), std::string("{\"a\":\"\xFF\"}"),
        std::string(R"({"a":"\udc00"})"), std::string("{\"a\":\"\xED\xA0\x80\"}")}) {
    const auto failure = parse(doc, bad);
    ASSERT_TRUE(failure) << bad;
    EXPECT_NE(failure->reason.find("UTF-8"), std::string::npos);
  }
  EXPECT_TRUE(parse(doc, R"({"a":"\ud800"})"));  // RapidJSON's own check: a lone high surrogate.
  const auto failure = parse(doc, R"({"a":[1,"\udc00"]})");
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "invalid UTF-8");
  EXPECT_EQ(failure->path, "a[1]");
  const auto key = parse(doc, "{\"o\":{\"\xFF\":1}}");
  ASSERT_TRUE(key);
  EXPECT_EQ(key->path, "o");
  EXPECT_FALSE(parse(doc, R"({"emoji":"\ud83d\ude00","text":"héllo €"})"));
}

TEST(JsonParse, RefusesEveryRawControlByteInAString) {
  // RapidJSON's SIMD scan let 0x1A to 0x1F through when they fell in an aligned 16-byte block:
  // every offset of a long string is tried, read both ways.
  for (int byte = 0x01; byte < 0x20; ++byte) {
    for (std::size_t at = 0; at < 40; ++at) {
      std::string text = R"({"a":")" + std::string(64, 'x') + R"("})";
      text[6 + at] = static_cast<char>(byte);
      rapidjson::Document doc;
      EXPECT_TRUE(parse(doc, text)) << byte << " at " << at;
      EXPECT_TRUE(parseInPlace(doc, text)) << byte << " at " << at;
    }
  }
  std::string raw = "{\"a\":\"red \x1b[31m\"}";
  rapidjson::Document refused;
  const auto said = parseInPlace(refused, raw);
  ASSERT_TRUE(said);
  EXPECT_EQ(said->reason,
            "a control character (U+001B) must be escaped inside a string at offset 10");
  const auto escape = parse(refused, R"({"a":"\q"})");  // A real invalid escape keeps its words.
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->reason.rfind("Invalid escape character in string.", 0), 0U) << escape->reason;
  std::string escaped = R"({"a":"0123456789abcdef\u001b[31m0123456789abcdef\n\"\\x"})";
  rapidjson::Document doc;
  ASSERT_FALSE(parseInPlace(doc, escaped));
  EXPECT_EQ(view(doc["a"]), "0123456789abcdef\x1b[31m0123456789abcdef\n\"\\x");
  ASSERT_FALSE(parse(doc, R"({"a":"0123456789abcdef\u001f0123456789abcdef"})"));
  EXPECT_EQ(view(doc["a"]),
            "0123456789abcdef\x1f"
            "0123456789abcdef");
}

TEST(JsonParse, InPlaceTellsWhereEachMemberOfARootObjectWas) {
  const std::string sent =
      "{ \"a\" :\t[1, {\"b\": \"c\"}] ,\n\"s\":\"x\\u00e9\\\"y\", \"n\" : -1.50e1,\"o\":{},"
      "\"t\":true,\"z\":null }";
  std::string text = sent;
  rapidjson::Document doc;
  std::vector<Span> values;
  ASSERT_FALSE(parseInPlace(doc, text, Keys::Unique, &values));
  ASSERT_EQ(values.size(), doc.MemberCount());
  std::vector<std::string> seen;
  for (const Span& v : values) {
    seen.push_back(sent.substr(v.begin, v.end - v.begin));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{R"([1, {"b": "c"}])", R"("x\u00e9\"y")", "-1.50e1",
                                            "{}", "true", "null"}));
  EXPECT_EQ(view(doc["s"]), "x\xC3\xA9\"y");  // The document was read in place all the same.

  text = R"([{"a":1},2])";  // No root object: no members.
  ASSERT_FALSE(parseInPlace(doc, text, Keys::Unique, &values));
  EXPECT_TRUE(values.empty());
  text = R"({"a":1,"a":2})";  // Refused: nothing to tell.
  ASSERT_TRUE(parseInPlace(doc, text, Keys::Unique, &values));
  EXPECT_TRUE(values.empty());
}

TEST(JsonWriter, WritesAtAPointerWhatItAppends) {
  // Every byte alone, an escape at every end, a run of escapes: the most room is never passed.
  std::vector<std::string> texts = {"", "plain", std::string(40, '\x01'), "a\"b\\c\n"};
  for (int b = 0; b < 256; ++b) {
    texts.push_back(std::string(1, static_cast<char>(b)));
    texts.push_back("x" + std::string(1, static_cast<char>(b)) + "y");
  }
  for (const std::string& text : texts) {
    std::string appended;
    appendQuoted(text, appended);
    std::string room(maxQuotedSize(text.size()), '\0');
    const char* end = writeQuoted(text, room.data());
    EXPECT_EQ(std::string_view(room.data(), static_cast<std::size_t>(end - room.data())), appended);
    EXPECT_LE(static_cast<std::size_t>(end - room.data()), maxQuotedSize(text.size()));
  }
  std::string all(40, '\x01');
  std::string room(maxQuotedSize(all.size()), '\0');
  EXPECT_EQ(static_cast<std::size_t>(writeQuoted(all, room.data()) - room.data()), room.size());
}

TEST(JsonWriter, WritesWhatRapidJsonsWriterWrites) {
  // Every byte value in keys and strings, long plain runs, numbers of every kind, nesting.
  std::string every_byte;
  for (int b = 0; b < 256; ++b) {
    if (b >= 0x1A && b <= 0x1F) {
      continue;  // RapidJSON's SSE2 scan writes these raw (below): JSON must escape them.
    }
    every_byte += static_cast<char>(b);
    every_byte += "plain run of text ";
  }
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  doc.AddMember(
      rapidjson::Value(every_byte.c_str(), static_cast<rapidjson::SizeType>(every_byte.size()), a),
      rapidjson::Value(every_byte.c_str(), static_cast<rapidjson::SizeType>(every_byte.size()), a),
      a);
  rapidjson::Value list(rapidjson::kArrayType);
  list.PushBack(-7, a)
      .PushBack(std::uint64_t{4294967296}, a)
      .PushBack(std::uint64_t{18446744073709551615U}, a);
  list.PushBack(0.1, a).PushBack(1e300, a).PushBack(true, a).PushBack(rapidjson::Value(), a);
  list.PushBack(rapidjson::Value(rapidjson::kObjectType), a)
      .PushBack(rapidjson::Value(rapidjson::kArrayType), a);
  doc.AddMember("list", list, a);
  doc.AddMember("", "", a);

  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> rapid(buf);
  doc.Accept(rapid);
  Writer w;
  w.value(doc);
  EXPECT_EQ(w.take(), std::string(buf.GetString(), buf.GetSize()));

  Writer controls;
  controls.string("\x19\x1A\x1F");
  EXPECT_EQ(controls.take(), R"("\u0019\u001A\u001F")");

  Writer fields;
  fields.startObject();
  fields.field("a\n", "x\"y");
  fields.key("raw");
  fields.raw(R"({"k":[1]})");
  fields.key("n");
  fields.rawNumber("1.50");
  fields.key("list");
  fields.value(doc["list"]);
  fields.endObject();
  EXPECT_EQ(fields.take(),
            R"({"a\n":"x\"y","raw":{"k":[1]},"n":1.50,"list":[-7,4294967296,18446744073709551615,)"
            R"(0.1,1e300,true,null,{},[]]})");
}

TEST(Text, ValidUtf8) {
  EXPECT_TRUE(text::isValidUtf8(""));
  EXPECT_TRUE(text::isValidUtf8("plain ascii text longer than eight bytes"));
  EXPECT_TRUE(text::isValidUtf8("\xF0\x9F\x98\x80 \xE2\x82\xAC \xC3\xA9"));
  EXPECT_FALSE(text::isValidUtf8("\xC0\xAF"));          // Overlong.
  EXPECT_FALSE(text::isValidUtf8("\xE0\x80\xAF"));      // Overlong.
  EXPECT_FALSE(text::isValidUtf8("\xED\xB0\x80"));      // Surrogate.
  EXPECT_FALSE(text::isValidUtf8("\xF4\x90\x80\x80"));  // Above U+10FFFF.
  EXPECT_FALSE(text::isValidUtf8("abcdefgh\xE2\x82"));  // Truncated at the end.
  // A character, or a stray byte, at every position of ASCII texts shorter and longer than the
  // sixteen- and eight-byte steps: the steps must neither skip nor misplace it.
  for (std::size_t size = 0; size <= 40; ++size) {
    for (std::size_t at = 0; at <= size; ++at) {
      std::string s(size, 'a');
      ASSERT_TRUE(text::isValidUtf8(std::string(s).insert(at, "\xE2\x82\xAC")))
          << size << " " << at;
      ASSERT_FALSE(text::isValidUtf8(std::string(s).insert(at, "\xE2\x82"))) << size << " " << at;
      ASSERT_FALSE(text::isValidUtf8(std::string(s).insert(at, "\x80"))) << size << " " << at;
    }
  }
}

TEST(Text, JsonPlainPrefixStopsAtTheFirstByteAStringMustEscape) {
  // Each stop byte at every position of texts longer and shorter than a word, with high bytes
  // (UTF-8) beside it: the eight-byte scan must agree with a byte-by-byte one.
  const auto plain = [](std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && s[i] != '"' && s[i] != '\\' &&
           static_cast<unsigned char>(s[i]) >= 0x20) {
      ++i;
    }
    return i;
  };
  for (const char stop : {'"', '\\', '\0', '\n', '\x1f'}) {
    for (std::size_t size = 0; size <= 33; ++size) {
      for (std::size_t at = 0; at <= size; ++at) {
        std::string s(size, 'a');
        for (std::size_t i = 1; i < size; i += 3) {
          s[i] = i % 2 == 0 ? '\x9F' : '\xC3';  // High bytes are not stops, nor hide one.
        }
        if (at < size) {
          s[at] = stop;
        }
        ASSERT_EQ(text::jsonPlainPrefix(s), plain(s)) << "stop " << int(stop) << " at " << at;
        ASSERT_EQ(text::jsonPlainPrefix(s), at);
        if (at + 1 < size) {  // A later stop, in the same word or the last one, changes nothing.
          s.back() = '"';
          ASSERT_EQ(text::jsonPlainPrefix(s), at) << "stop " << int(stop) << " at " << at;
        }
      }
    }
  }
  EXPECT_EQ(text::jsonPlainPrefix(" !#[]~\x7f\xff"), 8U);  // 0x20 and up, DEL and 0xFF are plain.
}

TEST(JsonParse, FindsBadUtf8AfterValidStringsAndEscapesInPlaceOrNot) {
  rapidjson::Document doc;
  // Valid text of every kind is taken, escapes and non-ASCII characters among ASCII runs.
  for (const std::string& good :
       {std::string(R"({"a":"plain ascii text longer than one block","b":"\n\u00e9"})"),
        std::string("{\"caf\xC3\xA9\":\"na\xC3\xAFve\",\"e\":\"\\ud83d\\ude00\"}")}) {
    EXPECT_FALSE(parse(doc, good)) << good;
    std::string in_place = good;
    EXPECT_FALSE(parseInPlace(doc, in_place, Keys::Unique)) << good;
  }
  // A bad byte or a lone low surrogate after valid strings, close to their ends or after an
  // escape, in a key or a value.
  for (const std::string& bad :
       {std::string("{\"a\":\"x\",\"b\":\"\xFF\"}"), std::string("{\"a\":\"\\n\xC3\"}"),
        std::string(R"({"a":"ascii","b":"\t\udfff"})"),
        std::string(R"({"a":"\ud83d\ude00\udc00"})"), std::string("{\"a\":1,\"k\xFF\":2}")}) {
    EXPECT_TRUE(parse(doc, bad)) << bad;
    std::string in_place = bad;
    EXPECT_TRUE(parseInPlace(doc, in_place, Keys::Unique)) << bad;
  }
}

TEST(Text, MillisAreWhatRapidJsonWritesForTheDouble) {
  const auto rapid = [](std::int64_t us) {
    Writer w;
    w.number(static_cast<double>(us) / 1000.0);
    return w.take();
  };
  const auto millis = [](std::chrono::microseconds us) {
    std::array<char, text::kMaxMillisBytes> out{};
    return std::string(out.data(), text::writeMillis(us, out.data()));
  };
  for (std::int64_t us = -2100; us <= 120000; ++us) {
    ASSERT_EQ(millis(std::chrono::microseconds(us)), rapid(us)) << us;
  }
  for (const std::int64_t us : {3'600'000'000LL, 86'400'000'123LL, 9'007'199'254'740LL}) {
    EXPECT_EQ(millis(std::chrono::microseconds(us)), rapid(us)) << us;
  }
  EXPECT_EQ(millis(std::chrono::microseconds(12'300)), "12.3");
  EXPECT_EQ(millis(std::chrono::microseconds::min()), "-9223372036854775.808");
}

TEST(Text, MediaTypeIgnoresCaseAndParameters) {
  EXPECT_TRUE(text::isMediaType("application/json", "application/json"));
  EXPECT_TRUE(text::isMediaType("Application/JSON; charset=utf-8", "application/json"));
  EXPECT_TRUE(text::isMediaType("text/event-stream;charset=utf-8", "text/event-stream"));
  EXPECT_FALSE(text::isMediaType("application/jsonx", "application/json"));
  EXPECT_FALSE(text::isMediaType("text/html", "text/event-stream"));
  EXPECT_FALSE(text::isMediaType("", "application/json"));
}

TEST(Text, PrintableEscapesEverythingButPrintableAscii) {
  EXPECT_EQ(text::printable("/v1/\xff\x01x\\"), "/v1/\\xff\\x01x\\x5c");
  EXPECT_EQ(text::printable("abcdef", 3), "abc\u2026");
}

TEST(Text, Utf8PrefixNeverSplitsACharacter) {
  EXPECT_EQ(text::utf8Prefix("gpt-4o", 128), "gpt-4o");
  EXPECT_EQ(text::utf8Prefix("gpt-4o", 3), "gpt");
  EXPECT_EQ(text::utf8Prefix("ab\u00e9", 3), "ab");  // é is two bytes: both or neither.
  EXPECT_EQ(text::utf8Prefix("ab\u00e9", 4), "ab\u00e9");
  EXPECT_EQ(text::utf8Prefix("\U0001F600x", 3), "");  // A four-byte character.
  EXPECT_EQ(text::utf8Prefix("\U0001F600x", 4), "\U0001F600");
}

}  // namespace
}  // namespace tollgate::json
