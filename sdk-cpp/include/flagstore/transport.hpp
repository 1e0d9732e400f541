#pragma once
// How the client talks HTTP: an interface, so a game engine brings its own (Unreal's FHttpModule, say; see README.md).
// libcurl's is flagstore::makeCurlTransport() (curl_transport.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flagstore {

/** Response headers; names compare without regard to case. */
class Headers {
 public:
  void add(std::string name, std::string value) { entries_.emplace_back(std::move(name), std::move(value)); }
  /** The first header of that name. */
  std::optional<std::string> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  /** A plain GET: the whole exchange. A stream: until its status and headers are in. */
  std::int64_t timeoutMs = 10000;
  /** A stream only: no byte for this long ends it as a timeout. 0: no limit. */
  std::int64_t idleTimeoutMs = 0;
};

/** A whole answer, or why there is none. */
struct HttpResult {
  /** The HTTP status; 0 when the service did not answer (then `error` says why). */
  int status = 0;
  Headers headers;
  std::string body;
  std::string error;
  /** The request ran out of its time (status 0). */
  bool timedOut = false;
};

/** Stops a request. A callback already under way may still arrive: the client ignores what it no longer waits for. */
class Cancellable {
 public:
  virtual ~Cancellable() = default;
  virtual void cancel() = 0;
};

struct StreamCallbacks {
  /** Once, when the status and headers are in. */
  std::function<void(int status, const Headers& headers)> response;
  /** The body as it arrives, in order. */
  std::function<void(std::string_view chunk)> data;
  /** Once, at the end: `error` empty when the service ended the stream, else why it failed (timedOut for a timeout). */
  std::function<void(const std::string& error, bool timedOut)> end;
};

/**
 * The client's HTTP. Every method returns at once; callbacks come later, from any thread (or from within the call),
 * one at a time for one request. The client sends GETs only.
 */
class Transport {
 public:
  virtual ~Transport() = default;
  /** One GET; `done` is called once with the whole answer (any status), or with status 0 and `error`. */
  virtual std::shared_ptr<Cancellable> get(const HttpRequest& request, std::function<void(HttpResult)> done) = 0;
  /**
   * A GET whose answer is read as it arrives (the change stream). A transport that cannot stream may end it at once
   * with an error: a client with `stream` on then polls, and retries the stream with backoff.
   */
  virtual std::shared_ptr<Cancellable> stream(const HttpRequest& request, StreamCallbacks callbacks);
};

}  // namespace flagstore
