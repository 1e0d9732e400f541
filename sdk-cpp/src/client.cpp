#include "flagstore/client.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

#include "flagstore/cache_file.hpp"
#include "flagstore/sse.hpp"

#ifdef FLAGSTORE_WITH_CURL
#include "flagstore/curl_transport.hpp"
#endif

namespace flagstore {
namespace {

const char* const WHAT = "GET /flags/config";
const char* const STREAM_WHAT = "GET /flags/config/stream";

std::string trimTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

bool startsWithNoCase(const std::string& text, const std::string& prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); i++)
    if (std::tolower(static_cast<unsigned char>(text[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

struct Snapshot {
  ConfigPayload payload;
  std::map<std::string, Flag> flags;
};

std::optional<int> retryAfterSeconds(const std::optional<double>& ms) {
  if (!ms) return std::nullopt;
  return int(std::ceil(*ms / 1000));
}

}  // namespace

/**
 * The client's state. Everything that changes it runs as a task of the scheduler, under `mutex`, one at a time (the
 * transport's callbacks are posted to the scheduler); callbacks to the game's code run after the mutex is released.
 */
struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
  // Settings.
  std::string configUrl;
  std::string apiKey;
  Context context;
  bool streamEnabled = false;
  std::string cacheFile;
  std::shared_ptr<Transport> transport;
  std::shared_ptr<Scheduler> scheduler;
  Random random;
  std::int64_t requestTimeoutMs = 10000;
  std::int64_t silenceTimeoutMs = 45000;

  mutable std::mutex mutex;
  std::condition_variable readyChanged;
  /** Listener calls and ready callbacks collected under the mutex, made once it is released. */
  std::vector<std::function<void()>> outbox;

  mutable std::mutex snapshotMutex;
  std::shared_ptr<const Snapshot> snapshot;

  std::optional<ConfigPayload> current;
  std::map<std::string, Flag> flags;
  std::optional<std::string> persistedEtag;

  bool readySettled = false;
  std::optional<FlagstoreError> readyError;
  std::vector<std::function<void(const FlagstoreError*)>> readyCallbacks;

  ListenerId nextListener = 1;
  std::map<ListenerId, std::function<void(const std::vector<std::string>&)>> changeListeners;
  std::map<ListenerId, std::function<void(const FlagstoreError&)>> errorListeners;

  // Polling.
  std::optional<Scheduler::TaskId> pollTimer;
  int failures = 0;
  std::int64_t holdUntil = 0;
  bool reading = false;
  bool readAgain = false;
  std::uint64_t readGeneration = 0;
  std::shared_ptr<Cancellable> readRequest;
  std::optional<Scheduler::TaskId> readDeadline;
  std::optional<std::string> lastAnnounced;
  bool streamOpen = false;
  bool streamStarted = false;
  bool stopped = false;
  bool closed = false;

  // The change stream.
  enum class Phase { Idle, Connecting, Refused, Open };
  Phase phase = Phase::Idle;
  bool streamClosed = false;
  std::optional<Scheduler::TaskId> streamTimer;
  std::optional<Scheduler::TaskId> streamDeadline;
  std::optional<Scheduler::TaskId> silenceTimer;
  std::shared_ptr<Cancellable> streamRequest;
  std::uint64_t streamGeneration = 0;
  int streamFailures = 0;
  std::optional<double> retryMs;
  bool received = false;
  int refusedStatus = 0;
  Headers refusedHeaders;
  std::string refusedBody;
  std::unique_ptr<SseParser> parser;

  // ---- running work ----

  /** Runs `work` under the mutex, then what it left in the outbox. */
  template <typename F>
  void locked(F&& work) {
    std::vector<std::function<void()>> calls;
    {
      std::lock_guard<std::mutex> lock(mutex);
      work();
      calls.swap(outbox);
    }
    for (auto& call : calls) {
      try {
        call();
      } catch (...) {
        // A listener's own bug must not break the client's schedule.
      }
    }
  }

  /** Runs `work` as a task of the scheduler, `delayMs` from now, unless the client is gone by then. */
  Scheduler::TaskId later(std::int64_t delayMs, std::function<void(Impl&)> work) {
    std::weak_ptr<Impl> weak = shared_from_this();
    return scheduler->schedule(delayMs, [weak, work = std::move(work)] {
      if (auto self = weak.lock()) self->locked([&] { work(*self); });
    });
  }

  std::int64_t now() { return scheduler->nowMs(); }
  double jitter() { return random(); }

  void emitError(const FlagstoreError& error) {
    for (const auto& [id, listener] : errorListeners) {
      auto call = listener;
      outbox.push_back([call, error] { call(error); });
    }
  }

  void emitChange(const std::vector<std::string>& keys) {
    for (const auto& [id, listener] : changeListeners) {
      auto call = listener;
      outbox.push_back([call, keys] { call(keys); });
    }
  }

  // ---- start ----

  void start() {
    if (!cacheFile.empty()) loadCache();
    if (stopped) return;
    read();
    if (!reading) startStreamOnce();
  }

  void loadCache() {
    try {
      auto cached = readCacheFile(cacheFile);
      if (!cached || current) return;
      persistedEtag = cached->etag;
      use(std::move(*cached));
    } catch (const std::exception& error) {
      emitError(FlagstoreError(ErrorKind::Cache, "the cache file " + cacheFile + " could not be read: " + error.what()));
    }
  }

  void startStreamOnce() {
    if (streamStarted || stopped || !streamEnabled) return;
    streamStarted = true;
    streamStart();
  }

  // ---- reading the config ----

  /** Reads the config now. A read under way is shared; a change announced meanwhile is read right after it. */
  void read() {
    if (stopped) return;
    if (reading) {
      readAgain = true;
      return;
    }
    const std::int64_t held = holdUntil - now();
    if (held > 0) {
      if (!pollTimer) schedulePoll(double(held));
      return;
    }
    cancelPoll();
    reading = true;
    const std::uint64_t generation = ++readGeneration;
    HttpRequest request;
    request.url = configUrl;
    request.timeoutMs = requestTimeoutMs;
    request.headers = {{"Authorization", "Bearer " + apiKey}, {"Accept", "application/json"}};
    // The service's validator is weak (W/"<etag>"); sending it back exactly as served is what it matches fastest.
    if (current) request.headers.emplace_back("If-None-Match", "W/\"" + current->etag + "\"");
    readDeadline = later(requestTimeoutMs, [generation](Impl& self) {
      if (!self.reading || self.readGeneration != generation) return;
      self.readDeadline.reset();
      if (self.readRequest) self.readRequest->cancel();
      self.readRequest.reset();
      self.readDone(FlagstoreError(ErrorKind::Timeout, std::string(WHAT) + " took longer than " + std::to_string(self.requestTimeoutMs) + " ms"),
                    std::nullopt, std::nullopt, false);
    });
    std::weak_ptr<Impl> weak = shared_from_this();
    auto handle = transport->get(request, [weak, generation](HttpResult result) {
      auto self = weak.lock();
      if (!self) return;
      self->later(0, [generation, result = std::move(result)](Impl& me) {
        if (!me.reading || me.readGeneration != generation) return;
        me.answered(result);
      });
    });
    if (reading && readGeneration == generation) readRequest = handle;
  }

  void answered(const HttpResult& result) {
    if (readDeadline) scheduler->cancel(*readDeadline);
    readDeadline.reset();
    readRequest.reset();
    if (result.status == 304 && current) return readDone(std::nullopt, std::nullopt, std::nullopt, true);
    if (result.status == 200) {
      try {
        return readDone(std::nullopt, std::nullopt, parseConfigPayloadText(result.body), true);
      } catch (const std::exception& error) {
        return readDone(FlagstoreError(ErrorKind::InvalidPayload,
                                       std::string(WHAT) + " answered 200 with a body that is not a config payload: " + error.what(), 200),
                        std::nullopt, std::nullopt, false);
      }
    }
    if (result.status == 0) {
      if (result.timedOut) {
        return readDone(FlagstoreError(ErrorKind::Timeout, std::string(WHAT) + " took longer than " + std::to_string(requestTimeoutMs) + " ms"),
                        std::nullopt, std::nullopt, false);
      }
      return readDone(FlagstoreError(ErrorKind::Network, std::string(WHAT) + " failed: " + result.error), std::nullopt, std::nullopt, false);
    }
    const auto retryAfterMs = parseRetryAfter(result.headers.get("Retry-After"), now());
    readDone(httpError(WHAT, result.status, result.body, retryAfterSeconds(retryAfterMs)), retryAfterMs, std::nullopt, false);
  }

  /** What follows from one request's outcome: a failure, a new payload, or the one held confirmed (304). */
  void readDone(std::optional<FlagstoreError> error, std::optional<double> retryAfterMs, std::optional<ConfigPayload> payload, bool succeeded) {
    if (error) {
      readFailed(*error, retryAfterMs);
    } else {
      failures = 0;
      std::vector<std::string> changed;
      if (payload) {
        changed = use(*payload);
        persist(*current);
      }
      if (!streamOpen) schedulePoll(pollDelay(current ? current->pollIntervalSeconds : DEFAULT_POLL_INTERVAL_SECONDS, jitter()));
      if (!readySettled) {
        resolveReady();
      } else if (!changed.empty()) {
        emitChange(changed);
      }
    }
    reading = false;
    const bool again = readAgain;
    readAgain = false;
    // A failed read has its retry scheduled already; reading again at once would skip the backoff.
    if (again && succeeded && (!lastAnnounced || !current || *lastAnnounced != current->etag)) read();
    if (!reading) startStreamOnce();
  }

  void readFailed(const FlagstoreError& error, std::optional<double> retryAfterMs) {
    emitError(error);
    if (error.isFatal()) {
      stop();
      rejectReady(error);
      return;
    }
    schedulePoll(waitAfter(error, retryAfterMs));
    // Through an outage the last good payload keeps serving; at start that is the cache file's, when there is one.
    if (current) {
      resolveReady();
    } else {
      rejectReady(error);
    }
  }

  /** How long to wait after a failure: Retry-After for a 429 that names one, else the next backoff step. */
  double waitAfter(const FlagstoreError& error, std::optional<double> retryAfterMs) {
    if (error.kind == ErrorKind::RateLimited && retryAfterMs) {
      holdUntil = std::max(holdUntil, now() + std::int64_t(std::ceil(*retryAfterMs)));
      return retryAfterDelay(*retryAfterMs, jitter());
    }
    failures += 1;
    const double delay = backoffDelay(failures, jitter());
    if (error.kind == ErrorKind::RateLimited) holdUntil = std::max(holdUntil, now() + std::int64_t(std::ceil(delay)));
    return delay;
  }

  /** Makes `next` the payload served; returns the keys that changed. */
  std::vector<std::string> use(ConfigPayload next) {
    std::map<std::string, Flag> byKey;
    for (const auto& flag : next.flags) byKey.emplace(flag.key, flag);
    auto changed = changedKeys(flags, byKey);
    flags = byKey;
    current = next;
    auto fresh = std::make_shared<Snapshot>(Snapshot{std::move(next), std::move(byKey)});
    std::lock_guard<std::mutex> lock(snapshotMutex);
    snapshot = std::move(fresh);
    return changed;
  }

  void persist(const ConfigPayload& payload) {
    if (cacheFile.empty() || (persistedEtag && *persistedEtag == payload.etag)) return;
    persistedEtag = payload.etag;
    try {
      writeCacheFile(cacheFile, payload);
    } catch (const std::exception& error) {
      emitError(FlagstoreError(ErrorKind::Cache, "the cache file " + cacheFile + " could not be written: " + error.what()));
    }
  }

  void schedulePoll(double delayMs) {
    cancelPoll();
    if (stopped) return;
    auto id = std::make_shared<Scheduler::TaskId>(0);
    *id = later(std::int64_t(std::ceil(delayMs)), [id](Impl& self) {
      if (self.pollTimer && *self.pollTimer == *id) self.pollTimer.reset();
      self.read();
    });
    pollTimer = *id;
  }

  void cancelPoll() {
    if (pollTimer) scheduler->cancel(*pollTimer);
    pollTimer.reset();
  }

  // ---- the client's side of the stream ----

  void streamOpened() {
    streamOpen = true;
    // While the stream is up, events bring changes; a retry after a failure stays scheduled.
    if (failures == 0 && holdUntil <= now()) cancelPoll();
  }

  void streamDropped() {
    streamOpen = false;
    if (!pollTimer && !reading && !stopped) {
      schedulePoll(pollDelay(current ? current->pollIntervalSeconds : DEFAULT_POLL_INTERVAL_SECONDS, jitter()));
    }
  }

  void announced(const std::optional<std::string>& etag) {
    lastAnnounced = etag;
    if (etag && current && *etag == current->etag) return;
    read();
  }

  void streamFailed(const FlagstoreError& error, std::optional<double> retryAfterMs) {
    emitError(error);
    if (error.isFatal()) return stop();
    if (error.kind == ErrorKind::RateLimited && retryAfterMs) holdUntil = std::max(holdUntil, now() + std::int64_t(std::ceil(*retryAfterMs)));
  }

  // ---- the change stream: GET /flags/config/stream as server-sent events ----

  void streamStart() {
    if (!streamClosed && !streamTimer && phase == Phase::Idle) connect();
  }

  void streamClose() {
    streamClosed = true;
    if (streamTimer) scheduler->cancel(*streamTimer);
    streamTimer.reset();
    endStreamRequest();
  }

  void endStreamRequest() {
    if (streamDeadline) scheduler->cancel(*streamDeadline);
    streamDeadline.reset();
    if (silenceTimer) scheduler->cancel(*silenceTimer);
    silenceTimer.reset();
    if (streamRequest) streamRequest->cancel();
    streamRequest.reset();
    phase = Phase::Idle;
    streamGeneration++;
  }

  void streamSchedule(double delayMs) {
    if (streamClosed) return;
    streamTimer = later(std::int64_t(std::ceil(delayMs)), [](Impl& self) {
      self.streamTimer.reset();
      self.connect();
    });
  }

  void connect() {
    if (streamClosed) return;
    const std::int64_t held = holdUntil - now();
    if (held > 0) return streamSchedule(double(held));
    const std::uint64_t generation = ++streamGeneration;
    phase = Phase::Connecting;
    received = false;
    refusedBody.clear();
    parser = std::make_unique<SseParser>();
    parser->onEvent = [this](const SseEvent& event) { this->streamEvent(event); };
    parser->onRetry = [this](long long delay) { this->retryMs = double(delay); };
    HttpRequest request;
    request.url = configUrl + "/stream";
    request.timeoutMs = requestTimeoutMs;
    request.idleTimeoutMs = silenceTimeoutMs;
    request.headers = {{"Authorization", "Bearer " + apiKey}, {"Accept", "text/event-stream"}, {"Cache-Control", "no-cache"}};
    if (current) request.headers.emplace_back("Last-Event-ID", current->etag);
    streamDeadline = later(requestTimeoutMs, [generation](Impl& self) {
      if (self.streamGeneration != generation || self.phase != Phase::Connecting) return;
      self.streamDeadline.reset();
      self.endStreamRequest();
      self.lost(FlagstoreError(ErrorKind::Timeout, std::string(STREAM_WHAT) + " took longer than " + std::to_string(self.requestTimeoutMs) + " ms"),
                false);
    });
    std::weak_ptr<Impl> weak = shared_from_this();
    StreamCallbacks callbacks;
    callbacks.response = [weak, generation](int status, const Headers& headers) {
      if (auto self = weak.lock())
        self->later(0, [generation, status, headers](Impl& me) {
          if (me.streamGeneration == generation) me.streamResponse(status, headers);
        });
    };
    callbacks.data = [weak, generation](std::string_view chunk) {
      if (auto self = weak.lock())
        self->later(0, [generation, text = std::string(chunk)](Impl& me) {
          if (me.streamGeneration == generation) me.streamData(text);
        });
    };
    callbacks.end = [weak, generation](const std::string& error, bool timedOut) {
      if (auto self = weak.lock())
        self->later(0, [generation, error, timedOut](Impl& me) {
          if (me.streamGeneration == generation) me.streamEnd(error, timedOut);
        });
    };
    auto handle = transport->stream(request, std::move(callbacks));
    if (streamGeneration == generation) streamRequest = handle;
  }

  void streamResponse(int status, const Headers& headers) {
    if (streamClosed || phase != Phase::Connecting) return;
    if (streamDeadline) scheduler->cancel(*streamDeadline);
    streamDeadline.reset();
    const std::string type = headers.get("Content-Type").value_or("");
    if (status == 200 && startsWithNoCase(type, "text/event-stream")) {
      phase = Phase::Open;
      streamOpened();
      watchSilence();
      return;
    }
    if (status == 200) {
      endStreamRequest();
      return refused(FlagstoreError(ErrorKind::Stream,
                                    std::string(STREAM_WHAT) + " answered " + (type.empty() ? "no content type" : type) + ", not text/event-stream", 200),
                     std::nullopt);
    }
    // Refused: its body (the service's message) comes before the end.
    phase = Phase::Refused;
    refusedStatus = status;
    refusedHeaders = headers;
  }

  void streamData(const std::string& chunk) {
    if (phase == Phase::Refused) {
      if (refusedBody.size() < 65536) refusedBody += chunk;
      return;
    }
    if (phase != Phase::Open) return;
    received = true;
    watchSilence();
    parser->push(chunk);
  }

  void streamEnd(const std::string& error, bool timedOut) {
    const Phase was = phase;
    streamRequest.reset();
    endStreamRequest();
    if (streamClosed) return;
    if (was == Phase::Connecting) {
      return lost(timedOut ? FlagstoreError(ErrorKind::Timeout, std::string(STREAM_WHAT) + " took longer than " + std::to_string(requestTimeoutMs) + " ms")
                           : FlagstoreError(ErrorKind::Network, std::string(STREAM_WHAT) + " failed: " + error),
                  false);
    }
    if (was == Phase::Refused) {
      const auto retryAfterMs = parseRetryAfter(refusedHeaders.get("Retry-After"), now());
      return refused(httpError(STREAM_WHAT, refusedStatus, refusedBody, retryAfterSeconds(retryAfterMs)), retryAfterMs);
    }
    if (was != Phase::Open) return;
    streamDropped();
    if (error.empty() && received) {
      // The service ended a stream that worked (it does after 10 minutes): come back after its hint.
      streamFailures = 0;
      return streamSchedule(reconnectDelay(retryMs.value_or(double(BACKOFF_MIN_MS)), jitter()));
    }
    lost(FlagstoreError(ErrorKind::Stream, error.empty() ? std::string(STREAM_WHAT) + " ended before sending anything"
                                                         : std::string(STREAM_WHAT) + " dropped: " + error),
         received);
  }

  /** A stream silent for longer than three of the service's 15 s keep-alive comments is taken for dead. */
  void watchSilence() {
    if (silenceTimer) scheduler->cancel(*silenceTimer);
    const std::uint64_t generation = streamGeneration;
    silenceTimer = later(silenceTimeoutMs, [generation](Impl& self) {
      if (self.streamGeneration != generation || self.phase != Phase::Open) return;
      self.silenceTimer.reset();
      if (self.streamRequest) self.streamRequest->cancel();
      self.streamEnd("it was silent for " + std::to_string(self.silenceTimeoutMs) + " ms", true);
    });
  }

  void streamEvent(const SseEvent& event) {
    if (streamClosed || event.type != "message") return;
    const Json data = Json::parse(event.data, nullptr, false);
    if (!data.is_object()) return;  // not an event of this contract
    const auto type = data.find("type");
    if (type == data.end() || !type->is_string() || type->get<std::string>() != "refetchEvaluation") return;
    const auto etag = data.find("etag");
    announced(etag != data.end() && etag->is_string() ? std::optional<std::string>(etag->get<std::string>()) : std::nullopt);
  }

  /** Refused (an HTTP status) when opening: report, then try again later unless that was a 401/403. */
  void refused(const FlagstoreError& error, std::optional<double> retryAfterMs) {
    streamFailed(error, retryAfterMs);
    if (streamClosed) return;
    streamFailures += 1;
    if (error.kind == ErrorKind::RateLimited && retryAfterMs) return streamSchedule(retryAfterDelay(*retryAfterMs, jitter()));
    streamSchedule(backoffDelay(streamFailures, jitter()));
  }

  /** Could not connect, or dropped: report, then back off (from 1 s again if the stream had been working). */
  void lost(const FlagstoreError& error, bool wasWorking) {
    streamFailed(error, std::nullopt);
    if (streamClosed) return;
    streamFailures = wasWorking ? 1 : streamFailures + 1;
    streamSchedule(std::max(backoffDelay(streamFailures, jitter()), retryMs.value_or(0)));
  }

  // ---- stopping and readiness ----

  void stop() {
    stopped = true;
    cancelPoll();
    streamClose();
    if (readDeadline) scheduler->cancel(*readDeadline);
    readDeadline.reset();
    if (readRequest) readRequest->cancel();
    readRequest.reset();
    reading = false;
    readGeneration++;
  }

  void resolveReady() {
    if (readySettled) return;
    readySettled = true;
    readyChanged.notify_all();
    for (auto& callback : readyCallbacks) outbox.push_back([callback] { callback(nullptr); });
    readyCallbacks.clear();
  }

  void rejectReady(const FlagstoreError& error) {
    if (readySettled) return;
    readySettled = true;
    readyError = error;
    readyChanged.notify_all();
    for (auto& callback : readyCallbacks) outbox.push_back([callback, error] { callback(&error); });
    readyCallbacks.clear();
  }

  std::shared_ptr<const Snapshot> view() const {
    std::lock_guard<std::mutex> lock(snapshotMutex);
    return snapshot;
  }

  Context contextWith(const Context& call) const {
    if (!call.is_object() || call.empty()) return context;
    Context merged = context;
    for (const auto& [key, value] : call.items()) merged[key] = value;
    return merged;
  }

  /** The value served for a flag of `type`, or nothing (unknown key, another type). */
  std::optional<Json> valueOf(const std::string& key, const char* type, const Context& call) const {
    const auto seen = view();
    if (!seen) return std::nullopt;
    const auto found = seen->flags.find(key);
    if (found == seen->flags.end() || found->second.type != type) return std::nullopt;
    // parseConfigPayload checked that every value, the rules' included, matches its flag's type.
    if (!found->second.rules) return found->second.value;
    return found->second.evaluate(contextWith(call)).value;
  }
};

Client::Client(Options options) {
  if (options.apiKey.empty()) throw std::invalid_argument("flagstore::Client: apiKey is required");
  const std::string base = trimTrailingSlashes(options.baseUrl);
  if (!startsWithNoCase(base, "http://") && !startsWithNoCase(base, "https://"))
    throw std::invalid_argument("flagstore::Client: baseUrl must be an http or https URL, such as https://flags.example.com/v1");
  if (!options.context.is_null() && !options.context.is_object()) throw std::invalid_argument("flagstore::Client: context must be a JSON object");
  if (!options.transport) {
#ifdef FLAGSTORE_WITH_CURL
    options.transport = makeCurlTransport();
#else
    throw std::invalid_argument("flagstore::Client: a transport is required (this build has no libcurl)");
#endif
  }
  if (!options.scheduler) {
    ownScheduler_ = std::make_shared<ThreadScheduler>();
    options.scheduler = ownScheduler_;
  }
  if (!options.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    options.random = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
  impl_ = std::make_shared<Impl>();
  Impl& impl = *impl_;
  impl.configUrl = base + "/flags/config";
  impl.apiKey = options.apiKey;
  impl.context = options.context.is_object() ? options.context : Json::object();
  impl.streamEnabled = options.stream;
  impl.cacheFile = options.cacheFile;
  impl.transport = options.transport;
  impl.scheduler = options.scheduler;
  impl.random = options.random;
  impl.requestTimeoutMs = options.requestTimeoutMs;
  impl.silenceTimeoutMs = options.streamSilenceTimeoutMs;
  impl.later(0, [](Impl& self) { self.start(); });
}

Client::Client(const std::string& baseUrl, const std::string& apiKey, const Context& context) : Client([&] {
  Options options;
  options.baseUrl = baseUrl;
  options.apiKey = apiKey;
  options.context = context;
  return options;
}()) {}

Client::~Client() {
  close();
  if (ownScheduler_) ownScheduler_->shutdown();
}

void Client::close() {
  impl_->locked([&] {
    if (impl_->closed) return;
    impl_->closed = true;
    impl_->stop();
    impl_->rejectReady(FlagstoreError(ErrorKind::Closed, "the client was closed before it was ready"));
  });
}

void Client::ready(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  if (!impl_->readyChanged.wait_for(lock, timeout, [&] { return impl_->readySettled; })) {
    throw FlagstoreError(ErrorKind::Timeout, "the client was not ready within " + std::to_string(timeout.count()) + " ms");
  }
  if (impl_->readyError) throw *impl_->readyError;
}

ReadyState Client::readyState() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->readySettled) return ReadyState::Pending;
  return impl_->readyError ? ReadyState::Failed : ReadyState::Ready;
}

void Client::onReady(std::function<void(const FlagstoreError*)> callback) {
  impl_->locked([&] {
    if (!impl_->readySettled) return impl_->readyCallbacks.push_back(std::move(callback));
    auto error = impl_->readyError;
    impl_->outbox.push_back([callback, error] { callback(error ? &*error : nullptr); });
  });
}

bool Client::getBoolean(const std::string& key, bool fallback, const Context& context) const {
  const auto value = impl_->valueOf(key, "boolean", context);
  return value ? value->get<bool>() : fallback;
}

std::string Client::getString(const std::string& key, const std::string& fallback, const Context& context) const {
  const auto value = impl_->valueOf(key, "string", context);
  return value ? value->get<std::string>() : fallback;
}

double Client::getNumber(const std::string& key, double fallback, const Context& context) const {
  const auto value = impl_->valueOf(key, "number", context);
  return value ? value->get<double>() : fallback;
}

Json Client::getJson(const std::string& key, const Json& fallback, const Context& context) const {
  const auto value = impl_->valueOf(key, "json", context);
  return value ? *value : fallback;
}

std::optional<Evaluation> Client::evaluate(const std::string& key, const Context& context) const {
  const auto seen = impl_->view();
  if (!seen) return std::nullopt;
  const auto found = seen->flags.find(key);
  if (found == seen->flags.end()) return std::nullopt;
  return found->second.evaluate(impl_->contextWith(context));
}

Json Client::all(const Context& context) const {
  Json out = Json::object();
  const auto seen = impl_->view();
  if (!seen) return out;
  const Context merged = impl_->contextWith(context);
  for (const auto& [key, flag] : seen->flags) out[key] = flag.evaluate(merged).value;
  return out;
}

Json Client::clientSafe(const Context& context) const {
  Json out = Json::object();
  const auto seen = impl_->view();
  if (!seen) return out;
  const Context merged = impl_->contextWith(context);
  for (const auto& [key, flag] : seen->flags)
    if (flag.runtime == "shared") out[key] = flag.evaluate(merged).value;
  return out;
}

std::optional<ConfigPayload> Client::payload() const {
  const auto seen = impl_->view();
  if (!seen) return std::nullopt;
  return seen->payload;
}

Client::ListenerId Client::onChange(std::function<void(const std::vector<std::string>&)> listener) {
  ListenerId id = 0;
  impl_->locked([&] {
    id = impl_->nextListener++;
    impl_->changeListeners.emplace(id, std::move(listener));
  });
  return id;
}

Client::ListenerId Client::onError(std::function<void(const FlagstoreError&)> listener) {
  ListenerId id = 0;
  impl_->locked([&] {
    id = impl_->nextListener++;
    impl_->errorListeners.emplace(id, std::move(listener));
  });
  return id;
}

void Client::off(ListenerId id) {
  impl_->locked([&] {
    impl_->changeListeners.erase(id);
    impl_->errorListeners.erase(id);
  });
}

}  // namespace flagstore
