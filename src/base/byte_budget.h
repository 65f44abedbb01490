// SPDX-License-Identifier: Apache-2.0
// A budget of bytes held at once across threads (the service's decoded images in flight), and
// the reservations that hold parts of it. A reservation gives its bytes back when it is
// destroyed, so every path out of a request (an error, a cancel, the end of its generation)
// returns what it took.
//
//   ByteBudget images(1 << 30);
//   std::optional<ByteReservation> held = images.TryReserve(need);
//   if (!held) return Busy();            // full now: a condition that passes (503)
//   ...                                  // decode
//   held->ShrinkTo(kept);                // scratch given back, pixels still held
//
// Invariant: in_use() is the sum of the bytes of the live reservations, and never exceeds
// capacity(). Thread-safe; a reservation itself is used by one thread at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

#include "base/status.h"

namespace mineru {

class ByteBudget;

// Bytes taken from a ByteBudget. Move-only; an empty (default) reservation holds nothing.
class ByteReservation {
 public:
  ByteReservation() = default;
  ByteReservation(ByteReservation&& other) noexcept;
  ByteReservation& operator=(ByteReservation&& other) noexcept;
  ByteReservation(const ByteReservation&) = delete;
  ByteReservation& operator=(const ByteReservation&) = delete;
  ~ByteReservation() { Release(); }

  uint64_t bytes() const { return bytes_; }

  // Takes `more` bytes as well when they fit now; false (nothing taken) when they do not. An
  // empty reservation has no budget and cannot grow.
  bool TryGrow(uint64_t more);
  // Gives back everything above `bytes` (nothing when it holds `bytes` or less).
  void ShrinkTo(uint64_t bytes);
  // Gives back everything; the reservation is then empty.
  void Release();

 private:
  friend class ByteBudget;
  ByteReservation(ByteBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}

  ByteBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t capacity) : capacity_(capacity) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;
  // Every reservation must be gone first (checked).
  ~ByteBudget();

  uint64_t capacity() const { return capacity_; }
  uint64_t in_use() const;
  // The most bytes reserved at once since construction (tests and metrics).
  uint64_t peak() const;
  // Reserve calls waiting for room now (tests and metrics).
  int waiters() const;

  // `bytes` now, or nullopt when they do not fit beside what is reserved. Zero bytes always fit.
  std::optional<ByteReservation> TryReserve(uint64_t bytes);
  // Waits until `bytes` fit. kResourceExhausted at once when bytes > capacity() (they never
  // will); kCancelled when `cancel` is set and turns true (checked at least every 50 ms).
  // Waiters are not served in order: a small reservation may pass a large one that waits.
  Result<ByteReservation> Reserve(uint64_t bytes, const std::atomic<bool>* cancel = nullptr);

 private:
  friend class ByteReservation;
  bool TakeLocked(uint64_t bytes);
  void Give(uint64_t bytes);

  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  uint64_t in_use_ = 0;
  uint64_t peak_ = 0;
  int waiters_ = 0;
};

}  // namespace mineru
