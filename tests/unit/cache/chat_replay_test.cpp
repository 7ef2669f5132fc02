#include "cache/chat_replay.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"

namespace tollgate::cache {
namespace {

using openai::ChoiceDelta;
using openai::Chunk;
using openai::Completion;
using openai::ResponseMeta;
using openai::ToolCallDelta;

constexpr std::string_view kEpisode = "0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b";
constexpr std::int64_t kCreated = 1700000000;

ResponseMeta plainMeta() {
  ResponseMeta m;
  m.model = "gpt_4o_mini";
  m.episode_id = kEpisode;
  m.service_tier = "auto";
  m.include_usage = true;
  return m;
}

/// A function call's answer, billed, with the raw usage asked for.
ResponseMeta richMeta() {
  ResponseMeta m = plainMeta();
  m.model = "tollgate::function_name::support";
  m.variant_name = "concise";
  m.service_tier = "flex";
  m.include_raw_usage = true;
  // 41 pUSD a prompt token: a cost of 0.000000000123 for 3, whose text a double would not keep.
  static const money::Prices kPrices = money::flatPrices(41, 0);
  m.pricing = money::Pricing{&kPrices, std::numeric_limits<money::Pico>::max()};
  return m;
}

rapidjson::Document parse(std::string_view text) {
  rapidjson::Document d;
  EXPECT_FALSE(json::parse(d, std::string(text))) << text;
  return d;
}

/// `a` and `b` are the same JSON value (member order aside).
void expectSameJson(std::string_view a, std::string_view b) {
  EXPECT_TRUE(parse(a) == parse(b)) << a << "\n  vs\n" << b;
}

/// `completion` without its usage (and raw usage): what a stream without usage can give back.
std::string withoutUsage(std::string_view completion) {
  rapidjson::Document d = parse(completion);
  d.RemoveMember("usage");
  d.RemoveMember("tollgate::raw_usage");
  return json::serialize(d);
}

/// Encodes live chunks exactly as the gateway streams them.
class LiveStream {
 public:
  explicit LiveStream(ResponseMeta meta) : meta_(std::move(meta)) {}

  LiveStream& delta(ChoiceDelta d, std::string logprobs = "") {
    d.logprobs_json = std::move(logprobs);
    Chunk c = head();
    c.choices.push_back(std::move(d));
    sse_ += openai::sseData(openai::encodeChunk(c, meta_));
    return *this;
  }
  LiveStream& role() {
    ChoiceDelta d;
    d.role = "assistant";
    d.content = "";
    return delta(d);
  }
  LiveStream& content(std::string text, std::string logprobs = "") {
    ChoiceDelta d;
    d.content = std::move(text);
    return delta(d, std::move(logprobs));
  }
  LiveStream& toolCall(int index, std::optional<std::string> id, std::optional<std::string> name,
                       std::string arguments) {
    ChoiceDelta d;
    d.tool_calls.push_back(ToolCallDelta{index, std::move(id), std::move(name), arguments});
    return delta(d);
  }
  LiveStream& finish(std::string reason) {
    ChoiceDelta d;
    d.finish_reason = std::move(reason);
    return delta(d);
  }
  LiveStream& usage(openai::Usage u, std::string raw = "") {
    Chunk c = head();
    c.usage = u;
    c.raw_usage_json = std::move(raw);
    sse_ += openai::sseData(openai::encodeChunk(c, meta_));
    return *this;
  }
  LiveStream& raw(std::string_view bytes) {
    sse_ += bytes;
    return *this;
  }
  std::string done() const { return sse_ + std::string(openai::kSseDone); }
  const std::string& cut() const { return sse_; }

 private:
  Chunk head() const {
    Chunk c;
    c.id = "chatcmpl-1";
    c.created = kCreated;
    c.system_fingerprint = "fp_1";
    return c;
  }

  ResponseMeta meta_;
  std::string sse_;
};

/// The completion the gateway sends unstreamed for the same answer.
std::string whole(const ResponseMeta& meta, openai::Choice choice,
                  std::optional<openai::Usage> usage, std::string raw_usage = "") {
  Completion c;
  c.id = "chatcmpl-1";
  c.created = kCreated;
  c.system_fingerprint = "fp_1";
  c.choices.push_back(std::move(choice));
  c.usage = usage;
  c.raw_usage_json = std::move(raw_usage);
  return openai::encodeCompletion(c, meta);
}

openai::Choice textChoice(std::string text, std::string reason = "stop") {
  openai::Choice ch;
  ch.finish_reason = std::move(reason);
  ch.content = std::move(text);
  return ch;
}

// ---- completionFromStream ----

TEST(CacheReplayFromStream, TextWithUsage) {
  const ResponseMeta meta = plainMeta();
  const std::string sse = LiveStream(meta)
                              .role()
                              .content("Hel")
                              .content("lo \"you\"")
                              .finish("stop")
                              .usage(usage::of(3, 2))
                              .done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got) << sse;
  expectSameJson(*got, whole(meta, textChoice("Hello \"you\""), usage::of(3, 2)));
}

TEST(CacheReplayFromStream, WithoutUsageHasNone) {
  ResponseMeta meta = plainMeta();
  meta.include_usage = false;
  const std::string sse = LiveStream(meta).role().content("Hi").finish("length").done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  EXPECT_FALSE(parse(*got).HasMember("usage"));
  expectSameJson(*got, withoutUsage(whole(meta, textChoice("Hi", "length"), std::nullopt)));
}

TEST(CacheReplayFromStream, ToolCallsAssembledByIndex) {
  const ResponseMeta meta = plainMeta();
  const std::string sse = LiveStream(meta)
                              .role()
                              .toolCall(0, "call_a", "lookup", "")
                              .toolCall(0, std::nullopt, std::nullopt, "{\"q\":")
                              .toolCall(1, "call_b", "other", "{}")
                              .toolCall(0, std::nullopt, std::nullopt, "\"x\"}")
                              .finish("tool_calls")
                              .usage(usage::of(10, 7))
                              .done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  openai::Choice ch;
  ch.finish_reason = "tool_calls";
  ch.tool_calls = {{"call_a", "lookup", "{\"q\":\"x\"}"}, {"call_b", "other", "{}"}};
  expectSameJson(*got, whole(meta, ch, usage::of(10, 7)));
  EXPECT_TRUE(parse(*got)["choices"][0]["message"]["content"].IsNull());
}

TEST(CacheReplayFromStream, Refusal) {
  const ResponseMeta meta = plainMeta();
  ChoiceDelta r1;
  r1.refusal = "I can't ";
  ChoiceDelta r2;
  r2.refusal = "help with that.";
  const std::string sse =
      LiveStream(meta).role().delta(r1).delta(r2).finish("stop").usage(usage::of(4, 5)).done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  openai::Choice ch;
  ch.finish_reason = "stop";
  ch.refusal = "I can't help with that.";
  expectSameJson(*got, whole(meta, ch, usage::of(4, 5)));
}

TEST(CacheReplayFromStream, LogprobsJoined) {
  const ResponseMeta meta = plainMeta();
  const std::string sse =
      LiveStream(meta)
          .role()
          .content("a",
                   R"({"content":[{"token":"a","logprob":-0.25,"bytes":[97]}],"refusal":null})")
          .content("b", R"({"content":[{"token":"b","logprob":-1.5,"bytes":[98]}],"refusal":null})")
          .finish("stop")
          .usage(usage::of(1, 2))
          .done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  openai::Choice ch = textChoice("ab");
  ch.logprobs_json = R"({"content":[{"token":"a","logprob":-0.25,"bytes":[97]},)"
                     R"({"token":"b","logprob":-1.5,"bytes":[98]}],"refusal":null})";
  expectSameJson(*got, whole(meta, ch, usage::of(1, 2)));
}

TEST(CacheReplayFromStream, KeepsOurOwnMembers) {
  const ResponseMeta meta = richMeta();
  const std::string raw_usage = R"({"prompt_tokens":3,"completion_tokens":1,"cached":0})";
  const std::string sse =
      LiveStream(meta).role().content("ok").finish("stop").usage(usage::of(3, 1), raw_usage).done();
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  const std::string expected = whole(meta, textChoice("ok"), usage::of(3, 1), raw_usage);
  expectSameJson(*got, expected);
  const rapidjson::Document d = parse(*got);
  EXPECT_EQ(json::view(d["episode_id"]), kEpisode);
  EXPECT_EQ(json::view(d["variant_name"]), "concise");
  EXPECT_EQ(json::view(d["service_tier"]), "flex");
  EXPECT_TRUE(d["usage"].HasMember("tollgate::cost"));
  // And in the order our encoder writes them.
  std::vector<std::string> got_names;
  std::vector<std::string> want_names;
  for (const auto& m : d.GetObject()) {
    got_names.emplace_back(json::view(m.name));
  }
  const rapidjson::Document want = parse(expected);
  for (const auto& m : want.GetObject()) {
    want_names.emplace_back(json::view(m.name));
  }
  EXPECT_EQ(got_names, want_names);
}

TEST(CacheReplayFromStream, DropsRawResponse) {
  ResponseMeta meta = plainMeta();
  meta.include_raw_response = true;
  Chunk c;
  c.id = "chatcmpl-1";
  ChoiceDelta d;
  d.content = "x";
  c.choices.push_back(d);
  c.raw_chunk_json = R"({"upstream":"chunk"})";
  const std::string sse =
      openai::sseData(openai::encodeChunk(c, meta)) + std::string(openai::kSseDone);
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got);
  EXPECT_FALSE(parse(*got).HasMember("tollgate::raw_response"));
}

struct Refused {
  std::string name;
  std::string sse;
};

void PrintTo(const Refused& c, std::ostream* os) { *os << c.name; }

class CacheReplayFromStreamRefuses : public testing::TestWithParam<Refused> {};

TEST_P(CacheReplayFromStreamRefuses, Nullopt) {
  EXPECT_FALSE(completionFromStream(GetParam().sse)) << GetParam().sse;
}

LiveStream started() { return std::move(LiveStream(plainMeta()).role().content("Hel")); }

/// The error event the relay ends a failed stream with.
std::string errorEvent() {
  return openai::sseData(
      errorBody(Error{ErrorKind::UpstreamStreamInterrupted, "the upstream went away", ""}));
}

INSTANTIATE_TEST_SUITE_P(
    Cache, CacheReplayFromStreamRefuses,
    testing::Values(
        Refused{"Empty", ""}, Refused{"OnlyDone", std::string(openai::kSseDone)},
        Refused{"CutBeforeDone", started().cut()},
        Refused{"CutInsideAnEvent",
                started().cut() + "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.comp"},
        Refused{"DoneWithoutBlankLine", started().cut() + "data: [DONE]\n"},
        Refused{"ErrorEvent", started().raw(errorEvent()).cut()},
        Refused{"ErrorEventThenDone", started().raw(errorEvent()).done()},
        Refused{"UnparsableChunk", started().raw("data: {\"id\":\n\n").done()},
        Refused{"NotAnObject", started().raw("data: [1,2]\n\n").done()},
        Refused{"NotAChunk", started().raw("data: {\"object\":\"chat.completion\"}\n\n").done()},
        Refused{"NamedEvent", started().raw("event: error\ndata: {}\n\n").done()},
        Refused{"AfterDone", started().done() + started().cut()},
        Refused{"DoneTwice", started().done() + std::string(openai::kSseDone)},
        Refused{"ToolCallWithoutIndex",
                started()
                    .raw(R"(data: {"object":"chat.completion.chunk","choices":[{"index":0,)"
                         R"("delta":{"tool_calls":[{"id":"c"}]}}]})"
                         "\n\n")
                    .done()},
        Refused{"NoChoiceAtAll", LiveStream(plainMeta()).usage(usage::of(1, 1)).done()}),
    [](const auto& info) { return info.param.name; });

// ---- restampCompletion ----

const Stamp kStamp{"chatcmpl-new", 1800000000, "0190ffff-0000-7000-8000-000000000001", "my-model"};

TEST(CacheReplayRestamp, ReplacesTheStampOnly) {
  const ResponseMeta meta = richMeta();
  const std::string original =
      whole(meta, textChoice("ok"), usage::of(3, 1), R"({"prompt_tokens":3})");
  const std::string stamped = restampCompletion(original, kStamp);
  rapidjson::Document d = parse(stamped);
  EXPECT_EQ(json::view(d["id"]), kStamp.id);
  EXPECT_EQ(d["created"].GetInt64(), kStamp.created);
  EXPECT_EQ(json::view(d["episode_id"]), kStamp.episode_id);
  EXPECT_EQ(json::view(d["model"]), kStamp.model);
  rapidjson::Document want = parse(original);
  for (const char* name : {"id", "created", "episode_id", "model"}) {
    d[name].CopyFrom(want[name], d.GetAllocator());
  }
  EXPECT_TRUE(d == want);
}

TEST(CacheReplayRestamp, KeepsTheBytes) {
  const std::string original = whole(richMeta(), textChoice("é \"q\" \n"), usage::of(3, 1));
  ASSERT_NE(original.find("\"tollgate::cost\":0.000000000123"), std::string::npos) << original;
  const Stamp same{"chatcmpl-1", kCreated, std::string(kEpisode),
                   "tollgate::function_name::support"};
  EXPECT_EQ(restampCompletion(original, same), original);
}

TEST(CacheReplayRestamp, ControlCharactersStayEscaped) {
  // Long enough for RapidJSON's 16-byte SSE2 blocks, which would have written ESC raw.
  const std::string original = whole(
      richMeta(),
      textChoice(
          "a text long enough to be read sixteen bytes at a time: \x1b[31mred\x1b[0m \x1a\x1f"),
      usage::of(3, 1));
  ASSERT_NE(original.find(R"(\u001B[31mred\u001B[0m \u001A\u001F)"), std::string::npos) << original;
  const Stamp same{"chatcmpl-1", kCreated, std::string(kEpisode),
                   "tollgate::function_name::support"};
  EXPECT_EQ(restampCompletion(original, same), original);
}

TEST(CacheReplayRestamp, NotJson) {
  EXPECT_EQ(restampCompletion("{\"id\":", kStamp), "");
  EXPECT_EQ(restampCompletion("{} {}", kStamp), "");
}

// ---- streamFromCompletion ----

/// The events of `sse`, which must be `data: …\n\n` each, as sse.hpp writes them.
std::vector<std::string> events(std::string_view sse) {
  std::vector<std::string> out;
  while (!sse.empty()) {
    EXPECT_TRUE(sse.starts_with("data: ")) << sse;
    const std::size_t end = sse.find("\n\n");
    EXPECT_NE(end, std::string_view::npos) << sse;
    if (end == std::string_view::npos) {
      break;
    }
    const std::string_view data = sse.substr(6, end - 6);
    EXPECT_EQ(data.find_first_of("\r\n"), std::string_view::npos);
    out.emplace_back(data);
    sse.remove_prefix(end + 2);
  }
  return out;
}

std::vector<std::string> memberNames(const rapidjson::Value& v) {
  std::vector<std::string> names;
  for (const auto& m : v.GetObject()) {
    names.emplace_back(json::view(m.name));
  }
  return names;
}

TEST(CacheReplayToStream, ChunksAsOurLiveStreams) {
  const ResponseMeta meta = richMeta();
  const std::string completion =
      whole(meta, textChoice("Hello"), usage::of(3, 1), R"({"prompt_tokens":3})");
  const auto ev = events(streamFromCompletion(completion, kStamp, true));
  ASSERT_EQ(ev.size(), 5u);  // role, content, finish, usage, [DONE]
  EXPECT_EQ(ev.back(), "[DONE]");

  ResponseMeta stamped = meta;
  stamped.model = kStamp.model;
  stamped.episode_id = kStamp.episode_id;
  Chunk live;
  live.choices.emplace_back();
  const auto live_names = memberNames(parse(openai::encodeChunk(live, stamped)));
  for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
    const rapidjson::Document d = parse(ev[i]);
    EXPECT_EQ(json::view(d["object"]), "chat.completion.chunk");
    EXPECT_EQ(json::view(d["id"]), kStamp.id);
    EXPECT_EQ(d["created"].GetInt64(), kStamp.created);
    EXPECT_EQ(json::view(d["model"]), kStamp.model);
    EXPECT_EQ(json::view(d["episode_id"]), kStamp.episode_id);
    EXPECT_EQ(json::view(d["variant_name"]), "concise");
    EXPECT_EQ(json::view(d["system_fingerprint"]), "fp_1");
    EXPECT_EQ(json::view(d["service_tier"]), "flex");
    if (i + 2 < ev.size()) {
      EXPECT_EQ(memberNames(d), live_names) << ev[i];
      ASSERT_EQ(d["choices"].Size(), 1u);
      EXPECT_EQ(memberNames(d["choices"][0]),
                (std::vector<std::string>{"index", "delta", "logprobs", "finish_reason"}));
    }
  }
  // The first chunk opens as ours do.
  const rapidjson::Document first = parse(ev[0]);
  ChoiceDelta opening;
  opening.role = "assistant";
  opening.content = "";
  Chunk live_first;
  live_first.choices.push_back(opening);
  EXPECT_TRUE(first["choices"] == parse(openai::encodeChunk(live_first, stamped))["choices"]);
  // The usage chunk: no choices, the usage with its cost, the raw usage.
  const rapidjson::Document usage = parse(ev[3]);
  EXPECT_EQ(usage["choices"].Size(), 0u);
  EXPECT_EQ(usage["usage"]["total_tokens"].GetInt(), 4);
  EXPECT_TRUE(usage["usage"].HasMember("tollgate::cost"));
  EXPECT_EQ(usage["tollgate::raw_usage"]["prompt_tokens"].GetInt(), 3);
}

TEST(CacheReplayToStream, UsageOnlyWhenAsked) {
  const std::string completion = whole(plainMeta(), textChoice("Hi"), usage::of(3, 1));
  const std::string sse = streamFromCompletion(completion, kStamp, false);
  for (const std::string& e : events(sse)) {
    if (e != "[DONE]") {
      EXPECT_FALSE(parse(e).HasMember("usage")) << e;
    }
  }
  EXPECT_TRUE(sse.ends_with("\n\ndata: [DONE]\n\n"));
}

TEST(CacheReplayToStream, ToolCallDeltas) {
  openai::Choice ch;
  ch.finish_reason = "tool_calls";
  ch.tool_calls = {{"call_a", "lookup", "{\"q\":1}"}, {"call_b", "other", "{}"}};
  const auto ev =
      events(streamFromCompletion(whole(plainMeta(), ch, usage::of(1, 1)), kStamp, false));
  ASSERT_EQ(ev.size(), 5u);  // role, two tool calls, finish, [DONE]
  const rapidjson::Document second = parse(ev[2]);
  const auto& call = second["choices"][0]["delta"]["tool_calls"][0];
  EXPECT_EQ(call["index"].GetInt(), 1);
  EXPECT_EQ(json::view(call["id"]), "call_b");
  EXPECT_EQ(json::view(call["type"]), "function");
  EXPECT_EQ(json::view(call["function"]["name"]), "other");
  EXPECT_EQ(json::view(call["function"]["arguments"]), "{}");
  EXPECT_EQ(json::view(parse(ev[3])["choices"][0]["finish_reason"]), "tool_calls");
}

TEST(CacheReplayToStream, NotAnObject) {
  EXPECT_EQ(streamFromCompletion("[1]", kStamp, true), "");
  EXPECT_EQ(streamFromCompletion("{", kStamp, true), "");
}

// ---- Both ways ----

struct Answer {
  std::string name;
  ResponseMeta meta;
  openai::Choice choice;
  std::string raw_usage;
};

void PrintTo(const Answer& a, std::ostream* os) { *os << a.name; }

class CacheReplayRoundTrip : public testing::TestWithParam<Answer> {};

TEST_P(CacheReplayRoundTrip, StreamThenWholeGivesTheCompletionBack) {
  const Answer& a = GetParam();
  const std::string x = whole(a.meta, a.choice, usage::of(12, 34), a.raw_usage);
  const Stamp own{"chatcmpl-1", kCreated, a.meta.episode_id, a.meta.model};
  const auto with_usage = completionFromStream(streamFromCompletion(x, own, true));
  ASSERT_TRUE(with_usage);
  expectSameJson(*with_usage, x);
  const auto without = completionFromStream(streamFromCompletion(x, own, false));
  ASSERT_TRUE(without);
  expectSameJson(*without, withoutUsage(x));
  // With another stamp: the new one throughout, all else the same.
  const auto restamped = completionFromStream(streamFromCompletion(x, kStamp, true));
  ASSERT_TRUE(restamped);
  expectSameJson(*restamped, restampCompletion(x, kStamp));
}

openai::Choice toolChoice() {
  openai::Choice ch;
  ch.finish_reason = "tool_calls";
  ch.tool_calls = {{"call_1", "f", R"({"a":[1,2],"s":"\"quoted\""})"}, {"call_2", "g", ""}};
  return ch;
}

openai::Choice refusalChoice() {
  openai::Choice ch;
  ch.finish_reason = "stop";
  ch.refusal = "No.";
  return ch;
}

openai::Choice logprobsChoice() {
  openai::Choice ch = textChoice("ab");
  ch.logprobs_json = R"({"content":[{"token":"ab","logprob":-0.5,"top_logprobs":[]}]})";
  return ch;
}

INSTANTIATE_TEST_SUITE_P(
    Cache, CacheReplayRoundTrip,
    testing::Values(Answer{"Text", plainMeta(), textChoice("Hello, world\n\u00e9"), ""},
                    Answer{"EmptyText", plainMeta(), textChoice(""), ""},
                    Answer{"ToolCalls", plainMeta(), toolChoice(), ""},
                    Answer{"Refusal", plainMeta(), refusalChoice(), ""},
                    Answer{"Logprobs", plainMeta(), logprobsChoice(), ""},
                    Answer{"FunctionBilledRawUsage", richMeta(), textChoice("ok", "length"),
                           R"({"prompt_tokens":12,"completion_tokens":34,"x":{"y":null}})"}),
    [](const auto& info) { return info.param.name; });

// ---- Members beyond the typed ones (an upstream's bytes, spliced) ----

/// A chunk as the gateway relays an OpenAI-compatible upstream's, with `choice` as its only
/// choice (or none when empty) and `extra` members after it.
std::string splicedChunk(std::string_view choice, std::string_view extra = "") {
  std::string data = R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,)"
                     R"("model":"gpt_4o_mini","episode_id":"ep","system_fingerprint":"fp_1",)"
                     R"("service_tier":"auto","choices":[)";
  data.append(choice).append("]").append(extra).append("}");
  return openai::sseData(data);
}

/// The whole answer the same upstream sends unstreamed, as the gateway relays it.
constexpr std::string_view kReasoningAnswer =
    R"({"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt_4o_mini",)"
    R"("episode_id":"ep","system_fingerprint":"fp_1","service_tier":"auto","choices":[{"index":0,)"
    R"("message":{"role":"assistant","reasoning_content":"Let me think.","content":"Hello",)"
    R"("refusal":null,"annotations":[{"type":"url_citation","url_citation":{"url":"u"}},)"
    R"({"type":"url_citation","url_citation":{"url":"v"}}],"audio":{"id":"a1",)"
    R"("transcript":"Hello","expires_at":5},"x_vendor":true},"logprobs":null,)"
    R"("finish_reason":"stop","stop_reason":7}],"usage":{"prompt_tokens":1000,)"
    R"("completion_tokens":40,"total_tokens":1040,"prompt_tokens_details":{"cached_tokens":600,)"
    R"("audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":30,"audio_tokens":0,)"
    R"("accepted_prediction_tokens":0},"tollgate::cost":0.00000000208}})";

TEST(CacheReplayFromStream, JoinsEveryMemberOfTheDeltasAndChoices) {
  const std::string sse =
      splicedChunk(R"({"index":0,"delta":{"role":"assistant","content":"","refusal":null},)"
                   R"("logprobs":null,"finish_reason":null,"stop_reason":null})") +
      splicedChunk(R"({"index":0,"delta":{"reasoning_content":"Let me "},"stop_reason":null})") +
      splicedChunk(R"({"index":0,"delta":{"reasoning_content":"think."}})") +
      splicedChunk(R"({"index":0,"delta":{"content":"Hel","audio":{"id":"a1",)"
                   R"("transcript":"Hel"}}})") +
      splicedChunk(R"({"index":0,"delta":{"content":"lo","audio":{"transcript":"lo",)"
                   R"("expires_at":5},"annotations":[{"type":"url_citation",)"
                   R"("url_citation":{"url":"u"}}]}})") +
      splicedChunk(R"({"index":0,"delta":{"annotations":[{"type":"url_citation",)"
                   R"("url_citation":{"url":"v"}}],"x_vendor":true,"refusal":null}})") +
      splicedChunk(R"({"index":0,"delta":{},"finish_reason":"stop","stop_reason":7})") +
      splicedChunk("",
                   R"(,"usage":{"prompt_tokens":1000,"completion_tokens":40,"total_tokens":1040,)"
                   R"("prompt_tokens_details":{"cached_tokens":600,"audio_tokens":0},)"
                   R"("completion_tokens_details":{"reasoning_tokens":30,"audio_tokens":0,)"
                   R"("accepted_prediction_tokens":0},"tollgate::cost":0.00000000208})") +
      std::string(openai::kSseDone);
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got) << sse;
  expectSameJson(*got, kReasoningAnswer);
  const rapidjson::Document d = parse(*got);
  EXPECT_EQ(memberNames(d["choices"][0]["message"]),
            (std::vector<std::string>{"role", "content", "refusal", "reasoning_content", "audio",
                                      "annotations", "x_vendor"}));
}

TEST(CacheReplayFromStream, ANullMemberStaysNullAndTextAfterItIsText) {
  const std::string sse =
      splicedChunk(R"({"index":0,"delta":{"role":"assistant","content":null,"refusal":null}})") +
      splicedChunk(R"({"index":0,"delta":{"refusal":"No."}})") +
      splicedChunk(R"({"index":0,"delta":{"refusal":null},"finish_reason":"stop"})") +
      std::string(openai::kSseDone);
  const auto got = completionFromStream(sse);
  ASSERT_TRUE(got) << sse;
  const rapidjson::Document d = parse(*got);
  const auto& message = d["choices"][0]["message"];
  EXPECT_TRUE(message["content"].IsNull());
  EXPECT_EQ(json::view(message["refusal"]), "No.");
}

TEST(CacheReplayToStream, CarriesEveryMemberOfTheMessageAndChoice) {
  const auto ev = events(streamFromCompletion(kReasoningAnswer, kStamp, true));
  // role (with the null refusal), the other members, content, finish (with stop_reason), usage.
  ASSERT_EQ(ev.size(), 6u);
  const rapidjson::Document first = parse(ev[0]);
  const auto& opening = first["choices"][0]["delta"];
  EXPECT_EQ(memberNames(opening), (std::vector<std::string>{"role", "content", "refusal"}));
  EXPECT_TRUE(opening["refusal"].IsNull());
  const rapidjson::Document second = parse(ev[1]);
  const auto& others = second["choices"][0]["delta"];
  EXPECT_EQ(memberNames(others),
            (std::vector<std::string>{"reasoning_content", "annotations", "audio", "x_vendor"}));
  EXPECT_EQ(json::view(others["reasoning_content"]), "Let me think.");
  EXPECT_EQ(json::view(parse(ev[2])["choices"][0]["delta"]["content"]), "Hello");
  const rapidjson::Document finish = parse(ev[3]);
  EXPECT_EQ(finish["choices"][0]["stop_reason"].GetInt(), 7);
  const rapidjson::Document usage = parse(ev[4]);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt(), 600);
  EXPECT_EQ(usage["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt(), 30);
}

TEST(CacheReplayRoundTrip, EveryMemberOfAnUpstreamsAnswerComesBack) {
  const Stamp own{"chatcmpl-1", kCreated, "ep", "gpt_4o_mini"};
  const auto back = completionFromStream(streamFromCompletion(kReasoningAnswer, own, true));
  ASSERT_TRUE(back);
  expectSameJson(*back, kReasoningAnswer);
}

}  // namespace
}  // namespace tollgate::cache
