// Generated kernels take the ranges of one allocation (a multivector's components) as the
// allocation, passed once, and the distance between its ranges (kiln/expr/launch.hpp).
#include <algorithm>
#include <kiln/expr/core.hpp>
#include <kiln/expr/launch.hpp>
#include <limits>

#include "backend/backend.hpp"
#include "expr/give_back.hpp"
#include "runtime/graph_recording.hpp"

namespace kiln::detail {
namespace {

constexpr std::size_t most_per_byte = std::numeric_limits<unsigned char>::max();

/// The lists of the statements before, so that a statement over ranges allocates none of its
/// own.
struct spare_lists {
    std::vector<char> ranges;
    std::vector<std::pair<const void*, std::size_t>> allocations;
};
spare_lists& spare() {
    thread_local spare_lists lists;
    return lists;
}

}  // namespace

allocations_passed_once::allocations_passed_once(const device& dev)
    : active_(dev.backend() == backend_kind::opencl && !active_recorder()) {}

allocations_passed_once::~allocations_passed_once() {
    give_back(ranges_, spare().ranges);
    give_back(allocations_, spare().allocations);
}

void allocations_passed_once::note(const kernel_argument& arg) {
    const std::size_t position = added_++;
    std::size_t number = 0, index = 0;
    if (arg.what == kernel_argument::kind::buffer && arg.memory && arg.memory->allocation()) {
        const memory_impl::range_place& place = arg.memory->place_in_allocation();
        const void* allocation = arg.memory->allocation().get();
        index = place.index;
        // Ranges at other places than a multivector's are passed as buffers of their own.
        if (place.stride != 0 && index <= most_per_byte) {
            if (allocations_.capacity() == 0) allocations_.swap(spare().allocations);
            const auto known = std::find_if(allocations_.begin(), allocations_.end(),
                                            [&](const auto& a) { return a.first == allocation; });
            if (known == allocations_.end() && allocations_.size() < most_per_byte) {
                allocations_.emplace_back(allocation, place.stride);
                number = allocations_.size();
            } else if (known != allocations_.end() && known->second == place.stride) {
                number = static_cast<std::size_t>(known - allocations_.begin()) + 1;
            }
        }
    }
    if (number == 0) {
        if (!ranges_.empty()) ranges_.insert(ranges_.end(), 2, '\0');
        return;
    }
    // The first range: the arguments before it are none.
    if (ranges_.empty()) {
        ranges_.swap(spare().ranges);
        ranges_.assign(2 * position, '\0');
    }
    ranges_.push_back(static_cast<char>(static_cast<unsigned char>(number)));
    ranges_.push_back(static_cast<char>(static_cast<unsigned char>(index)));
}

std::string_view allocations_passed_once::variant(std::string_view statement_variant) {
    if (ranges_.empty()) return statement_variant;
    const std::string_view ranges(ranges_.data(), ranges_.size());
    if (statement_variant.empty()) return ranges;
    variant_ = statement_variant;
    variant_ += ranges;
    return variant_;
}

void allocations_passed_once::declare(source_builder& builder) const {
    if (ranges_.empty()) return;
    std::vector<source_builder::allocation_range> ranges;
    for (std::size_t i = 0; i + 1 < ranges_.size(); i += 2)
        ranges.push_back(
            {static_cast<unsigned char>(ranges_[i]), static_cast<unsigned char>(ranges_[i + 1])});
    builder.pass_allocations_once(std::move(ranges));
}

void allocations_passed_once::pass(std::vector<kernel_argument>& args) const {
    if (ranges_.empty()) return;
    std::vector<kernel_argument> passed;
    reuse_argument_list(passed, args.size() + allocations_.size());
    std::size_t allocations_passed = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::size_t number = static_cast<unsigned char>(ranges_[2 * i]);
        if (number == 0) {
            passed.push_back(std::move(args[i]));
        } else if (number > allocations_passed) {
            // The allocation's first range: the allocation and its stride in its place.
            const std::shared_ptr<memory_impl>& allocation = args[i].memory->allocation();
            kernel_argument& whole = passed.emplace_back();
            whole.what = kernel_argument::kind::buffer;
            whole.memory = allocation;
            whole.buffer_device = args[i].buffer_device;
            whole.buffer_mode = access::inout;
            whole.size = allocation->size_bytes();
            whole.element_type = buffer_element_type<unsigned char>();
            passed.push_back(
                make_argument(static_cast<std::uint64_t>(allocations_[number - 1].second)));
            allocations_passed = number;
        }
    }
    args.swap(passed);
    recycle_argument_list(std::move(passed));
}

}  // namespace kiln::detail
