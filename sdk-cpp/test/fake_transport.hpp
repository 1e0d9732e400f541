#pragma once
// A transport the test answers by hand, and a client on a ManualScheduler: time moves only when the test says so.
#include <memory>
#include <string>
#include <vector>

#include "flagstore/client.hpp"

namespace fake {

using namespace flagstore;

struct Exchange : Cancellable {
  HttpRequest request;
  std::function<void(HttpResult)> done;
  StreamCallbacks stream;
  bool isStream = false;
  bool cancelled = false;
  bool finished = false;
  void cancel() override { cancelled = true; }
  std::string header(const std::string& name) const {
    for (const auto& [key, value] : request.headers)
      if (key == name) return value;
    return "";
  }
  bool open() const { return !cancelled && !finished; }
};

class Transport : public flagstore::Transport {
 public:
  std::vector<std::shared_ptr<Exchange>> exchanges;

  std::shared_ptr<Cancellable> get(const HttpRequest& request, std::function<void(HttpResult)> done) override {
    auto exchange = std::make_shared<Exchange>();
    exchange->request = request;
    Exchange* raw = exchange.get();
    exchange->done = [raw, done = std::move(done)](HttpResult result) {
      raw->finished = true;
      done(std::move(result));
    };
    exchanges.push_back(exchange);
    return exchange;
  }

  std::shared_ptr<Cancellable> stream(const HttpRequest& request, StreamCallbacks callbacks) override {
    auto exchange = std::make_shared<Exchange>();
    exchange->request = request;
    Exchange* raw = exchange.get();
    auto end = std::move(callbacks.end);
    callbacks.end = [raw, end](const std::string& error, bool timedOut) {
      raw->finished = true;
      end(error, timedOut);
    };
    exchange->stream = std::move(callbacks);
    exchange->isStream = true;
    exchanges.push_back(exchange);
    return exchange;
  }

  std::vector<std::shared_ptr<Exchange>> gets() const {
    std::vector<std::shared_ptr<Exchange>> out;
    for (const auto& exchange : exchanges)
      if (!exchange->isStream) out.push_back(exchange);
    return out;
  }
  std::vector<std::shared_ptr<Exchange>> streams() const {
    std::vector<std::shared_ptr<Exchange>> out;
    for (const auto& exchange : exchanges)
      if (exchange->isStream) out.push_back(exchange);
    return out;
  }
  /** The GET waiting for its answer, or null. */
  std::shared_ptr<Exchange> pendingGet() const {
    for (const auto& exchange : exchanges)
      if (!exchange->isStream && exchange->open()) return exchange;
    return nullptr;
  }
  std::shared_ptr<Exchange> openStream() const {
    for (const auto& exchange : exchanges)
      if (exchange->isStream && exchange->open()) return exchange;
    return nullptr;
  }
};

inline HttpResult answer(int status, const std::string& body = "", std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpResult result;
  result.status = status;
  result.body = body;
  for (auto& [name, value] : headers) result.headers.add(name, value);
  return result;
}

inline HttpResult networkError(const std::string& why = "Connection refused") {
  HttpResult result;
  result.error = why;
  return result;
}

struct Harness {
  std::shared_ptr<ManualScheduler> clock = std::make_shared<ManualScheduler>();
  std::shared_ptr<Transport> transport = std::make_shared<Transport>();
  double random = 0.5;
  std::unique_ptr<Client> client;
  std::vector<std::vector<std::string>> changes;
  std::vector<FlagstoreError> errors;

  Options options(const std::string& base = "http://flags.test/v1/") {
    Options options;
    options.baseUrl = base;
    options.apiKey = "fsk_test";
    options.transport = transport;
    options.scheduler = clock;
    options.random = [this] { return random; };
    return options;
  }

  Client& start(Options options) {
    client = std::make_unique<Client>(std::move(options));
    client->onChange([this](const std::vector<std::string>& keys) { changes.push_back(keys); });
    client->onError([this](const FlagstoreError& error) { errors.push_back(error); });
    clock->runDue();
    return *client;
  }
  Client& start() { return start(options()); }

  /** Answers the GET under way (there must be one), and runs what follows. */
  void respond(const HttpResult& result) {
    auto exchange = transport->pendingGet();
    if (!exchange) throw std::runtime_error("no request is waiting for an answer");
    exchange->done(result);
    clock->runDue();
  }

  std::size_t requestCount() const { return transport->gets().size(); }
  /** Moves time to the next request (a retry, a poll). */
  void untilRequest() {
    for (int i = 0; i < 1000 && !transport->pendingGet(); i++) {
      const auto delay = clock->nextDelay();
      if (delay < 0) throw std::runtime_error("nothing is scheduled");
      clock->advance(delay);
    }
  }
  void advance(std::int64_t ms) { clock->advance(ms); }
};

inline std::string payloadBody(const std::string& etag, const Json& flags, int interval = 20) {
  return Json{{"etag", etag}, {"generatedAt", "2026-11-29T09:00:00.000Z"}, {"pollIntervalSeconds", interval}, {"flags", flags}}.dump();
}

inline Json flag(const std::string& key, const std::string& type, const Json& value, const std::string& runtime = "shared") {
  return {{"key", key}, {"type", type}, {"value", value}, {"runtime", runtime}};
}

}  // namespace fake
