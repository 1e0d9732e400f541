#include "flagstore/targeting.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "flagstore/sha256.hpp"

namespace flagstore {

bool RuleCondition::operator==(const RuleCondition& other) const {
  return attribute == other.attribute && op == other.op && values == other.values;
}

bool FlagRule::operator==(const FlagRule& other) const {
  return id == other.id && conditions == other.conditions && value == other.value;
}

const char* reasonName(Reason reason) {
  switch (reason) {
    case Reason::Static:
      return "STATIC";
    case Reason::TargetingMatch:
      return "TARGETING_MATCH";
    case Reason::Split:
      return "SPLIT";
    case Reason::Default:
      return "DEFAULT";
  }
  return "DEFAULT";
}

double bucketOf(const std::string& flagKey, const std::string& value) {
  const auto digest = sha256(flagKey + ":" + value);
  const std::uint32_t first = (std::uint32_t(digest[0]) << 24) | (std::uint32_t(digest[1]) << 16) | (std::uint32_t(digest[2]) << 8) |
                              std::uint32_t(digest[3]);
  return double(first % 10000) / 100;
}

std::string jsNumberString(double number) {
  if (!std::isfinite(number)) return "null";
  if (number == 0) return "0";  // -0 too
  std::string sign = number < 0 ? "-" : "";
  double magnitude = std::fabs(number);
  // The fewest significant digits that read back as the same double: what ECMAScript's Number::toString picks.
  char buffer[64];
  int precision = 1;
  for (; precision <= 17; precision++) {
    std::snprintf(buffer, sizeof buffer, "%.*e", precision - 1, magnitude);
    if (std::strtod(buffer, nullptr) == magnitude) break;
  }
  std::string text(buffer);
  const auto e = text.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; i++)
    if (text[i] != '.') digits.push_back(text[i]);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(text.c_str() + e + 1);
  const int k = int(digits.size());
  const int n = exponent + 1;  // the decimal point's position after the first n digits
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(std::size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, std::size_t(n)) + "." + digits.substr(std::size_t(n));
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(std::size_t(-n), '0') + digits;
  } else {
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += "e";
    out += (n - 1 >= 0 ? "+" : "-");
    out += std::to_string(std::abs(n - 1));
  }
  return sign + out;
}

std::optional<std::string> stringForm(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) {
    const double number = value.get<double>();
    if (!std::isfinite(number)) return std::nullopt;
    return jsNumberString(number);
  }
  if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
  return std::nullopt;
}

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentifierChar(char c) { return isDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-'; }
bool allDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!isDigit(c)) return false;
  return true;
}

/** `0|[1-9]\d*` at `at`, as a safe integer (at most 2^53 - 1, as JavaScript's Number.isSafeInteger). */
bool readNumber(const std::string& text, std::size_t& at, std::uint64_t& out, bool& unsafe) {
  const std::size_t start = at;
  while (at < text.size() && isDigit(text[at])) at++;
  if (at == start) return false;
  if (text[start] == '0' && at - start > 1) return false;
  if (at - start > 16) {
    unsafe = true;
    return true;
  }
  out = std::stoull(text.substr(start, at - start));
  if (out > 9007199254740991ULL) unsafe = true;
  return true;
}

/** Dot-separated identifiers of `[0-9A-Za-z-]+` from `at` to the next `stop` character or the end. */
bool readIdentifiers(const std::string& text, std::size_t& at, char stop, std::vector<std::string>* out) {
  for (;;) {
    const std::size_t start = at;
    while (at < text.size() && isIdentifierChar(text[at])) at++;
    if (at == start) return false;
    if (out) out->push_back(text.substr(start, at - start));
    if (at == text.size() || text[at] == stop) return true;
    if (text[at] != '.') return false;
    at++;
  }
}

int compareIdentifiers(const std::string& a, const std::string& b) {
  const bool aNumeric = allDigits(a);
  const bool bNumeric = allDigits(b);
  if (aNumeric && bNumeric) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (aNumeric != bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

}  // namespace

std::optional<SemanticVersion> parseSemanticVersion(const std::string& text) {
  if (text.size() > 256) return std::nullopt;
  SemanticVersion version;
  std::size_t at = 0;
  bool unsafe = false;
  for (int part = 0; part < 3; part++) {
    if (part > 0) {
      if (at < text.size() && text[at] == '.') {
        at++;
      } else {
        break;  // a missing minor or patch counts as 0
      }
    }
    if (!readNumber(text, at, version.core[part], unsafe)) return std::nullopt;
  }
  if (at < text.size() && text[at] == '-') {
    at++;
    if (!readIdentifiers(text, at, '+', &version.prerelease)) return std::nullopt;
  }
  if (at < text.size() && text[at] == '+') {
    at++;
    if (!readIdentifiers(text, at, '\0', nullptr) || at != text.size()) return std::nullopt;
  }
  if (at != text.size() || unsafe) return std::nullopt;
  for (const auto& id : version.prerelease)
    if (allDigits(id) && id.size() > 1 && id[0] == '0') return std::nullopt;
  return version;
}

int compareSemanticVersions(const SemanticVersion& a, const SemanticVersion& b) {
  for (int i = 0; i < 3; i++)
    if (a.core[i] != b.core[i]) return a.core[i] < b.core[i] ? -1 : 1;
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() == b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  const std::size_t common = std::min(a.prerelease.size(), b.prerelease.size());
  for (std::size_t i = 0; i < common; i++) {
    const int order = compareIdentifiers(a.prerelease[i], b.prerelease[i]);
    if (order != 0) return order;
  }
  if (a.prerelease.size() == b.prerelease.size()) return 0;
  return a.prerelease.size() < b.prerelease.size() ? -1 : 1;
}

namespace {

std::optional<SemanticVersion> versionOf(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  return parseSemanticVersion(value.get<std::string>());
}

bool includesString(const Json& values, const std::string& text) {
  for (const auto& candidate : values)
    if (candidate.is_string() && candidate.get_ref<const std::string&>() == text) return true;
  return false;
}

bool conditionHolds(const std::string& flagKey, const RuleCondition& condition, const Context& context) {
  static const Json missing;  // null
  const Json* actual = &missing;
  if (context.is_object()) {
    const auto found = context.find(condition.attribute);
    if (found != context.end()) actual = &*found;
  }
  const Json& values = condition.values;
  const Json first = values.is_array() && !values.empty() ? values[0] : Json();
  const Json second = values.is_array() && values.size() > 1 ? values[1] : Json();
  const std::string& op = condition.op;
  if (op == "in") {
    const auto text = stringForm(*actual);
    return text && includesString(values, *text);
  }
  if (op == "notIn") {
    const auto text = stringForm(*actual);
    return !text || !includesString(values, *text);
  }
  if (op == "gte" || op == "lt") {
    if (!actual->is_number() || !first.is_number()) return false;
    const double a = actual->get<double>();
    const double b = first.get<double>();
    return op == "gte" ? a >= b : a < b;
  }
  if (op == "semverGte" || op == "semverLt") {
    const auto version = versionOf(*actual);
    const auto bound = versionOf(first);
    if (!version || !bound) return false;
    const int order = compareSemanticVersions(*version, *bound);
    return op == "semverGte" ? order >= 0 : order < 0;
  }
  if (op == "percentage") {
    const auto text = stringForm(*actual);
    if (!text || !first.is_number() || !second.is_number()) return false;
    const double bucket = bucketOf(flagKey, *text);
    return first.get<double>() <= bucket && bucket < second.get<double>();
  }
  return false;
}

}  // namespace

Evaluation evaluateFlag(const std::string& flagKey, const Json& value, const std::vector<FlagRule>& rules, const Context& context) {
  if (rules.empty()) return {value, Reason::Static, "default"};
  for (const auto& rule : rules) {
    bool holds = true;
    bool split = false;
    for (const auto& condition : rule.conditions) {
      if (condition.op == "percentage") split = true;
      if (!conditionHolds(flagKey, condition, context)) {
        holds = false;
        break;
      }
    }
    if (!holds) continue;
    for (const auto& condition : rule.conditions)
      if (condition.op == "percentage") split = true;
    return {rule.value, split ? Reason::Split : Reason::TargetingMatch, rule.id};
  }
  return {value, Reason::Default, "default"};
}

}  // namespace flagstore
