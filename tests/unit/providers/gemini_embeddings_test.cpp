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

TEST(GeminiEmbeddings, OneInputThroughEmbedContent) {
  const Decoded in = embeddingRequest(R"({"model":"e","input":"hello","dimensions":8})");
  auto ex = embedding(in.request, geminiProvider());
  auto r = ex->request();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, "/v1beta/models/gemini-upstream:embedContent");
  expectSameJson(parsedJson(r->body), R"({"model":"models/gemini-upstream",
      "content":{"parts":[{"text":"hello"}]},"outputDimensionality":8})");
  std::string answer = R"({"embedding":{"values":[0.5,-1]}})";
  auto list = ex->completion(answer);
  ASSERT_TRUE(list.ok()) << list.error().message;
  const auto d = parsedJson(*list);
  expectSameJson(d["data"][0]["embedding"], "[0.5,-1]");
  EXPECT_FALSE(ex->usage());  // Gemini reports none: estimated.
}

TEST(GeminiEmbeddings, SeveralThroughBatchEmbedContentsInOrder) {
  const Decoded in = embeddingRequest(R"({"model":"e","input":["a","b"]})");
  auto ex = embedding(in.request, geminiProvider());
  auto r = ex->request();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, "/v1beta/models/gemini-upstream:batchEmbedContents");
  EXPECT_EQ(parsedJson(r->body)["requests"].Size(), 2U);
  std::string answer = R"({"embeddings":[{"values":[1]},{"values":[2]}]})";
  auto list = ex->completion(answer);
  ASSERT_TRUE(list.ok()) << list.error().message;
  const auto d = parsedJson(*list);
  EXPECT_EQ(d["data"][1]["index"].GetInt(), 1);
  expectSameJson(d["data"][1]["embedding"], "[2]");
  std::string short_answer = R"({"embeddings":[{"values":[1]}]})";
  EXPECT_FALSE(embedding(in.request, geminiProvider())->completion(short_answer).ok());
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
