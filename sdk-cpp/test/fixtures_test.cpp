// The payload fixtures every game-server SDK shares (test/fixtures/sdk; its README.md says how to read them), through
// the client's public surface: each body served as is (status 200) by a transport of the test's own, then the
// getters, all() and clientSafe() asked what the fixture says. sdk/test/fixtures.spec.ts runs the same files.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "check.hpp"
#include "fake_transport.hpp"

using namespace flagstore;
using fake::answer;
using fake::Harness;

static std::string root() {
  // FLAGSTORE_FIXTURES_ROOT: a checkout holding test/fixtures/sdk, when it is not this one.
  const char* override = std::getenv("FLAGSTORE_FIXTURES_ROOT");
  return override != nullptr && *override != '\0' ? override : FLAGSTORE_REPO_ROOT;
}

static std::string readFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw check::Failure("cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

static Json contextOf(const Json& holder) { return holder.contains("context") ? holder.at("context") : Json::object(); }

static Json call(const Client& client, const Json& getter) {
  const std::string get = getter.at("get");
  const std::string key = getter.at("key");
  const Json& fallback = getter.at("fallback");
  const Json context = contextOf(getter);
  if (get == "boolean") return client.getBoolean(key, fallback.get<bool>(), context);
  if (get == "string") return client.getString(key, fallback.get<std::string>(), context);
  if (get == "number") return client.getNumber(key, fallback.get<double>(), context);
  if (get == "json") return client.getJson(key, fallback, context);
  throw check::Failure("unknown getter " + get);
}

static void requireEqual(const Json& got, const Json& expected, const std::string& what) {
  if (!(got == expected)) throw check::Failure(what + ": got " + got.dump() + ", expected " + expected.dump());
}

int main(int argc, char** argv) {
  const std::string folder = root() + "/test/fixtures/sdk/";
  const Json cases = Json::parse(readFile(folder + "expected.json")).at("cases");
  std::string goodBody;
  int accepted = 0, refused = 0;
  for (const Json& fixture : cases) {
    const std::string body = readFile(folder + fixture.at("payload").get<std::string>());
    if (fixture.at("name") == "value-types") goodBody = body;
    const std::string name = fixture.at("name");
    if (fixture.at("accepted").get<bool>()) {
      accepted++;
      check::cases().push_back({name + ": is served, and the getters, all() and clientSafe() answer as the fixture says", [fixture, body] {
                                  Harness h;
                                  auto options = h.options();
                                  if (fixture.contains("clientContext")) options.context = fixture.at("clientContext");
                                  auto& client = h.start(options);
                                  h.respond(answer(200, body, {{"Content-Type", "application/json"}}));
                                  client.ready(std::chrono::milliseconds(0));
                                  for (const Json& getter : fixture.value("getters", Json::array()))
                                    requireEqual(call(client, getter), getter.at("expect"), getter.dump());
                                  for (const Json& all : fixture.value("all", Json::array()))
                                    requireEqual(client.all(contextOf(all)), all.at("expect"), "all(" + contextOf(all).dump() + ")");
                                  for (const Json& safe : fixture.value("clientSafe", Json::array()))
                                    requireEqual(client.clientSafe(contextOf(safe)), safe.at("expect"), "clientSafe(" + contextOf(safe).dump() + ")");
                                }});
      check::cases().push_back({name + ": polls again after pollIntervalSeconds with If-None-Match", [fixture, body] {
                                  Harness h;  // jitter 0.5: the interval exactly
                                  h.start();
                                  CHECK_EQ(h.transport->pendingGet()->header("If-None-Match"), std::string(""));
                                  h.respond(answer(200, body));
                                  CHECK_EQ(h.clock->pending(), std::size_t(1));
                                  CHECK_EQ(h.clock->nextDelay(), std::int64_t(fixture.at("pollIntervalSeconds").get<double>() * 1000));
                                  h.advance(h.clock->nextDelay());
                                  CHECK_EQ(h.transport->pendingGet()->header("If-None-Match"), fixture.at("ifNoneMatch").get<std::string>());
                                  CHECK_EQ(fixture.at("ifNoneMatch").get<std::string>(), "W/\"" + fixture.at("etag").get<std::string>() + "\"");
                                }});
    } else {
      refused++;
      check::cases().push_back({name + ": is refused as a whole: not ready on it, and a client that had a good payload keeps it", [body, &goodBody] {
                                  Harness first;
                                  auto& fresh = first.start();
                                  first.respond(answer(200, body));
                                  try {
                                    fresh.ready(std::chrono::milliseconds(0));
                                    throw check::Failure("ready() did not throw");
                                  } catch (const FlagstoreError& error) {
                                    CHECK(error.kind == ErrorKind::InvalidPayload);
                                    CHECK_EQ(error.status, 200);
                                  }
                                  CHECK_EQ(fresh.all(), Json::object());

                                  Harness h;
                                  auto& client = h.start();
                                  h.respond(answer(200, goodBody));
                                  const Json before = client.all();
                                  h.untilRequest();
                                  h.respond(answer(200, body));
                                  CHECK_EQ(h.errors.size(), std::size_t(1));
                                  CHECK(h.errors[0].kind == ErrorKind::InvalidPayload);
                                  CHECK_EQ(client.all(), before);
                                  CHECK_EQ(client.getBoolean("pvp-enabled", false), true);
                                }});
    }
  }
  check::cases().push_back({"has cases of both kinds", [&] {
                              CHECK(accepted >= 5);
                              CHECK(refused >= 10);
                              CHECK(!goodBody.empty());
                            }});
  return check::run(argc, argv);
}
