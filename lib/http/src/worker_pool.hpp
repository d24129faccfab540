#pragma once
// A fixed set of threads running tasks from a bounded queue: where the server runs handlers that
// may block, so that they never hold an I/O thread. Internal to restarter::http.
//
// Fair across client addresses (docs/architecture.md, "Bounded servers"): each address has its own
// queue and the threads take from them in turn (round robin), so a task waits for at most one task
// of each other address with tasks queued, however many the others queued. When the queue is full
// a task from an address holding fewer queued tasks than the address holding most takes the place
// of that address's newest task, which is dropped (its `dropped` callback runs); otherwise it is
// refused. So a flood from one address or from many cannot keep another address's request out.
//
// Thread-safety: tryPost() from any thread; stop() from the owning thread. The queues and the flag
// are guarded by one mutex; callbacks run outside it.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace restarter::http::detail {

class WorkerPool {
 public:
  struct Task {
    std::function<void()> run;      // on a worker thread; must not throw
    std::function<void()> dropped;  // when it gave its place to another address's task; must not throw
  };

  // Starts `threads` threads (fewer if the system refuses more; with none every tryPost fails).
  WorkerPool(std::size_t threads, std::size_t maxQueued);
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` for `source` (a client address); false, and `task` is dropped without its
  // callback, when `maxQueued` tasks already wait and no address holds more of them than
  // `source`, when no thread runs, or after stop(). When an address holds more, its newest task's
  // `dropped` runs (on this thread, after the lock is let go) and `task` takes its place.
  bool tryPost(const std::string& source, Task task);
  // Lets running tasks finish, drops queued ones (destroying them on this thread, without their
  // callbacks), joins. Idempotent.
  void stop();

 private:
  void run();

  const std::size_t maxQueued_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::unordered_map<std::string, std::deque<Task>> queues_;  // per address, none empty
  std::list<std::string> turn_;                               // addresses with tasks, next first
  std::size_t queued_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace restarter::http::detail
