#include "config/limits_config.hpp"

namespace tollgate::config {

Limits parseLimits(const TableReader& r, bool concurrent) {
  if (concurrent) {
    r.allowOnly({"rpm", "tpm", "concurrent"});
  } else {
    r.allowOnly({"rpm", "tpm"});  // A model's requests in flight are the upstreams' business.
  }
  Limits l;
  l.rpm = r.integer("rpm", 1, kMaxLimit);
  l.tpm = r.integer("tpm", 1, kMaxLimit);
  if (concurrent) {
    l.concurrent = r.integer("concurrent", 1, kMaxLimit);
  }
  return l;
}

LimitDefaults parseLimitDefaults(const TableReader& r) {
  r.allowOnly({"key", "team"});
  LimitDefaults d;
  if (const toml::table* key = r.table("key")) {
    d.key = parseLimits(TableReader(*key, r.qualified("key"), r.file()), true);
  }
  if (const toml::table* team = r.table("team")) {
    d.team = parseLimits(TableReader(*team, r.qualified("team"), r.file()), true);
  }
  return d;
}

}  // namespace tollgate::config
