// One handler per endpoint. Each is a short checklist: decode the request, plan, execute,
// respond; the units it calls do the work.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "exchange/request_context.hpp"
#include "flow/services.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"

namespace tollgate::api {

using boost::asio::awaitable;
/// The handlers are given the pipeline's services.
using flow::Services;

/// GET /health: 200 while the process runs.
awaitable<void> health(exchange::RequestContext& ctx, http::Request& req,
                       http::ResponseWriter& out);

/// GET /ready: 200 while serving, 503 once shutdown began.
awaitable<void> ready(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                      http::ResponseWriter& out);

/// GET /v1/models (spec §4.5).
awaitable<void> listModels(exchange::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out);

/// GET /v1/models/{id}: one item of the list, or 404 model_not_found.
awaitable<void> retrieveModel(exchange::RequestContext& ctx, http::Request& req,
                              http::ResponseWriter& out);

/// POST /v1/chat/completions (spec §4.1).
awaitable<void> chatCompletions(const Services& s, exchange::RequestContext& ctx,
                                http::Request& req, http::ResponseWriter& out);

/// POST /v1/embeddings (spec §4.2).
awaitable<void> embeddings(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out);

/// POST /v1/rerank (spec §4.3).
awaitable<void> rerank(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                       http::ResponseWriter& out);

/// POST /v1/audio/transcriptions (spec §4.4): a multipart upload, spooled past a small size.
awaitable<void> transcriptions(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                               http::ResponseWriter& out);

}  // namespace tollgate::api
