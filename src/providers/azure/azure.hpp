// The adapter for Azure OpenAI: OpenAI's wire (chat, embeddings, transcriptions) at a
// deployment's address, {api_base}/openai/deployments/{model}/chat/completions?api-version=V,
// with the key in an `api-key` header. Each attempt is the OpenAI adapter's, re-addressed; the
// answers are OpenAI's, Azure's content filter results kept in them as unknown members are.
// A prompt Azure's content filter refuses (400, code content_filter) becomes 400
// upstream_invalid_request naming the filter's categories. Sans I/O.
#pragma once

#include <string>

#include "core/result.hpp"
#include "providers/adapter.hpp"

namespace tollgate::providers::azure {

/// `path` (an OpenAI-wire request's, under the provider's api_base) at the provider's deployment:
/// "{api_base path}/openai/deployments/{model}{endpoint}?api-version={api_version}".
std::string deploymentPath(const config::Provider& provider, std::string_view path);

/// Our error for a non-2xx answer of Azure: its content filter's refusal named by category
/// ("hate: high, violence: medium"), else as an OpenAI upstream's.
Error translateError(int status, const std::string& body);

/// The adapter of provider type "azure".
const Adapter& azureAdapter();

}  // namespace tollgate::providers::azure
