// The store's records as JSON (and the spend log as CSV), one shape for each wherever it is shown:
// `tollgate admin … --json` and the console's API. Times are RFC 3339 UTC strings, amounts exact
// decimal USD numbers, absent text null; secrets and their hashes are never written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.hpp"
#include "store/accounts_store.hpp"
#include "store/alert_store.hpp"
#include "store/billing_store.hpp"
#include "store/console_store.hpp"

namespace tollgate::json {
class Writer;
}  // namespace tollgate::json

namespace tollgate::accounts {

/// A time (RFC 3339, UTC) or null.
void timeField(json::Writer& w, std::string_view key, std::optional<std::int64_t> ms);
/// An amount of pico-USD as its exact decimal USD number.
void usdField(json::Writer& w, std::string_view key, money::Pico amount);
/// A text or null.
void textField(json::Writer& w, std::string_view key, const std::optional<std::string>& v);

/// The input tokens neither read from nor written to a prompt cache (audio included): the prompt
/// less its cache reads and writes.
std::int64_t uncachedPrompt(std::int64_t prompt_tokens, const store::TokenKinds& k);

/// "pending", "accepted", "revoked" or "expired".
std::string inviteState(const store::Invite& i);

/// Why key `k` does not work though not revoked, given its team's `members`: "expired" (past
/// its expiry time), "creator_not_member" (its creator left the team) or "creator_role" (their role
/// may no longer create keys); nullopt when it works or is revoked. The operator's keys have no
/// creator and always work.
std::optional<std::string> keyInactiveReason(const store::ApiKey& k,
                                             const std::vector<store::Member>& members);

/// A key: its state "revoked", else "inactive" with `inactive_reason` (keyInactiveReason), else
/// "active"; `inactive_reason` is null unless inactive.
void writeKey(json::Writer& w, const store::ApiKey& k,
              const std::optional<std::string>& inactive_reason = std::nullopt);
/// A key's rules as members of the object being written: `expires_at` (RFC 3339) and
/// `allowed_models` (an array), each null when the key has no such rule.
void writeKeyRules(json::Writer& w, const key_rules::KeyRules& rules);
/// A key's or team's own rate limits as members `rpm`, `tpm` and `concurrent`, each only when
/// set: absent, the configured default applies.
void writeRateLimits(json::Writer& w, const key_rules::RateLimits& limits);
void writeMember(json::Writer& w, const store::Member& m);
void writeInvite(json::Writer& w, const store::Invite& i);
/// A spend row; its token kinds last (store::kTokenKinds' names).
void writeSpendRow(json::Writer& w, const store::SpendRow& s);
/// One group of a summary, its name under `by` ("day", "model", …): its sums, then each token
/// kind's, then `uncached_prompt_tokens` (uncachedPrompt).
void writeSpendTotal(json::Writer& w, std::string_view by, const store::SpendTotal& t);
void writeAuditEntry(json::Writer& w, const store::AuditEntry& e);
/// An alert's delivery: its event's fields (`threshold` and `balance_usd` as amounts), its
/// `state` ("pending", "delivered" or "failed"), its attempts, when it is next tried (null unless
/// pending), when it was delivered or given up, and the receiver's last status (null: none).
void writeAlert(json::Writer& w, const store::AlertRow& a);

/// The spend rows as CSV (RFC 4180, a header line first; a field that a spreadsheet would run as
/// a formula gets a leading '); the token kinds are its last columns, after key_name.
std::string spendCsv(const std::vector<store::SpendRow>& rows);

}  // namespace tollgate::accounts
