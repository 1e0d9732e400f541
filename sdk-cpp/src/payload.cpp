#include "flagstore/payload.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace flagstore {

Evaluation Flag::evaluate(const Context& context) const {
  static const std::vector<FlagRule> none;
  return evaluateFlag(key, value, rules ? *rules : none, context);
}

bool matchesType(const std::string& type, const Json& value) {
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number() && std::isfinite(value.get<double>());
  return !value.is_discarded();
}

namespace {

FlagRule parseRule(const std::string& key, const std::string& type, const Json& rule, std::size_t index) {
  const std::string where = "flag " + key + "'s rule #" + std::to_string(index);
  if (!rule.is_object()) throw PayloadError(where + " is not an object");
  const auto id = rule.find("id");
  const auto conditions = rule.find("conditions");
  const auto value = rule.find("value");
  if (id == rule.end() || !id->is_string()) throw PayloadError(where + " has no id");
  if (conditions == rule.end() || !conditions->is_array()) throw PayloadError(where + " has no conditions");
  if (value == rule.end() || !matchesType(type, *value)) throw PayloadError(where + "'s value is not a " + type);
  FlagRule parsed{id->get<std::string>(), {}, *value};
  for (const auto& condition : *conditions) {
    if (!condition.is_object()) throw PayloadError(where + " has a condition that is not an object");
    const auto attribute = condition.find("attribute");
    const auto op = condition.find("operator");
    const auto values = condition.find("values");
    if (attribute == condition.end() || !attribute->is_string() || op == condition.end() || !op->is_string() ||
        values == condition.end() || !values->is_array()) {
      throw PayloadError(where + " has a condition without attribute, operator or values");
    }
    parsed.conditions.push_back({attribute->get<std::string>(), op->get<std::string>(), *values});
  }
  return parsed;
}

Flag parseFlag(const Json& flag, std::size_t index) {
  if (!flag.is_object()) throw PayloadError("flag #" + std::to_string(index) + " is not an object");
  const auto key = flag.find("key");
  if (key == flag.end() || !key->is_string() || key->get_ref<const std::string&>().empty())
    throw PayloadError("flag #" + std::to_string(index) + " has no key");
  Flag parsed;
  parsed.key = key->get<std::string>();
  const auto type = flag.find("type");
  if (type == flag.end() || !type->is_string()) throw PayloadError("flag " + parsed.key + " has no type");
  parsed.type = type->get<std::string>();
  const auto runtime = flag.find("runtime");
  if (runtime == flag.end() || !runtime->is_string()) throw PayloadError("flag " + parsed.key + " has no runtime");
  parsed.runtime = runtime->get<std::string>();
  const auto value = flag.find("value");
  if (value == flag.end() || !matchesType(parsed.type, *value)) throw PayloadError("flag " + parsed.key + "'s value is not a " + parsed.type);
  parsed.value = *value;
  const auto rules = flag.find("rules");
  if (rules == flag.end()) return parsed;
  if (!rules->is_array()) throw PayloadError("flag " + parsed.key + "'s rules are not a list");
  std::vector<FlagRule> list;
  for (std::size_t at = 0; at < rules->size(); at++) list.push_back(parseRule(parsed.key, parsed.type, (*rules)[at], at));
  parsed.rules = std::move(list);
  return parsed;
}

}  // namespace

ConfigPayload parseConfigPayload(const Json& body) {
  if (!body.is_object()) throw PayloadError("the config payload is not an object");
  const auto etag = body.find("etag");
  if (etag == body.end() || !etag->is_string() || etag->get_ref<const std::string&>().empty())
    throw PayloadError("the config payload has no etag");
  const auto flags = body.find("flags");
  if (flags == body.end() || !flags->is_array()) throw PayloadError("the config payload has no flags array");
  ConfigPayload payload;
  payload.etag = etag->get<std::string>();
  const auto generatedAt = body.find("generatedAt");
  if (generatedAt != body.end() && generatedAt->is_string()) payload.generatedAt = generatedAt->get<std::string>();
  const auto interval = body.find("pollIntervalSeconds");
  payload.pollIntervalSeconds = DEFAULT_POLL_INTERVAL_SECONDS;
  if (interval != body.end() && interval->is_number()) {
    const double seconds = interval->get<double>();
    if (std::isfinite(seconds) && seconds >= 1) payload.pollIntervalSeconds = seconds;
  }
  std::set<std::string> keys;
  for (std::size_t index = 0; index < flags->size(); index++) {
    payload.flags.push_back(parseFlag((*flags)[index], index));
    if (!keys.insert(payload.flags.back().key).second) throw PayloadError("the config payload holds a key twice");
  }
  return payload;
}

ConfigPayload parseConfigPayloadText(const std::string& text) {
  Json body = Json::parse(text, nullptr, false);
  if (body.is_discarded()) throw PayloadError("the config payload is not JSON");
  return parseConfigPayload(body);
}

Json toJson(const Flag& flag) {
  Json out = {{"key", flag.key}, {"type", flag.type}, {"value", flag.value}, {"runtime", flag.runtime}};
  if (flag.rules) {
    Json rules = Json::array();
    for (const auto& rule : *flag.rules) {
      Json conditions = Json::array();
      for (const auto& condition : rule.conditions)
        conditions.push_back({{"attribute", condition.attribute}, {"operator", condition.op}, {"values", condition.values}});
      rules.push_back({{"id", rule.id}, {"conditions", conditions}, {"value", rule.value}});
    }
    out["rules"] = rules;
  }
  return out;
}

Json toJson(const ConfigPayload& payload) {
  Json flags = Json::array();
  for (const auto& flag : payload.flags) flags.push_back(toJson(flag));
  // A whole number of seconds is written as JSON's integer (20, not 20.0), as the service and the TypeScript SDK write it.
  const double seconds = payload.pollIntervalSeconds;
  const Json interval = std::floor(seconds) == seconds && seconds < 1e15 ? Json(std::int64_t(seconds)) : Json(seconds);
  return {{"etag", payload.etag}, {"generatedAt", payload.generatedAt}, {"pollIntervalSeconds", interval}, {"flags", flags}};
}

std::vector<std::string> changedKeys(const std::map<std::string, Flag>& before, const std::map<std::string, Flag>& after) {
  static const std::vector<FlagRule> none;
  std::vector<std::string> changed;
  for (const auto& [key, flag] : after) {
    const auto previous = before.find(key);
    if (previous == before.end() || previous->second.type != flag.type || previous->second.runtime != flag.runtime ||
        previous->second.value != flag.value || (previous->second.rules ? *previous->second.rules : none) != (flag.rules ? *flag.rules : none)) {
      changed.push_back(key);
    }
  }
  for (const auto& [key, flag] : before)
    if (after.find(key) == after.end()) changed.push_back(key);
  std::sort(changed.begin(), changed.end());
  return changed;
}

}  // namespace flagstore
