// kiln::fused: the group of statements held on a thread, and the one kernel it enqueues them as.
//
// A group's kernel depends on its statements' types and on which vectors they share (which
// reads an earlier statement's register stands for), never on other run-time values: one kernel
// cache per such signature serves every enqueue of the group after the first.
#include <algorithm>
#include <cstdint>
#include <kiln/expr/fused.hpp>
#include <kiln/expr/launch.hpp>
#include <map>
#include <mutex>

#include "codegen/device_vocabulary.hpp"
#include "runtime/held_work.hpp"

namespace kiln::detail {
namespace {

/// What a group's kernel text depends on: for each statement, its type (the address of its
/// type_info: a type met through two shared libraries costs a second kernel, never a wrong one),
/// then the vectors of its arguments and of its targets, numbered by first appearance in the
/// group (0 for arguments that are no vector).
using fused_signature = std::vector<std::uintptr_t>;

fused_signature signature_of(const std::vector<held_statement>& statements) {
    fused_signature signature;
    std::vector<const void*> seen;
    const auto number = [&](const void* vector) {
        if (!vector) return std::uintptr_t{0};
        const auto at =
            static_cast<std::size_t>(std::find(seen.begin(), seen.end(), vector) - seen.begin());
        if (at == seen.size()) seen.push_back(vector);
        return static_cast<std::uintptr_t>(at) + 1;
    };
    for (const auto& held : statements) {
        signature.push_back(reinterpret_cast<std::uintptr_t>(&held.statement->type()));
        for (const void* vector : held.argument_vectors) signature.push_back(number(vector));
        // Between the arguments and the targets: their counts are part of the key.
        signature.push_back(~std::uintptr_t{0});
        for (const void* vector : held.written) signature.push_back(number(vector));
    }
    return signature;
}

/// The kernel cache of each group signature met so far.
kernel_cache& cache_for(const fused_signature& signature) {
    // A block run again (each step of a time stepper) has the signature of the thread's block
    // before it: its cache is found without the lock and the map. Caches live as long as the
    // process, so the pointer kept stays valid.
    thread_local fused_signature last_signature;
    thread_local kernel_cache* last_cache = nullptr;
    if (last_cache && signature == last_signature) return *last_cache;
    static std::mutex mutex;
    static std::map<fused_signature, std::unique_ptr<kernel_cache>> caches;
    std::lock_guard lock(mutex);
    auto& cache = caches[signature];
    if (!cache) cache = std::make_unique<kernel_cache>();
    last_signature = signature;
    last_cache = cache.get();
    return *cache;
}

/// One kernel running every statement for each element, in order, each in a block of its own;
/// a statement's reads of vectors that earlier ones stored come from their registers.
std::string fused_source(const std::vector<held_statement>& statements, const launch_policy& policy,
                         const target_features& target) {
    source_builder builder;
    builder.begin_kernel("kiln_fused");
    builder.parameter("ulong n");
    std::vector<std::pair<const void*, std::string>> registers, declared;
    std::vector<std::string> aliases;
    std::vector<fused_fragment> fragments;
    for (std::size_t s = 0; s < statements.size(); ++s) {
        const held_statement& held = statements[s];
        const fused_context context{"kiln_s" + std::to_string(s) + "_", held.argument_vectors,
                                    registers, &declared, &aliases};
        generator g(builder, context);
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
    builder.begin_body();
    for (const auto& alias : aliases) builder.line(alias);
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

}  // namespace

class fused_group final : public held_work {
  public:
    explicit fused_group(const queue& q) : queue_(q) {}

    bool joins(const layout& parts) const {
        return parts.size() == 1 && parts[0].size > 0 && &parts[0].queue.impl() == &queue_.impl() &&
               (statements_.empty() || (parts[0].begin == begin_ && parts[0].size == size_));
    }
    void hold(held_statement statement, const part_extent& part) {
        begin_ = part.begin;
        size_ = part.size;
        identify_by_memory(statement);
        statements_.push_back(std::move(statement));
    }

    /// One kernel for the statements held, which are then no longer held (so that its own
    /// launch, which enqueues held work first, finds none).
    void enqueue() override {
        if (statements_.empty()) return;
        std::vector<held_statement> statements = std::exchange(statements_, {});
        memory_of_.clear();
        const device& dev = queue_.device();
        const generated_kernel& kernel =
            cache_for(signature_of(statements))
                .get(dev, "kiln_fused", [&](const launch_policy& policy) {
                    return fused_source(statements, policy, target_features_for(dev));
                });
        argument_list size(0, begin_);
        size.scalar<std::uint64_t>(size_);
        std::vector<kernel_argument> args = std::move(size).take();
        std::size_t count = args.size();
        for (const auto& held : statements) count += held.arguments.size();
        args.reserve(count);
        // Each vector once, as the kernel declares it (fused_context::declared).
        std::vector<const void*> passed;
        for (auto& held : statements)
            for (std::size_t k = 0; k < held.arguments.size(); ++k) {
                const void* vector = held.argument_vectors[k];
                if (vector && std::find(passed.begin(), passed.end(), vector) != passed.end())
                    continue;
                if (vector) passed.push_back(vector);
                args.push_back(std::move(held.arguments[k]));
            }
        kernel.launch(queue_, kernel.groups_for(size_), std::move(args));
    }

  private:
    /// Vectors are known to a statement by their layout's address, which a vector made after
    /// another was destroyed may reuse within one group; their memory is held by the group's
    /// arguments until its kernel is enqueued, so its address identifies one vector's data.
    void identify_by_memory(held_statement& statement) {
        for (std::size_t k = 0; k < statement.argument_vectors.size(); ++k) {
            const void*& vector = statement.argument_vectors[k];
            if (!vector) continue;
            const void* memory = statement.arguments[k].memory.get();
            std::erase_if(memory_of_, [&](const auto& known) { return known.first == vector; });
            memory_of_.emplace_back(vector, memory);
            vector = memory;
        }
        // A target whose vector no argument names (a member stored through a view of its own)
        // is the vector the group last saw under that layout, or one no register stands for.
        for (const void*& written : statement.written) {
            const auto known = std::find_if(memory_of_.begin(), memory_of_.end(),
                                            [&](const auto& m) { return m.first == written; });
            written = known != memory_of_.end() ? known->second : nullptr;
        }
    }

    queue queue_;
    std::size_t begin_ = 0, size_ = 0;
    std::vector<held_statement> statements_;
    /// The memory last seen under each layout address in this group.
    std::vector<std::pair<const void*, const void*>> memory_of_;
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
