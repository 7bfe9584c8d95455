// SPDX-License-Identifier: Apache-2.0
// kiln::vector: device vectors on one or several devices, assigned from fused vector expressions.
//
//     kiln::queue q(kiln::default_device());
//     kiln::vector<float> a(q, host_a), b(q, host_b), c(q, n);
//     c = a + 2 * sin(b);        // one generated kernel, built once, launched per assignment
//     float total = kiln::sum(c);
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <kiln/expr/assign.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/expr/functions.hpp>
#include <kiln/expr/launch.hpp>
#include <kiln/expr/members.hpp>
#include <kiln/expr/operators.hpp>
#include <kiln/expr/terminals.hpp>
#include <kiln/expr/views.hpp>
#include <kiln/random.hpp>
#include <kiln/reduce.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/queue.hpp>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// What split vectors weigh their devices by when they place elements.
enum class split_weighting {
    /// Memory bandwidth (the default): most expressions and reductions are memory-bound.
    memory_bandwidth,
    /// Compute units x clock (kiln's weighting before bandwidth), for compute-bound work.
    compute,
};

/// The weighting of split vectors built from now on, in every thread. Until it is called,
/// KILN_SPLIT_WEIGHTING (memory_bandwidth or compute) chooses, else memory_bandwidth.
void set_split_weighting(split_weighting weighting);
/// The weighting that split vectors built now take.
split_weighting current_split_weighting();

/// The memory bandwidth (bytes/s) split vectors weigh q's device by: the user's
/// (set_memory_bandwidth), else the driver's (CUDA: memory clock x bus width), else measured
/// once per process with a short copy kernel on q, shared by devices of the same model.
double memory_bandwidth(const queue& q);

/// Makes split vectors weigh `d` by `bytes_per_second`; 0 forgets it (driver or measurement
/// again). Throws invalid_argument_error for a negative or non-finite value.
void set_memory_bandwidth(const device& d, double bytes_per_second);

namespace detail {

/// Splits n elements over the queues' devices in proportion to current_split_weighting(), so
/// that every part finishes at about the same time.
layout split(std::span<const queue> queues, std::size_t n);

[[noreturn]] void throw_index_out_of_range(std::size_t index, std::size_t size);
[[noreturn]] void throw_no_queue(const char* call);
[[noreturn]] void throw_memory_elsewhere(const char* call);

template <class T>
class vector_terminal;

}  // namespace detail

/// Host data a vector can be built from or copied to: contiguous elements of exactly T.
template <class R, class T>
concept host_range_of = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, T>;

/// A vector of T in device memory. On one queue's device, or split over several devices (see
/// the constructors taking a span of queues): every expression then runs on each part, and
/// reductions combine the parts. Copies are deep; moves leave the source empty.
template <vector_value T>
class vector {
  public:
    using value_type = T;  ///< the element type

    /// An empty vector on no device; assign a vector to it, or construct it with a queue.
    vector() = default;
    /// n uninitialised elements.
    vector(const kiln::queue& q, std::size_t n) : vector(std::span<const kiln::queue>(&q, 1), n) {}
    /// n uninitialised elements split over the queues' devices in proportion to their speed.
    vector(std::span<const kiln::queue> queues, std::size_t n)
        : layout_(detail::split(queues, n)), size_(n) {
        for (const auto& part : layout_) buffers_.emplace_back(part.queue, part.size);
    }
    /// Uninitialised elements split as `parts` says (another vector's layout()), so that
    /// statements can take both vectors.
    explicit vector(const detail::layout& parts) : layout_(parts) {
        for (const auto& part : layout_) {
            buffers_.emplace_back(part.queue, part.size);
            size_ += part.size;
        }
    }
    /// A vector whose elements are `memory`'s, shared and not copied: memory that a program
    /// made itself (kiln/interop), used in place. It must be on q's device.
    vector(const kiln::queue& q, buffer<T> memory)
        : layout_{detail::part_extent{q, 0, memory.size()}}, size_(memory.size()) {
        if (!(memory.device() == q.device())) detail::throw_memory_elsewhere("kiln::vector");
        buffers_.push_back(std::move(memory));
    }
    /// A copy of host data (blocks until it is on the device).
    template <host_range_of<T> R>
    vector(const kiln::queue& q, const R& host) : vector(q, std::ranges::size(host)) {
        write(std::span<const T>(std::ranges::data(host), std::ranges::size(host)));
    }
    /// A copy of host data split over the queues' devices (blocks until it is there).
    template <host_range_of<T> R>
    vector(std::span<const kiln::queue> queues, const R& host)
        : vector(queues, std::ranges::size(host)) {
        write(std::span<const T>(std::ranges::data(host), std::ranges::size(host)));
    }
    /// A copy of the listed values (blocks until they are on the device).
    vector(const kiln::queue& q, std::initializer_list<T> host)
        : vector(q, std::span<const T>(host.begin(), host.size())) {}
    /// A copy of [first, last), converted to T.
    template <std::input_iterator I, std::sentinel_for<I> S>
    requires std::convertible_to<std::iter_value_t<I>, T> vector(const kiln::queue& q, I first,
                                                                 S last)
        : vector(q, std::vector<T>(first, last)) {}

    /// A deep copy on other's queues, split alike: device copies, no host round trip.
    vector(const vector& other) : layout_(other.layout_), size_(other.size_) {
        for (std::size_t k = 0; k < layout_.size(); ++k) {
            buffers_.emplace_back(layout_[k].queue, layout_[k].size);
            if (layout_[k].size > 0) other.buffers_[k].copy_to(layout_[k].queue, buffers_[k]);
        }
    }
    /// Takes `other`'s memory, leaving it empty.
    vector(vector&& other) noexcept
        : layout_(std::move(other.layout_)),
          buffers_(std::move(other.buffers_)),
          size_(std::exchange(other.size_, 0)) {
        other.layout_.clear();
        other.buffers_.clear();
    }
    /// Makes this a copy of `other`: in place when both are split alike over the same devices,
    /// otherwise on other's queues (value semantics, like std::vector).
    vector& operator=(const vector& other) {
        if (this == &other) return *this;
        if (same_split(other)) {
            for (std::size_t k = 0; k < layout_.size(); ++k)
                if (layout_[k].size > 0) other.buffers_[k].copy_to(layout_[k].queue, buffers_[k]);
        } else {
            vector copy(other);
            swap(copy);
        }
        return *this;
    }
    /// Takes `other`'s memory, leaving it empty; this vector's own is released.
    vector& operator=(vector&& other) noexcept {
        vector moved(std::move(other));
        swap(moved);
        return *this;
    }

    /// Evaluates the expression for every element in one kernel launch per device part. Sizes and
    /// devices must match (invalid_argument_error otherwise).
    template <class E>
    requires(!std::same_as<std::remove_cvref_t<E>, vector>) &&
        vector_expression<E>&& detail::assignable_to<detail::vector_terminal<T>, E> vector&
        operator=(const E& expression) {
        // Expressions with a faster kernel of their own when they are the whole statement
        // (stencils' local-memory tiles) take it.
        if constexpr (requires { expression.assign_to(*this); })
            expression.assign_to(*this);
        else
            detail::assign(detail::vector_terminal<T>(*this), expression,
                           "kiln::vector assignment");
        return *this;
    }
    /// Statements that generate and launch their own kernel, e.g. a sparse matrix product
    /// `y = f - A * x` (include/kiln/sparse.hpp).
    template <class S>
    requires(!vector_expression<S>) && requires(const S& s, vector& v) { s.assign_to(v); }
    vector& operator=(const S& statement) {
        statement.assign_to(*this);
        return *this;
    }
    /// Sets every element (a fill, no kernel to build). Vectors of half, bfloat16 and the FP8
    /// types take a number (converted to float, then rounded once to T) or a T.
    template <scalar_value S>
    requires detail::storable_as<detail::computed_t<T>, S> vector& operator=(const S& value) {
        return fill(static_cast<T>(static_cast<detail::computed_t<T>>(value)));
    }
    /// Sets every element of a half, bfloat16 or FP8 vector to `value`, bit for bit.
    vector& operator=(const T& value) requires detail::is_narrow_float_v<T> { return fill(value); }

    ///@{
    /// x op= e is x = x op e: one kernel that reads and writes x.
    template <expression_operand E>
    requires detail::binary_operands<detail::plus_op, vector, E> vector& operator+=(const E& e) {
        return *this = *this + e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::minus_op, vector, E> vector& operator-=(const E& e) {
        return *this = *this - e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::multiplies_op, vector, E> vector& operator*=(
        const E& e) {
        return *this = *this * e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::divides_op, vector, E> vector& operator/=(const E& e) {
        return *this = *this / e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::modulus_op, vector, E> vector& operator%=(const E& e) {
        return *this = *this % e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::bit_and_op, vector, E> vector& operator&=(const E& e) {
        return *this = *this & e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::bit_or_op, vector, E> vector& operator|=(const E& e) {
        return *this = *this | e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::bit_xor_op, vector, E> vector& operator^=(const E& e) {
        return *this = *this ^ e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::shift_left_op, vector, E> vector& operator<<=(
        const E& e) {
        return *this = *this << e;
    }
    template <expression_operand E>
    requires detail::binary_operands<detail::shift_right_op, vector, E> vector& operator>>=(
        const E& e) {
        return *this = *this >> e;
    }
    ///@}

    /// The number of elements, over every device part.
    std::size_t size() const noexcept { return size_; }
    /// Whether it holds no elements.
    bool empty() const noexcept { return size_ == 0; }

    /// How the elements are split over devices: one entry per part, in element order.
    const detail::layout& layout() const noexcept { return layout_; }
    /// The number of device parts: 1 for a vector on one device, 0 for one on none.
    std::size_t part_count() const noexcept { return layout_.size(); }
    /// The device memory of one part.
    const buffer<T>& part(std::size_t k) const { return buffers_.at(k); }
    /// The queue that part k's work goes to.
    const kiln::queue& queue(std::size_t k = 0) const {
        if (layout_.empty()) detail::throw_no_queue("kiln::vector::queue");
        return layout_.at(k).queue;
    }

    // --- host transfers -------------------------------------------------------------------

    /// Copies host data in (exactly size() elements), blocking until done.
    void write(std::span<const T> host, const wait_list& after = {}) const {
        check_host_size("kiln::vector::write", host.size());
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (layout_[k].size > 0)
                buffers_[k].write(layout_[k].queue, 0,
                                  host.subspan(layout_[k].begin, layout_[k].size), after);
    }
    /// Starts copying host data in and returns at once, with one event per device part; `host`
    /// must stay alive until they complete.
    std::vector<event> write_async(std::span<const T> host, const wait_list& after = {}) const {
        check_host_size("kiln::vector::write_async", host.size());
        std::vector<event> done;
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (layout_[k].size > 0)
                done.push_back(buffers_[k].write_async(
                    layout_[k].queue, 0, host.subspan(layout_[k].begin, layout_[k].size), after));
        return done;
    }
    /// Copies the elements out into `host` (exactly size() elements), blocking until done.
    void read(std::span<T> host, const wait_list& after = {}) const {
        check_host_size("kiln::vector::read", host.size());
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (layout_[k].size > 0)
                buffers_[k].read(layout_[k].queue, 0,
                                 host.subspan(layout_[k].begin, layout_[k].size), after);
    }
    /// The elements, copied out once `after` has completed.
    std::vector<T> read(const wait_list& after = {}) const {
        std::vector<T> host(size_);
        read(host, after);
        return host;
    }
    /// Starts copying the elements out and returns at once, with one event per device part;
    /// `host` is filled when they complete.
    std::vector<event> read_async(std::span<T> host, const wait_list& after = {}) const {
        check_host_size("kiln::vector::read_async", host.size());
        std::vector<event> done;
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (layout_[k].size > 0)
                done.push_back(buffers_[k].read_async(
                    layout_[k].queue, 0, host.subspan(layout_[k].begin, layout_[k].size), after));
        return done;
    }

    // --- single elements (slow: one transfer each) ---------------------------------------

    /// What x[i] gives on a non-const vector: reads and writes of one element, each a transfer.
    class element_reference {
      public:
        /// Reads the element from the device.
        operator T() const { return owner_->get(index_); }  // NOLINT: reads like a T&
        /// Writes the element to the device, blocking.
        const element_reference& operator=(const T& value) const {
            owner_->set(index_, value);
            return *this;
        }
        /// Copies another element's value: x[i] = y[j] reads y[j], then writes x[i].
        const element_reference& operator=(const element_reference& other) const {
            return *this = static_cast<T>(other);
        }

      private:
        friend class vector;
        element_reference(const vector* owner, std::size_t index) : owner_(owner), index_(index) {}
        const vector* owner_;
        std::size_t index_;
    };

    /// Element `index`, to read or write (one transfer each); invalid_argument_error past the
    /// end when it is used.
    element_reference operator[](std::size_t index) { return element_reference(this, index); }
    /// Element `index`, read from the device; invalid_argument_error past the end.
    T operator[](std::size_t index) const { return get(index); }

    /// Changes the size, keeping the first min(size(), n) elements; new elements are
    /// uninitialised. A split vector is re-split over the same devices.
    void resize(std::size_t n) {
        if (n == size_) return;
        if (layout_.empty()) detail::throw_no_queue("kiln::vector::resize");
        std::vector<kiln::queue> queues;
        for (const auto& part : layout_) queues.push_back(part.queue);
        vector resized(queues, n);
        const std::size_t kept = std::min(n, size_);
        if (layout_.size() == 1) {
            if (kept > 0) buffers_[0].copy_to(layout_[0].queue, 0, resized.buffers_[0], 0, kept);
        } else if (kept > 0) {
            // Parts move between devices: go through the host rather than pairing up overlaps.
            std::vector<T> host = read();
            host.resize(n);
            resized.write(host);
        }
        swap(resized);
    }

    /// Exchanges the two vectors' memory and devices, without copying elements.
    void swap(vector& other) noexcept {
        layout_.swap(other.layout_);
        buffers_.swap(other.buffers_);
        std::swap(size_, other.size_);
    }
    /// a.swap(b).
    friend void swap(vector& a, vector& b) noexcept { a.swap(b); }

  private:
    template <vector_value, std::size_t>
    friend class multivector;
    /// The vector of `buffers`, one per part of `parts` and of its size (a multivector's
    /// component, a range of the multivector's allocation).
    vector(detail::layout parts, std::vector<buffer<T>> buffers, std::size_t size)
        : layout_(std::move(parts)), buffers_(std::move(buffers)), size_(size) {}

    vector& fill(const T& value) {
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (layout_[k].size > 0) buffers_[k].fill(layout_[k].queue, value);
        return *this;
    }
    bool same_split(const vector& other) const {
        if (size_ != other.size_ || layout_.size() != other.layout_.size() || layout_.empty())
            return false;
        for (std::size_t k = 0; k < layout_.size(); ++k)
            if (!(layout_[k].queue.device() == other.layout_[k].queue.device()) ||
                layout_[k].begin != other.layout_[k].begin ||
                layout_[k].size != other.layout_[k].size)
                return false;
        return true;
    }
    void check_host_size(const char* call, std::size_t host_size) const {
        if (host_size != size_) detail::throw_size_mismatch(call, size_, host_size);
    }
    std::size_t part_of(std::size_t index) const {
        if (index >= size_) detail::throw_index_out_of_range(index, size_);
        std::size_t k = 0;
        while (index >= layout_[k].begin + layout_[k].size) ++k;
        return k;
    }
    T get(std::size_t index) const {
        const std::size_t k = part_of(index);
        return buffers_[k].read_element(layout_[k].queue, index - layout_[k].begin);
    }
    void set(std::size_t index, const T& value) const {
        const std::size_t k = part_of(index);
        buffers_[k].write(layout_[k].queue, index - layout_[k].begin,
                          std::span<const T>(&value, 1));
    }

    detail::layout layout_;
    std::vector<buffer<T>> buffers_;
    std::size_t size_ = 0;
};

namespace detail {

/// A vector read element by element (or written, as an assignment's target).
template <class T>
class vector_terminal : public expression_tag {
  public:
    using value_type = computed_t<T>;
    using storage = element_storage<T>;
    // Wide accesses are safe: a vector part is a whole device allocation, aligned far beyond
    // 16 bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN, cudaMalloc's 256 bytes). 16-bit elements go
    // eight to a 16-byte access, FP8 ones sixteen, as their bits (element_storage::lane_type).
    static constexpr std::size_t contiguous_width =
        (std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) || is_narrow_float_v<T>
            ? sizeof(T)
            : 0;
    // half has OpenCL C's vector loads and stores (vload_half8...), the others kiln's helpers.
    static constexpr bool vector_form = vector_form_value<T> || is_narrow_float_v<T>;

    explicit vector_terminal(const kiln::vector<T>& v) : vector_(&v) {}

    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        declare(g, name);
        return value_of(g, name);
    }
    std::string generate_target(generator& g) const {
        const std::string name = g.new_name();
        if (g.lane()) return g.wide_element(name, storage::lane_type(), true);
        // The vector pass's target is the address its vstore writes to.
        if (g.vector_width()) return name + " + idx";
        declare_type<T>(g.source);
        g.parameter("global " + opencl_type_name<T>() + "*", name);
        return element_storage<T>::target(name, "idx");
    }
    void collect(argument_list& args) const { pass(args); }
    void check(operand_check& c) const { c.elementwise(vector_->layout(), vector_->size()); }
    const layout& written_layout() const noexcept { return vector_->layout(); }

    void declare(generator& g, const std::string& name) const {
        declare_type<T>(g.source);
        g.parameter("global const " + opencl_type_name<T>() + "*", name);
    }
    std::string value_of(generator& g, const std::string& name) const {
        if (auto kept = g.forwarded(name)) return *kept;
        if (g.lane())
            return storage::lane_storage::load(g.wide_element(name, storage::lane_type(), false));
        if constexpr (vector_form)
            if (g.vector_width())
                return element_storage<T>::vector_load(*g.vector_width(), name + " + idx");
        return element_storage<T>::load(name, "idx");
    }
    void pass(argument_list& args) const {
        args.buffer(vector_->part(args.part()));
        args.vector_identity(&vector_->layout());
    }

  private:
    const kiln::vector<T>* vector_;
};

template <vector_value T>
struct terminal_for<kiln::vector<T>> {
    static vector_terminal<T> make(const kiln::vector<T>& v) { return vector_terminal<T>(v); }
};

}  // namespace detail

/// The OpenCL C source that `target = value` compiles to on `dev` (what KILN_SHOW_KERNELS=1
/// prints), for inspection and tests.
template <vector_value T, vector_expression E>
requires detail::assignable_to<detail::vector_terminal<T>, E> std::string assignment_source(
    const device& dev, const vector<T>& target, const E& value) {
    auto node = detail::as_node_beside<T>(value);
    detail::assignment<std::tuple<detail::vector_terminal<T>>, std::tuple<decltype(node)>>
        statement({detail::vector_terminal<T>(target)}, {std::move(node)});
    return statement.source(detail::launch_policy_for(dev), detail::target_features_for(dev));
}

}  // namespace kiln
#pragma GCC visibility pop
