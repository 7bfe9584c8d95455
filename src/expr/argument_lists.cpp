// SPDX-License-Identifier: Apache-2.0
// The lists of kernel arguments (and of the vectors a fused statement uses) that launches on one
// thread finished with, kept empty for the statements after them (expr/core.hpp).
#include <kiln/expr/core.hpp>

namespace kiln::detail {
namespace {

/// Lists of one kind, empty, as many as the statements of a few blocks hold at once.
template <class List>
struct list_pool {
    static constexpr std::size_t most = 64;
    list_pool() { spare.reserve(most); }
    std::vector<List> spare;

    void reuse(List& list, std::size_t capacity) {
        if (!spare.empty() && list.capacity() == 0) {
            list.swap(spare.back());
            spare.pop_back();
        }
        list.reserve(capacity);
    }
    void recycle(List&& list) noexcept {
        if (list.capacity() == 0) return;
        list.clear();
        // Within the room reserved, so that keeping a list never allocates: one the pool has no
        // room for is freed with `list`.
        if (spare.size() < most) spare.push_back(std::move(list));
    }
};

list_pool<std::vector<kernel_argument>>& argument_lists() {
    thread_local list_pool<std::vector<kernel_argument>> pool;
    return pool;
}
list_pool<std::vector<const void*>>& vector_lists() {
    thread_local list_pool<std::vector<const void*>> pool;
    return pool;
}

}  // namespace

void reuse_argument_list(std::vector<kernel_argument>& arguments, std::size_t capacity) {
    argument_lists().reuse(arguments, capacity);
}
void reuse_vector_list(std::vector<const void*>& vectors, std::size_t capacity) {
    vector_lists().reuse(vectors, capacity);
}
void recycle_argument_list(std::vector<kernel_argument>&& arguments) noexcept {
    argument_lists().recycle(std::move(arguments));
}
void recycle_vector_list(std::vector<const void*>&& vectors) noexcept {
    vector_lists().recycle(std::move(vectors));
}

}  // namespace kiln::detail
