// SPDX-License-Identifier: Apache-2.0
// The storage of the statements a thread's fused groups hold (kiln/expr/fused.hpp).
#include <algorithm>
#include <cstdint>
#include <kiln/expr/fused.hpp>

namespace kiln::detail {
namespace {

/// Room for the statements of nearly every group in one block (an RK4 step of a
/// multivector<double, 3> holds 8); a larger statement has a block of its own size.
constexpr std::size_t block_bytes = 16 * 1024;

}  // namespace

statement_arena& statement_arena::of_this_thread() {
    thread_local statement_arena arena;
    return arena;
}

void* statement_arena::take(std::size_t bytes, std::size_t alignment) {
    for (;; ++block_, used_ = 0) {
        if (block_ == blocks_.size()) {
            const std::size_t size = std::max(block_bytes, bytes + alignment);
            blocks_.push_back({std::make_unique_for_overwrite<std::byte[]>(size), size});
        }
        const block& b = blocks_[block_];
        const auto start = reinterpret_cast<std::uintptr_t>(b.bytes.get());
        const std::size_t at = (start + used_ + alignment - 1) / alignment * alignment - start;
        if (at + bytes <= b.size) {
            used_ = at + bytes;
            ++held_;
            return b.bytes.get() + at;
        }
    }
}

void statement_arena::take_back() noexcept {
    if (--held_ == 0) block_ = used_ = 0;
}

}  // namespace kiln::detail
