#pragma once
// A fixed set of threads running tasks from a bounded queue: where the server runs handlers that
// may block, so that they never hold an I/O thread. Internal to restarter::http.
//
// Thread-safety: tryPost() from any thread; stop() from the owning thread. The queue and the flag
// are guarded by one mutex.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace restarter::http::detail {

class WorkerPool {
 public:
  // Starts `threads` threads (fewer if the system refuses more; with none every tryPost fails).
  WorkerPool(std::size_t threads, std::size_t maxQueued);
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false, and `task` is dropped, when `maxQueued` tasks already wait, when no
  // thread runs, or after stop(). Tasks must not throw.
  bool tryPost(std::function<void()> task);
  // Lets running tasks finish, drops queued ones (destroying them on this thread), joins.
  // Idempotent.
  void stop();

 private:
  void run();

  const std::size_t maxQueued_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace restarter::http::detail
