// SPDX-License-Identifier: Apache-2.0
// Counter-based random numbers in expressions (Philox4x32-10, Threefry2x64-20), device and host.
//
// A counter-based generator is a keyed bijection: element i of stream `seed` is a function of
// (i, seed) alone, so a vector of random numbers is one kernel with no state, every device and
// backend produces the same stream, and the host can recompute any element (the same functions
// are implemented here in C++). Uniform numbers are exact conversions of the generator's bits
// and agree bit for bit everywhere; normal numbers go through log, cos and sqrt and agree within
// the accuracy of the device's math library.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <concepts>
#include <cstdint>
#include <kiln/expr/core.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kiln {

/// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
/// SC'11): 128-bit counter, 64-bit key, ten rounds of multiply-and-xor.
struct philox {
    using counter_type = std::array<std::uint32_t, 4>;  ///< the 128-bit counter
    using key_type = std::array<std::uint32_t, 2>;      ///< the 64-bit key
    static constexpr std::string_view name = "philox";  ///< names it in generated kernels

    /// The bijection on the host.
    static counter_type apply(counter_type counter, key_type key) noexcept;
    /// OpenCL C defining `void kiln_philox4x32_10(uint* counter, uint key0, uint key1)`, which
    /// replaces the counter by its image, and `void kiln_random_words_philox(ulong index,
    /// ulong seed, uint* words)`, which draws the four words of element `index`: counter
    /// (index low, index high, 0, 0), key (seed low, seed high).
    static std::string_view device_source() noexcept;
    /// The four words of element `index` of stream `seed`, as kiln_random_words_philox computes.
    static std::array<std::uint32_t, 4> words(std::uint64_t index, std::uint64_t seed) noexcept;
};

/// Threefry2x64-20 (same paper): 128-bit counter, 128-bit key, twenty rounds of the Threefish
/// add-rotate-xor with a key injection every four rounds. Chosen in its 2x64 form so that each
/// double draws from one 64-bit output word.
struct threefry {
    using counter_type = std::array<std::uint64_t, 2>;    ///< the 128-bit counter
    using key_type = std::array<std::uint64_t, 2>;        ///< the 128-bit key
    static constexpr std::string_view name = "threefry";  ///< names it in generated kernels

    /// The bijection on the host.
    static counter_type apply(counter_type counter, key_type key) noexcept;
    /// OpenCL C defining `void kiln_threefry2x64_20(ulong* counter, ulong key0, ulong key1)` and
    /// `void kiln_random_words_threefry(ulong index, ulong seed, uint* words)`: counter (index, 0),
    /// key (seed, 0); the words are the outputs' low and high halves.
    static std::string_view device_source() noexcept;
    /// The four words of element `index` of stream `seed`, as kiln_random_words_threefry
    /// computes.
    static std::array<std::uint32_t, 4> words(std::uint64_t index, std::uint64_t seed) noexcept;
};

template <class G>
concept random_generator = requires(std::uint64_t index, std::uint64_t seed) {
    { G::name } -> std::convertible_to<std::string_view>;
    { G::device_source() } -> std::same_as<std::string_view>;
    { G::words(index, seed) } -> std::same_as<std::array<std::uint32_t, 4>>;
};

namespace detail {

enum class distribution { uniform, normal };

/// OpenCL C of `T function(ulong index, ulong seed)` drawing from generator words.
std::string random_function_source(std::string_view function, std::string_view generator,
                                   std::string_view type, distribution kind);

/// The host mirror of random_function_source: the same conversion of the same words.
/// Instantiated in the library for float and double; the visibility pragma around public headers
/// does not reach template instantiations, so the template says it is exported.
template <std::floating_point T>
[[gnu::visibility("default")]] T random_from_words(const std::array<std::uint32_t, 4>& w,
                                                   distribution kind);

template <std::floating_point T, random_generator Generator, distribution Kind,
          expression_node Index>
class random_node : public expression_tag {
  public:
    using value_type = T;
    static constexpr std::size_t contiguous_width = width_of<Index>();
    random_node(Index index, std::uint64_t seed) : index_(std::move(index)), seed_(seed) {}

    std::string generate(generator& g) const {
        g.source.define(Generator::name, Generator::device_source());
        const std::string function = std::string("kiln_") +
                                     (Kind == distribution::uniform ? "uniform_" : "normal_") +
                                     opencl_type_name<T>() + "_" + std::string(Generator::name);
        g.source.define(function, random_function_source(function, Generator::name,
                                                         opencl_type_name<T>(), Kind));
        const std::string index =
            convert_value<std::uint64_t, typename Index::value_type>(g.source, index_.generate(g));
        const std::string seed = g.new_name();
        g.parameter("ulong", seed);
        return function + "(" + index + ", " + seed + ")";
    }
    void collect(argument_list& args) const {
        index_.collect(args);
        args.scalar<std::uint64_t>(seed_);
    }
    void check(operand_check& c) const { index_.check(c); }

  private:
    Index index_;
    std::uint64_t seed_;
};

template <std::floating_point T, random_generator Generator, distribution Kind>
class random_distribution {
  public:
    /// The number that element `index` (an integer expression, usually element_index()) of
    /// stream `seed` draws. The seed is a kernel argument: changing it does not recompile.
    template <vector_expression I>
    requires std::is_integral_v<expression_value_t<I>>
    auto operator()(const I& index, std::uint64_t seed) const {
        auto node = as_node(index);
        return random_node<T, Generator, Kind, decltype(node)>(std::move(node), seed);
    }
    /// The same number computed on the host.
    static T on_host(std::uint64_t index, std::uint64_t seed) {
        return random_from_words<T>(Generator::words(index, seed), Kind);
    }
};

}  // namespace detail

/// Uniform numbers in [0, 1): 24 random bits for float, 53 for double.
///
///     kiln::random_uniform<float> uniform;
///     x = uniform(kiln::element_index(), seed);
template <std::floating_point T, random_generator Generator = philox>
using random_uniform = detail::random_distribution<T, Generator, detail::distribution::uniform>;

/// Standard normal numbers (Box-Muller on two uniform numbers of the same element).
template <std::floating_point T, random_generator Generator = philox>
using random_normal = detail::random_distribution<T, Generator, detail::distribution::normal>;

}  // namespace kiln
#pragma GCC visibility pop
