#include "worker_pool.hpp"

#include <system_error>
#include <utility>

namespace restarter::http::detail {

WorkerPool::WorkerPool(std::size_t threads, std::size_t maxQueued) : maxQueued_(maxQueued) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    try {
      threads_.emplace_back([this] { run(); });
    } catch (const std::system_error&) {
      break;  // the system refuses more threads: serve with those we have
    }
  }
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::tryPost(const std::string& source, Task task) {
  Task displaced;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || threads_.empty() || maxQueued_ == 0) return false;
    if (queued_ >= maxQueued_) {
      const auto own = queues_.find(source);
      const std::size_t mine = own == queues_.end() ? 0 : own->second.size();
      auto most = queues_.end();
      for (auto it = queues_.begin(); it != queues_.end(); ++it) {
        if (most == queues_.end() || it->second.size() > most->second.size()) most = it;
      }
      if (most == queues_.end() || most->second.size() <= mine + 1) return false;
      displaced = std::move(most->second.back());
      most->second.pop_back();
      --queued_;
      if (most->second.empty()) {
        turn_.remove(most->first);
        queues_.erase(most);
      }
    }
    auto& queue = queues_[source];
    if (queue.empty()) turn_.push_back(source);
    queue.push_back(std::move(task));
    ++queued_;
  }
  wake_.notify_one();
  if (displaced.dropped) displaced.dropped();
  return true;
}

void WorkerPool::stop() {
  std::unordered_map<std::string, std::deque<Task>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropped.swap(queues_);
    turn_.clear();
    queued_ = 0;
  }
  wake_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // `dropped` is destroyed here, outside the lock: a task may own the last reference to a
  // connection, whose destructor takes the server's own lock.
}

void WorkerPool::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || queued_ > 0; });
    if (stopping_) return;
    // The address whose turn it is gives its oldest task, and goes to the back of the turn.
    const std::string source = std::move(turn_.front());
    turn_.pop_front();
    auto it = queues_.find(source);
    Task task = std::move(it->second.front());
    it->second.pop_front();
    --queued_;
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      turn_.push_back(source);
    }
    lock.unlock();
    task.run();
    task = Task{};  // release what it captured before waiting again
    lock.lock();
  }
}

}  // namespace restarter::http::detail
