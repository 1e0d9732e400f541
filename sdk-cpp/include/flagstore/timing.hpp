#pragma once
// The client's waiting decisions, apart from any clock: the poll interval's jitter, backoff, Retry-After, reconnects.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace flagstore {

/** Jitter's source: a number in [0, 1). */
using Random = std::function<double()>;

constexpr std::int64_t BACKOFF_MIN_MS = 1000;
constexpr std::int64_t BACKOFF_MAX_MS = 5 * 60 * 1000;

/** The payload's pollIntervalSeconds, ±10 %, so servers started together do not poll together. */
double pollDelay(double intervalSeconds, double random);
/** 1 s, 2 s, 4 s … for the 1st, 2nd, 3rd … failure in a row, ±20 %, never outside 1 s … 5 min. */
double backoffDelay(int failures, double random);
/** Retry-After's wait, then up to 10 % more: never earlier than the service asked, and not all at once. */
double retryAfterDelay(double retryAfterMs, double random);
/** A stream the service ended with a `retry:` hint is reopened after that hint, up to twice as long. */
double reconnectDelay(double retryMs, double random);
/** Retry-After in milliseconds: delay-seconds or an HTTP-date (RFC 9110 10.2.3), against `nowMs` (epoch ms); nullopt when unreadable. */
std::optional<double> parseRetryAfter(const std::optional<std::string>& header, std::int64_t nowMs);
/** An HTTP-date (IMF-fixdate, RFC 850 or asctime) as epoch milliseconds. */
std::optional<std::int64_t> parseHttpDate(const std::string& text);

}  // namespace flagstore
