// The shared targeting vectors (test/fixtures/targeting-vectors.json): the service, OFREP and the TypeScript SDK give
// exactly these answers, and so must this SDK, every bucket and every evaluation.
#include <fstream>
#include <map>
#include <sstream>

#include "check.hpp"
#include "flagstore/payload.hpp"
#include "flagstore/targeting.hpp"

using namespace flagstore;

int main(int argc, char** argv) {
  const std::string path = std::string(FLAGSTORE_REPO_ROOT) + "/test/fixtures/targeting-vectors.json";
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  const Json vectors = Json::parse(text.str());
  std::map<std::string, Flag> flags;
  for (Json flag : vectors.at("flags")) {
    flag["runtime"] = "shared";  // the vectors' flags name no runtime; the evaluator does not read it
    const auto parsed = parseConfigPayload(Json{{"etag", "v"}, {"flags", Json::array({flag})}});
    flags.emplace(parsed.flags[0].key, parsed.flags[0]);
  }
  static std::vector<Json> keep;
  keep.assign(vectors.at("buckets").begin(), vectors.at("buckets").end());
  for (const Json& vector : keep) {
    const std::string name = "bucket(\"" + vector.at("flagKey").get<std::string>() + "\", \"" + vector.at("value").get<std::string>() + "\") is " +
                             vector.at("bucket").dump();
    check::cases().push_back({name, [vector] {
                                CHECK_EQ(bucketOf(vector.at("flagKey").get<std::string>(), vector.at("value").get<std::string>()),
                                         vector.at("bucket").get<double>());
                              }});
  }
  int evaluations = 0;
  for (const Json& vector : vectors.at("evaluations")) {
    evaluations++;
    const std::string name = vector.at("flag").get<std::string>() + " with " + vector.at("context").dump();
    const Flag flag = flags.at(vector.at("flag").get<std::string>());
    check::cases().push_back({name, [vector, flag] {
                                const auto result = flag.evaluate(vector.at("context"));
                                const Json got = {{"value", result.value}, {"reason", reasonName(result.reason)}, {"variant", result.variant}};
                                CHECK_EQ(got.dump(), vector.at("expected").dump());
                                CHECK(got == vector.at("expected"));
                              }});
  }
  check::cases().push_back({"the file has the vectors it promises", [&] {
                              CHECK(keep.size() >= 10);
                              CHECK(evaluations >= 50);
                            }});
  return check::run(argc, argv);
}
