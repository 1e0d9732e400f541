#include "flagstore/scheduler.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <vector>

#include "flagstore/transport.hpp"

namespace flagstore {

struct ThreadScheduler::State {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  TaskId next = 1;
  std::map<std::pair<std::chrono::steady_clock::time_point, TaskId>, std::function<void()>> tasks;

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      if (tasks.empty()) {
        wake.wait(lock);
        continue;
      }
      const auto first = tasks.begin();
      // A copy: cancel() may erase this task while the thread waits for it.
      const auto due = first->first.first;
      if (due > std::chrono::steady_clock::now()) {
        wake.wait_until(lock, due);
        continue;
      }
      auto task = std::move(first->second);
      tasks.erase(first);
      lock.unlock();
      task();
      task = nullptr;  // what the task holds is released outside the lock
      lock.lock();
    }
    tasks.clear();
  }
};

ThreadScheduler::ThreadScheduler() : state_(std::make_shared<State>()) {
  auto state = state_;
  thread_ = std::thread([state] { state->run(); });
}

ThreadScheduler::~ThreadScheduler() { shutdown(); }

void ThreadScheduler::shutdown() {
  std::map<std::pair<std::chrono::steady_clock::time_point, TaskId>, std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    dropped.swap(state_->tasks);
    state_->wake.notify_all();
  }
  dropped.clear();
  if (thread_.joinable()) {
    // From one of its own tasks the thread cannot be joined: it ends by itself once that task returns.
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

Scheduler::TaskId ThreadScheduler::schedule(std::int64_t delayMs, std::function<void()> task) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const TaskId id = state_->next++;
  if (state_->stopping) return id;
  const auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(delayMs < 0 ? 0 : delayMs);
  state_->tasks.emplace(std::make_pair(due, id), std::move(task));
  state_->wake.notify_all();
  return id;
}

void ThreadScheduler::cancel(TaskId id) {
  std::function<void()> dropped;
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (auto it = state_->tasks.begin(); it != state_->tasks.end(); ++it) {
    if (it->first.second == id) {
      dropped = std::move(it->second);
      state_->tasks.erase(it);
      break;
    }
  }
}

std::int64_t ThreadScheduler::nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Scheduler::TaskId ManualScheduler::schedule(std::int64_t delayMs, std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  const TaskId id = next_++;
  tasks_.emplace(std::make_pair(now_ + (delayMs < 0 ? 0 : delayMs), id), std::move(task));
  return id;
}

void ManualScheduler::cancel(TaskId id) {
  std::function<void()> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    if (it->first.second == id) {
      dropped = std::move(it->second);
      tasks_.erase(it);
      break;
    }
  }
}

std::int64_t ManualScheduler::nowMs() {
  std::lock_guard<std::mutex> lock(mutex_);
  return now_;
}

void ManualScheduler::advance(std::int64_t ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::int64_t until = now_ + ms;
  for (;;) {
    const auto first = tasks_.begin();
    if (first == tasks_.end() || first->first.first > until) break;
    now_ = std::max(now_, first->first.first);
    auto task = std::move(first->second);
    tasks_.erase(first);
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
  }
  now_ = until;
}

std::size_t ManualScheduler::pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return tasks_.size();
}

std::int64_t ManualScheduler::nextDelay() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (tasks_.empty()) return -1;
  return tasks_.begin()->first.first - now_;
}

// transport.hpp's small parts live here: they need no I/O.
std::optional<std::string> Headers::get(std::string_view name) const {
  for (const auto& [key, value] : entries_) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; i++) same = std::tolower(static_cast<unsigned char>(key[i])) == std::tolower(static_cast<unsigned char>(name[i]));
    if (same) return value;
  }
  return std::nullopt;
}

std::shared_ptr<Cancellable> Transport::stream(const HttpRequest&, StreamCallbacks callbacks) {
  if (callbacks.end) callbacks.end("this transport cannot stream", false);
  return nullptr;
}

}  // namespace flagstore
