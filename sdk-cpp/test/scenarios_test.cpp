// The scenarios every game-server SDK runs against a real service (test/fixtures/sdk/SCENARIOS.md): the service from
// FLAGSTORE_URL and FLAGSTORE_KEY (FLAGSTORE_ADMIN_TOKEN optional), as scripts/with-flagstore.mjs sets them. Without
// them the program exits 77, which ctest reports as skipped.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "check.hpp"
#include "flagstore/client.hpp"
#include "flagstore/curl_transport.hpp"

using namespace flagstore;
using Clock = std::chrono::steady_clock;

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string BASE, KEY, ADMIN;

std::string randomHex(int bytes) {
  static std::mt19937_64 engine(std::random_device{}());
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes * 2; i++) out.push_back(digits[engine() % 16]);
  return out;
}

std::string unique(const std::string& prefix) { return prefix + "-" + randomHex(4); }

struct Answer {
  long status = 0;
  std::string body;
  std::string retryAfter;
  Json json() const { return Json::parse(body, nullptr, false); }
};

size_t collect(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t collectHeader(char* data, size_t size, size_t count, void* user) {
  std::string line(data, size * count);
  if (line.size() > 12 && strncasecmp(line.c_str(), "retry-after:", 12) == 0) {
    auto value = line.substr(12);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    *static_cast<std::string*>(user) = value;
  }
  return size * count;
}

/** The test's own small HTTP helper: the SDK never writes. */
Answer call(const std::string& token, const std::string& method, const std::string& path, const Json& body = nullptr) {
  CURL* easy = curl_easy_init();
  Answer answer;
  const std::string url = BASE + path;
  const std::string payload = body.is_null() ? "" : body.dump();
  curl_slist* headers = curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str());
  if (!body.is_null()) headers = curl_slist_append(headers, "Content-Type: application/json");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT, 30L);
  if (!body.is_null()) curl_easy_setopt(easy, CURLOPT_POSTFIELDS, payload.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, collectHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &answer.retryAfter);
  const CURLcode code = curl_easy_perform(easy);
  if (code == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
  if (code != CURLE_OK) throw check::Failure(method + " " + path + " failed: " + curl_easy_strerror(code));
  return answer;
}

Json expectStatus(const Answer& answer, long status, const std::string& what) {
  if (answer.status != status) throw check::Failure(what + " answered " + std::to_string(answer.status) + ", not " + std::to_string(status) + ": " + answer.body);
  return answer.json();
}

std::string createFlag(const std::string& token, Json flag) {
  flag["name"] = flag["key"];
  return expectStatus(call(token, "POST", "/flags", flag), 201, "POST /flags").at("id");
}

struct Organization {
  std::string id;
  std::string writeKey;
};

std::pair<std::string, std::string> createKey(const std::string& organization, const Json& permissions) {
  const Json key = expectStatus(call(ADMIN, "POST", "/admin/organizations/" + organization + "/api-keys", {{"name", unique("sdk-cpp")}, {"permissions", permissions}}),
                                201, "POST api-keys");
  return {key.at("id"), key.at("key")};
}

Organization createOrganization(const std::string& name) {
  const Json organization = expectStatus(call(ADMIN, "POST", "/admin/organizations", {{"name", name}}), 201, "POST /admin/organizations");
  const std::string id = organization.at("id");
  expectStatus(call(ADMIN, "POST", "/admin/organizations/" + id + "/subscriptions", {{"plan", "pro"}}), 201, "subscribing");
  return {id, createKey(id, {"FLAGS_READ", "FLAGS_WRITE"}).second};
}

/** Polls the condition every 20 ms until it holds or `withinMs` pass (pumping a manual clock when given). */
bool eventually(const std::function<bool()>& condition, std::int64_t withinMs, ManualScheduler* clock = nullptr) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(withinMs);
  for (;;) {
    if (clock) clock->runDue();
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/** A wrapper around libcurl's transport that records each request's headers and each answer's status. */
class Recording : public Transport {
 public:
  struct Entry {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    bool stream = false;
    int status = -1;  // -1: not answered yet; 0: no answer (network)
    std::string retryAfter;
    Clock::time_point sent;
    Clock::time_point answered;
    std::string header(const std::string& name) const {
      for (const auto& [key, value] : headers)
        if (key == name) return value;
      return "";
    }
  };

  std::shared_ptr<Cancellable> get(const HttpRequest& request, std::function<void(HttpResult)> done) override {
    const std::size_t at = add(request, false);
    return inner_->get(request, [this, at, done](HttpResult result) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[at].status = result.status;
        entries_[at].retryAfter = result.headers.get("Retry-After").value_or("");
        entries_[at].answered = Clock::now();
      }
      done(std::move(result));
    });
  }

  std::shared_ptr<Cancellable> stream(const HttpRequest& request, StreamCallbacks callbacks) override {
    const std::size_t at = add(request, true);
    auto response = callbacks.response;
    callbacks.response = [this, at, response](int status, const Headers& headers) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[at].status = status;
        entries_[at].answered = Clock::now();
      }
      response(status, headers);
    };
    return inner_->stream(request, std::move(callbacks));
  }

  std::vector<Entry> entries() {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_;
  }
  std::size_t count() { return entries().size(); }

 private:
  std::size_t add(const HttpRequest& request, bool stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry entry;
    entry.url = request.url;
    entry.headers = request.headers;
    entry.stream = stream;
    entry.sent = Clock::now();
    entries_.push_back(entry);
    return entries_.size() - 1;
  }
  std::shared_ptr<Transport> inner_ = makeCurlTransport();
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

/** What a client reported. */
struct Reports {
  std::mutex mutex;
  std::vector<FlagstoreError> errors;
  std::vector<std::vector<std::string>> changes;
  void watch(Client& client) {
    client.onError([this](const FlagstoreError& error) {
      std::lock_guard<std::mutex> lock(mutex);
      errors.push_back(error);
    });
    client.onChange([this](const std::vector<std::string>& keys) {
      std::lock_guard<std::mutex> lock(mutex);
      changes.push_back(keys);
    });
  }
  bool hasError(ErrorKind kind, int status = -1) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& error : errors)
      if (error.kind == kind && (status < 0 || error.status == status)) return true;
    return false;
  }
  bool changed(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& keys : changes)
      for (const auto& changedKey : keys)
        if (changedKey == key) return true;
    return false;
  }
};

Options optionsFor(const std::string& key, std::shared_ptr<Transport> transport) {
  Options options;
  options.baseUrl = BASE;
  options.apiKey = key;
  options.transport = std::move(transport);
  return options;
}

FlagstoreError readyError(const Client& client, std::int64_t withinMs = 20000) {
  try {
    client.ready(std::chrono::milliseconds(withinMs));
  } catch (const FlagstoreError& error) {
    return error;
  }
  throw check::Failure("ready() did not throw");
}

/** A loopback port where nothing listens: opened, then closed. */
int closedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

std::string tempDir() {
  char dir[] = "/tmp/flagstore-cpp-scenario-XXXXXX";
  if (mkdtemp(dir) == nullptr) throw check::Failure("mkdtemp failed");
  return dir;
}

Json only(const Json& values, const std::vector<std::string>& keys) {
  Json out = Json::object();
  for (const auto& key : keys)
    if (values.contains(key)) out[key] = values.at(key);
  return out;
}

}  // namespace

TEST("1. ready: the first poll 200, then 304 with If-None-Match") {
  const std::string key = unique("sdk-cpp-1");
  const std::string id = createFlag(KEY, {{"key", key}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}});
  auto recording = std::make_shared<Recording>();
  auto clock = std::make_shared<ManualScheduler>();
  auto options = optionsFor(KEY, recording);
  options.scheduler = clock;  // the poll comes when the test moves this clock; the HTTP is real
  Reports reports;  // before the client: destroyed after it, and its thread
  Client client(options);
  reports.watch(client);
  CHECK(eventually([&] { return client.readyState() != ReadyState::Pending; }, 20000, clock.get()));
  client.ready(std::chrono::milliseconds(0));
  CHECK_EQ(client.getBoolean(key, false), true);
  auto entries = recording->entries();
  CHECK_EQ(entries.size(), std::size_t(1));
  CHECK_EQ(entries[0].status, 200);
  CHECK_EQ(entries[0].header("If-None-Match"), std::string(""));
  const std::string etag = client.payload()->etag;
  CHECK_EQ(clock->nextDelay() >= 18000 && clock->nextDelay() <= 22000, true);
  clock->advance(clock->nextDelay());
  CHECK(eventually([&] { return recording->count() == 2 && recording->entries()[1].status >= 0; }, 20000, clock.get()));
  entries = recording->entries();
  CHECK_EQ(entries[1].header("If-None-Match"), "W/\"" + etag + "\"");
  CHECK_EQ(entries[1].status, 304);
  clock->runDue();
  CHECK_EQ(client.getBoolean(key, false), true);
  CHECK(reports.changes.empty());
  client.close();
  call(KEY, "DELETE", "/flags/" + id);
}

TEST("2. Retry-After obeyed on 429") {
  std::string key = KEY;
  if (!ADMIN.empty()) {
    const auto organization = createOrganization(unique("sdk-cpp-2"));
    createFlag(organization.writeKey, {{"key", unique("sdk-cpp-2")}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}});
    key = createKey(organization.id, {"FLAGS_READ"}).second;
  }
  // Spend the key's config budget, four requests at a time, until one answers 429.
  std::atomic<bool> limited{false};
  std::atomic<int> sent{0};
  std::mutex mutex;
  std::string retryAfter;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; w++) {
    workers.emplace_back([&] {
      while (!limited && sent++ < 1400) {
        const Answer answer = call(key, "GET", "/flags/config");
        if (answer.status == 429) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!limited) retryAfter = answer.retryAfter;
          limited = true;
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  CHECK(limited);
  CHECK(!retryAfter.empty());

  auto recording = std::make_shared<Recording>();
  Reports reports;  // before the client: destroyed after it, and its thread
  Client client(optionsFor(key, recording));
  reports.watch(client);
  const auto error = readyError(client);
  CHECK(error.kind == ErrorKind::RateLimited);
  CHECK(error.retryAfterSeconds.has_value() && *error.retryAfterSeconds >= 1);
  const auto first = recording->entries().at(0);
  CHECK_EQ(first.status, 429);
  const int seconds = std::atoi(first.retryAfter.c_str());
  CHECK_EQ(*error.retryAfterSeconds, seconds);
  // The next request comes after the client's own Retry-After (plus up to 10 %), and is answered 200.
  CHECK(eventually([&] { return client.payload().has_value(); }, std::int64_t(seconds) * 1100 + 15000));
  const auto entries = recording->entries();
  CHECK(entries.size() >= 2);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(entries[1].sent - first.answered).count();
  if (waited < std::int64_t(seconds) * 1000) throw check::Failure("the second request came " + std::to_string(waited) + " ms after a Retry-After of " + std::to_string(seconds) + " s");
  CHECK_EQ(entries[1].status, 200);
  CHECK_EQ(entries.size(), std::size_t(2));
  client.close();
}

TEST("3. a key revoked and replaced: 401/403 stops and reports") {
  if (ADMIN.empty()) {
    // An unknown key is answered exactly as a revoked one.
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::mt19937 engine(std::random_device{}());
    std::string unknown = "fsk_";
    for (int i = 0; i < 43; i++) unknown.push_back(alphabet[engine() % 64]);
    auto recording = std::make_shared<Recording>();
    Client client(optionsFor(unknown, recording));
    const auto error = readyError(client);
    CHECK(error.kind == ErrorKind::Unauthorized);
    CHECK_EQ(error.status, 401);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    CHECK_EQ(recording->count(), std::size_t(1));
    return;
  }
  const auto organization = createOrganization(unique("sdk-cpp-3"));
  const std::string key = unique("sdk-cpp-3");
  createFlag(organization.writeKey, {{"key", key}, {"type", "string"}, {"value", "served"}, {"runtime", "shared"}});
  const auto [firstId, firstKey] = createKey(organization.id, {"FLAGS_READ"});
  auto recording = std::make_shared<Recording>();
  auto options = optionsFor(firstKey, recording);
  options.stream = true;
  Reports reports;  // before the client: destroyed after it, and its thread
  Client client(options);
  reports.watch(client);
  client.ready(std::chrono::seconds(20));
  CHECK_EQ(client.getString(key, ""), std::string("served"));
  // The stream is open before the key is revoked: revoking closes it, and the reconnect meets the 401.
  CHECK(eventually(
      [&] {
        for (const auto& entry : recording->entries())
          if (entry.stream && entry.status == 200) return true;
        return false;
      },
      10000));
  expectStatus(call(ADMIN, "DELETE", "/admin/organizations/" + organization.id + "/api-keys/" + firstId), 204, "revoking");
  CHECK(eventually([&] { return reports.hasError(ErrorKind::Unauthorized, 401); }, 15000));
  const auto count = recording->count();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK_EQ(recording->count(), count);
  CHECK_EQ(client.getString(key, ""), std::string("served"));

  const auto second = createKey(organization.id, {"FLAGS_READ"});
  Client replaced(optionsFor(second.second, std::make_shared<Recording>()));
  replaced.ready(std::chrono::seconds(20));
  CHECK_EQ(replaced.getString(key, ""), std::string("served"));

  const auto storageOnly = createKey(organization.id, {"STORAGE_READ"});
  auto forbiddenRecording = std::make_shared<Recording>();
  Client forbidden(optionsFor(storageOnly.second, forbiddenRecording));
  const auto error = readyError(forbidden);
  CHECK(error.kind == ErrorKind::Forbidden);
  CHECK_EQ(error.status, 403);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK_EQ(forbiddenRecording->count(), std::size_t(1));
}

TEST("4. a cache file used when the service is down") {
  const std::string k1 = unique("sdk-cpp-4"), k2 = unique("sdk-cpp-4");
  const Json nested = {{"tiers", {{"rare", {1, 2}}, {"epic", Json::object()}}}, {"name", "ä"}, {"none", nullptr}};
  const std::string id1 = createFlag(KEY, {{"key", k1}, {"type", "string"}, {"value", "cached"}, {"runtime", "shared"}});
  const std::string id2 = createFlag(KEY, {{"key", k2}, {"type", "json"}, {"value", nested}, {"runtime", "server"}});
  const std::string cacheFile = tempDir() + "/flags.json";
  {
    auto options = optionsFor(KEY, std::make_shared<Recording>());
    options.cacheFile = cacheFile;
    Client client(options);
    client.ready(std::chrono::seconds(20));
    CHECK_EQ(client.getString(k1, ""), std::string("cached"));
    CHECK_EQ(client.getJson(k2, nullptr), nested);
    client.close();
  }
  const std::string down = "http://127.0.0.1:" + std::to_string(closedPort()) + "/v1";
  auto recording = std::make_shared<Recording>();
  auto options = optionsFor(KEY, recording);
  options.baseUrl = down;
  options.cacheFile = cacheFile;
  Reports reports;  // before the client: destroyed after it, and its thread
  Client client(options);
  reports.watch(client);
  client.ready(std::chrono::seconds(20));
  CHECK_EQ(client.getString(k1, ""), std::string("cached"));
  CHECK_EQ(client.getJson(k2, nullptr), nested);
  CHECK_EQ(only(client.all(), {k1, k2}), (Json{{k1, "cached"}, {k2, nested}}));
  CHECK_EQ(only(client.clientSafe(), {k1, k2}), (Json{{k1, "cached"}}));
  CHECK(eventually([&] { return reports.hasError(ErrorKind::Network); }, 5000));
  CHECK(eventually([&] { return recording->count() >= 2; }, 5000));  // it keeps trying, with backoff

  auto without = optionsFor(KEY, std::make_shared<Recording>());
  without.baseUrl = down;
  without.cacheFile = tempDir() + "/missing.json";
  Client uncached(without);
  CHECK(readyError(uncached).kind == ErrorKind::Network);
  call(KEY, "DELETE", "/flags/" + id1);
  call(KEY, "DELETE", "/flags/" + id2);
}

TEST("5. the stream's change applied within a second") {
  const std::string key = unique("sdk-cpp-5");
  const std::string id = createFlag(KEY, {{"key", key}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}});
  auto recording = std::make_shared<Recording>();
  auto options = optionsFor(KEY, recording);
  options.stream = true;
  Reports reports;  // before the client: destroyed after it, and its thread
  Client client(options);
  reports.watch(client);
  client.ready(std::chrono::seconds(20));
  CHECK_EQ(client.getNumber(key, 0), 1.0);
  CHECK(eventually(
      [&] {
        for (const auto& entry : recording->entries())
          if (entry.stream && entry.status == 200) return true;
        return false;
      },
      10000));
  expectStatus(call(KEY, "PATCH", "/flags/" + id, {{"type", "number"}, {"value", 2}}), 200, "PATCH /flags");
  const auto patched = Clock::now();
  CHECK(eventually([&] { return client.getNumber(key, 0) == 2.0 && reports.changed(key); }, 1000));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - patched).count();
  std::cout << "     the change arrived " << took << " ms after the PATCH's answer\n";
  client.close();
  call(KEY, "DELETE", "/flags/" + id);
}

TEST("6. the relay filter (clientSafe) on real flags") {
  const std::string s1 = unique("sdk-cpp-6-s1"), s2 = unique("sdk-cpp-6-s2"), s3 = unique("sdk-cpp-6-s3"), v1 = unique("sdk-cpp-6-v1"),
                    v2 = unique("sdk-cpp-6-v2");
  const Json tiers = Json::parse(R"({"tiers":{"rare":[1,2]},"name":"ä"})");
  auto rule = [](int value) {
    return Json::array({{{"id", "eu"}, {"conditions", Json::array({{{"attribute", "region"}, {"operator", "in"}, {"values", {"eu-west"}}}})}, {"value", value}}});
  };
  std::vector<std::string> ids = {
      createFlag(KEY, {{"key", s1}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}}),
      createFlag(KEY, {{"key", s2}, {"type", "json"}, {"value", tiers}, {"runtime", "shared"}}),
      createFlag(KEY, {{"key", v1}, {"type", "string"}, {"value", "secret"}, {"runtime", "server"}}),
      createFlag(KEY, {{"key", s3}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}, {"rules", rule(2)}}),
      createFlag(KEY, {{"key", v2}, {"type", "number"}, {"value", 5}, {"runtime", "server"}, {"rules", rule(6)}}),
  };
  Client client(optionsFor(KEY, std::make_shared<Recording>()));
  client.ready(std::chrono::seconds(20));
  const std::vector<std::string> mine = {s1, s2, s3, v1, v2};
  CHECK_EQ(only(client.clientSafe(), mine), (Json{{s1, true}, {s2, tiers}, {s3, 1}}));
  CHECK_EQ(only(client.clientSafe({{"region", "eu-west"}}), mine), (Json{{s1, true}, {s2, tiers}, {s3, 2}}));
  CHECK_EQ(only(client.all({{"region", "eu-west"}}), mine), (Json{{s1, true}, {s2, tiers}, {s3, 2}, {v1, "secret"}, {v2, 6}}));
  const std::string relayed = client.clientSafe({{"region", "eu-west"}}).dump();
  CHECK(relayed.find("rules") == std::string::npos);
  CHECK(relayed.find(v1) == std::string::npos && relayed.find(v2) == std::string::npos);
  client.close();
  for (const auto& id : ids) call(KEY, "DELETE", "/flags/" + id);
}

int main(int argc, char** argv) {
  BASE = env("FLAGSTORE_URL");
  KEY = env("FLAGSTORE_KEY");
  ADMIN = env("FLAGSTORE_ADMIN_TOKEN");
  while (!BASE.empty() && BASE.back() == '/') BASE.pop_back();
  if (BASE.empty() || KEY.empty()) {
    std::cout << "The scenarios need a service: set FLAGSTORE_URL and FLAGSTORE_KEY, or run under\n"
                 "  node scripts/with-flagstore.mjs ctest --test-dir build/sdk-cpp --output-on-failure\n";
    return 77;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::cout << "against " << BASE << (ADMIN.empty() ? " (no admin token)" : " (with the admin token)") << "\n";
  return check::run(argc, argv);
}
