// SPDX-License-Identifier: Apache-2.0
// kiln::fused: a block of statements whose consecutive element-wise assignments run as one kernel.
#pragma once
#pragma GCC visibility push(default)

#include <concepts>
#include <cstddef>
#include <kiln/expr/core.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kiln {
namespace detail {

/// One statement's share of a fused kernel's source.
struct fused_fragment {
    /// Declarations of the registers the statement leaves its values in, each element's first.
    std::vector<std::string> registers;
    /// What the statement does for one element, in a block of its own (its names stay apart).
    std::vector<std::string> lines;
    /// Per target: the register that holds what it stored, as its vector keeps it; empty where a
    /// later statement must read the vector's memory (a member stored, a 16-bit vector).
    std::vector<std::string> kept;
    /// The types ("float", "double") whose kiln_rounded_<type> the lines call: each statement's
    /// floating-point results pass through it, so that no multiply of one statement and add of
    /// the next become one fused multiply-add, which the statement's own kernel, storing its
    /// result, could not do (src/codegen/device_vocabulary.hpp).
    std::vector<std::string> rounded;
};

/// A statement held by a fused group until the group's kernel is enqueued.
class fused_statement {
  public:
    virtual ~fused_statement() = default;
    /// The statement's type: with the other statements' types and which vectors they share, it
    /// picks the group's kernel (by the address of its type_info, compared without its name).
    virtual const std::type_info& type() const noexcept = 0;
    /// Declares its parameters through `g` and returns its share of the kernel.
    virtual fused_fragment generate(generator& g) const = 0;
};

/// The storage of the statements that a thread's fused groups hold: taken in turn from blocks
/// that the thread keeps, and free again for the next group once no statement held is left, so
/// that a time stepper's blocks allocate no statement after the first block.
class statement_arena {
  public:
    /// The thread's arena.
    static statement_arena& of_this_thread();
    /// Room for an object of `bytes` aligned to `alignment`, until take_back is called once
    /// for it.
    void* take(std::size_t bytes, std::size_t alignment);
    void take_back() noexcept;

  private:
    struct block {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t size = 0;
    };
    std::vector<block> blocks_;
    /// The block taken from, its bytes taken, and the statements held.
    std::size_t block_ = 0, used_ = 0, held_ = 0;
};

/// Destroys a held statement and gives its room back to the arena it came from.
struct statement_deleter {
    statement_arena* arena = nullptr;
    void operator()(fused_statement* statement) const noexcept {
        statement->~fused_statement();
        arena->take_back();
    }
};
using held_statement_pointer = std::unique_ptr<fused_statement, statement_deleter>;

/// A `Statement` made from `arguments` in the thread's arena.
template <std::derived_from<fused_statement> Statement, class... Arguments>
held_statement_pointer make_held_statement(Arguments&&... arguments) {
    statement_arena& arena = statement_arena::of_this_thread();
    void* room = arena.take(sizeof(Statement), alignof(Statement));
    try {
        return held_statement_pointer(new (room) Statement(std::forward<Arguments>(arguments)...),
                                      statement_deleter{&arena});
    } catch (...) {
        arena.take_back();
        throw;
    }
}

/// A statement's run-time side: its arguments, and the vectors they and its targets are.
struct held_statement {
    held_statement_pointer statement;
    std::vector<kernel_argument> arguments;
    /// Per argument: the vector it reads or writes at the element's index (null for others).
    std::vector<const void*> argument_vectors;
    /// Per target: the vector it writes.
    std::vector<const void*> written;
};

/// The group of kiln::fused in progress on this thread, or null.
class fused_group;
fused_group* active_fused_group() noexcept;
/// Whether a statement running on `parts` joins the group. One that does not runs on its own:
/// its launch enqueues what the group held first.
bool joins(const fused_group& group, const layout& parts);
/// Holds a statement that joins the group, until something else is enqueued or the block ends.
void hold(fused_group& group, held_statement statement, const part_extent& part);

void run_fused(const queue& q, void (*block)(void*), void* context);

}  // namespace detail

/// Runs `block` (a callable taking nothing) with its consecutive element-wise assignments on
/// `q` joined into one kernel:
///
///     kiln::fused(q, [&] {
///         y = 2 * x + z;
///         w = y * y - x;  // reads y from the register the statement above left it in
///     });
///
/// Statements join while every vector they read or write is read and written at the element's
/// own index (no slice, permutation, stencil or raw pointer), all of one size on q alone. Every
/// vector written is still stored, and the results are bit for bit those of the block run
/// without kiln::fused. Anything else that enqueues work or waits for it (a reduction, a stencil,
/// an algorithm, a host read or write, a graph_value's set(), a kernel launch, q.finish()) first
/// enqueues the statements held so far, as does the end of the block. A statement that throws
/// leaves the statements before it enqueued, as they would have been without kiln::fused, and
/// the exception goes on.
template <std::invocable Block>
void fused(const queue& q, Block&& block) {
    detail::run_fused(
        q, [](void* context) { (*static_cast<std::remove_reference_t<Block>*>(context))(); },
        const_cast<void*>(static_cast<const void*>(std::addressof(block))));
}

}  // namespace kiln
#pragma GCC visibility pop
