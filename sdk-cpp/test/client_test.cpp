// The client against a transport the test answers and a clock the test moves: polling, ETag, Retry-After, backoff,
// 401/403, outages, the cache file, the change stream, values. No sleeps.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "check.hpp"
#include "fake_transport.hpp"
#include "flagstore/cache_file.hpp"

using namespace flagstore;
using fake::answer;
using fake::flag;
using fake::Harness;
using fake::networkError;
using fake::payloadBody;

static const Json FLAGS = Json::array({flag("pvp", "boolean", true), flag("motd", "string", "hi"), flag("cap", "number", 64, "server")});

static std::string tempPath(const std::string& name) {
  static int counter = 0;
  char dir[] = "/tmp/flagstore-cpp-XXXXXX";
  if (mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
  return std::string(dir) + "/" + name + std::to_string(counter++);
}

static std::string readText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

static bool throwsKind(const Client& client, ErrorKind kind) {
  try {
    client.ready(std::chrono::milliseconds(0));
  } catch (const FlagstoreError& error) {
    return error.kind == kind;
  }
  return false;
}

TEST("polls every pollIntervalSeconds with the weak ETag in If-None-Match, and a 304 keeps the values") {
  Harness h;
  auto& client = h.start();
  auto first = h.transport->pendingGet();
  CHECK_EQ(first->request.url, std::string("http://flags.test/v1/flags/config"));
  CHECK_EQ(first->header("Authorization"), std::string("Bearer fsk_test"));
  CHECK_EQ(first->header("If-None-Match"), std::string(""));
  CHECK(client.readyState() == ReadyState::Pending);
  h.respond(answer(200, payloadBody("e1", FLAGS), {{"ETag", "W/\"e1\""}}));
  client.ready(std::chrono::milliseconds(0));
  CHECK_EQ(client.getBoolean("pvp", false), true);
  h.advance(19999);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  h.advance(1);
  CHECK_EQ(h.requestCount(), std::size_t(2));
  CHECK_EQ(h.transport->pendingGet()->header("If-None-Match"), std::string("W/\"e1\""));
  h.respond(answer(304));
  CHECK_EQ(client.getString("motd", ""), std::string("hi"));
  CHECK(h.changes.empty());
  CHECK(h.errors.empty());
  h.advance(20000);
  CHECK_EQ(h.requestCount(), std::size_t(3));
}

TEST("jitters the interval by ±10 %") {
  for (double random : {0.0, 0.999}) {
    Harness h;
    h.random = random;
    h.start();
    h.respond(answer(200, payloadBody("e1", FLAGS, 30)));
    const std::int64_t expected = std::int64_t(std::ceil(30000 * (0.9 + 0.2 * random)));
    h.advance(expected - 1);
    CHECK_EQ(h.requestCount(), std::size_t(1));
    h.advance(1);
    CHECK_EQ(h.requestCount(), std::size_t(2));
  }
}

TEST("sees a change through polling: the keys changed, added and removed, and their new values") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  h.advance(20000);
  h.respond(answer(200, payloadBody("e2", Json::array({flag("pvp", "boolean", false), flag("cap", "number", 64, "server"), flag("new", "json", {{"a", 1}})}))));
  CHECK_EQ(h.changes.size(), std::size_t(1));
  CHECK(h.changes[0] == (std::vector<std::string>{"motd", "new", "pvp"}));
  CHECK_EQ(client.getBoolean("pvp", true), false);
  CHECK_EQ(client.getString("motd", "gone"), std::string("gone"));
  CHECK_EQ(client.getJson("new", nullptr), (Json{{"a", 1}}));
  CHECK_EQ(client.payload()->etag, std::string("e2"));
}

TEST("waits out Retry-After on a 429: no request before it has passed") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(429, R"({"statusCode":429,"error":"RATE_LIMITED","message":"Too many"})", {{"Retry-After", "30"}}));
  CHECK(throwsKind(client, ErrorKind::RateLimited));
  CHECK_EQ(h.errors.size(), std::size_t(1));
  CHECK(h.errors[0].kind == ErrorKind::RateLimited);
  CHECK_EQ(*h.errors[0].retryAfterSeconds, 30);
  CHECK_EQ(h.errors[0].status, 429);
  h.advance(30000 * 1.05 - 1);  // Retry-After, then up to 10 % more (the jitter is 0.5 here)
  CHECK_EQ(h.requestCount(), std::size_t(1));
  h.advance(1);
  CHECK_EQ(h.requestCount(), std::size_t(2));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  CHECK_EQ(client.getBoolean("pvp", false), true);
  CHECK_EQ(h.changes.size(), std::size_t(1));  // every key, once it has them
}

TEST("reads Retry-After given as an HTTP date") {
  Harness h;
  h.start();
  // The manual clock starts at 1700000000000 ms: Tue, 14 Nov 2023 22:13:20 GMT.
  h.respond(answer(429, "", {{"Retry-After", "Tue, 14 Nov 2023 22:14:20 GMT"}}));
  CHECK_EQ(*h.errors[0].retryAfterSeconds, 60);
  h.advance(60000 * 1.05 - 1);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  h.advance(1);
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("a 429 without Retry-After backs off, and holds the stream back as long") {
  Harness h;
  h.start();
  h.respond(answer(429));
  h.advance(999);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  h.advance(1);
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("backs off exponentially on network errors and 5xx, from 1 s up to 5 min, and polls normally once back") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  h.advance(20000);
  std::int64_t expected = 1000;
  for (int failure = 0; failure < 12; failure++) {
    h.respond(failure % 2 == 0 ? networkError() : answer(503, "<html>busy</html>"));
    const auto before = h.requestCount();
    h.advance(expected - 1);
    CHECK_EQ(h.requestCount(), before);
    h.advance(1);
    CHECK_EQ(h.requestCount(), before + 1);
    expected = std::min<std::int64_t>(expected * 2, 300000);
  }
  CHECK(h.errors[0].kind == ErrorKind::Network);
  CHECK(h.errors[1].kind == ErrorKind::Server);
  CHECK_EQ(std::string(h.errors[1].what()), std::string("GET /flags/config answered 503"));
  h.respond(answer(304));
  h.advance(19999);
  const auto before = h.requestCount();
  h.advance(1);
  CHECK_EQ(h.requestCount(), before + 1);
  h.respond(networkError());
  h.advance(1000);  // the backoff starts again from 1 s
  CHECK_EQ(h.requestCount(), before + 2);
  CHECK_EQ(client.getBoolean("pvp", false), true);
}

TEST("keeps serving the last good values through an outage, whatever form it takes") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  const std::vector<HttpResult> outages = {networkError(), answer(500), answer(502, "<html>"), answer(200, "{not json"),
                                           answer(200, payloadBody("e2", Json::array({flag("pvp", "boolean", "yes")}))), answer(404), answer(304, "")};
  for (const auto& outage : outages) {
    h.untilRequest();
    h.respond(outage);
    CHECK_EQ(client.getBoolean("pvp", false), true);
    CHECK_EQ(client.getNumber("cap", 0), 64.0);
  }
  CHECK(h.errors.at(3).kind == ErrorKind::InvalidPayload);
  CHECK(h.errors.at(4).kind == ErrorKind::InvalidPayload);
  CHECK(h.errors.at(5).kind == ErrorKind::Http);
  CHECK(h.changes.empty());
}

TEST("fails a request that hangs as a timeout, cancels it, and retries it") {
  Harness h;
  auto options = h.options();
  options.requestTimeoutMs = 5000;
  auto& client = h.start(options);
  auto hung = h.transport->pendingGet();
  h.advance(4999);
  CHECK(client.readyState() == ReadyState::Pending);
  h.advance(1);
  CHECK(hung->cancelled);
  CHECK(h.errors.at(0).kind == ErrorKind::Timeout);
  CHECK(throwsKind(client, ErrorKind::Timeout));
  h.advance(1000);
  CHECK_EQ(h.requestCount(), std::size_t(2));
  // A late answer of the hung request changes nothing.
  hung->done(answer(200, payloadBody("late", FLAGS)));
  h.advance(0);
  CHECK(!client.payload().has_value());
}

TEST("stops for good on a 401: no request after it, and the last good values keep serving") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  h.advance(20000);
  h.respond(answer(401, R"({"statusCode":401,"error":"UNAUTHORIZED","message":"Missing or invalid API key"})"));
  CHECK(h.errors.at(0).kind == ErrorKind::Unauthorized);
  CHECK_EQ(h.errors.at(0).status, 401);
  CHECK(h.errors.at(0).isFatal());
  CHECK_EQ(std::string(h.errors.at(0).what()), std::string("GET /flags/config answered 401: Missing or invalid API key"));
  h.advance(24 * 3600 * 1000LL);
  CHECK_EQ(h.requestCount(), std::size_t(2));
  CHECK_EQ(h.clock->pending(), std::size_t(0));
  CHECK_EQ(client.getBoolean("pvp", false), true);
}

TEST("stops on a 403 from a key without FLAGS_READ, and ready() throws it") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(403, R"({"message":"Missing permission FLAGS_READ"})"));
  CHECK(throwsKind(client, ErrorKind::Forbidden));
  h.advance(3600000);
  CHECK_EQ(h.requestCount(), std::size_t(1));
}

TEST("close() cancels the first request, makes ready() throw closed, and leaves nothing scheduled") {
  Harness h;
  auto& client = h.start();
  auto first = h.transport->pendingGet();
  client.close();
  CHECK(first->cancelled);
  CHECK(throwsKind(client, ErrorKind::Closed));
  CHECK_EQ(h.clock->pending(), std::size_t(0));
  client.close();
  first->done(answer(200, payloadBody("e1", FLAGS)));
  h.advance(100000);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  CHECK(!client.payload().has_value());
}

TEST("onReady is called once settled, at once when it already is") {
  Harness h;
  auto& client = h.start();
  int calls = 0;
  client.onReady([&](const FlagstoreError* error) { calls += error == nullptr ? 1 : 100; });
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  CHECK_EQ(calls, 1);
  client.onReady([&](const FlagstoreError* error) { calls += error == nullptr ? 1 : 100; });
  CHECK_EQ(calls, 2);
}

TEST("serves each flag with its own type; unknown keys and other types give the fallback") {
  Harness h;
  auto& client = h.start();
  h.respond(answer(200, payloadBody("e1", Json::array({flag("b", "boolean", false), flag("s", "string", ""), flag("n", "number", 2.5),
                                                       flag("j", "json", nullptr), flag("jn", "json", 42), flag("c", "color", "#fff", "client")}))));
  CHECK_EQ(client.getBoolean("b", true), false);
  CHECK_EQ(client.getString("s", "x"), std::string(""));
  CHECK_EQ(client.getNumber("n", 0), 2.5);
  CHECK(client.getJson("j", "fallback").is_null());
  CHECK_EQ(client.getNumber("jn", 7), 7.0);
  CHECK_EQ(client.getJson("jn", nullptr), Json(42));
  CHECK_EQ(client.getString("c", "none"), std::string("none"));
  CHECK_EQ(client.getBoolean("missing", true), true);
  CHECK_EQ(client.getString("b", "str"), std::string("str"));
  CHECK_EQ(client.all(), (Json{{"b", false}, {"s", ""}, {"n", 2.5}, {"j", nullptr}, {"jn", 42}, {"c", "#fff"}}));
  // A runtime other than shared counts as server: not relayed.
  CHECK_EQ(client.clientSafe(), (Json{{"b", false}, {"s", ""}, {"n", 2.5}, {"j", nullptr}, {"jn", 42}}));
}

TEST("extends the default context with each call's, the call's attributes winning; clientSafe resolves shared flags only") {
  Harness h;
  auto options = h.options();
  options.context = {{"serverId", "eu-west-17"}, {"region", "eu-west"}, {"build", "1.4.2"}};
  auto& client = h.start(options);
  const Json rules = Json::array({{{"id", "eu-new"},
                                   {"conditions", Json::array({{{"attribute", "region"}, {"operator", "in"}, {"values", {"eu-west"}}},
                                                               {{"attribute", "build"}, {"operator", "semverGte"}, {"values", {"1.4"}}}})},
                                   {"value", "v2"}}});
  Json matchmaker = flag("mm", "string", "v1");
  matchmaker["rules"] = rules;
  Json secret = flag("secret", "string", "s1", "server");
  secret["rules"] = rules;
  secret["rules"][0]["value"] = "s2";
  Json xp = flag("double-xp", "boolean", false);
  xp["rules"] = Json::array({{{"id", "late"}, {"conditions", Json::array({{{"attribute", "targetingKey"}, {"operator", "percentage"}, {"values", {74.89, 100}}}})}, {"value", true}}});
  h.respond(answer(200, payloadBody("e1", Json::array({matchmaker, secret, xp}))));
  CHECK_EQ(client.getString("mm", "fallback"), std::string("v2"));
  CHECK_EQ(client.getString("mm", "fallback", {{"build", "1.3.9"}}), std::string("v1"));
  CHECK_EQ(client.getString("mm", "fallback", {{"targetingKey", "player-1"}}), std::string("v2"));
  CHECK_EQ(client.all({{"region", "us-east"}}), (Json{{"mm", "v1"}, {"secret", "s1"}, {"double-xp", false}}));
  CHECK_EQ(client.clientSafe({{"targetingKey", "player-1"}}), (Json{{"mm", "v2"}, {"double-xp", true}}));
  CHECK_EQ(client.clientSafe({{"targetingKey", "player-2"}}), (Json{{"mm", "v2"}, {"double-xp", false}}));
  const auto evaluation = client.evaluate("double-xp", {{"targetingKey", "player-1"}});
  CHECK_EQ(std::string(reasonName(evaluation->reason)), std::string("SPLIT"));
  CHECK_EQ(evaluation->variant, std::string("late"));
  CHECK(client.clientSafe().dump().find("rules") == std::string::npos);
}

TEST("refuses bad options") {
  Harness h;
  auto options = h.options();
  options.apiKey = "";
  CHECK_THROWS(Client(options));
  options = h.options("flags.test/v1");
  CHECK_THROWS(Client(options));
  options = h.options();
  options.context = Json::array();
  CHECK_THROWS(Client(options));
}

TEST("keeps the last good payload in the cache file, in the TypeScript SDK's format, rewritten only when it changes") {
  Harness h;
  auto options = h.options();
  options.cacheFile = tempPath("cache.json");
  h.start(options);
  const std::string body = payloadBody("e1", FLAGS);
  h.respond(answer(200, body));
  CHECK_EQ(Json::parse(readText(options.cacheFile)), Json::parse(body));
  struct stat info {};
  CHECK(stat(options.cacheFile.c_str(), &info) == 0);
  CHECK_EQ(int(info.st_mode & 0777), 0600);
  std::remove(options.cacheFile.c_str());
  h.advance(20000);
  h.respond(answer(304));
  h.advance(20000);
  h.respond(answer(200, body));  // the same etag: no write
  std::ifstream gone(options.cacheFile);
  CHECK(!gone.good());
  h.advance(20000);
  const std::string next = payloadBody("e2", Json::array({flag("pvp", "boolean", false)}));
  h.respond(answer(200, next));
  CHECK_EQ(Json::parse(readText(options.cacheFile)), Json::parse(next));
  // Nothing but the file in its folder: the temporary file was renamed over it.
  const std::string dir = options.cacheFile.substr(0, options.cacheFile.rfind('/'));
  FILE* list = popen(("ls -A " + dir + " | wc -l").c_str(), "r");
  char count[16] = {0};
  CHECK(fgets(count, sizeof count, list) != nullptr);
  pclose(list);
  CHECK_EQ(std::atoi(count), 1);
}

TEST("starts from the cache file while the service is down, keeps trying, and catches up when it is back") {
  const std::string path = tempPath("cache.json");
  ConfigPayload cached = parseConfigPayloadText(payloadBody("old", FLAGS));
  writeCacheFile(path, cached);
  Harness h;
  auto options = h.options();
  options.cacheFile = path;
  auto& client = h.start(options);
  CHECK_EQ(h.transport->pendingGet()->header("If-None-Match"), std::string("W/\"old\""));
  h.respond(networkError());
  client.ready(std::chrono::milliseconds(0));
  CHECK_EQ(client.getBoolean("pvp", false), true);
  CHECK(h.errors.at(0).kind == ErrorKind::Network);
  h.advance(1000);
  h.respond(answer(503));
  h.advance(2000);
  h.respond(answer(200, payloadBody("new", Json::array({flag("pvp", "boolean", false), flag("motd", "string", "hi"), flag("cap", "number", 64, "server")}))));
  CHECK_EQ(h.changes.size(), std::size_t(1));
  CHECK(h.changes[0] == std::vector<std::string>{"pvp"});
  CHECK_EQ(readCacheFile(path)->etag, std::string("new"));
}

TEST("a cache file written by the TypeScript SDK (JSON.stringify of the payload) is read") {
  const std::string path = tempPath("ts-cache.json");
  std::ofstream(path) << R"({"etag":"ts1","generatedAt":"2026-11-29T09:00:00.000Z","pollIntervalSeconds":20,"flags":[{"key":"k","type":"number","value":1.5,"runtime":"shared","rules":[{"id":"eu","conditions":[{"attribute":"region","operator":"in","values":["eu"]}],"value":3}]}]})";
  const auto payload = readCacheFile(path);
  CHECK_EQ(payload->etag, std::string("ts1"));
  CHECK_EQ(payload->flags.at(0).evaluate({{"region", "eu"}}).value, Json(3));
  CHECK(!readCacheFile(path + ".missing").has_value());
}

TEST("without service or cache, ready() throws; the client keeps trying and reports every key once it gets them") {
  Harness h;
  auto options = h.options();
  options.cacheFile = tempPath("missing.json");
  auto& client = h.start(options);
  h.respond(networkError());
  CHECK(throwsKind(client, ErrorKind::Network));
  CHECK_EQ(h.errors.size(), std::size_t(1));  // a missing cache file is no error
  h.advance(1000);
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  CHECK_EQ(h.changes.size(), std::size_t(1));
  CHECK(h.changes[0] == (std::vector<std::string>{"cap", "motd", "pvp"}));
  CHECK_EQ(client.getBoolean("pvp", false), true);
}

TEST("reports a cache file it cannot read or that is not a payload, and goes on from the service") {
  for (const char* content : {"{broken", "{\"etag\":\"\",\"flags\":[]}", ""}) {
    const std::string path = tempPath("bad.json");
    std::ofstream(path) << content;
    Harness h;
    auto options = h.options();
    options.cacheFile = path;
    auto& client = h.start(options);
    CHECK(h.errors.at(0).kind == ErrorKind::Cache);
    CHECK(client.readyState() == ReadyState::Pending);
    h.respond(answer(200, payloadBody("e1", FLAGS)));
    CHECK_EQ(client.getBoolean("pvp", false), true);
  }
}

TEST("reports a cache file it cannot write, and keeps serving") {
  Harness h;
  auto options = h.options();
  options.cacheFile = "/nonexistent-dir-flagstore/cache.json";
  auto& client = h.start(options);
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  CHECK(h.errors.at(0).kind == ErrorKind::Cache);
  CHECK(std::string(h.errors.at(0).what()).find("could not be written") != std::string::npos);
  CHECK_EQ(client.getBoolean("pvp", false), true);
}

static void openStream(Harness& h) {
  auto stream = h.transport->openStream();
  if (!stream) throw check::Failure("no stream is open");
  Headers headers;
  headers.add("Content-Type", "text/event-stream; charset=utf-8");
  stream->stream.response(200, headers);
  h.clock->runDue();
}

static void sendEvent(Harness& h, const std::string& text) {
  if (!h.transport->openStream()) throw check::Failure("no stream is open");
  h.transport->openStream()->stream.data(text);
  h.clock->runDue();
}

static Options streamOptions(Harness& h) {
  auto options = h.options();
  options.stream = true;
  return options;
}

TEST("with stream: a change through the stream is read at once, and nothing is polled while the stream is open") {
  Harness h;
  auto& client = h.start(streamOptions(h));
  CHECK(h.transport->streams().empty());  // the stream opens after the first read
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  auto stream = h.transport->openStream();
  CHECK_EQ(stream->request.url, std::string("http://flags.test/v1/flags/config/stream"));
  CHECK_EQ(stream->header("Accept"), std::string("text/event-stream"));
  CHECK_EQ(stream->header("Last-Event-ID"), std::string("e1"));
  openStream(h);
  for (int i = 0; i < 40; i++) {
    h.advance(15000);
    sendEvent(h, ": keep-alive\n\n");
  }
  CHECK_EQ(h.requestCount(), std::size_t(1));
  sendEvent(h, "event: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"e1\"}\n\n");
  CHECK_EQ(h.requestCount(), std::size_t(1));  // the etag it holds already
  sendEvent(h, "data: {\"type\":\"refetchEvaluation\",\"etag\":\"e2\"}\n\n");
  CHECK_EQ(h.requestCount(), std::size_t(2));
  h.respond(answer(200, payloadBody("e2", Json::array({flag("pvp", "boolean", false)}))));
  CHECK_EQ(client.getBoolean("pvp", true), false);
  CHECK_EQ(h.changes.size(), std::size_t(1));
  sendEvent(h, "data: {\"type\":\"somethingElse\"}\n\ndata: not json\n\n");
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("with stream: an event during a read is read right after it") {
  Harness h;
  auto& client = h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  openStream(h);
  sendEvent(h, "data: {\"type\":\"refetchEvaluation\",\"etag\":\"e2\"}\n\n");
  sendEvent(h, "data: {\"type\":\"refetchEvaluation\",\"etag\":\"e3\"}\n\n");
  CHECK_EQ(h.requestCount(), std::size_t(2));
  h.respond(answer(200, payloadBody("e2", FLAGS)));
  CHECK_EQ(h.requestCount(), std::size_t(3));
  h.respond(answer(200, payloadBody("e3", FLAGS)));
  CHECK_EQ(h.requestCount(), std::size_t(3));
  CHECK_EQ(client.payload()->etag, std::string("e3"));
}

TEST("with stream: falls back to polling when the stream drops, and stops polling once it is back") {
  Harness h;
  h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  openStream(h);
  sendEvent(h, ": hi\n\n");
  h.transport->openStream()->stream.end("Connection reset by peer", false);
  h.clock->runDue();
  CHECK(h.errors.at(0).kind == ErrorKind::Stream);
  // Reconnects after 1 s (it had been working); polls after the interval meanwhile.
  // Reconnects after 1 s (it had been working), then backs off: 2 s, 4 s, 8 s, 16 s; polls every 20 s meanwhile.
  std::int64_t wait = 1000;
  for (std::size_t attempt = 2; attempt <= 5; attempt++) {
    h.advance(wait);
    CHECK_EQ(h.transport->streams().size(), attempt);
    h.transport->openStream()->stream.end("Connection refused", false);
    h.clock->runDue();
    wait *= 2;
  }
  CHECK_EQ(h.requestCount(), std::size_t(1));  // t = 15 s
  h.advance(5000);
  CHECK_EQ(h.requestCount(), std::size_t(2));  // the poll at 20 s
  h.respond(answer(304));
  h.advance(11000);
  CHECK_EQ(h.transport->streams().size(), std::size_t(6));  // t = 31 s
  openStream(h);
  for (int i = 0; i < 8; i++) {
    h.advance(15000);
    sendEvent(h, ": keep-alive\n\n");
  }
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("with stream: reopens a stream the service ended after its retry hint, without an error") {
  Harness h;
  h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  openStream(h);
  sendEvent(h, "retry: 4000\n: keep-alive\n\n");
  h.transport->openStream()->stream.end("", false);
  h.clock->runDue();
  CHECK(h.errors.empty());
  h.advance(5999);  // 4000 × (1 + 0.5)
  CHECK_EQ(h.transport->streams().size(), std::size_t(1));
  h.advance(1);
  CHECK_EQ(h.transport->streams().size(), std::size_t(2));
}

TEST("with stream: a 401 on the stream stops everything, stream and polling") {
  Harness h;
  auto& client = h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  openStream(h);
  h.transport->openStream()->stream.end("", false);
  h.clock->runDue();
  h.advance(1000);
  auto again = h.transport->openStream();
  again->stream.response(401, Headers());
  again->stream.data(R"({"statusCode":401,"error":"UNAUTHORIZED","message":"Missing or invalid API key"})");
  again->stream.end("", false);
  h.clock->runDue();
  const auto& last = h.errors.back();
  CHECK(last.kind == ErrorKind::Unauthorized);
  CHECK_EQ(std::string(last.what()), std::string("GET /flags/config/stream answered 401: Missing or invalid API key"));
  h.advance(3600000);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  CHECK_EQ(h.transport->streams().size(), std::size_t(2));
  CHECK_EQ(h.clock->pending(), std::size_t(0));
  CHECK_EQ(client.getBoolean("pvp", false), true);
}

TEST("with stream: drops a stream that stays silent past streamSilenceTimeoutMs, and polls") {
  Harness h;
  auto options = streamOptions(h);
  options.streamSilenceTimeoutMs = 45000;
  h.start(options);
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  openStream(h);
  auto silent = h.transport->openStream();
  h.advance(44999);
  CHECK(!silent->cancelled);
  h.advance(1);
  CHECK(silent->cancelled);
  CHECK(h.errors.at(0).kind == ErrorKind::Stream);
  CHECK(std::string(h.errors.at(0).what()).find("silent") != std::string::npos);
  h.advance(20000);
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("with stream: waits out the stream's Retry-After on a 429: no poll and no reconnect before it has passed") {
  Harness h;
  h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  auto stream = h.transport->openStream();
  Headers headers;
  headers.add("Retry-After", "50");
  stream->stream.response(429, headers);
  stream->stream.end("", false);
  h.clock->runDue();
  CHECK(h.errors.at(0).kind == ErrorKind::RateLimited);
  h.advance(49999);
  CHECK_EQ(h.requestCount(), std::size_t(1));
  CHECK_EQ(h.transport->streams().size(), std::size_t(1));
  h.advance(50000 * 0.05 + 1);
  CHECK_EQ(h.requestCount(), std::size_t(2));
  CHECK_EQ(h.transport->streams().size(), std::size_t(2));
}

TEST("with stream: a service whose stream is off is polled as without one, and the stream retried with backoff") {
  Harness h;
  h.start(streamOptions(h));
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  auto stream = h.transport->openStream();
  Headers headers;
  headers.add("Content-Type", "application/json");
  stream->stream.response(200, headers);
  h.clock->runDue();
  CHECK(stream->cancelled);
  CHECK(h.errors.at(0).kind == ErrorKind::Stream);
  h.advance(1000);
  CHECK_EQ(h.transport->streams().size(), std::size_t(2));
  h.transport->openStream()->stream.response(404, Headers());
  h.transport->openStream()->stream.end("", false);
  h.clock->runDue();
  h.advance(2000);
  CHECK_EQ(h.transport->streams().size(), std::size_t(3));
  h.advance(17000);
  CHECK_EQ(h.requestCount(), std::size_t(2));
}

TEST("with stream: a stream that cannot connect in time fails as a timeout and is retried") {
  Harness h;
  auto options = streamOptions(h);
  options.requestTimeoutMs = 3000;
  h.start(options);
  h.respond(answer(200, payloadBody("e1", FLAGS)));
  auto stream = h.transport->openStream();
  h.advance(3000);
  CHECK(stream->cancelled);
  CHECK(h.errors.at(0).kind == ErrorKind::Timeout);
  h.advance(1000);
  CHECK_EQ(h.transport->streams().size(), std::size_t(2));
}

CHECK_MAIN
