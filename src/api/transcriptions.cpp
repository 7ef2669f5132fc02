#include "api/handlers.hpp"
#include "billing/pricing.hpp"
#include "cache/digest.hpp"
#include "core/ids.hpp"
#include "flow/pipeline.hpp"
#include "inference/execute.hpp"
#include "openai/transcription_request.hpp"

namespace tollgate::api {
namespace {

/// The digest of a decoded upload: its fields and the file's name, type and bytes, whatever the
/// multipart boundary (the SDKs make a new one on each retry).
std::string digestOf(const openai::TranscriptionRequest& r) {
  cache::Digest d;
  d.add(r.model);
  for (const auto& [name, value] : r.fields) {
    d.add(name);
    d.add(value);
  }
  for (const auto& [name, value] : r.tags) {
    d.add(name);
    d.add(value);
  }
  d.add(r.dryrun ? "dryrun" : "");
  d.add(r.file.filename);
  d.add(r.file.content_type);
  d.addSpool(*r.body, r.file.offset, r.file.size);
  return d.hex();
}

}  // namespace

awaitable<void> transcriptions(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                               http::ResponseWriter& out) {
  auto request = openai::decodeTranscriptionRequest(*req.spool, req.header("Content-Type"));
  if (!request) {
    co_return co_await flow::refuse(ctx, request.error(), out);
  }
  if (request->file.size > ctx.config.gateway.max_upload_bytes) {
    // A named local: GCC 12 destroys a temporary built inside a co_await's operand twice.
    const Error too_large{ErrorKind::PayloadTooLarge,
                          "the file has " + std::to_string(request->file.size) +
                              " bytes; at most " +
                              std::to_string(ctx.config.gateway.max_upload_bytes) + " are accepted",
                          "file"};
    co_return co_await flow::refuse(ctx, too_large, out);
  }
  ctx.model = request->model;
  auto plan = flow::planFor(ctx.config, request->model, config::Endpoint::Transcription);
  if (!plan) {
    co_return co_await flow::refuse(ctx, plan.error(), out);
  }
  const config::Model& model = *plan->model;
  const auto wav_ms = request->wav ? std::optional(request->wav->duration_ms) : std::nullopt;
  flow::Admission admission{{"transcription", ids::uuidV7(),
                             billing::spendTags(std::move(request->tags), req.header("User-Agent")),
                             false, req.spool->size()},
                            std::nullopt,
                            request->dryrun};
  // The hold bounds the seconds an upstream can report; an answer that reports none (text, srt,
  // vtt) is charged that bound, flagged estimated.
  admission.facts.audio_estimate_ms = billing::audioBoundMs(wav_ms, model.max_audio_seconds);
  // Tokens are recorded, not priced: a token a byte of the upload bounds what a row can add to
  // the aggregates (far more than any transcript of that audio holds).
  admission.facts.bound = {static_cast<std::int64_t>(req.spool->size()),
                           static_cast<std::int64_t>(req.spool->size())};
  admission.max_cost =
      billing::audioCost(admission.facts.audio_estimate_ms, model.cost_per_audio_second);
  const openai::TranscriptionRequest& r = *request;
  admission.digest = [&r] { return digestOf(r); };
  const inference::StartExchange start =
      [&r](const providers::Adapter& adapter, const config::Provider& provider,
           const inference::Route&) { return adapter.transcribe(r, provider); };
  co_await flow::call(s, ctx, req, *plan, std::move(admission), start, false, out);
}

}  // namespace tollgate::api
