#pragma once
// Targeting, evaluated on the game server: the same evaluator as the service's and the TypeScript SDK's, held to the
// same answers by the shared test vectors (test/fixtures/targeting-vectors.json in the service's repository). The
// first rule whose conditions all hold gives its value; none holding, the flag's own value.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flagstore {

using Json = nlohmann::json;

/** The attributes rules read: a JSON object (the client's default context extended by each call's). */
using Context = Json;

struct RuleCondition {
  std::string attribute;
  /** in, notIn, gte, lt, semverGte, semverLt, percentage; an operator this SDK does not know never holds. */
  std::string op;
  /** Strings and numbers, as the service sends them (a JSON array). */
  Json values = Json::array();
  bool operator==(const RuleCondition& other) const;
};

struct FlagRule {
  std::string id;
  std::vector<RuleCondition> conditions;
  Json value;
  bool operator==(const FlagRule& other) const;
};

enum class Reason { Static, TargetingMatch, Split, Default };
/** STATIC, TARGETING_MATCH, SPLIT or DEFAULT, as OFREP names them. */
const char* reasonName(Reason reason);

struct Evaluation {
  Json value;
  Reason reason;
  /** The matching rule's id, or `default`. */
  std::string variant;
};

/** The value `rules` choose for `context`, else `value`. A context that is not an object counts as an empty one. */
Evaluation evaluateFlag(const std::string& flagKey, const Json& value, const std::vector<FlagRule>& rules, const Context& context);

/** SHA-256 of the UTF-8 `<flag key>:<value>`, first 4 bytes as an unsigned big-endian integer, modulo 10,000, / 100. */
double bucketOf(const std::string& flagKey, const std::string& value);

/** A number as JavaScript's JSON.stringify writes it (shortest round trip: 42, 4.5, 1e+21, 1e-7); "null" when not finite. */
std::string jsNumberString(double number);

/** A JSON value's string form for `in`, `notIn` and the bucket: a string as is, a number as JSON writes it, true or false. */
std::optional<std::string> stringForm(const Json& value);

/** Semantic Versioning 2.0.0 with a missing minor or patch counted as 0; build metadata ignored. */
struct SemanticVersion {
  std::uint64_t core[3] = {0, 0, 0};
  std::vector<std::string> prerelease;
};
std::optional<SemanticVersion> parseSemanticVersion(const std::string& text);
/** Negative, zero or positive, as Semantic Versioning's precedence orders a and b. */
int compareSemanticVersions(const SemanticVersion& a, const SemanticVersion& b);

}  // namespace flagstore
