// SPDX-License-Identifier: Apache-2.0
#include "base/byte_budget.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace mineru {
namespace {

// How often a blocked Reserve looks at its cancel flag (an atomic cannot wake a condition).
constexpr std::chrono::milliseconds kCancelPoll{50};

}  // namespace

ByteReservation::ByteReservation(ByteReservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ByteReservation& ByteReservation::operator=(ByteReservation&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool ByteReservation::TryGrow(uint64_t more) {
  if (more == 0) return true;
  if (budget_ == nullptr) return false;
  std::lock_guard lock(budget_->mutex_);
  if (!budget_->TakeLocked(more)) return false;
  bytes_ += more;
  return true;
}

void ByteReservation::ShrinkTo(uint64_t bytes) {
  if (budget_ == nullptr || bytes >= bytes_) return;
  const uint64_t given = bytes_ - bytes;
  bytes_ = bytes;
  budget_->Give(given);
}

void ByteReservation::Release() {
  if (budget_ == nullptr) return;
  const uint64_t given = std::exchange(bytes_, 0);
  ByteBudget* budget = std::exchange(budget_, nullptr);
  if (given > 0) budget->Give(given);
}

ByteBudget::~ByteBudget() {
  std::lock_guard lock(mutex_);
  MINERU_CHECK(in_use_ == 0, "a ByteBudget destroyed with {} bytes still reserved", in_use_);
}

uint64_t ByteBudget::in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

uint64_t ByteBudget::peak() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

int ByteBudget::waiters() const {
  std::lock_guard lock(mutex_);
  return waiters_;
}

bool ByteBudget::TakeLocked(uint64_t bytes) {
  // Written as a subtraction: in_use_ <= capacity_ always, so this cannot wrap.
  if (bytes > capacity_ - in_use_) return false;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  return true;
}

void ByteBudget::Give(uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    MINERU_CHECK(bytes <= in_use_, "giving back {} bytes of {} reserved", bytes, in_use_);
    in_use_ -= bytes;
  }
  // Every waiter: a release may let several smaller ones through.
  freed_.notify_all();
}

std::optional<ByteReservation> ByteBudget::TryReserve(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  if (!TakeLocked(bytes)) return std::nullopt;
  return ByteReservation(this, bytes);
}

Result<ByteReservation> ByteBudget::Reserve(uint64_t bytes, const std::atomic<bool>* cancel) {
  if (bytes > capacity_) {
    return Fail(ErrorCode::kResourceExhausted, "{} bytes can never fit in a budget of {} bytes",
                bytes, capacity_);
  }
  std::unique_lock lock(mutex_);
  ++waiters_;
  while (!TakeLocked(bytes)) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      --waiters_;
      return Fail(ErrorCode::kCancelled, "cancelled while waiting for {} bytes", bytes);
    }
    freed_.wait_for(lock, kCancelPoll);
  }
  --waiters_;
  return ByteReservation(this, bytes);
}

}  // namespace mineru
