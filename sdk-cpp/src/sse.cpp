#include "flagstore/sse.hpp"

namespace flagstore {

void SseParser::push(std::string_view chunk) {
  std::string text = pending_;
  text.append(chunk.data(), chunk.size());
  pending_.clear();
  if (!started_) {
    static const std::string bom = "\xEF\xBB\xBF";
    if (text.size() < bom.size() && bom.compare(0, text.size(), text) == 0) {
      pending_ = text;  // could still be a BOM
      return;
    }
    if (text.compare(0, bom.size(), bom) == 0) text.erase(0, bom.size());
    started_ = true;
  }
  std::size_t position = 0;
  if (skipLineFeed_ && !text.empty()) {
    if (text[0] == '\n') position = 1;
    skipLineFeed_ = false;
  }
  for (;;) {
    const std::size_t end = text.find_first_of("\r\n", position);
    if (end == std::string::npos) break;
    std::string current = text.substr(position, end - position);
    if (text[end] == '\r' && end + 1 == text.size()) {
      skipLineFeed_ = true;
      position = end + 1;
    } else {
      position = text[end] == '\r' && text[end + 1] == '\n' ? end + 2 : end + 1;
    }
    line(current);
  }
  pending_ = text.substr(position);
}

void SseParser::line(const std::string& line) {
  if (line.empty()) return dispatch();
  if (line[0] == ':') return;
  const auto colon = line.find(':');
  const std::string field = colon == std::string::npos ? line : line.substr(0, colon);
  std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.erase(0, 1);
  if (field == "event") {
    eventType_ = value;
  } else if (field == "data") {
    dataLines_.push_back(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string::npos) lastEventId_ = value;
  } else if (field == "retry") {
    bool digits = !value.empty() && value.size() < 16;
    for (char c : value) digits = digits && c >= '0' && c <= '9';
    if (digits && onRetry) onRetry(std::stoll(value));
  }
}

void SseParser::dispatch() {
  auto lines = std::move(dataLines_);
  dataLines_.clear();
  std::string type = eventType_.empty() ? "message" : eventType_;
  eventType_.clear();
  if (lines.empty()) return;
  std::string data;
  for (std::size_t i = 0; i < lines.size(); i++) {
    if (i > 0) data += '\n';
    data += lines[i];
  }
  if (onEvent) onEvent({type, data, lastEventId_});
}

}  // namespace flagstore
