// What an account operation answers when it declines: a Refusal (what kind, and one line that
// says what is wrong), carried in Outcome<T> beside the value it yields otherwise. A refusal is an
// expected answer, decided by the caller's input and the rules; a store that fails is not one
// (store::StoreError is thrown).
#pragma once

#include <string>

#include "core/result.hpp"

namespace tollgate::accounts {

/// Why an operation was refused: what a caller (the CLI's exit status, the console's HTTP status)
/// tells apart.
enum class RefusalKind {
  Invalid,    ///< A name, email, role, amount, token or duration that is not one.
  NotFound,   ///< An unknown team, user, membership, invitation or key.
  Forbidden,  ///< The acting user may not do this (the permission table, an invitation for
              ///< another address, a balance only the operator may add to).
  Conflict,   ///< The state refuses it: it exists already, it was used or revoked, it expired,
              ///< the last owner, a balance that would be too large.
  TeamLimit,  ///< The user owns as many teams as a user may create ([console]
              ///< max_teams_per_user).
};

struct Refusal {
  RefusalKind kind;
  std::string message;  ///< One line, for people.
};

/// An operation's value, or why it was refused.
template <class T>
using Outcome = Result<T, Refusal>;

}  // namespace tollgate::accounts
