// The `dummy` provider: answers in process by echoing the last user message, so a new install
// gives real answers (streamed or not) with no upstream account, and tests need no network. Its
// adapter writes the answer straight from the typed request, once, in our wire format; its
// in-process transport hands that answer back, and nothing is parsed again.
#pragma once

#include "providers/adapter.hpp"

namespace tollgate::providers {

/// The adapter of provider type "dummy", with its in-process transport.
const Adapter& dummyAdapter();

}  // namespace tollgate::providers
