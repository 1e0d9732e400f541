#pragma once
// The body of GET /flags/config, which is also what the cache file holds (the same file format as the TypeScript SDK's).
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "flagstore/targeting.hpp"

namespace flagstore {

struct Flag {
  std::string key;
  /** boolean, string, number or json; a flag of a type this SDK does not know is kept (all() has it) but no getter matches it. */
  std::string type;
  Json value;
  /** `shared`: a server may relay it to players. `server`: it must stay on the server. Anything else counts as `server`. */
  std::string runtime;
  /** Present when the flag has rules (the service sends no `rules` field for a flag without). Never relay them to players. */
  std::optional<std::vector<FlagRule>> rules;

  /** The value for `context`: its first rule that holds, else its value. */
  Evaluation evaluate(const Context& context) const;
};

struct ConfigPayload {
  /** The bare hash; the ETag header is `W/"<etag>"`. */
  std::string etag;
  std::string generatedAt;
  double pollIntervalSeconds = 20;
  /** In the order the service sent them. */
  std::vector<Flag> flags;
};

constexpr double DEFAULT_POLL_INTERVAL_SECONDS = 20;

/** A body that is not a config payload; a payload with any malformed flag is refused as a whole. */
class PayloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** Checks a config body (from the service or the cache file). Throws PayloadError. */
ConfigPayload parseConfigPayload(const Json& body);
/** Parses the text first (PayloadError for text that is not JSON). */
ConfigPayload parseConfigPayloadText(const std::string& text);
/** The payload as the service sent it (the cache file's content): etag, generatedAt, pollIntervalSeconds, flags. */
Json toJson(const ConfigPayload& payload);
Json toJson(const Flag& flag);

/** Whether `value` may be served as a flag of `type`; a type this SDK does not know accepts any JSON value. */
bool matchesType(const std::string& type, const Json& value);

/** The keys whose type, value, runtime or rules differ between two flag sets, or that only one of them has, sorted. */
std::vector<std::string> changedKeys(const std::map<std::string, Flag>& before, const std::map<std::string, Flag>& after);

}  // namespace flagstore
