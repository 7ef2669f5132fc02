// The shared services handlers are given (never reached through globals): the configuration,
// this worker's upstreams, and the server's state.
#pragma once

#include <atomic>

#include "config/config.hpp"
#include "inference/execute.hpp"

namespace tollgate::api {

struct Services {
  const config::Config& config;
  inference::Upstreams upstreams;
  const std::atomic<bool>& draining;  ///< True once shutdown began.
};

}  // namespace tollgate::api
