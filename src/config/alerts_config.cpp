#include "config/alerts_config.hpp"

#include <algorithm>
#include <functional>

namespace tollgate::config {
namespace {

/// Below this a webhook secret is guessable by whoever can try signatures against a receiver.
constexpr std::size_t kMinWebhookSecretBytes = 16;
constexpr std::size_t kMaxBalanceAmounts = 16;

/// The webhook's URL: written in the file or, as `env::VARIABLE`, taken from the environment
/// (it may carry a receiver's token in its path). Errors never repeat it.
UpstreamUrl webhookUrl(const TableReader& r, const std::string& text, const EnvLookup& env) {
  std::string url = text;
  if (text.starts_with(kEnvPrefix)) {
    const std::string var = text.substr(kEnvPrefix.size());
    const auto value = env(var);
    if (var.empty() || !value || value->empty()) {
      r.fail("webhook_url", "environment variable " + var + " is not set");
    }
    url = *value;
  }
  const UpstreamUrl parsed = parseHttpUrl(r, "webhook_url", url);
  if (!parsed.tls && !isLoopbackUrlHost(parsed.host)) {
    r.fail("webhook_url", "must be https (http only for a receiver on this machine's loopback)");
  }
  return parsed;
}

/// `balance_below_usd`: amounts in USD (numbers, or decimal strings), each read exactly; distinct,
/// returned largest first.
std::vector<money::Pico> balanceAmounts(const TableReader& r) {
  constexpr std::string_view kKey = "balance_below_usd";
  const toml::node* n = r.find(kKey);
  if (n == nullptr) {
    return {};
  }
  const toml::array* items = n->as_array();
  if (items == nullptr) {
    r.fail(kKey, "must be an array of amounts in USD, e.g. [50, 10, 0]");
  }
  if (items->size() > kMaxBalanceAmounts) {
    r.fail(kKey, "must hold at most " + std::to_string(kMaxBalanceAmounts) + " amounts");
  }
  std::vector<money::Pico> amounts;
  for (const toml::node& item : *items) {
    std::optional<money::Pico> amount;
    if (item.is_integer() && item.as_integer()->get() >= 0) {
      amount = TableReader::exactUsd(static_cast<double>(item.as_integer()->get()));
    } else if (item.is_floating_point() && item.as_floating_point()->get() >= 0 &&
               !std::signbit(item.as_floating_point()->get())) {
      amount = TableReader::exactUsd(item.as_floating_point()->get());
    } else if (item.is_string()) {
      amount = money::parseUsd(item.as_string()->get());
    } else {
      r.fail(kKey, "must hold amounts in USD, each a number >= 0, e.g. [50, 10, 0]");
    }
    if (!amount) {
      r.failUsd(kKey);
    }
    if (std::find(amounts.begin(), amounts.end(), *amount) != amounts.end()) {
      r.fail(kKey, "holds " + money::formatUsd(*amount) + " twice");
    }
    amounts.push_back(*amount);
  }
  std::sort(amounts.begin(), amounts.end(), std::greater<>());
  return amounts;
}

}  // namespace

/// `key_budget_fractions`: fractions of a key's budget above 0 and at most 1, each with at most
/// six decimal places, as parts per million; distinct, smallest first.
std::vector<std::int64_t> budgetFractions(const TableReader& r) {
  constexpr std::string_view kKey = "key_budget_fractions";
  constexpr double kPpm = 1e6;
  const toml::node* n = r.find(kKey);
  if (n == nullptr) {
    return {};
  }
  const toml::array* items = n->as_array();
  if (items == nullptr || items->size() > kMaxBalanceAmounts) {
    r.fail(kKey, "must be an array of at most " + std::to_string(kMaxBalanceAmounts) +
                     " fractions, e.g. [0.5, 0.8, 1.0]");
  }
  std::vector<std::int64_t> ppm;
  for (const toml::node& item : *items) {
    const std::optional<double> f =
        item.is_integer() ? std::optional<double>(item.as_integer()->get()) : item.value<double>();
    const double scaled = f ? *f * kPpm : -1;
    if (!f || !(scaled >= 1 && scaled <= kPpm) || std::abs(scaled - std::round(scaled)) > 1e-6) {
      r.fail(kKey,
             "must hold fractions above 0 and at most 1 (at most six decimal places), "
             "e.g. [0.5, 0.8, 1.0]");
    }
    ppm.push_back(std::llround(scaled));
  }
  std::sort(ppm.begin(), ppm.end());
  if (std::adjacent_find(ppm.begin(), ppm.end()) != ppm.end()) {
    r.fail(kKey, "must not repeat a fraction");
  }
  return ppm;
}

Alerts parseAlerts(const TableReader& r, const EnvLookup& env) {
  r.allowOnly({"webhook_url", "webhook_secret", "balance_below_usd", "key_budget_fractions"});
  Alerts a;
  a.key_budget_ppm = budgetFractions(r);
  if (const auto url = r.string("webhook_url")) {
    a.webhook_url = webhookUrl(r, *url, env);
  }
  a.webhook_secret = envSecret(r, "webhook_secret", env);
  if (a.webhook_url && a.webhook_secret.empty()) {
    r.fail("webhook_secret", "is required with a webhook_url (write env::VARIABLE_NAME)");
  }
  if (!a.webhook_url && !a.webhook_secret.empty()) {
    r.fail("webhook_secret", "needs a webhook_url to sign events for");
  }
  if (!a.webhook_secret.empty() && a.webhook_secret.size() < kMinWebhookSecretBytes) {
    r.fail("webhook_secret",
           "must be at least " + std::to_string(kMinWebhookSecretBytes) + " bytes long");
  }
  a.balance_below = balanceAmounts(r);
  if (!a.balance_below.empty() && !a.webhook_url) {
    r.fail("balance_below_usd", "needs a webhook_url to send its events to");
  }
  return a;
}

}  // namespace tollgate::config
