// The [traces] and [log] sections of the configuration: where spans are exported and how, how
// new traces are sampled, and the format of the gateway's own stderr lines.
#pragma once

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// The [traces] table `r` reads (with its [traces.headers] table, if any).
Traces parseTraces(const TableReader& r, const EnvLookup& env);

/// The [log] table `r` reads.
Log parseLog(const TableReader& r);

}  // namespace tollgate::config
