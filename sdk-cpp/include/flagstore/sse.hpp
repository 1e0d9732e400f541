#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace flagstore {

struct SseEvent {
  /** `event:`, or `message` when the event named none. */
  std::string type;
  /** Its `data:` lines joined with a line feed. */
  std::string data;
  /** The stream's last event id as of this event. */
  std::string lastEventId;
};

/**
 * The text/event-stream parser of the HTML standard (9.2.6), fed chunk by chunk: lines end with CRLF, LF or CR (a CRLF
 * may be split across chunks), `:` starts a comment, a field's value loses one leading space, an empty line dispatches,
 * an event without data is not dispatched, a leading BOM is dropped, and what is left when the stream ends is dropped.
 */
class SseParser {
 public:
  std::function<void(const SseEvent&)> onEvent;
  /** A `retry:` field of digits only: how long the server wants a client to wait before reconnecting, in ms. */
  std::function<void(long long)> onRetry;

  void push(std::string_view chunk);

 private:
  void line(const std::string& line);
  void dispatch();
  std::string pending_;
  bool started_ = false;
  bool skipLineFeed_ = false;
  std::vector<std::string> dataLines_;
  std::string eventType_;
  std::string lastEventId_;
};

}  // namespace flagstore
