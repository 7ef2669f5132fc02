// The `dummy` provider's other endpoints, so that embeddings, rerank and transcriptions work on a
// fresh install with no upstream account: vectors hashed from the words of each text (texts that
// share words point the same way), rerank scores by the share of the query's words a document
// holds, and a transcription that describes the audio it got (a WAV file's format and duration).
#pragma once

#include <memory>

#include "providers/adapter.hpp"

namespace tollgate::providers {

/// Dimensions of a dummy embedding when the request does not ask for a number.
inline constexpr int kDummyDimensions = 64;

std::unique_ptr<Exchange> dummyEmbedding(const openai::EmbeddingRequest& request);
std::unique_ptr<Exchange> dummyRerank(const openai::RerankRequest& request);
std::unique_ptr<Exchange> dummyTranscription(const openai::TranscriptionRequest& request);

}  // namespace tollgate::providers
