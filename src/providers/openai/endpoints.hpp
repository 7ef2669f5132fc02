// The OpenAI-compatible wire's other endpoints: embeddings ({api_base}/embeddings), rerank
// ({api_base}/rerank, the Cohere/Jina shape that vLLM, TEI and Infinity serve too) and audio
// transcriptions ({api_base}/audio/transcriptions, the upload streamed through). Sans I/O.
#pragma once

#include <memory>
#include <string>

#include "providers/adapter.hpp"

namespace tollgate::providers {

/// The JSON body sent upstream for embeddings: the forwarded fields, `model` the provider's.
std::string buildEmbeddingBody(const openai::EmbeddingRequest& request,
                               const config::Provider& provider);

/// The JSON body sent upstream for rerank.
std::string buildRerankBody(const openai::RerankRequest& request, const config::Provider& provider);

std::unique_ptr<Exchange> openAiEmbedding(const openai::EmbeddingRequest& request,
                                          const config::Provider& provider);
std::unique_ptr<Exchange> openAiRerank(const openai::RerankRequest& request,
                                       const config::Provider& provider);
std::unique_ptr<Exchange> openAiTranscription(const openai::TranscriptionRequest& request,
                                              const config::Provider& provider);

}  // namespace tollgate::providers
