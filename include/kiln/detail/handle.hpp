// SPDX-License-Identifier: Apache-2.0
// One RAII owner for every backend's raw handles (cl_mem, CUstream, ...), parametrised by traits:
// owned handles (kiln's own objects, and objects adopted from a program through kiln/interop) and
// borrowed ones (a program's objects that kiln uses but never releases).
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
    /// A handle on an object someone else owns and keeps alive: neither its copies nor its
    /// destruction retain or release it.
    static handle borrowed(value_type raw) noexcept {
        handle borrowing(raw);
        borrowing.owned_ = false;
        return borrowing;
    }

    handle(const handle& other) noexcept requires retainable_handle_traits<Traits>
        : raw_(other.raw_), owned_(other.owned_) {
        if (owned_ && raw_ != Traits::null()) Traits::retain(raw_);
    }
    handle& operator=(const handle& other) noexcept requires retainable_handle_traits<Traits> {
        handle copy(other);
        swap(copy);
        return *this;
    }
    handle(handle&& other) noexcept
        : raw_(std::exchange(other.raw_, Traits::null())),
          owned_(std::exchange(other.owned_, true)) {}
    handle& operator=(handle&& other) noexcept {
        handle moved(std::move(other));
        swap(moved);
        return *this;
    }
    ~handle() { reset(); }

    value_type get() const noexcept { return raw_; }
    explicit operator bool() const noexcept { return raw_ != Traits::null(); }
    /// False for a borrowed handle.
    bool owned() const noexcept { return owned_; }
    /// Gives up ownership without releasing.
    value_type release() noexcept {
        owned_ = true;
        return std::exchange(raw_, Traits::null());
    }
    void reset() noexcept {
        const value_type raw = std::exchange(raw_, Traits::null());
        const bool owned = std::exchange(owned_, true);
        if (owned && raw != Traits::null()) Traits::release(raw);
    }
    void swap(handle& other) noexcept {
        std::swap(raw_, other.raw_);
        std::swap(owned_, other.owned_);
    }

  private:
    value_type raw_ = Traits::null();
    bool owned_ = true;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
