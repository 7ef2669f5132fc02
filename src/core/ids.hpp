// Identifiers: UUIDv7 generation (time-ordered, random tail), UUID text validation, and values
// that must not be guessed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tollgate::ids {

/// 64 bits from this thread's fast generator: for ids, trace ids and jitter, never for secrets
/// (its outputs follow from one another). Seeded with 256 bits from std::random_device, not one
/// 32-bit draw: with 32 bits, two of about 77,000 threads (over a fleet's restarts) share a seed
/// half the time, and so every trace id one of them makes.
std::uint64_t fastRandom();

/// A uniform number in [0, 1) from the same generator (a sampling decision, a jitter).
double fastUnit();

/// A new UUIDv7 in canonical lower-case 8-4-4-4-12 form.
std::string uuidV7();

/// True when `text` is a UUID in canonical 8-4-4-4-12 hexadecimal form (any case).
bool isUuid(std::string_view text);

/// `bytes` bytes from the kernel's random source (getrandom), as 2 * `bytes` lower-case hex
/// digits: for a value no one may work out from the values seen before, as a multipart boundary
/// a client's bytes must not be able to hold. uuidV7's random bits are not that: they come from
/// a fast generator, seeded once a thread, whose outputs follow from one another. Throws
/// std::runtime_error when the kernel gives none.
std::string unguessableHex(std::size_t bytes);

}  // namespace tollgate::ids
