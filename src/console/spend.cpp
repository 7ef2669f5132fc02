// A team's money through the console: its spend summed by day, model, key, tag or user (from the
// daily aggregates), its spend rows a page at a time or as CSV, its audit log and its alerts'
// deliveries.
#include <algorithm>
#include <array>
#include <charconv>

#include "console/handlers.hpp"
#include "http/form.hpp"

namespace tollgate::console {
namespace {

constexpr std::int64_t kDefaultPage = 100;
constexpr std::int64_t kMaxPage = 500;
/// A CSV export holds at most this many rows (narrow the dates for more).
constexpr std::int64_t kMaxCsvRows = 100'000;
constexpr std::int64_t kDefaultDays = 30;
/// A request id filter is at most this long (the gateway's ids are far shorter).
constexpr std::size_t kMaxRequestId = 128;

/// The query's parameters of a spend listing, read and checked.
struct SpendQuery {
  store::SpendFilter filter;
  std::int64_t limit = kDefaultPage;
};

Result<std::optional<std::string>> param(const http::Request& req, std::string_view name) {
  return http::formValue(req.query, name);
}

Result<std::optional<std::int64_t>> dayParam(const http::Request& req, std::string_view name) {
  auto text = param(req, name);
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return std::optional<std::int64_t>();
  }
  const auto ms = text::parseUtcDay(**text);
  if (!ms) {
    return Error{ErrorKind::InvalidValue,
                 std::string(name) + " must be a UTC date such as 2026-11-01", std::string(name)};
  }
  return ms;
}

Result<std::int64_t> limitParam(const http::Request& req, std::int64_t max) {
  auto text = param(req, "limit");
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return std::min(kDefaultPage, max);
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars((*text)->data(), (*text)->data() + (*text)->size(), n);
  if (ec != std::errc() || end != (*text)->data() + (*text)->size() || n < 1 || n > max) {
    return Error{ErrorKind::InvalidValue, "limit must be from 1 to " + std::to_string(max),
                 "limit"};
  }
  return n;
}

/// A page's cursor: "CREATED_AT.REQUEST_ID" of the last row of the page before.
std::string cursorOf(const store::SpendRow& r) {
  return std::to_string(r.created_at) + "." + r.request_id;
}

/// The `request_id` parameter: 1 to kMaxRequestId bytes of visible ASCII (no space or control).
Result<std::optional<std::string>> requestIdParam(const http::Request& req) {
  auto id = param(req, "request_id");
  if (!id || !*id) {
    return id;
  }
  const std::string_view v = **id;
  const bool visible = std::all_of(v.begin(), v.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (v.empty() || v.size() > kMaxRequestId || !visible) {
    return Error{
        ErrorKind::InvalidValue,
        "request_id must be 1 to " + std::to_string(kMaxRequestId) + " printable ASCII characters",
        "request_id"};
  }
  return id;
}

Result<SpendQuery> spendQuery(const http::Request& req, const std::string& team_id,
                              std::int64_t max_limit) {
  SpendQuery q;
  q.filter.team_id = team_id;
  const auto since = dayParam(req, "since");
  const auto until = dayParam(req, "until");
  if (!since) {
    return since.error();
  }
  if (!until) {
    return until.error();
  }
  q.filter.since_ms = since->value_or(store::nowMs() - kDefaultDays * store::kMsPerDay);
  if (*until) {
    q.filter.until_ms = **until + store::kMsPerDay;  // The whole day named.
  }
  for (const auto& [name, field] :
       std::array<std::pair<std::string_view, std::optional<std::string> store::SpendFilter::*>, 3>{
           {{"model", &store::SpendFilter::model},
            {"key", &store::SpendFilter::key_public_id},
            {"user", &store::SpendFilter::user_id}}}) {
    auto v = param(req, name);
    if (!v) {
      return v.error();
    }
    q.filter.*field = *v;
  }
  auto request_id = requestIdParam(req);
  if (!request_id) {
    return request_id.error();
  }
  q.filter.request_id = *request_id;
  auto tag = param(req, "tag");
  if (!tag) {
    return tag.error();
  }
  if (*tag) {
    const std::size_t eq = (*tag)->find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error{ErrorKind::InvalidValue, "tag must be KEY=VALUE", "tag"};
    }
    q.filter.tag = std::pair((*tag)->substr(0, eq), (*tag)->substr(eq + 1));
  }
  auto cursor = param(req, "cursor");
  if (!cursor) {
    return cursor.error();
  }
  if (*cursor) {
    const std::size_t dot = (*cursor)->find('.');
    std::int64_t at = 0;
    const char* first = (*cursor)->data();
    const auto [end, ec] = std::from_chars(first, first + std::min(dot, (*cursor)->size()), at);
    if (dot == std::string::npos || ec != std::errc() || end != first + dot) {
      return Error{ErrorKind::InvalidValue, "cursor is not one this API gave", "cursor"};
    }
    q.filter.before = std::pair(at, (*cursor)->substr(dot + 1));
  }
  const auto limit = limitParam(req, max_limit);
  if (!limit) {
    return limit.error();
  }
  q.limit = *limit;
  q.filter.newest_first = true;
  q.filter.limit = q.limit;
  return q;
}

}  // namespace

Awaitable<void> spendSummary(const ConsoleServices& s, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  static constexpr std::array<std::pair<std::string_view, store::SpendGroup>, 5> kGroups{
      {{"day", store::SpendGroup::Day},
       {"model", store::SpendGroup::Model},
       {"key", store::SpendGroup::Key},
       {"tag", store::SpendGroup::Tag},
       {"user", store::SpendGroup::User}}};
  const auto by = param(req, "by");
  const auto since = dayParam(req, "since");
  if (!by || !since) {
    co_return co_await fail(ctx, out, !by ? by.error() : since.error());
  }
  const std::string name = by->value_or("day");
  const auto group =
      std::find_if(kGroups.begin(), kGroups.end(), [&](const auto& g) { return g.first == name; });
  if (group == kGroups.end()) {
    co_return co_await fail(ctx, out, ErrorKind::InvalidValue,
                            "by must be day, model, key, tag or user", "by");
  }
  const std::string since_day =
      text::utcTimestamp(since->value_or(store::nowMs() - kDefaultDays * store::kMsPerDay))
          .substr(0, 10);
  const auto totals =
      co_await s.accounts.summarizeSpend(m.member.team.id, group->second, since_day);
  json::Writer w;
  w.startObject();
  w.field("by", name);
  w.field("since", since_day);
  w.key("data");
  w.startArray();
  for (const store::SpendTotal& t : totals) {
    accounts::writeSpendTotal(w, name, t);
  }
  w.endArray();
  w.endObject();
  co_await sendJson(out, w);
}

Awaitable<void> spendRows(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  auto q = spendQuery(req, m.member.team.id, kMaxPage);
  if (!q) {
    co_return co_await fail(ctx, out, q.error());
  }
  const auto rows = co_await s.accounts.listSpend(q->filter);
  const bool more = static_cast<std::int64_t>(rows.size()) == q->limit && !rows.empty();
  json::Writer w;
  writePage(w, rows, accounts::writeSpendRow,
            more ? std::optional(cursorOf(rows.back())) : std::nullopt);
  co_await sendJson(out, w);
}

Awaitable<void> spendCsv(const ConsoleServices& s, exchange::RequestContext& ctx,
                         http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  auto q = spendQuery(req, m.member.team.id, kMaxCsvRows);
  if (!q) {
    co_return co_await fail(ctx, out, q.error());
  }
  const auto limit = http::formValue(req.query, "limit");
  if (limit && !*limit) {
    q->filter.limit = kMaxCsvRows;  // The whole range, not a page.
  }
  q->filter.newest_first = false;
  std::string csv = co_await s.accounts.spendCsv(q->filter);
  http::Response r{200, "text/csv; charset=utf-8", {}, std::move(csv)};
  r.header("Content-Disposition", "attachment; filename=\"spend.csv\"");
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

Awaitable<void> auditLog(const ConsoleServices& s, exchange::RequestContext& ctx,
                         http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  const auto limit = limitParam(req, kMaxPage);
  const auto before = param(req, "cursor");
  if (!limit || !before) {
    co_return co_await fail(ctx, out, !limit ? limit.error() : before.error());
  }
  const store::AuditFilter f{m.member.team.id, *before, *limit};
  const auto entries = co_await s.accounts.listAudit(f);
  const bool more = static_cast<std::int64_t>(entries.size()) == *limit && !entries.empty();
  json::Writer w;
  writePage(w, entries, accounts::writeAuditEntry,
            more ? std::optional(entries.back().id) : std::nullopt);
  co_await sendJson(out, w);
}

Awaitable<void> alertsLog(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  const auto limit = limitParam(req, kMaxPage);
  if (!limit) {
    co_return co_await fail(ctx, out, limit.error());
  }
  const auto alerts = co_await s.accounts.listAlerts(m.member.team.id, *limit);
  json::Writer w;
  writePage(w, alerts, accounts::writeAlert, std::nullopt);
  co_await sendJson(out, w);
}

}  // namespace tollgate::console
