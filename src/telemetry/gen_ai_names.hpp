// Names of the OpenTelemetry GenAI semantic conventions (pinned in docs/operating.md) that the
// metrics and the spans share.
#pragma once

#include <string_view>

#include "config/config.hpp"

namespace tollgate::telemetry {

/// The conventions' gen_ai.operation.name of a configured model's endpoint.
inline std::string_view genAiOperation(config::Endpoint e) {
  switch (e) {
    case config::Endpoint::Chat:
      return "chat";
    case config::Endpoint::Embedding:
      return "embeddings";
    case config::Endpoint::Rerank:
      return "rerank";
    case config::Endpoint::Transcription:
      break;
  }
  return "transcription";
}

}  // namespace tollgate::telemetry
