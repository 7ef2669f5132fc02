// The [alerts] section of the configuration: the webhook that hears of balances running low, the
// secret its events are signed with, and the amounts that fire them.
#pragma once

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// The [alerts] table `r` reads.
Alerts parseAlerts(const TableReader& r, const EnvLookup& env);

}  // namespace tollgate::config
