// SPDX-License-Identifier: Apache-2.0
// kiln::fused: the group of statements held on a thread, and the one kernel it enqueues them as.
//
// A group's kernel depends on its statements' types and on which vectors they share (which
// reads an earlier statement's register stands for), never on other run-time values: one
// prepared launch per such signature (its kernel cache, and which arguments the kernel takes)
// serves every enqueue of the group after the first. The signature is written as statements
// join, so that enqueueing a group met before builds no text and searches no argument list.
#include <algorithm>
#include <cstdint>
#include <kiln/expr/fused.hpp>
#include <kiln/expr/launch.hpp>
#include <map>
#include <mutex>

#include "codegen/device_vocabulary.hpp"
#include "expr/give_back.hpp"
#include "expr/vectors_passed_once.hpp"
#include "runtime/held_work.hpp"

namespace kiln::detail {
namespace {

/// What a group's kernel text depends on: for each statement, its type (the address of its
/// type_info: a type met through two shared libraries costs a second kernel, never a wrong one),
/// then the vectors of its arguments and of its targets, numbered by first appearance in the
/// group (vector_number: 0 for arguments that are no vector).
using fused_signature = std::vector<std::uintptr_t>;
/// Between a statement's arguments and its targets: their counts are part of the key.
constexpr std::uintptr_t targets_follow = ~std::uintptr_t{0};

/// How every group of one signature is launched: its kernel, and which of the statements'
/// arguments the kernel takes. Either follows from the signature alone, so the first group of a
/// signature prepares it for every later one.
struct fused_launch {
    explicit fused_launch(const std::vector<held_statement>& statements) {
        // Each vector once, as the kernel declares it (fused_context::declared).
        std::vector<const void*> met;
        std::uint32_t index = 0;
        for (const auto& held : statements)
            for (const void* vector : held.argument_vectors) {
                if (passed_once(met, vector)) passed_arguments.push_back(index);
                ++index;
            }
    }

    kernel_cache kernels;
    /// Indices into the group's arguments (every statement's, in order) of those the kernel takes.
    std::vector<std::uint32_t> passed_arguments;
};

/// The launch of each group signature met so far, prepared from `statements` when first met.
fused_launch& launch_for(const fused_signature& signature,
                         const std::vector<held_statement>& statements) {
    // A block run again (each step of a time stepper) has the signature of the thread's block
    // before it: its launch is found without the lock and the map. Launches live as long as the
    // process, so the pointer kept stays valid.
    thread_local fused_signature last_signature;
    thread_local fused_launch* last_launch = nullptr;
    if (last_launch && signature == last_signature) return *last_launch;
    static std::mutex mutex;
    static std::map<fused_signature, std::unique_ptr<fused_launch>> launches;
    std::lock_guard lock(mutex);
    auto& launch = launches[signature];
    if (!launch) launch = std::make_unique<fused_launch>(statements);
    last_signature = signature;
    last_launch = launch.get();
    return *launch;
}

/// One kernel running every statement for each element, in order, each in a block of its own;
/// a statement's reads of vectors that earlier ones stored come from their registers.
std::string fused_source(const std::vector<held_statement>& statements, const launch_policy& policy,
                         const target_features& target, const packed_arguments& packed) {
    source_builder builder;
    builder.begin_kernel("kiln_fused");
    builder.parameter("ulong n");
    std::vector<std::pair<const void*, std::string>> registers, declared;
    std::vector<fused_fragment> fragments;
    for (std::size_t s = 0; s < statements.size(); ++s) {
        const held_statement& held = statements[s];
        const fused_context context{"kiln_s" + std::to_string(s) + "_", held.argument_vectors,
                                    registers, &declared};
        generator g(builder, context);
        g.follow(element_rules_for(policy, target));
        fused_fragment fragment = held.statement->generate(g);
        for (const auto& type : fragment.rounded) use_rounding_vocabulary(builder, target, type);
        for (std::size_t t = 0; t < held.written.size(); ++t) {
            if (!held.written[t]) continue;
            std::erase_if(registers, [&](const auto& r) { return r.first == held.written[t]; });
            if (!fragment.kept[t].empty())
                registers.emplace_back(held.written[t], fragment.kept[t]);
        }
        fragments.push_back(std::move(fragment));
    }
    packed.declare(builder);
    builder.begin_body();
    builder.open_element_loop(builder.declare_element_range(policy.loop, "n"), "idx");
    for (const auto& fragment : fragments) {
        for (const auto& declaration : fragment.registers) builder.line(declaration);
        builder.open("");
        for (const auto& line : fragment.lines) builder.line(line);
        builder.close();
    }
    builder.end_kernel();
    return builder.str();
}

/// What a group held, statement by statement: each statement's type, its arguments' vectors (by
/// layout, and the memory each had) and its targets' layouts, with the counts of either. The
/// group's signature is worked out from these alone, so a group that holds the same as the one
/// before it on its thread has that group's signature and launch.
using group_trace = std::vector<std::uintptr_t>;

/// The last group enqueued on this thread, and its launch (launches live as long as the process).
struct traced_group {
    group_trace held;
    fused_launch* launch = nullptr;
};
traced_group& last_group_on_this_thread() {
    thread_local traced_group last;
    return last;
}

/// Calls `entry` with each entry of `statement`'s trace, as long as it returns true; returns
/// whether it always did.
template <class Entry>
bool trace(const held_statement& statement, Entry&& entry) {
    const auto value = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
    if (!entry(value(&statement.statement->type())) || !entry(statement.arguments.size()))
        return false;
    for (std::size_t k = 0; k < statement.arguments.size(); ++k) {
        const void* vector = statement.argument_vectors[k];
        if (!entry(value(vector)) ||
            !entry(value(vector ? statement.arguments[k].memory.get() : nullptr)))
            return false;
    }
    if (!entry(statement.written.size())) return false;
    for (const void* written : statement.written)
        if (!entry(value(written))) return false;
    return true;
}

/// The lists that a group fills, empty between groups: a thread's groups take them in turn, so
/// that a time stepper's blocks allocate none of them after the first (each holds more than the
/// small allocations a heap serves fastest: a Lorenz step's launch takes 47 arguments). Lists of
/// vectors and of arguments come from the thread's pools that statements share (expr/core.hpp).
struct group_lists {
    std::vector<held_statement> statements;
    fused_signature signature;
    group_trace trace;
    std::vector<std::pair<const void*, const void*>> memory_of;
};
group_lists& spare_group_lists() {
    thread_local group_lists spare;
    return spare;
}

}  // namespace

class fused_group final : public held_work {
  public:
    explicit fused_group(const queue& q) : queue_(q) {
        group_lists& spare = spare_group_lists();
        statements_.swap(spare.statements);
        signature_.swap(spare.signature);
        trace_.swap(spare.trace);
        memory_of_.swap(spare.memory_of);
        statements_.reserve(typical_statements);
        signature_.reserve(typical_signature);
        reuse_vector_list(numbered_, typical_vectors);
        memory_of_.reserve(typical_vectors);
    }
    ~fused_group() {
        group_lists& spare = spare_group_lists();
        give_back(statements_, spare.statements);
        give_back(signature_, spare.signature);
        give_back(trace_, spare.trace);
        give_back(memory_of_, spare.memory_of);
        recycle_vector_list(std::move(numbered_));
    }
    fused_group(const fused_group&) = delete;
    fused_group& operator=(const fused_group&) = delete;

    bool joins(const layout& parts) const {
        return parts.size() == 1 && parts[0].size > 0 && &parts[0].queue.impl() == &queue_.impl() &&
               (statements_.empty() || (parts[0].begin == begin_ && parts[0].size == size_));
    }
    void hold(held_statement statement, const part_extent& part) {
        begin_ = part.begin;
        size_ = part.size;
        statements_.push_back(std::move(statement));
        held_statement& held = statements_.back();
        if (following_ && repeats_last_group(held)) return;
        if (following_) stop_following(statements_.size() - 1);
        trace(held, [&](std::uintptr_t entry) {
            trace_.push_back(entry);
            return true;
        });
        identify_by_memory(held);
        sign(held);
    }

    /// One kernel for the statements held, which are then no longer held (so that its own
    /// launch, which enqueues held work first, finds none).
    void enqueue() override {
        if (statements_.empty()) return;
        traced_group& last = last_group_on_this_thread();
        // A group that repeats the last one takes its launch; its statements' vectors are
        // identified only where its kernel must be generated (on another device).
        const bool repeated = following_ && matched_ == last.held.size() && last.launch;
        if (!repeated && following_) stop_following(statements_.size());
        std::vector<held_statement> statements = std::exchange(statements_, {});
        fused_signature signature = std::exchange(signature_, {});
        group_trace traced = std::exchange(trace_, {});
        memory_of_.clear();
        numbered_.clear();
        following_ = true;
        matched_ = 0;
        if (!repeated) {
            last.launch = &launch_for(signature, statements);
            last.held = std::move(traced);
        }
        fused_launch& launch = *last.launch;
        const device& dev = queue_.device();
        kernel_argument size_argument = make_argument(std::uint64_t{size_});
        // passed_arguments is in order: one walk over the statements' arguments takes them.
        const auto each_passed = [&](auto&& take) {
            auto next = launch.passed_arguments.begin();
            std::uint32_t index = 0;
            for (auto& held : statements)
                for (auto& argument : held.arguments) {
                    if (next != launch.passed_arguments.end() && *next == index) {
                        take(argument);
                        ++next;
                    }
                    ++index;
                }
        };
        packed_arguments packed(dev);
        packed.add(size_argument);
        each_passed([&](const kernel_argument& argument) { packed.add(argument); });
        const generated_kernel& kernel = launch.kernels.get(
            dev, "kiln_fused",
            [&](const launch_policy& policy) {
                if (repeated) {
                    for (auto& held : statements) identify_by_memory(held);
                    memory_of_.clear();
                }
                return fused_source(statements, policy, target_features_for(dev), packed);
            },
            packed.variant({}));
        std::vector<kernel_argument> args;
        reuse_argument_list(args, 1 + launch.passed_arguments.size());
        args.push_back(std::move(size_argument));
        each_passed([&](kernel_argument& argument) { args.push_back(std::move(argument)); });
        packed.pass(args);
        kernel.launch(queue_, kernel.groups_for(size_), args);
        recycle_argument_list(std::move(args));
        for (auto& held : statements) {
            recycle_argument_list(std::move(held.arguments));
            recycle_vector_list(std::move(held.argument_vectors));
            recycle_vector_list(std::move(held.written));
        }
        // Their storage serves the group's next statements, or the thread's next group.
        give_back(statements, statements_);
        give_back(signature, signature_);
        give_back(traced, trace_);
    }

  private:
    /// Whether `statement` holds what the statement at its place in the thread's last group held
    /// (group_trace); if so it is passed over in the trace.
    bool repeats_last_group(const held_statement& statement) {
        const group_trace& last = last_group_on_this_thread().held;
        std::size_t at = matched_;
        if (!trace(statement,
                   [&](std::uintptr_t entry) { return at < last.size() && last[at++] == entry; }))
            return false;
        matched_ = at;
        return true;
    }
    /// The group no longer repeats the thread's last one: its first `count` statements, which did,
    /// are traced, identified and signed as if they had never been compared.
    void stop_following(std::size_t count) {
        following_ = false;
        const group_trace& last = last_group_on_this_thread().held;
        trace_.assign(last.begin(), last.begin() + static_cast<std::ptrdiff_t>(matched_));
        for (std::size_t s = 0; s < count; ++s) {
            identify_by_memory(statements_[s]);
            sign(statements_[s]);
        }
    }

    /// Vectors are known to a statement by their layout's address, which a vector made after
    /// another was destroyed may reuse within one group; their memory is held by the group's
    /// arguments until its kernel is enqueued, so its address identifies one vector's data.
    void identify_by_memory(held_statement& statement) {
        const auto known_as = [&](const void* layout) {
            return std::find_if(memory_of_.begin(), memory_of_.end(),
                                [&](const auto& known) { return known.first == layout; });
        };
        for (std::size_t k = 0; k < statement.argument_vectors.size(); ++k) {
            const void*& vector = statement.argument_vectors[k];
            if (!vector) continue;
            const void* memory = statement.arguments[k].memory.get();
            if (const auto known = known_as(vector); known != memory_of_.end())
                known->second = memory;
            else
                memory_of_.emplace_back(vector, memory);
            vector = memory;
        }
        // A target whose vector no argument names (a member stored through a view of its own)
        // is the vector the group last saw under that layout, or one no register stands for.
        for (const void*& written : statement.written) {
            const auto known = known_as(written);
            written = known != memory_of_.end() ? known->second : nullptr;
        }
    }

    /// The statement's part of the group's signature (fused_signature).
    void sign(const held_statement& statement) {
        signature_.push_back(reinterpret_cast<std::uintptr_t>(&statement.statement->type()));
        for (const void* vector : statement.argument_vectors)
            signature_.push_back(vector_number(numbered_, vector));
        signature_.push_back(targets_follow);
        for (const void* vector : statement.written)
            signature_.push_back(vector_number(numbered_, vector));
    }

    /// Room for the signature and vectors of nearly every block (an RK4 step of a
    /// multivector<double, 3>: 163 entries, 19 vectors), so that holding statements does not
    /// grow them entry by entry.
    static constexpr std::size_t typical_signature = 256, typical_vectors = 32;
    /// Room for the statements of nearly every block (an RK4 step holds 8), so that the first
    /// group does not grow its list, moving what it holds, statement by statement.
    static constexpr std::size_t typical_statements = 16;

    queue queue_;
    std::size_t begin_ = 0, size_ = 0;
    std::vector<held_statement> statements_;
    /// The memory last seen under each layout address in this group.
    std::vector<std::pair<const void*, const void*>> memory_of_;
    /// The signature of the statements held, and the vectors it numbers, in order.
    fused_signature signature_;
    std::vector<const void*> numbered_;
    /// While every statement held repeats the thread's last group (and so far, `matched_`
    /// entries of its trace), nothing is identified, signed or traced; after, all of it is.
    bool following_ = true;
    std::size_t matched_ = 0;
    group_trace trace_;
};

namespace {
thread_local fused_group* active_group = nullptr;
}  // namespace

fused_group* active_fused_group() noexcept {
    return active_group;
}

bool joins(const fused_group& group, const layout& parts) {
    return group.joins(parts);
}

void hold(fused_group& group, held_statement statement, const part_extent& part) {
    group.hold(std::move(statement), part);
}

void run_fused(const queue& q, void (*block)(void*), void* context) {
    // A block inside another joins the outer group.
    if (active_group) return block(context);
    fused_group group(q);
    // Work held by another scope on this thread goes first.
    enqueue_held_work();
    held_work* const outer = std::exchange(work_held_on_this_thread(), &group);
    active_group = &group;
    const auto leave = [&] {
        active_group = nullptr;
        work_held_on_this_thread() = outer;
    };
    try {
        block(context);
    } catch (...) {
        // What ran before the throw is enqueued, as it would have been one statement at a time.
        leave();
        group.enqueue();
        throw;
    }
    leave();
    group.enqueue();
}

}  // namespace kiln::detail
