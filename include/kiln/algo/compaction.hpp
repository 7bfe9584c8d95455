// SPDX-License-Identifier: Apache-2.0
// Stream compaction: kiln::copy_if and kiln::unique, scan-based.
//
//     std::size_t kept = kiln::copy_if(x, x * x + y * y < 1, inside);  // inside[0, kept)
//     std::size_t runs = kiln::unique(keys);                           // keys[0, runs)
//
// Each element's flag (the stencil is not zero; the key differs from the one before it) is
// counted by the scan machinery of kiln::inclusive_scan, with the same dispatch (decoupled
// look-back, one kernel, or reduce-then-scan), and kept elements are written at their count, so
// the order is kept (stable). On GPUs each tile gathers its kept elements in local memory and
// writes them coalesced, counting in 32 bits below 2^31 (compaction_plan). The input and the
// stencil may be expressions, evaluated inside the kernel. The output holds the kept elements at
// the front; elements past them are left as they were. An output too small for every kept element
// receives the first ones, and the call then throws invalid_argument_error naming the count. The
// output may be the input or read by the stencil (in place): the kept elements then go through
// scratch. Split vectors: each part compacts on its device and its kept elements follow those of
// the parts before it in the output (through the host, once every part has read its input).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/detail/algo/operation.hpp>
#include <kiln/expr/core.hpp>
#include <kiln/vector.hpp>
#include <span>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

/// copy_if's elements at `idx`: the statements both read, whether the element is kept (1 or 0
/// as the count type) and the kept value as the output's type.
struct copy_if_elements {
    std::vector<std::string> statements;
    std::string keep, kept;
};

/// A vector's parts, its element type erased: where a compaction reads or places elements.
struct erased_vector {
    const layout* parts = nullptr;
    std::size_t size = 0, element_bytes = 0;
    /// Each part's memory, as a kernel argument and for copies.
    std::vector<kernel_argument> memory{};
    std::vector<const buffer_storage*> storage{};
};
template <class T>
erased_vector erase_vector(const vector<T>& v) {
    erased_vector erased{.parts = &v.layout(), .size = v.size(), .element_bytes = sizeof(T)};
    for (std::size_t j = 0; j < v.part_count(); ++j) {
        erased.memory.push_back(make_argument(v.part(j)));
        erased.storage.push_back(&v.part(j).storage());
    }
    return erased;
}

/// The stencil's and the input's arguments for one part, and the vector that each is (by its
/// layout; null for the others).
struct copy_if_arguments {
    std::vector<kernel_argument> arguments{};
    std::vector<const void*> vectors{};
};

/// kiln::copy_if's arguments, their types erased: run_copy_if (src/algo/scan/copy_if.cpp) plans
/// where the kept elements go, and each part's counting scan, and runs them.
struct copy_if_input {
    /// The output's OpenCL C type.
    std::string kept_type;
    /// The input's and the stencil's node type names; their parameters declared (the stencil's
    /// first, in the order of element_arguments, whose `vectors` say which share a vector: each
    /// is declared once) and their elements at `idx`, the flag counted as `count_type`.
    std::string expression;
    std::function<copy_if_elements(source_builder&, const std::string& count_type,
                                   std::span<const void* const> argument_vectors)>
        declare;
    /// Their arguments for the part of `parts` at `part`, which begins at element `begin`.
    std::function<copy_if_arguments(std::size_t part, std::size_t begin)> element_arguments;
    /// Where the input and the stencil are (the launch's parts), and whether they read the
    /// output.
    layout parts;
    bool reads_output = false;
    erased_vector output;
};
/// Compacts what `input` describes into its output; returns how many elements were kept (the
/// caller compares it with the output's size).
std::size_t run_copy_if(const copy_if_input& input);

/// kiln::unique's argument, its type erased; keys_differ compares two keys on the host as the
/// kernels do (NaN differs from itself). run_unique (src/algo/scan/unique.cpp) returns the runs.
struct unique_input {
    std::string key_type;
    erased_vector keys;
    bool (*keys_differ)(const void* a, const void* b) = nullptr;
};
std::size_t run_unique(const unique_input& input);

/// Test-only: while alive, compactions count from `base` instead of 0 (their outputs still
/// begin at element 0), so that tests reach counts past 2^31 and 2^32, and the 64-bit path,
/// without allocating that much. Not thread-safe with compactions on other threads.
class scoped_compaction_count_base {
  public:
    explicit scoped_compaction_count_base(std::uint64_t base);
    ~scoped_compaction_count_base();
    scoped_compaction_count_base(const scoped_compaction_count_base&) = delete;
    scoped_compaction_count_base& operator=(const scoped_compaction_count_base&) = delete;

  private:
    std::uint64_t previous_;
};

[[noreturn]] void throw_output_too_small(const char* call, std::size_t needed,
                                         std::size_t capacity);

}  // namespace detail

/// Copies the elements of `input` whose `stencil` element is not zero to the front of
/// `output`, in order; returns how many. Runs where the input and stencil are, or on the
/// output's (first) device where they hold no vector (`kiln::element_index(n)`).
template <vector_expression E, vector_expression S, detail::scan_value T>
requires detail::storable_as<T, expression_value_t<E>> && detail::real_number<expression_value_t<S>>
    std::size_t copy_if(const E& input, const S& stencil, const vector<T>& output) {
    constexpr const char* call = "kiln::copy_if";
    const auto in = detail::as_node(input);
    const auto flag = detail::as_node(stencil);
    detail::operand_check check(call);
    in.check(check);
    flag.check(check);
    // Nothing read says where to run (element_index with a size): on the output's device.
    if (!check.first_queue() && output.part_count() > 0) check.on_queue(output.queue());
    const std::size_t kept = detail::run_copy_if(
        {.kept_type = detail::opencl_type_name<T>(),
         .expression = std::string(typeid(in).name()) + " " + typeid(flag).name(),
         .declare =
             [in, flag](detail::source_builder& b, const std::string& count_type,
                        std::span<const void* const> argument_vectors) {
                 // A vector that both read (copy_if(x, x > 0, y)) is one parameter, so that the
                 // compiler loads each of its elements once.
                 std::vector<std::pair<const void*, std::string>> declared;
                 const detail::fused_context once{.parameter_vectors = argument_vectors,
                                                  .declared = &declared};
                 detail::generator g(b, once);
                 const std::string keep = "(" + count_type + ")((" + flag.generate(g) + ") != 0)";
                 const std::string kept =
                     detail::convert_value<T, expression_value_t<E>>(b, in.generate(g));
                 return detail::copy_if_elements{g.statements(), keep, kept};
             },
         .element_arguments =
             [in, flag](std::size_t part, std::size_t begin) {
                 detail::argument_list arguments(part, begin,
                                                 detail::argument_list::identify_vectors{});
                 flag.collect(arguments);
                 in.collect(arguments);
                 detail::copy_if_arguments taken{.vectors = arguments.take_argument_vectors()};
                 taken.arguments = std::move(arguments).take();
                 return taken;
             },
         .parts = check.launch_layout(),
         .reads_output = check.involves(output.layout()),
         .output = detail::erase_vector(output)});
    if (kept > output.size()) detail::throw_output_too_small(call, kept, output.size());
    return kept;
}

/// Keeps the first element of every run of equal consecutive keys at the front of `keys`, in
/// order; returns how many (the new size). Elements past it are unspecified. NaN keys are each
/// a run of their own (NaN != NaN), as with std::unique.
template <detail::scan_value T>
std::size_t unique(const vector<T>& keys) {
    if (keys.size() == 0) return 0;
    return detail::run_unique({.key_type = detail::opencl_type_name<T>(),
                               .keys = detail::erase_vector(keys),
                               .keys_differ = [](const void* a, const void* b) {
                                   return *static_cast<const T*>(a) != *static_cast<const T*>(b);
                               }});
}

}  // namespace kiln
#pragma GCC visibility pop
