// SPDX-License-Identifier: Apache-2.0
// Sorting kiln::vectors: stable radix sort of numeric keys, stable merge sort for a comparator.
//
//     kiln::sort(keys);                          // ascending
//     kiln::sort(keys, kiln::descending);
//     kiln::sort_by_key(keys, values, weights);  // the values move with their keys
//     KILN_FUNCTION(int, by_magnitude, (float a, float b), return fabs(a) < fabs(b););
//     kiln::sort(keys, by_magnitude);            // a comparator: whether a goes before b
//
// Every sort is stable and returns once the vectors are sorted. See docs/sorting.md for the
// order of floating-point keys (NaNs, -0) and how vectors split over several devices are sorted.
#pragma once
#pragma GCC visibility push(default)

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <kiln/detail/element_storage.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/expr/functions.hpp>
#include <kiln/half.hpp>
#include <kiln/runtime/graph.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <kiln/vector.hpp>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// Sorts from the largest key to the smallest: `kiln::sort(keys, kiln::descending)`.
struct descending_order {
    explicit constexpr descending_order() = default;
};
inline constexpr descending_order descending{};  ///< `kiln::descending`: the order above

/// Keys that radix sort handles: 32- and 64-bit integers, float, double, kiln::half and
/// kiln::bfloat16 (the 16-bit ones in float's order, docs/sorting.md).
template <class T>
concept radix_sortable =
    (std::is_integral_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8)) ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || detail::is_binary16_v<T>;

/// Values that can move with sorted keys: any 4- or 8-byte element.
template <class T>
concept sort_value = vector_value<T> &&(sizeof(T) == 4 || sizeof(T) == 8);

namespace detail {

/// Radix sort of 16-, 32- or 64-bit keys with their kind spelled out for the type-erased code.
struct radix_key {
    int kind = 0;  ///< 0 unsigned integer, 1 signed integer, 2 floating point
    std::size_t bytes = 4;
    /// Floating point: the mantissa's bits, which tell where the NaNs start (half and bfloat16
    /// share their width, not their exponent).
    int mantissa_bits = 0;
};

template <class K>
inline constexpr bool is_floating_key_v = std::is_floating_point_v<K> || is_binary16_v<K>;

template <class K>
constexpr radix_key radix_key_of() {
    if constexpr (is_floating_key_v<K>)
        return {2, sizeof(K), std::numeric_limits<K>::digits - 1};
    else
        return {std::is_signed_v<K> ? 1 : 0, sizeof(K)};
}

/// One device buffer taking part in a sort, as its bytes: the kernels move keys as unsigned
/// integers of their width (floats and signed integers through order-preserving bit maps).
struct sort_operand {
    kernel_argument memory;
    std::size_t element_bytes = 0;
    /// The buffer behind `memory`, for the host sort's reads and writes; null for temporaries.
    const buffer_storage* storage = nullptr;
};

template <class T>
sort_operand sort_operand_of(const buffer<T>& b) {
    return {make_argument(kiln::reinterpret(b)), sizeof(T), &b.storage()};
}

/// A comparator's device source, for the type-erased merge sort.
struct sort_comparator {
    std::string source;  ///< the comparator's definition and those of the functions it calls
    /// The comparator applied to two keys held in variables `a` and `b`: 16-bit keys are ushort
    /// bits there, converted to float for the call.
    std::string call;
    std::string key_type;  ///< OpenCL C type of the keys in memory and in variables
};

/// Whether a sort's caller reads its keys afterwards: scratch keys (a segmented sort's segment
/// ids) may be left wherever the last pass wrote them.
enum class radix_sorted_keys { kept, discarded };

/// Sorts n keys on one device (and the values with them), in place, for `call`. Blocks until
/// done, except inside kiln::capture, which records it.
void radix_sort_part(std::string_view call, const queue& q, radix_key key, bool descending,
                     const sort_operand& keys, std::size_t n,
                     const std::vector<sort_operand>& values,
                     radix_sorted_keys sorted_keys = radix_sorted_keys::kept);
void merge_sort_part(const queue& q, const sort_comparator& comparator, const sort_operand& keys,
                     std::size_t n, const std::vector<sort_operand>& values);
/// Sorts floating-point keys of any width (and the values with them) on the host, in the radix
/// sort's order: where the device's floating-point radix sort is not trusted
/// (device_quirks::float_radix_sort_unreliable). Blocks.
void host_float_sort_part(const queue& q, radix_key key, bool descending, const sort_operand& keys,
                          std::size_t n, const std::vector<sort_operand>& values);

[[noreturn]] void throw_sort_layout_mismatch(std::string_view call);
[[noreturn]] void throw_sort_too_large(std::string_view call, std::size_t n);

/// Stable k-way merge of sorted runs in a host array (run k is [starts[k], starts[k+1])):
/// the permutation that merges them, ties going to the earlier run.
template <class Before>
std::vector<std::size_t> merge_sorted_runs(const std::vector<std::size_t>& starts,
                                           Before&& before) {
    std::vector<std::size_t> order(starts.back());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Pairwise rounds: each std::inplace_merge is stable and keeps the earlier run's ties first.
    std::vector<std::size_t> bounds = starts;
    while (bounds.size() > 2) {
        std::vector<std::size_t> merged{bounds[0]};
        for (std::size_t k = 0; k + 2 < bounds.size(); k += 2) {
            std::inplace_merge(order.begin() + static_cast<std::ptrdiff_t>(bounds[k]),
                               order.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]),
                               order.begin() + static_cast<std::ptrdiff_t>(bounds[k + 2]), before);
            merged.push_back(bounds[k + 2]);
        }
        if (bounds.size() % 2 == 0) merged.push_back(bounds.back());
        bounds = std::move(merged);
    }
    return order;
}

/// Whether `v` is among the vectors `named` so far, and names it if not.
inline bool named_again(std::vector<const void*>& named, const void* v) {
    if (std::find(named.begin(), named.end(), v) != named.end()) return true;
    named.push_back(v);
    return false;
}

/// Sorts keys and values part by part with sort_part(k, key operand, value operands); a vector
/// split over several devices is then merged on the host (see docs/sorting.md).
template <class K, class Before, class SortPart, class... V>
void sort_split(std::string_view call, vector<K>& keys, Before&& before, SortPart&& sort_part,
                vector<V>&... values) {
    // A vector named again (sort_by_key(k, k), sort_by_key(k, v, v)) moves once: moved again
    // through the same order, its elements would be permuted twice.
    std::vector<const void*> named{&keys};
    [[maybe_unused]] const std::array<bool, sizeof...(V)> repeated{named_again(named, &values)...};
    const auto& layout = keys.layout();
    if (layout.size() > 1)
        refuse_inside_capture(std::string(call), "the keys are split over " +
                                                     std::to_string(layout.size()) +
                                                     " devices, whose sorted parts are merged "
                                                     "on the host");
    const bool same_layout =
        ((values.size() == keys.size() && values.part_count() == layout.size()) && ...);
    if (!same_layout) throw_sort_layout_mismatch(call);
    for (std::size_t k = 0; k < layout.size(); ++k) {
        if (((!(values.layout()[k].queue.device() == layout[k].queue.device()) ||
              values.layout()[k].size != layout[k].size) ||
             ...))
            throw_sort_layout_mismatch(call);
        if (layout[k].size < 2) continue;
        std::vector<sort_operand> moved;
        [[maybe_unused]] std::size_t position = 0;
        ((repeated[position++] ? void() : moved.push_back(sort_operand_of(values.part(k)))), ...);
        sort_part(layout[k].queue, sort_operand_of(keys.part(k)), layout[k].size, moved);
    }
    if (layout.size() < 2) return;
    std::vector<std::size_t> starts;
    for (const auto& part : layout) starts.push_back(part.begin);
    starts.push_back(keys.size());
    const std::vector<K> host_keys = keys.read();
    const std::vector<std::size_t> order = merge_sorted_runs(
        starts, [&](std::size_t a, std::size_t b) { return before(host_keys[a], host_keys[b]); });
    const auto permute = [&](auto& v) {
        const auto host = v.read();
        std::remove_cvref_t<decltype(host)> moved(host.size());
        for (std::size_t i = 0; i < order.size(); ++i) moved[i] = host[order[i]];
        v.write(moved);
    };
    permute(keys);
    [[maybe_unused]] std::size_t position = 0;
    ((repeated[position++] ? void() : permute(values)), ...);
}

/// A floating-point key's place in the order docs/sorting.md gives, as unsigned bits of its
/// width: every NaN last, negative numbers reversed below the positive ones, -0 before +0.
template <class K>
auto ordered_float_key(const K& x) {
    using bits =
        std::conditional_t<sizeof(K) == 2, std::uint16_t,
                           std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>>;
    bits u;
    std::memcpy(&u, &x, sizeof u);
    constexpr bits sign = static_cast<bits>(bits{1} << (8 * sizeof(bits) - 1));
    constexpr int mantissa_bits = std::numeric_limits<K>::digits - 1;
    constexpr bits infinity = static_cast<bits>((sign - 1u) >> mantissa_bits << mantissa_bits);
    if (static_cast<bits>(u & ~sign) > infinity) return static_cast<bits>(~bits{0});
    return static_cast<bits>((u & sign) ? ~u : (u ^ sign));
}

/// Host order of radix-sorted keys, for merging split parts: the order docs/sorting.md gives.
template <class K>
bool radix_before(const K& a, const K& b, bool descending) {
    if constexpr (is_floating_key_v<K>) {
        return descending ? ordered_float_key(b) < ordered_float_key(a)
                          : ordered_float_key(a) < ordered_float_key(b);
    } else {
        return descending ? b < a : a < b;
    }
}

template <class F>
inline constexpr bool is_user_function_v = false;
template <class D>
inline constexpr bool is_user_function_v<user_function<D>> = true;

template <class K, class D>
sort_comparator comparator_of(const user_function<D>&) {
    source_builder definitions;
    user_function<D>::define(definitions);
    const std::string call = std::string(D::function_name()) + "(" + field_storage<K>::load("a") +
                             ", " + field_storage<K>::load("b") + ")";
    // OpenCL C keeps half in memory only, behind vload_half: both 16-bit types move as bits.
    return {definitions.str(), call, is_binary16_v<K> ? "ushort" : opencl_type_name<K>()};
}

/// A comparator a KILN_FUNCTION can be for keys of K: two K parameters.
template <class F, class K>
concept comparator_for = is_user_function_v<F> && requires(const F& f, const vector<K>& v) {
    f(v, v);
};

template <class K, class... V>
void radix_sort(std::string_view call, bool descending, vector<K>& keys, vector<V>&... values) {
    sort_split(
        call, keys, [descending](const K& a, const K& b) { return radix_before(a, b, descending); },
        [call, descending](const queue& q, const sort_operand& k, std::size_t n,
                           const std::vector<sort_operand>& v) {
            radix_sort_part(call, q, radix_key_of<K>(), descending, k, n, v);
        },
        values...);
}

template <class K, class F, class... V>
void comparison_sort(std::string_view call, const F& comparator, vector<K>& keys,
                     vector<V>&... values) {
    if (keys.size() > 0xffffffffu) throw_sort_too_large(call, keys.size());
    refuse_inside_capture(std::string(call),
                          "a sort with a comparator reads back whether the comparator gave two "
                          "keys one place, which chooses the merges after it");
    if (keys.part_count() > 1) {
        // The comparator exists only as device code, so the host cannot merge sorted parts:
        // the whole vector is sorted on the first part's device and copied back.
        const queue& first = keys.queue(0);
        vector<K> gathered(first, keys.read());
        std::tuple<vector<V>...> gathered_values{vector<V>(first, values.read())...};
        std::apply([&](auto&... v) { comparison_sort(call, comparator, gathered, v...); },
                   gathered_values);
        keys.write(gathered.read());
        std::apply([&](const auto&... v) { (values.write(v.read()), ...); }, gathered_values);
        return;
    }
    const sort_comparator device_comparator = comparator_of<K>(comparator);
    sort_split(
        call, keys, [](const K&, const K&) { return false; },
        [&](const queue& q, const sort_operand& k, std::size_t n,
            const std::vector<sort_operand>& ops) {
            merge_sort_part(q, device_comparator, k, n, ops);
        },
        values...);
}

}  // namespace detail

/// Sorts the keys in ascending order (radix sort, stable).
template <radix_sortable K>
void sort(vector<K>& keys) {
    detail::radix_sort("kiln::sort", false, keys);
}
/// Sorts the keys in descending order: the exact reverse of the ascending order, ties stable.
template <radix_sortable K>
void sort(vector<K>& keys, descending_order) {
    detail::radix_sort("kiln::sort", true, keys);
}
/// Sorts with a KILN_FUNCTION comparator less(a, b) (a strict weak order: whether a goes
/// before b), stable (merge sort). With a comparator that is not a strict weak order (a <= b,
/// a < b over NaNs) the order is unspecified, but the keys stay a permutation of the input.
template <vector_value K, class F>
requires detail::comparator_for<F, K>
void sort(vector<K>& keys, const F& less) {
    detail::comparison_sort("kiln::sort", less, keys);
}

namespace detail {

template <class K, class Tuple, std::size_t... I>
void sort_by_key_with_last(vector<K>& keys, Tuple&& args, std::index_sequence<I...>) {
    auto& last = std::get<sizeof...(I)>(args);
    using Last = std::remove_cvref_t<decltype(last)>;
    if constexpr (std::is_same_v<Last, descending_order>) {
        radix_sort("kiln::sort_by_key", true, keys, std::get<I>(args)...);
    } else if constexpr (is_user_function_v<Last>) {
        comparison_sort("kiln::sort_by_key", last, keys, std::get<I>(args)...);
    } else {
        radix_sort("kiln::sort_by_key", false, keys, std::get<I>(args)..., last);
    }
}

template <class T>
inline constexpr bool is_vector_v = false;
template <class T>
inline constexpr bool is_vector_v<vector<T>> = true;

template <class T>
concept sort_value_vector =
    is_vector_v<std::remove_cvref_t<T>> && sort_value<typename std::remove_cvref_t<T>::value_type>;

template <class T>
concept sort_order_argument = std::is_same_v<std::remove_cvref_t<T>, descending_order> ||
    is_user_function_v<std::remove_cvref_t<T>>;

/// Values first, then at most one order argument (kiln::descending or a comparator), last.
template <class... Rest>
constexpr bool valid_sort_by_key_arguments() {
    constexpr std::size_t count = sizeof...(Rest);
    if constexpr (count == 0) {
        return false;
    } else {
        constexpr bool is_value[] = {sort_value_vector<Rest>...};
        constexpr bool is_order[] = {sort_order_argument<Rest>...};
        for (std::size_t i = 0; i + 1 < count; ++i)
            if (!is_value[i]) return false;
        return is_value[count - 1] || (is_order[count - 1] && count >= 2);
    }
}
}  // namespace detail

/// Sorts the keys and moves each value vector's elements with them: values..., optionally
/// followed by kiln::descending or a KILN_FUNCTION comparator. Radix sort for numeric keys
/// (ascending or descending), merge sort with a comparator; stable either way. A vector named
/// twice moves once: sort_by_key(k, k) is sort(k), and sort_by_key(k, v, v) sort_by_key(k, v).
template <vector_value K, class... Rest>
requires(detail::valid_sort_by_key_arguments<Rest...>()) void sort_by_key(vector<K>& keys,
                                                                          Rest&&... rest) {
    using Last =
        std::remove_cvref_t<std::tuple_element_t<sizeof...(Rest) - 1, std::tuple<Rest...>>>;
    if constexpr (!detail::is_user_function_v<Last>)
        static_assert(radix_sortable<K>,
                      "sort_by_key without a comparator sorts 32- or 64-bit integer, float, "
                      "double, half or bfloat16 keys");
    detail::sort_by_key_with_last(keys, std::forward_as_tuple(rest...),
                                  std::make_index_sequence<sizeof...(Rest) - 1>{});
}

}  // namespace kiln
#pragma GCC visibility pop
