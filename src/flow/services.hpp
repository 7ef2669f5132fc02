// The shared services the pipeline and the handlers that call it are given (never reached
// through globals): the configuration, this worker's upstreams and outbound HTTP client, the
// server's state, the ledger and the store's writer.
#pragma once

#include <atomic>

#include "billing/ledger.hpp"
#include "cache/answer_cache.hpp"
#include "config/config.hpp"
#include "http/outbound.hpp"
#include "inference/execute.hpp"
#include "limits/limiter.hpp"
#include "store/store_work.hpp"

namespace tollgate::flow {

struct Services {
  const config::Config& config;
  inference::Upstreams upstreams;
  http::OutboundHttp& outbound;  ///< For services the configuration names (not upstream models).
  const std::atomic<bool>& draining;   ///< True once shutdown began.
  billing::Ledger* ledger;             ///< Where charges go; nullptr when nothing is billed.
  store::StoreWork* writer;            ///< Idempotency-Key claims; set when `ledger` is.
  std::string open_team_id;            ///< Open mode: the team billed for every request, if any.
  cache::AnswerCache& cache;           ///< The inference cache, shared by every worker.
  std::string gateway_id;              ///< This gateway's id in the store (Idempotency-Key claims).
  const Lease* lease = nullptr;        ///< Its lease on serving; nullptr: never fenced.
  limits::Limiter* limiter = nullptr;  ///< Rate limits; nullptr: none are counted.
};

}  // namespace tollgate::flow
