// The core without I/O: SHA-256, number forms, semantic versions, buckets, backoff, Retry-After, SSE, the payload.
#include <cmath>
#include <set>

#include "check.hpp"
#include "flagstore/errors.hpp"
#include "flagstore/payload.hpp"
#include "flagstore/sha256.hpp"
#include "flagstore/sse.hpp"
#include "flagstore/targeting.hpp"
#include "flagstore/timing.hpp"

using namespace flagstore;

static std::string hexOf(const std::string& text) {
  const auto digest = sha256(text);
  return toHex(digest.data(), digest.size());
}

TEST("SHA-256 gives the NIST (FIPS 180-2 appendix B) digests") {
  CHECK_EQ(hexOf(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  CHECK_EQ(hexOf("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  CHECK_EQ(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
           std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  CHECK_EQ(hexOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
           std::string("cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
  CHECK_EQ(hexOf(std::string(1000000, 'a')), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

TEST("SHA-256 gives the same digest fed in pieces across block boundaries") {
  const std::string text(200, 'x');
  for (std::size_t split : {1u, 55u, 56u, 63u, 64u, 65u, 128u}) {
    Sha256 hash;
    hash.update(text.substr(0, split));
    hash.update(text.substr(split));
    const auto digest = hash.finish();
    CHECK_EQ(toHex(digest.data(), digest.size()), hexOf(text));
  }
}

TEST("numbers take the string form JavaScript's JSON.stringify gives them") {
  CHECK_EQ(jsNumberString(42), std::string("42"));
  CHECK_EQ(jsNumberString(4.5), std::string("4.5"));
  CHECK_EQ(jsNumberString(-0.0), std::string("0"));
  CHECK_EQ(jsNumberString(-1.5), std::string("-1.5"));
  CHECK_EQ(jsNumberString(0.1 + 0.2), std::string("0.30000000000000004"));
  CHECK_EQ(jsNumberString(1e21), std::string("1e+21"));
  CHECK_EQ(jsNumberString(1e20), std::string("100000000000000000000"));
  CHECK_EQ(jsNumberString(123456789012345680000.0), std::string("123456789012345680000"));
  CHECK_EQ(jsNumberString(0.000001), std::string("0.000001"));
  CHECK_EQ(jsNumberString(1e-7), std::string("1e-7"));
  CHECK_EQ(jsNumberString(1.5e-7), std::string("1.5e-7"));
  CHECK_EQ(jsNumberString(5e-324), std::string("5e-324"));
  CHECK_EQ(jsNumberString(1.7976931348623157e308), std::string("1.7976931348623157e+308"));
  CHECK_EQ(jsNumberString(9007199254740992.0), std::string("9007199254740992"));
  CHECK_EQ(jsNumberString(100), std::string("100"));
  CHECK_EQ(jsNumberString(57.63), std::string("57.63"));
}

TEST("the string form of context values: strings as is, numbers as JSON writes them, booleans, nothing else") {
  CHECK_EQ(*stringForm(Json("player-1")), std::string("player-1"));
  CHECK_EQ(*stringForm(Json(42)), std::string("42"));
  CHECK_EQ(*stringForm(Json(42.0)), std::string("42"));
  CHECK_EQ(*stringForm(Json(4.5)), std::string("4.5"));
  CHECK_EQ(*stringForm(Json(true)), std::string("true"));
  CHECK(!stringForm(Json()).has_value());
  CHECK(!stringForm(Json::array({true})).has_value());
  CHECK(!stringForm(Json::object()).has_value());
  CHECK(!stringForm(Json(NAN)).has_value());
}

static int order(const std::string& a, const std::string& b) {
  return compareSemanticVersions(*parseSemanticVersion(a), *parseSemanticVersion(b));
}

TEST("semantic versions order by Semantic Versioning 2.0.0 precedence, a missing minor or patch counted as 0") {
  const char* ascending[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.4",
                             "1.4.1", "1.10", "2"};
  for (std::size_t i = 0; i + 1 < sizeof ascending / sizeof *ascending; i++) {
    CHECK_EQ(order(ascending[i], ascending[i + 1]), -1);
    CHECK_EQ(order(ascending[i + 1], ascending[i]), 1);
  }
  CHECK_EQ(order("1.4", "1.4.0"), 0);
  CHECK_EQ(order("1.4.0+build.7", "1.4.0"), 0);
  CHECK_EQ(order("1", "1.0.0"), 0);
}

TEST("text that is not a semantic version is none") {
  for (const char* text : {"", "v1.4", "1.04", "01", "1.", "1..2", "1.2.3.4", "1.0.0-01", "1.0.0-", "1.0.0-a..b", "1.0.0+", "1.0.0+a+b", " 1.0",
                           "1.0 ", "1.0.0-ä", "9007199254740992", "99999999999999999999"}) {
    if (parseSemanticVersion(text)) throw check::Failure(std::string("parsed: ") + text);
  }
  CHECK(parseSemanticVersion("9007199254740991").has_value());
  CHECK(parseSemanticVersion("0.0.0-0.a-b.1+x-y.2").has_value());
  CHECK(!parseSemanticVersion(std::string(257, '1')).has_value());
}

TEST("100,000 ids put between 9.7 % and 10.3 % into [0, 10]") {
  int inside = 0;
  for (int i = 0; i < 100000; i++)
    if (bucketOf("double-xp", "player-" + std::to_string(i)) < 10) inside++;
  CHECK(inside >= 9700 && inside <= 10300);
}

TEST("an operator this SDK does not know never holds, nor a condition whose values do not fit") {
  const std::vector<FlagRule> rules = {
      {"future", {{"region", "matches", Json::array({"eu-.*"})}}, Json(2)},
      {"bad-bound", {{"level", "gte", Json::array({"10"})}}, Json(3)},
      {"bad-range", {{"id", "percentage", Json::array({0})}}, Json(4)},
  };
  const auto result = evaluateFlag("f", Json(1), rules, Json{{"region", "eu-west"}, {"level", 20}, {"id", "x"}});
  CHECK_EQ(result.value, Json(1));
  CHECK_EQ(std::string(reasonName(result.reason)), std::string("DEFAULT"));
  CHECK_EQ(evaluateFlag("f", Json(1), rules, Json("not an object")).variant, std::string("default"));
}

TEST("the poll interval is jittered by ±10 %") {
  CHECK_EQ(pollDelay(20, 0), 18000.0);
  CHECK_EQ(pollDelay(20, 0.5), 20000.0);
  CHECK(std::fabs(pollDelay(20, 0.999999) - 22000) < 1);
}

TEST("backoff doubles from 1 s up to 5 min with ±20 % jitter, never outside 1 s … 5 min") {
  CHECK_EQ(backoffDelay(1, 0.5), 1000.0);
  CHECK_EQ(backoffDelay(2, 0.5), 2000.0);
  CHECK_EQ(backoffDelay(3, 0.5), 4000.0);
  CHECK_EQ(backoffDelay(9, 0.5), 256000.0);
  CHECK_EQ(backoffDelay(10, 0.5), 300000.0);
  CHECK_EQ(backoffDelay(1000, 0.5), 300000.0);
  for (int failures = 0; failures < 40; failures++) {
    for (double random : {0.0, 0.999999}) {
      const double delay = backoffDelay(failures, random);
      CHECK(delay >= 1000 && delay <= 300000);
    }
  }
  CHECK_EQ(backoffDelay(2, 0), 1600.0);
  CHECK(std::fabs(backoffDelay(2, 0.999999) - 2400) < 1);
}

TEST("Retry-After is waited out, up to 10 % more, never less than 1 s") {
  CHECK_EQ(retryAfterDelay(30000, 0), 30000.0);
  CHECK(std::fabs(retryAfterDelay(30000, 0.999999) - 33000) < 1);
  CHECK_EQ(retryAfterDelay(0, 0), 1000.0);
  CHECK_EQ(reconnectDelay(3000, 0.5), 4500.0);
}

TEST("Retry-After reads delay-seconds and HTTP-dates") {
  const std::int64_t now = 784111777000;  // Sun, 06 Nov 1994 08:49:37 GMT
  CHECK_EQ(*parseRetryAfter(std::string("120"), now), 120000.0);
  CHECK_EQ(*parseRetryAfter(std::string(" 7 "), now), 7000.0);
  CHECK_EQ(*parseRetryAfter(std::string("Sun, 06 Nov 1994 08:50:37 GMT"), now), 60000.0);
  CHECK_EQ(*parseRetryAfter(std::string("Sunday, 06-Nov-94 08:49:47 GMT"), now), 10000.0);
  CHECK_EQ(*parseRetryAfter(std::string("Sun Nov  6 08:49:57 1994"), now), 20000.0);
  CHECK_EQ(*parseRetryAfter(std::string("Sun, 06 Nov 1994 08:00:00 GMT"), now), 0.0);
  CHECK(!parseRetryAfter(std::nullopt, now).has_value());
  CHECK(!parseRetryAfter(std::string("soon"), now).has_value());
  CHECK(!parseRetryAfter(std::string("-5"), now).has_value());
  CHECK(!parseRetryAfter(std::string("1.5"), now).has_value());
}

TEST("errors are named by status as the TypeScript SDK names them, with the service's message") {
  const auto unauthorized = httpError("GET /flags/config", 401, R"({"statusCode":401,"message":"Invalid API key"})");
  CHECK(unauthorized.kind == ErrorKind::Unauthorized);
  CHECK(unauthorized.isFatal());
  CHECK_EQ(std::string(unauthorized.what()), std::string("GET /flags/config answered 401: Invalid API key"));
  CHECK(httpError("x", 403, "").kind == ErrorKind::Forbidden);
  const auto limited = httpError("x", 429, "<html>", 30);
  CHECK(limited.kind == ErrorKind::RateLimited);
  CHECK_EQ(*limited.retryAfterSeconds, 30);
  CHECK(!limited.isFatal());
  CHECK_EQ(std::string(limited.what()), std::string("x answered 429"));
  CHECK(httpError("x", 503, "").kind == ErrorKind::Server);
  CHECK(httpError("x", 404, R"({"message":["a","b"]})").kind == ErrorKind::Http);
  CHECK_EQ(std::string(httpError("x", 400, R"({"message":["a","b"]})").what()), std::string("x answered 400: a; b"));
  CHECK_EQ(std::string(errorKindName(ErrorKind::InvalidPayload)), std::string("invalid-payload"));
}

struct Collected {
  std::vector<SseEvent> events;
  std::vector<long long> retries;
};

static Collected parse(const std::vector<std::string>& chunks) {
  Collected out;
  SseParser parser;
  parser.onEvent = [&](const SseEvent& event) { out.events.push_back(event); };
  parser.onRetry = [&](long long ms) { out.retries.push_back(ms); };
  for (const auto& chunk : chunks) parser.push(chunk);
  return out;
}

TEST("SSE: reads the change stream's event, with any line ending") {
  for (const char* text : {"data: {\"type\":\"refetchEvaluation\"}\n\n", "data: {\"type\":\"refetchEvaluation\"}\r\n\r\n",
                           "data: {\"type\":\"refetchEvaluation\"}\r\r"}) {
    const auto got = parse({text});
    CHECK_EQ(got.events.size(), std::size_t(1));
    CHECK_EQ(got.events[0].type, std::string("message"));
    CHECK_EQ(got.events[0].data, std::string("{\"type\":\"refetchEvaluation\"}"));
  }
}

TEST("SSE: reads an event split anywhere across chunks, a CRLF split between two included") {
  const std::string text = "id: 7\r\nevent: message\r\ndata: a\r\ndata: b\r\n\r\n";
  for (std::size_t split = 0; split <= text.size(); split++) {
    const auto got = parse({text.substr(0, split), text.substr(split)});
    CHECK_EQ(got.events.size(), std::size_t(1));
    CHECK_EQ(got.events[0].data, std::string("a\nb"));
    CHECK_EQ(got.events[0].lastEventId, std::string("7"));
  }
}

TEST("SSE: drops a leading BOM (even split), skips comments, ignores unknown fields, reads retry of digits only") {
  const auto got = parse({"\xEF\xBB", "\xBF: keep-alive\nretry: 3000\nretry: 1x\nfoo: bar\ndata:x\n\n"});
  CHECK_EQ(got.events.size(), std::size_t(1));
  CHECK_EQ(got.events[0].data, std::string("x"));
  CHECK_EQ(got.retries.size(), std::size_t(1));
  CHECK_EQ(got.retries[0], 3000LL);
}

TEST("SSE: removes one space after the colon, reads a field without colon as empty, names the event") {
  const auto got = parse({"data:  two\ndata\nevent: ping\n\n"});
  CHECK_EQ(got.events.size(), std::size_t(1));
  CHECK_EQ(got.events[0].data, std::string(" two\n"));
  CHECK_EQ(got.events[0].type, std::string("ping"));
}

TEST("SSE: dispatches nothing for a block without data, nor an event the stream cut before its blank line") {
  const auto got = parse({"id: 3\n\nevent: x\n\ndata: y\nid: 4\n\ndata: cut\n"});
  CHECK_EQ(got.events.size(), std::size_t(1));
  CHECK_EQ(got.events[0].type, std::string("message"));
  CHECK_EQ(got.events[0].lastEventId, std::string("4"));
  const auto withNul = parse({std::string("id: a\0b\ndata: z\n\n", 17)});
  CHECK_EQ(withNul.events[0].lastEventId, std::string(""));
}

static Json payloadWith(Json flags) { return Json{{"etag", "abc"}, {"generatedAt", "2026-01-01T00:00:00.000Z"}, {"pollIntervalSeconds", 30}, {"flags", flags}}; }

TEST("a config payload is read with its flags, rules and interval") {
  const auto payload = parseConfigPayload(payloadWith(Json::array({
      {{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}},
      {{"key", "b"},
       {"type", "number"},
       {"value", 1},
       {"runtime", "server"},
       {"rules", Json::array({{{"id", "eu"}, {"conditions", Json::array({{{"attribute", "region"}, {"operator", "in"}, {"values", {"eu"}}}})}, {"value", 2}}})}},
      {{"key", "c"}, {"type", "vector3"}, {"value", Json::array({1, 2, 3})}, {"runtime", "shared"}},
  })));
  CHECK_EQ(payload.etag, std::string("abc"));
  CHECK_EQ(payload.pollIntervalSeconds, 30.0);
  CHECK_EQ(payload.flags.size(), std::size_t(3));
  CHECK(!payload.flags[0].rules.has_value());
  CHECK_EQ(payload.flags[1].rules->at(0).conditions.at(0).op, std::string("in"));
  CHECK_EQ(payload.flags[1].evaluate(Json{{"region", "eu"}}).value, Json(2));
  // The same JSON comes back out: the cache file's format.
  CHECK_EQ(toJson(payload), payloadWith(Json::array({
                                {{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}},
                                {{"key", "b"},
                                 {"type", "number"},
                                 {"value", 1},
                                 {"runtime", "server"},
                                 {"rules", Json::array({{{"id", "eu"}, {"conditions", Json::array({{{"attribute", "region"}, {"operator", "in"}, {"values", {"eu"}}}})}, {"value", 2}}})}},
                                {{"key", "c"}, {"type", "vector3"}, {"value", Json::array({1, 2, 3})}, {"runtime", "shared"}},
                            })));
  CHECK(toJson(payload).dump().find("\"pollIntervalSeconds\":30}") != std::string::npos);  // 30, not 30.0
}

TEST("a poll interval that is missing, below 1 s or not a number is the default 20 s") {
  for (Json interval : {Json(), Json(0.5), Json("30"), Json(-5)}) {
    Json body = payloadWith(Json::array());
    if (interval.is_null()) {
      body.erase("pollIntervalSeconds");
    } else {
      body["pollIntervalSeconds"] = interval;
    }
    CHECK_EQ(parseConfigPayload(body).pollIntervalSeconds, 20.0);
  }
}

TEST("a payload with any malformed flag is refused as a whole") {
  const Json good = {{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}};
  std::vector<Json> bad = {
      Json::array(),
      Json{{"flags", Json::array()}},
      Json{{"etag", ""}, {"flags", Json::array()}},
      Json{{"etag", "x"}},
      payloadWith(Json::array({good, good})),
      payloadWith(Json::array({1})),
      payloadWith(Json::array({{{"type", "boolean"}, {"value", true}, {"runtime", "shared"}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "boolean"}, {"value", "yes"}, {"runtime", "shared"}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "number"}, {"value", "1"}, {"runtime", "shared"}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "json"}, {"runtime", "shared"}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "boolean"}, {"value", true}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}, {"rules", {{"id", "x"}}}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}, {"rules", Json::array({{{"id", "x"}, {"conditions", Json::array()}, {"value", 3}}})}}})),
      payloadWith(Json::array({{{"key", "a"}, {"type", "boolean"}, {"value", true}, {"runtime", "shared"}, {"rules", Json::array({{{"id", "x"}, {"conditions", Json::array({{{"attribute", "a"}}})}, {"value", false}}})}}})),
  };
  for (const auto& body : bad) {
    bool refused = false;
    try {
      parseConfigPayload(body);
    } catch (const PayloadError&) {
      refused = true;
    }
    if (!refused) throw check::Failure("accepted: " + body.dump());
  }
  CHECK_THROWS(parseConfigPayloadText("{not json"));
}

TEST("changedKeys names what changed, was added or was removed, sorted, and not what only moved") {
  auto flagsOf = [](const Json& list) {
    std::map<std::string, Flag> out;
    for (const auto& flag : parseConfigPayload(payloadWith(list)).flags) out.emplace(flag.key, flag);
    return out;
  };
  const Json rule = Json::array({{{"id", "eu"}, {"conditions", Json::array({{{"attribute", "r"}, {"operator", "in"}, {"values", {"eu"}}}})}, {"value", 2}}});
  const auto before = flagsOf(Json::array({
      {{"key", "same"}, {"type", "json"}, {"value", {{"a", 1}, {"b", 2}}}, {"runtime", "shared"}},
      {{"key", "value"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}},
      {{"key", "runtime"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}},
      {{"key", "rules"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}},
      {{"key", "gone"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}},
  }));
  const auto after = flagsOf(Json::array({
      {{"key", "same"}, {"type", "json"}, {"value", Json::parse(R"({"b":2,"a":1.0})")}, {"runtime", "shared"}},
      {{"key", "value"}, {"type", "number"}, {"value", 2}, {"runtime", "shared"}},
      {{"key", "runtime"}, {"type", "number"}, {"value", 1}, {"runtime", "server"}},
      {{"key", "rules"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}, {"rules", rule}},
      {{"key", "added"}, {"type", "number"}, {"value", 1}, {"runtime", "shared"}},
  }));
  const std::vector<std::string> expected = {"added", "gone", "rules", "runtime", "value"};
  CHECK(changedKeys(before, after) == expected);
  CHECK(changedKeys(after, after).empty());
}

CHECK_MAIN
