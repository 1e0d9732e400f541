#include "flagstore/errors.hpp"

#include <nlohmann/json.hpp>

namespace flagstore {

const char* errorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Unauthorized:
      return "unauthorized";
    case ErrorKind::Forbidden:
      return "forbidden";
    case ErrorKind::RateLimited:
      return "rate-limited";
    case ErrorKind::Server:
      return "server";
    case ErrorKind::Http:
      return "http";
    case ErrorKind::Network:
      return "network";
    case ErrorKind::Timeout:
      return "timeout";
    case ErrorKind::InvalidPayload:
      return "invalid-payload";
    case ErrorKind::Stream:
      return "stream";
    case ErrorKind::Cache:
      return "cache";
    case ErrorKind::Closed:
      return "closed";
  }
  return "http";
}

namespace {

std::string serviceMessage(const std::string& body) {
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (!parsed.is_object()) return "";  // not the service's JSON (a proxy's HTML page, say): the status says enough
  const auto message = parsed.find("message");
  if (message == parsed.end()) return "";
  if (message->is_string()) return ": " + message->get<std::string>();
  if (message->is_array()) {
    std::string joined;
    for (const auto& part : *message) {
      if (!joined.empty()) joined += "; ";
      joined += part.is_string() ? part.get<std::string>() : part.dump();
    }
    return ": " + joined;
  }
  return "";
}

}  // namespace

FlagstoreError httpError(const std::string& what, int status, const std::string& body, std::optional<int> retryAfterSeconds) {
  const std::string message = what + " answered " + std::to_string(status) + serviceMessage(body);
  if (status == 401) return FlagstoreError(ErrorKind::Unauthorized, message, status);
  if (status == 403) return FlagstoreError(ErrorKind::Forbidden, message, status);
  if (status == 429) return FlagstoreError(ErrorKind::RateLimited, message, status, retryAfterSeconds);
  if (status >= 500) return FlagstoreError(ErrorKind::Server, message, status);
  return FlagstoreError(ErrorKind::Http, message, status);
}

}  // namespace flagstore
