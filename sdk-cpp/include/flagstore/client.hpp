#pragma once
// Serves a Flagstore organization's flags to a game server from memory, and keeps them current: it polls
// GET /flags/config with If-None-Match every pollIntervalSeconds (±10 %), or, with `stream`, re-reads when the change
// stream says so and polls only while the stream is down. Through an outage it keeps the last good payload (and the
// cache file keeps it across restarts). A 401 or 403 stops it for good.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flagstore/errors.hpp"
#include "flagstore/payload.hpp"
#include "flagstore/scheduler.hpp"
#include "flagstore/targeting.hpp"
#include "flagstore/timing.hpp"
#include "flagstore/transport.hpp"

namespace flagstore {

struct Options {
  /** The service's API base, with its version: `https://flags.example.com/v1`. */
  std::string baseUrl;
  /** An API key with FLAGS_READ. */
  std::string apiKey;
  /**
   * The attributes flag rules read, for every call: this server's own (`serverId`, `region`, `build`, …), a JSON
   * object. A call's context extends it (a player's `targetingKey`, …), its attributes winning.
   */
  Context context = Json::object();
  /** Also listen on GET /flags/config/stream and re-read as soon as the config changes. */
  bool stream = false;
  /** Where the last good payload is kept, so a restart while the service is down still has flags. Empty: none. */
  std::string cacheFile;
  /** Default: libcurl's (when the SDK was built with it). */
  std::shared_ptr<Transport> transport;
  /** What the client waits with and runs its work on. Default: a ThreadScheduler of its own. */
  std::shared_ptr<Scheduler> scheduler;
  /** Jitter's source, in [0, 1). Default: a Mersenne twister seeded from std::random_device. */
  Random random;
  /** A config request (or the opening of the stream) that takes longer fails as `timeout`. */
  std::int64_t requestTimeoutMs = 10000;
  /** An open stream that sends nothing (not even its keep-alive comment) for this long is dropped. */
  std::int64_t streamSilenceTimeoutMs = 45000;
};

enum class ReadyState { Pending, Ready, Failed };

class Client {
 public:
  /** Starts at once: reads the cache file (when given), then the service. Throws std::invalid_argument for bad options. */
  explicit Client(Options options);
  /** The same with the other options at their defaults: polling, no cache file, libcurl's transport. */
  Client(const std::string& baseUrl, const std::string& apiKey, const Context& context = Json::object());
  /** close(), then waits for the client's own thread. */
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /**
   * Returns once the client has flags to serve: from the service, or, when the service cannot be reached, from the
   * cache file. Throws FlagstoreError when there is neither (the client keeps retrying, and calls change callbacks with
   * every key when it first gets them), on a 401 or 403 (it has stopped), on close() before either, and as `timeout`
   * when `timeout` passes first.
   */
  void ready(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  ReadyState readyState() const;
  /** Called once ready() would return (nullptr) or throw (the error); at once when that is settled already. */
  void onReady(std::function<void(const FlagstoreError*)> callback);

  /**
   * A `boolean` flag's value for the context (the client's default context extended by `context`): the first of its
   * rules whose conditions all hold, else its value. Unknown keys and flags of another type give the fallback.
   */
  bool getBoolean(const std::string& key, bool fallback, const Context& context = Json::object()) const;
  std::string getString(const std::string& key, const std::string& fallback, const Context& context = Json::object()) const;
  double getNumber(const std::string& key, double fallback, const Context& context = Json::object()) const;
  /** A `json` flag's value (a copy). Flags of other types give the fallback. */
  Json getJson(const std::string& key, const Json& fallback, const Context& context = Json::object()) const;
  /** The evaluation behind a getter: value, reason and variant (nullopt for an unknown key). */
  std::optional<Evaluation> evaluate(const std::string& key, const Context& context = Json::object()) const;

  /** Every flag's value for the context, as `{key: value}`, `server` ones included: for the server's own use, never for players. */
  Json all(const Context& context = Json::object()) const;
  /**
   * Only the `shared` flags, as `{key: value}`, resolved for the context (a player's `targetingKey` and attributes):
   * what a server may relay to that player. Never the rules themselves.
   */
  Json clientSafe(const Context& context = Json::object()) const;
  /** The payload served now (nullopt before the first). */
  std::optional<ConfigPayload> payload() const;

  /**
   * Listeners run on the client's scheduler (its own thread by default), never while the client holds its lock: they
   * may call getters, off() or close(). A listener must outlive the client, or be removed with off() first.
   */
  using ListenerId = std::uint64_t;
  /** The keys whose value, type, runtime or rules changed, or that were added or removed, sorted. Not called for the first load. */
  ListenerId onChange(std::function<void(const std::vector<std::string>& keys)> listener);
  ListenerId onError(std::function<void(const FlagstoreError& error)> listener);
  void off(ListenerId id);

  /** Stops polling and the stream and cancels what is in flight; nothing is sent afterwards. Safe to call twice. */
  void close();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
  std::shared_ptr<ThreadScheduler> ownScheduler_;
};

}  // namespace flagstore
