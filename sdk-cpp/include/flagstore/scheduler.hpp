#pragma once
// Every deliberate wait of the client (the poll interval, backoff, Retry-After, stream reconnects, request deadlines)
// goes through a Scheduler, so a test, or a game loop with its own clock, decides when time passes. All of the
// client's work runs as the scheduler's tasks, one at a time.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace flagstore {

class Scheduler {
 public:
  using TaskId = std::uint64_t;
  virtual ~Scheduler() = default;
  /** Runs `task` once, `delayMs` from now (0: as soon as possible, after the tasks already due). Thread-safe. */
  virtual TaskId schedule(std::int64_t delayMs, std::function<void()> task) = 0;
  /** A task not yet started never runs. Thread-safe. */
  virtual void cancel(TaskId id) = 0;
  /** Milliseconds since the epoch: what Retry-After's dates are measured against. */
  virtual std::int64_t nowMs() = 0;
};

/** Runs tasks on a thread of its own, by the steady clock; nowMs() is the system clock. */
class ThreadScheduler : public Scheduler {
 public:
  ThreadScheduler();
  ~ThreadScheduler() override;
  TaskId schedule(std::int64_t delayMs, std::function<void()> task) override;
  void cancel(TaskId id) override;
  std::int64_t nowMs() override;
  /** Drops what is pending and ends the thread (waits for a task under way, unless called from one). */
  void shutdown();

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

/**
 * Time moves only when told: tests (no sleeps), or a game loop that calls advance() from its tick. Tasks run on the
 * thread that calls advance() or runDue().
 */
class ManualScheduler : public Scheduler {
 public:
  explicit ManualScheduler(std::int64_t startMs = 1700000000000) : now_(startMs) {}
  TaskId schedule(std::int64_t delayMs, std::function<void()> task) override;
  void cancel(TaskId id) override;
  std::int64_t nowMs() override;
  /** Moves time forward by `ms`, running every task that falls due on the way, each at its own time. */
  void advance(std::int64_t ms);
  /** Runs the tasks due now (and those they schedule for now). */
  void runDue() { advance(0); }
  /** Tasks waiting. */
  std::size_t pending();
  /** How long until the next task is due; -1 when none waits. */
  std::int64_t nextDelay();

 private:
  std::mutex mutex_;
  std::int64_t now_;
  TaskId next_ = 1;
  /** (due, id) → task: tasks due at the same time run in the order they were scheduled. */
  std::map<std::pair<std::int64_t, TaskId>, std::function<void()>> tasks_;
};

}  // namespace flagstore
