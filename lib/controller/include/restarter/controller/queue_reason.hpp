#pragma once
// Why a key was queued (docs/architecture.md, "Watches and dispatch"). The work queue keeps the
// reasons with the key (work_queue.hpp): a key queued for several reasons before a worker took it
// carries them all, and the worker names them in the reconcile's log lines and counts them in
// restarter_controller_reconcile_reasons_total{controller, reason} (metrics.hpp).
//
// Plain values: any thread.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace restarter::controller {

enum class QueueReason : std::uint8_t {
  ObjectChanged = 1 << 0,   // the key's own object was added, updated or deleted (a watch row)
  RelatedChanged = 1 << 1,  // an object that names it changed: a ConfigMap or Secret a workload
                            // references (a row with a mapper, reconciler_table.cpp)
  RequeueAfter = 1 << 2,    // the last reconcile asked to look again later (Action::requeueAfter)
  ErrorRetry = 1 << 3,      // the last reconcile failed and is retried after a backoff
  SlotFreed = 1 << 4,       // a rollout slot came free (--max-concurrent-rollouts, rollout_slots.hpp)
};

// Every reason, in the order names are listed.
inline constexpr std::array kQueueReasons = {QueueReason::ObjectChanged, QueueReason::RelatedChanged,
                                             QueueReason::RequeueAfter, QueueReason::ErrorRetry,
                                             QueueReason::SlotFreed};

// A set of reasons (bits of QueueReason).
class QueueReasons {
 public:
  constexpr QueueReasons() = default;
  constexpr QueueReasons(QueueReason reason) : bits_(static_cast<std::uint8_t>(reason)) {}  // NOLINT

  constexpr QueueReasons& operator|=(QueueReasons other) {
    bits_ = static_cast<std::uint8_t>(bits_ | other.bits_);
    return *this;
  }
  constexpr bool contains(QueueReason reason) const { return (bits_ & static_cast<std::uint8_t>(reason)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  friend constexpr bool operator==(QueueReasons, QueueReasons) = default;

 private:
  std::uint8_t bits_ = 0;
};

// "object-changed", "related-changed", "requeue-after", "error-retry", "slot-freed": the metric's
// label values.
std::string_view queueReasonName(QueueReason reason);
// The names of `reasons` in kQueueReasons' order, joined by ","; "" for none.
std::string queueReasonsText(QueueReasons reasons);

}  // namespace restarter::controller
