#include "worker_pool.hpp"

#include <system_error>

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

bool WorkerPool::tryPost(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || threads_.empty() || queue_.size() >= maxQueued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
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
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // release what it captured before waiting again
    lock.lock();
  }
}

}  // namespace restarter::http::detail
