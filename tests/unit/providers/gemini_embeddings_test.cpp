#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "openai/embedding_request.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/gemini_fixtures.hpp"

namespace tollgate::providers::gemini {
namespace {

using namespace test;

/// A decoded request and the text it points into (parsed in place).
struct Decoded {
  std::unique_ptr<std::string> text;
  openai::EmbeddingRequest request;
};

Decoded embeddingRequest(std::string body) {
  auto text = std::make_unique<std::string>(std::move(body));
  auto r = openai::decodeEmbeddingRequest(*text);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return {std::move(text), std::move(r).value()};
}

/// One attempt: the request it sends, and our list for Gemini's `answer` (parsed, or null).
struct Attempt {
  UpstreamRequest sent;
  rapidjson::Document list;
};

Attempt attempt(const Decoded& in, std::string answer) {
  const config::Provider provider = geminiProvider();  // The exchange keeps a reference to it.
  auto ex = embedding(in.request, provider);
  auto r = ex->request();
  EXPECT_TRUE(r.ok());
  auto list = r.ok() ? ex->completion(answer) : Result<std::string>(r.error());
  EXPECT_TRUE(list.ok()) << (list.ok() ? "" : list.error().message);
  EXPECT_FALSE(ex->usage());  // Gemini reports none: estimated.
  return {r.ok() ? std::move(*r) : UpstreamRequest{}, parsedJson(list.ok() ? *list : "null")};
}

TEST(GeminiEmbeddings, OneInputThroughEmbedContent) {
  const Decoded in = embeddingRequest(R"({"model":"e","input":"hello","dimensions":8})");
  const Attempt a = attempt(in, R"({"embedding":{"values":[0.5,-1]}})");
  EXPECT_EQ(a.sent.path, "/v1beta/models/gemini-upstream:embedContent");
  expectSameJson(parsedJson(a.sent.body), R"({"model":"models/gemini-upstream",
      "content":{"parts":[{"text":"hello"}]},"outputDimensionality":8})");
  expectSameJson(a.list["data"][0]["embedding"], "[0.5,-1]");
}

TEST(GeminiEmbeddings, SeveralThroughBatchEmbedContentsInOrder) {
  const Decoded in = embeddingRequest(R"({"model":"e","input":["a","b"]})");
  const Attempt a = attempt(in, R"({"embeddings":[{"values":[1]},{"values":[2]}]})");
  EXPECT_EQ(a.sent.path, "/v1beta/models/gemini-upstream:batchEmbedContents");
  EXPECT_EQ(parsedJson(a.sent.body)["requests"].Size(), 2U);
  EXPECT_EQ(a.list["data"][1]["index"].GetInt(), 1);
  expectSameJson(a.list["data"][1]["embedding"], "[2]");
  const config::Provider provider = geminiProvider();  // The exchange keeps a reference to it.
  auto ex = embedding(in.request, provider);
  ASSERT_TRUE(ex->request().ok());
  std::string short_answer = R"({"embeddings":[{"values":[1]}]})";
  EXPECT_FALSE(ex->completion(short_answer).ok());
}

TEST(GeminiEmbeddings, TokenArraysAreRefused) {
  const Decoded in = embeddingRequest(R"({"model":"e","input":[[1,2,3]]})");
  auto r = embedding(in.request, geminiProvider())->request();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidValue);
  EXPECT_EQ(r.error().param, "input");
}

}  // namespace
}  // namespace tollgate::providers::gemini
