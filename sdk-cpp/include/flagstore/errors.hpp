#pragma once
#include <optional>
#include <stdexcept>
#include <string>

namespace flagstore {

/**
 * What went wrong, as error callbacks and ready() report it (the TypeScript SDK's kinds).
 * - Unauthorized (401) and Forbidden (403): the key is wrong, revoked or lacks FLAGS_READ. The client stops for good.
 * - RateLimited (429): no request is sent before retryAfterSeconds have passed.
 * - Server (5xx), Http (any other unexpected status), Network, Timeout, InvalidPayload: the client keeps the last good
 *   payload and retries with exponential backoff.
 * - Stream: the change stream dropped or was refused; the client polls until it reconnects.
 * - Cache: the cache file could not be read or written; everything else goes on.
 * - Closed: close() was called before ready() settled.
 */
enum class ErrorKind { Unauthorized, Forbidden, RateLimited, Server, Http, Network, Timeout, InvalidPayload, Stream, Cache, Closed };

/** unauthorized, forbidden, rate-limited, server, http, network, timeout, invalid-payload, stream, cache, closed. */
const char* errorKindName(ErrorKind kind);

class FlagstoreError : public std::runtime_error {
 public:
  FlagstoreError(ErrorKind kind, const std::string& message, int status = 0, std::optional<int> retryAfterSeconds = std::nullopt)
      : std::runtime_error(message), kind(kind), status(status), retryAfterSeconds(retryAfterSeconds) {}
  ErrorKind kind;
  /** The HTTP status the service answered, 0 when it did not answer. */
  int status;
  /** From Retry-After on a 429. */
  std::optional<int> retryAfterSeconds;
  /** 401 and 403: retrying cannot help, so the client stops. */
  bool isFatal() const { return kind == ErrorKind::Unauthorized || kind == ErrorKind::Forbidden; }
};

/** The error for an HTTP answer that is not the one expected; `body` is the service's `{statusCode, error, message}`. */
FlagstoreError httpError(const std::string& what, int status, const std::string& body, std::optional<int> retryAfterSeconds = std::nullopt);

}  // namespace flagstore
