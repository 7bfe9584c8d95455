// SPDX-License-Identifier: Apache-2.0
// A variable replaced while an object lives and put back when it dies: what kiln's test-only
// overrides (tuning policies, forward progress, sparse layouts) are made of.
#pragma once
#pragma GCC visibility push(default)

#include <mutex>
#include <utility>

namespace kiln::detail {

/// Sets `variable` to `value` under `mutex` while alive; restores the value it replaced when
/// destroyed. Neither copyable nor movable, so that the value is put back exactly once. Readers
/// of the variable take the same mutex.
template <class T>
class scoped_override {
  public:
    scoped_override(T& variable, T value, std::mutex& mutex) : variable_(variable), mutex_(mutex) {
        std::lock_guard lock(mutex_);
        previous_ = std::exchange(variable_, std::move(value));
    }
    ~scoped_override() {
        std::lock_guard lock(mutex_);
        variable_ = std::move(previous_);
    }
    scoped_override(const scoped_override&) = delete;
    scoped_override& operator=(const scoped_override&) = delete;

  private:
    T& variable_;
    std::mutex& mutex_;
    T previous_{};
};

}  // namespace kiln::detail
#pragma GCC visibility pop
