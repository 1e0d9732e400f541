#include "flagstore/curl_transport.hpp"

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace flagstore {
namespace {

using Clock = std::chrono::steady_clock;

struct Transfer {
  HttpRequest request;
  bool streaming = false;
  std::function<void(HttpResult)> done;
  StreamCallbacks callbacks;
  std::atomic<bool> cancelled{false};

  CURL* easy = nullptr;
  curl_slist* headerList = nullptr;
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  int status = 0;
  Headers headers;
  bool headersDone = false;
  std::string body;
  Clock::time_point started;
  Clock::time_point lastByte;
  bool timedOut = false;
  std::string failure;

  /** A header block ends with an empty line: a 1xx's block is followed by the real one. */
  void headerLine(const std::string& raw) {
    std::string line = raw;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.compare(0, 5, "HTTP/") == 0) {
      const auto space = line.find(' ');
      status = space == std::string::npos ? 0 : std::atoi(line.c_str() + space + 1);
      headers = Headers();
      return;
    }
    if (line.empty()) {
      if (status >= 200 && !headersDone) {
        headersDone = true;
        if (streaming && callbacks.response && !cancelled) callbacks.response(status, headers);
      }
      return;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) return;
    std::string value = line.substr(colon + 1);
    const auto begin = value.find_first_not_of(" \t");
    value = begin == std::string::npos ? "" : value.substr(begin);
    headers.add(line.substr(0, colon), value);
  }
};

class Handle : public Cancellable {
 public:
  Handle(std::shared_ptr<Transfer> transfer, std::function<void()> wake) : transfer_(std::move(transfer)), wake_(std::move(wake)) {}
  void cancel() override {
    if (auto transfer = transfer_.lock()) {
      transfer->cancelled = true;
      wake_();
    }
  }

 private:
  std::weak_ptr<Transfer> transfer_;
  std::function<void()> wake_;
};

size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  transfer->headerLine(std::string(data, size * count));
  return size * count;
}

size_t onBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t length = size * count;
  if (transfer->cancelled) return 0;  // ends the transfer
  transfer->lastByte = Clock::now();
  if (transfer->streaming) {
    if (!transfer->headersDone) transfer->headerLine("");
    if (transfer->callbacks.data) transfer->callbacks.data(std::string_view(data, length));
  } else {
    transfer->body.append(data, length);
  }
  return length;
}

/** Called about once a second and on every transfer of bytes: ends a cancelled request, and a stream past its limits. */
int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* transfer = static_cast<Transfer*>(user);
  if (transfer->cancelled) return 1;
  if (!transfer->streaming) return 0;
  const auto now = Clock::now();
  const auto sinceStart = std::chrono::duration_cast<std::chrono::milliseconds>(now - transfer->started).count();
  const auto sinceByte = std::chrono::duration_cast<std::chrono::milliseconds>(now - transfer->lastByte).count();
  if (!transfer->headersDone && transfer->request.timeoutMs > 0 && sinceStart > transfer->request.timeoutMs) {
    transfer->timedOut = true;
    return 1;
  }
  if (transfer->headersDone && transfer->request.idleTimeoutMs > 0 && sinceByte > transfer->request.idleTimeoutMs) {
    transfer->timedOut = true;
    return 1;
  }
  return 0;
}

class Loop {
 public:
  Loop() : multi_(curl_multi_init()) {}
  ~Loop() { curl_multi_cleanup(multi_); }

  void submit(std::shared_ptr<Transfer> transfer) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      incoming_.push_back(std::move(transfer));
    }
    wake();
  }

  void wake() { curl_multi_wakeup(multi_); }

  void stop() {
    stopping_ = true;
    wake();
  }

  void run() {
    std::list<std::shared_ptr<Transfer>> active;
    while (!stopping_) {
      std::vector<std::shared_ptr<Transfer>> fresh;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        fresh.swap(incoming_);
      }
      for (auto& transfer : fresh) {
        if (transfer->cancelled) continue;
        if (begin(*transfer)) {
          active.push_back(transfer);
        } else {
          finish(*transfer, CURLE_FAILED_INIT);
        }
      }
      // Cancelled transfers leave without a callback.
      for (auto it = active.begin(); it != active.end();) {
        if ((*it)->cancelled) {
          release(**it);
          it = active.erase(it);
        } else {
          ++it;
        }
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int queued = 0;
      while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
        if (message->msg != CURLMSG_DONE) continue;
        for (auto it = active.begin(); it != active.end(); ++it) {
          if ((*it)->easy != message->easy_handle) continue;
          auto transfer = *it;
          active.erase(it);
          const CURLcode code = message->data.result;
          release(*transfer);
          finish(*transfer, code);
          break;
        }
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
    for (auto& transfer : active) release(*transfer);
  }

 private:
  bool begin(Transfer& transfer) {
    CURL* easy = curl_easy_init();
    if (easy == nullptr) return false;
    transfer.easy = easy;
    transfer.started = transfer.lastByte = Clock::now();
    for (const auto& [name, value] : transfer.request.headers) transfer.headerList = curl_slist_append(transfer.headerList, (name + ": " + value).c_str());
    curl_easy_setopt(easy, CURLOPT_URL, transfer.request.url.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, transfer.headerList);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "flagstore-sdk-cpp/1.0");
    if (transfer.streaming) {
      if (transfer.request.timeoutMs > 0) curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, long(transfer.request.timeoutMs));
    } else {
      curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
      if (transfer.request.timeoutMs > 0) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(transfer.request.timeoutMs));
    }
    if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
      release(transfer);
      return false;
    }
    return true;
  }

  void release(Transfer& transfer) {
    if (transfer.easy != nullptr) {
      curl_multi_remove_handle(multi_, transfer.easy);
      curl_easy_cleanup(transfer.easy);
      transfer.easy = nullptr;
    }
    if (transfer.headerList != nullptr) curl_slist_free_all(transfer.headerList);
    transfer.headerList = nullptr;
  }

  void finish(Transfer& transfer, CURLcode code) {
    if (transfer.cancelled) return;
    const bool timedOut = transfer.timedOut || code == CURLE_OPERATION_TIMEDOUT;
    std::string error;
    if (code != CURLE_OK) error = transfer.errorBuffer[0] != '\0' ? transfer.errorBuffer : curl_easy_strerror(code);
    if (timedOut && error.empty()) error = "timed out";
    if (transfer.streaming) {
      if (transfer.callbacks.end) transfer.callbacks.end(code == CURLE_OK ? "" : error, timedOut);
      return;
    }
    HttpResult result;
    if (code == CURLE_OK) {
      result.status = transfer.status;
      result.headers = std::move(transfer.headers);
      result.body = std::move(transfer.body);
    } else {
      result.error = error;
      result.timedOut = timedOut;
    }
    if (transfer.done) transfer.done(std::move(result));
  }

  CURLM* multi_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Transfer>> incoming_;
  std::atomic<bool> stopping_{false};
};

class CurlTransport : public Transport {
 public:
  CurlTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    loop_ = std::make_shared<Loop>();
    auto loop = loop_;
    thread_ = std::thread([loop] { loop->run(); });
  }

  ~CurlTransport() override {
    loop_->stop();
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();  // the last owner let go from a callback: the loop ends by itself
    } else {
      thread_.join();
    }
  }

  std::shared_ptr<Cancellable> get(const HttpRequest& request, std::function<void(HttpResult)> done) override {
    auto transfer = std::make_shared<Transfer>();
    transfer->request = request;
    transfer->done = std::move(done);
    return submit(transfer);
  }

  std::shared_ptr<Cancellable> stream(const HttpRequest& request, StreamCallbacks callbacks) override {
    auto transfer = std::make_shared<Transfer>();
    transfer->request = request;
    transfer->streaming = true;
    transfer->callbacks = std::move(callbacks);
    return submit(transfer);
  }

 private:
  std::shared_ptr<Cancellable> submit(const std::shared_ptr<Transfer>& transfer) {
    std::weak_ptr<Loop> weak = loop_;
    auto handle = std::make_shared<Handle>(transfer, [weak] {
      if (auto loop = weak.lock()) loop->wake();
    });
    loop_->submit(transfer);
    return handle;
  }

  std::shared_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace

std::shared_ptr<Transport> makeCurlTransport() { return std::make_shared<CurlTransport>(); }

}  // namespace flagstore
