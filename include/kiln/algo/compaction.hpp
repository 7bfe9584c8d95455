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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/algo/scan.hpp>
#include <kiln/detail/algo/scan_strategy.hpp>
#include <kiln/detail/algo/scan_tuning.hpp>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

namespace kiln {
namespace detail {

/// The count the next compactions start from: 0, or a test's scoped_compaction_count_base.
std::uint64_t compaction_count_base();

/// The plan for n elements of T on `dev` (scan_tuning.hpp) under the overrides in force.
template <class T>
compaction_plan plan_compaction(const device& dev, std::size_t n) {
    return plan_compaction(dev.properties(), sizeof(T), n, compaction_count_base(),
                           overrides_in_force<algorithm::select_rows>());
}

/// A counting scan whose input callback declares everything (flags, kept values, outputs).
const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const compaction_plan& plan,
                                            const declare_input<compaction_input>& input);

/// Runs a counting scan over `n` elements on q and returns how many were flagged. Counts start
/// from plan.base (the scan's carry), and kept element c goes to output element c - base.
/// `bind_input(kernel_binding&)` binds the input of each kernel that reads it.
template <class Count, class BindInput>
std::size_t run_counting_scan(const algorithm_program& program, const queue& q,
                              const compaction_plan& plan, std::size_t n, BindInput&& bind_input) {
    const scan_policy& policy = plan.policy;
    temporary_lease scratch =
        temporary_pool::acquire(q, scan_family_scratch_bytes(policy, n, sizeof(Count)));
    std::optional<Count> carry;
    if (plan.base > 0) carry = static_cast<Count>(plan.base);
    const event done =
        run_scan_family(program, q, policy, n, make_scan_carry(carry), scratch, bind_input);
    return static_cast<std::size_t>(scan_total<Count>(q, scratch, done) - plan.base);
}

template <class BindInput>
std::size_t run_compaction(const algorithm_program& program, const queue& q,
                           const compaction_plan& plan, std::size_t n, BindInput&& bind_input) {
    if (plan.narrow) return run_counting_scan<std::uint32_t>(program, q, plan, n, bind_input);
    return run_counting_scan<std::uint64_t>(program, q, plan, n, bind_input);
}

/// copy_if's elements at `idx`: the statements both read, whether the element is kept (1 or 0
/// as the count type) and the kept value as the output's type.
struct copy_if_elements {
    std::vector<std::string> statements;
    std::string keep, kept;
};

/// Everything a copy_if program's text depends on.
struct copy_if_shape {
    /// The output's OpenCL C type.
    std::string kept_type = "int";
    compaction_plan plan{};
    /// The input's and the stencil's node type names: their types decide their text.
    std::string expression;

    /// "copy_if <type> <plan> <expression>", for the program cache.
    std::string key() const;
};

/// One part of copy_if's arguments, their types erased: run_copy_if_part
/// (src/algo/scan/copy_if.cpp) plans its counting scan, builds its program and runs it.
struct copy_if_part_input {
    /// The output's OpenCL C type and host bytes.
    std::string kept_type;
    std::size_t kept_bytes = 0;
    /// The input's and the stencil's node type names; their parameters declared (the stencil's
    /// first) and their elements at `idx`, the flag counted as `count_type`; their arguments.
    std::string expression;
    std::function<copy_if_elements(source_builder&, const std::string& count_type)> declare;
    std::vector<kernel_argument> element_arguments;
    /// The part's queue and size.
    kiln::queue queue;
    std::size_t size = 0;
    /// Where kept element c goes (at c) and how many fit.
    kernel_argument output;
    std::size_t capacity = 0;
};
/// Compacts the part `input` describes into its output; returns how many elements it kept.
std::size_t run_copy_if_part(const copy_if_part_input& input);

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
/// Writes `host` into `output` from element `offset`, wherever output's parts are; what does not
/// fit is dropped (the caller reports it).
template <class T>
void place_on_parts(std::span<const T> host, const vector<T>& output, std::size_t offset) {
    for (std::size_t j = 0; j < output.part_count(); ++j) {
        const part_extent& out = output.layout()[j];
        const std::size_t first = std::max(offset, out.begin);
        const std::size_t last = std::min(offset + host.size(), out.begin + out.size);
        if (first >= last) continue;
        output.part(j).write(out.queue, first - out.begin,
                             host.subspan(first - offset, last - first));
    }
}

/// Copies `count` elements kept in scratch on q's device into `output` from element `offset`,
/// through the host, wherever output's parts are; what does not fit is dropped (the caller
/// reports it). For compactions of split vectors, whose parts' results meet in one output.
template <class T>
void place_kept(const queue& q, const temporary_lease& kept, std::size_t count,
                const vector<T>& output, std::size_t offset) {
    const std::size_t room = offset < output.size() ? std::min(count, output.size() - offset) : 0;
    if (room == 0) return;
    std::vector<T> host(room);
    kept.bytes().storage().read_bytes(q, 0, host.data(), room * sizeof(T), {}, true);
    place_on_parts(std::span<const T>(host), output, offset);
}

/// Whether unique compares each part's first key with the key before the part on the host.
/// Chunk kernels do: their loops then walk the part's later keys, each beside the key before it,
/// with plain vector loads, where a loop whose loads depend on whether idx is the first key gets
/// masked loads (or gathers) from LLVM and counts several times slower. Tiles compare the first
/// key themselves, so that the kernels GPUs run stay as they were.
inline bool unique_heads_on_host(const compaction_plan& plan) {
    return plan.policy.chunk_bytes != 0;
}

/// unique's input to the compaction kernels, its parameters declared on `b` (kiln_out,
/// kiln_capacity, kiln_keys of OpenCL type `t`, then the key before the part where the kernels
/// compare the part's first key): each key counted as `count_type` 1 where it differs from the
/// key before it. `heads_on_host`: the kernels compact keys 1 to size - 1, each against the key
/// before it; `in_place`: into the keys themselves (compaction_input::in_place).
compaction_input declare_unique_input(source_builder& b, const std::string& t,
                                      const std::string& count_type, bool heads_on_host,
                                      bool in_place);

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
    const detail::layout parts = check.launch_layout();
    // One part on the output's only device: straight into the output, unless the input or the
    // stencil reads it (in place), where tiles would overwrite elements that later tiles still
    // read: then through scratch, copied back on the device. Otherwise each part compacts on its
    // device and its elements follow those of the parts before it.
    const bool single = parts.size() == 1 && output.part_count() == 1 &&
                        output.queue().device() == parts[0].queue.device();
    const bool direct = single && !check.involves(output.layout());
    struct staged_part {
        const queue* q;
        detail::temporary_lease kept;
        std::size_t count;
    };
    std::vector<staged_part> staged;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const detail::part_extent& part = parts[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        detail::temporary_lease staging;
        if (!direct) staging = detail::temporary_pool::acquire(q, part.size * sizeof(T));
        detail::argument_list element_arguments(k, part.begin);
        flag.collect(element_arguments);
        in.collect(element_arguments);
        detail::kernel_argument to;
        if (direct) {
            to = detail::make_argument(output.part(0));
        } else {
            // The pool's block is bytes; the kernels write elements into it.
            to = detail::make_argument(staging.bytes());
            to.element_type.clear();
        }
        const std::size_t part_kept = detail::run_copy_if_part(
            {.kept_type = detail::opencl_type_name<T>(),
             .kept_bytes = sizeof(T),
             .expression = std::string(typeid(in).name()) + " " + typeid(flag).name(),
             .declare =
                 [in, flag](detail::source_builder& b, const std::string& count_type) {
                     detail::generator g(b);
                     const std::string keep =
                         "(" + count_type + ")((" + flag.generate(g) + ") != 0)";
                     const std::string kept =
                         detail::convert_value<T, expression_value_t<E>>(b, in.generate(g));
                     return detail::copy_if_elements{g.statements(), keep, kept};
                 },
             .element_arguments = std::move(element_arguments).take(),
             .queue = q,
             .size = part.size,
             .output = std::move(to),
             .capacity = direct ? output.size() : part.size});
        if (!direct) staged.push_back({&q, std::move(staging), part_kept});
        kept += part_kept;
    }
    // Placed once every part has read its input, which may be the output.
    std::size_t placed = 0;
    for (staged_part& part : staged) {
        if (single) {
            const std::size_t count = std::min(part.count, output.size());
            const event copied = part.kept.bytes().storage().copy_bytes(
                *part.q, 0, output.part(0).storage(), 0, count * sizeof(T), {});
            part.kept.release_after(*part.q, copied);
        } else {
            detail::place_kept(*part.q, part.kept, part.count, output, placed);
        }
        placed += part.count;
    }
    if (kept > output.size()) detail::throw_output_too_small(call, kept, output.size());
    return kept;
}

/// Keeps the first element of every run of equal consecutive keys at the front of `keys`, in
/// order; returns how many (the new size). Elements past it are unspecified. NaN keys are each
/// a run of their own (NaN != NaN), as with std::unique.
template <detail::scan_value T>
std::size_t unique(const vector<T>& keys) {
    if (keys.size() == 0) return 0;
    const std::string t = detail::opencl_type_name<T>();
    const std::size_t parts = keys.part_count();
    std::vector<detail::compaction_plan> plans;
    for (const detail::part_extent& part : keys.layout())
        plans.push_back(detail::plan_compaction<T>(part.queue.device(), part.size));
    // Each part compares its first key with the last of the part before, read first: the
    // results of earlier parts may overwrite it. Where the host compares them, it reads the
    // part's first key too.
    std::vector<T> previous(parts), first(parts);
    for (std::size_t k = 1; k < parts; ++k) {
        const detail::part_extent& part = keys.layout()[k];
        if (part.begin == 0) continue;
        previous[k] = keys[part.begin - 1];
        if (part.size > 0 && detail::unique_heads_on_host(plans[k])) first[k] = keys[part.begin];
    }
    std::size_t kept = 0;
    for (std::size_t k = 0; k < parts; ++k) {
        const detail::part_extent& part = keys.layout()[k];
        if (part.size == 0) continue;
        const queue& q = part.queue;
        const detail::compaction_plan& plan = plans[k];
        // With heads on the host, the kernels compact keys 1 to size - 1 (idx + 1), each against
        // the key before it (idx), and the part's first key is kept here.
        const bool heads_on_host = detail::unique_heads_on_host(plan);
        const std::size_t skipped = heads_on_host ? 1 : 0;
        const bool head_kept = heads_on_host && (part.begin == 0 || first[k] != previous[k]);
        // Chunks by vectors in one chained pass compact an unsplit vector's keys in place
        // (compaction_input::in_place): nothing to copy back. Elsewhere, into scratch, then
        // back: a tile or chunk may write where an earlier one has still to read.
        const bool in_place = heads_on_host && parts == 1 && plan.policy.chunk_vector_writes &&
                              detail::chunk_groups_make_progress(q.device());
        const std::string key = "unique " + t + " " + plan.key() + (in_place ? " in place" : "");
        const auto declare = [&](detail::source_builder& b) {
            return detail::declare_unique_input(b, t, plan.count_type(), heads_on_host, in_place);
        };
        const std::size_t compacted = part.size - skipped;
        std::size_t part_kept = 0;
        detail::temporary_lease staging;
        const auto bind = [&](detail::argument_list& args) {
            if (in_place)
                args.buffer(keys.part(0));
            else
                args.buffer(staging.bytes());
            args.scalar<std::uint64_t>(compacted);
            args.buffer(keys.part(k));
            if (!heads_on_host) {
                args.scalar<std::int32_t>(part.begin > 0);
                args.scalar(previous[k]);
            }
        };
        if (compacted > 0) {
            const auto& program = detail::compaction_program(q.device(), key, plan, declare);
            if (!in_place) staging = detail::temporary_pool::acquire(q, compacted * sizeof(T));
            part_kept = detail::run_compaction(program, q, plan, compacted,
                                               [&](detail::kernel_binding& args) {
                                                   detail::argument_list input_args(k, part.begin);
                                                   bind(input_args);
                                                   args.input(std::move(input_args).take());
                                               });
        }
        // A kept first key is already in place where nothing before it was dropped.
        if (head_kept && kept != part.begin)
            detail::place_on_parts(std::span<const T>(&first[k], 1), keys, kept);
        const std::size_t placed = kept + (head_kept ? 1 : 0);
        if (parts > 1) {
            detail::place_kept(q, staging, part_kept, keys, placed);
        } else if (part_kept > 0 && !in_place) {
            const event copied = staging.bytes().storage().copy_bytes(
                q, 0, keys.part(0).storage(), placed * sizeof(T), part_kept * sizeof(T), {});
            staging.release_after(q, copied);
        }
        kept = placed + part_kept;
    }
    return kept;
}

}  // namespace kiln
#pragma GCC visibility pop
