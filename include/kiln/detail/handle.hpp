// SPDX-License-Identifier: Apache-2.0
// One RAII owner for every backend's raw handles (cl_mem, CUstream, ...), parametrised by traits.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <utility>

namespace kiln::detail {

/// Traits supply the raw type, the null value, release() (noexcept; errors are swallowed there
/// since destructors must not throw) and, for reference-counted APIs, retain().
template <class Traits>
concept handle_traits = requires(typename Traits::value_type raw) {
    { Traits::null() } -> std::same_as<typename Traits::value_type>;
    { Traits::release(raw) }
    noexcept;
};

template <class Traits>
concept retainable_handle_traits = handle_traits<Traits> &&
    requires(typename Traits::value_type raw) {
    { Traits::retain(raw) }
    noexcept;
};

template <handle_traits Traits>
class handle {
  public:
    using value_type = typename Traits::value_type;

    handle() noexcept = default;
    /// Takes ownership of a raw handle that already holds one reference.
    explicit handle(value_type raw) noexcept : raw_(raw) {}

    handle(const handle& other) noexcept requires retainable_handle_traits<Traits>
        : raw_(other.raw_) {
        if (raw_ != Traits::null()) Traits::retain(raw_);
    }
    handle& operator=(const handle& other) noexcept requires retainable_handle_traits<Traits> {
        handle copy(other);
        swap(copy);
        return *this;
    }
    handle(handle&& other) noexcept : raw_(std::exchange(other.raw_, Traits::null())) {}
    handle& operator=(handle&& other) noexcept {
        handle moved(std::move(other));
        swap(moved);
        return *this;
    }
    ~handle() { reset(); }

    value_type get() const noexcept { return raw_; }
    explicit operator bool() const noexcept { return raw_ != Traits::null(); }
    /// Gives up ownership without releasing.
    value_type release() noexcept { return std::exchange(raw_, Traits::null()); }
    void reset() noexcept {
        if (raw_ != Traits::null()) Traits::release(std::exchange(raw_, Traits::null()));
    }
    void swap(handle& other) noexcept { std::swap(raw_, other.raw_); }

  private:
    value_type raw_ = Traits::null();
};

}  // namespace kiln::detail
#pragma GCC visibility pop
