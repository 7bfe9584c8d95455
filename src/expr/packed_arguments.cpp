// SPDX-License-Identifier: Apache-2.0
// How generated kernels take their arguments on OpenCL: the ranges of one allocation (a
// multivector's components) as the allocation, passed once, with the distance between its
// ranges, and the scalars as one struct (kiln/expr/launch.hpp).
#include <algorithm>
#include <cstring>
#include <kiln/expr/core.hpp>
#include <kiln/expr/launch.hpp>
#include <limits>
#include <memory>

#include "backend/backend.hpp"
#include "expr/give_back.hpp"
#include "runtime/graph_recording.hpp"

namespace kiln::detail {
namespace {

constexpr std::size_t most_per_byte = std::numeric_limits<unsigned char>::max();
/// Bytes a launch records per argument (packed_arguments::passed_).
constexpr std::size_t recorded = 3;

/// The lists of the statements before, so that a statement allocates none of its own; and the
/// storage of the last struct of scalars larger than an argument keeps in itself, taken again
/// once no launch holds it.
struct spare_lists {
    std::vector<char> passed;
    std::vector<std::pair<const void*, std::size_t>> allocations;
    std::shared_ptr<std::byte[]> scalars;
    std::size_t scalars_bytes = 0;
};
spare_lists& spare() {
    thread_local spare_lists lists;
    return lists;
}

char byte(std::size_t value) {
    return static_cast<char>(static_cast<unsigned char>(value));
}
std::size_t value(char byte) {
    return static_cast<unsigned char>(byte);
}

/// Whether a scalar of `bytes` goes into the struct: sizes whose alignment is their size.
bool passed_together(const kernel_argument& arg) {
    return arg.what == kernel_argument::kind::scalar &&
           (arg.size == 1 || arg.size == 2 || arg.size == 4 || arg.size == 8);
}

}  // namespace

packed_arguments::packed_arguments(const device& dev)
    : active_(dev.backend() == backend_kind::opencl && !active_recorder()) {}

packed_arguments::~packed_arguments() {
    give_back(passed_, spare().passed);
    give_back(allocations_, spare().allocations);
}

void packed_arguments::add_member(std::size_t size) {
    scalars_end_ = (scalars_end_ + size - 1) / size * size + size;
    widest_member_ = std::max(widest_member_, size);
}

void packed_arguments::note(const kernel_argument& arg) {
    const std::size_t position = added_++;
    std::size_t number = 0, index = 0;
    bool first_range = false;
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
                first_range = true;
            } else if (known != allocations_.end() && known->second == place.stride) {
                number = static_cast<std::size_t>(known - allocations_.begin()) + 1;
            }
        }
    }
    const std::size_t together = passed_together(arg) ? arg.size : 0;
    if (number == 0 && together == 0) {
        if (!passed_.empty()) passed_.insert(passed_.end(), recorded, '\0');
        return;
    }
    // The first two scalars wait: a statement of two scalars and no range passes them as they
    // are (variant), and records nothing.
    if (passed_.empty() && number == 0 && scalars_ < waiting_.size()) {
        waiting_[scalars_++] = {position, together};
        return;
    }
    if (together != 0) ++scalars_;
    // The first argument passed otherwise that does not wait: the arguments before it are
    // passed as themselves, but for the scalars that waited.
    if (passed_.empty()) {
        passed_.swap(spare().passed);
        passed_.assign(recorded * position, '\0');
        for (std::size_t w = 0; w < std::min(scalars_, waiting_.size()); ++w)
            if (waiting_[w].second != 0 && waiting_[w].first < position) {
                passed_[recorded * waiting_[w].first + 2] = byte(waiting_[w].second);
                add_member(waiting_[w].second);
            }
    }
    // The struct's layout (source_builder::begin_body): the scalars in order, and each
    // allocation's stride where its first range is.
    if (first_range) add_member(sizeof(std::uint64_t));
    if (together != 0) add_member(together);
    passed_.push_back(byte(number));
    passed_.push_back(byte(number != 0 ? index : 0));
    passed_.push_back(byte(together));
}

std::string_view packed_arguments::variant(std::string_view statement_variant) {
    // Two scalars and no range (y = 2*x + z) stay as they are: a struct saves the driver less
    // than it costs to build (PoCL, callgrind: 8.5K host instructions a statement against 8.3K).
    if (passed_.empty()) return statement_variant;
    const std::string_view passed(passed_.data(), passed_.size());
    if (statement_variant.empty()) return passed;
    variant_ = statement_variant;
    variant_ += passed;
    return variant_;
}

void packed_arguments::declare(source_builder& builder) const {
    if (passed_.empty()) return;
    std::vector<source_builder::passed_parameter> how;
    for (std::size_t i = 0; i + recorded <= passed_.size(); i += recorded)
        how.push_back({static_cast<std::uint32_t>(value(passed_[i])),
                       static_cast<std::uint32_t>(value(passed_[i + 1])),
                       static_cast<std::uint32_t>(value(passed_[i + 2]))});
    builder.pass_parameters(std::move(how));
}

void packed_arguments::pass(std::vector<kernel_argument>& args) const {
    if (passed_.empty()) return;
    kernel_argument scalars;
    std::byte* bytes = nullptr;
    if (scalars_end_ > 0) {
        const std::size_t size =
            (scalars_end_ + widest_member_ - 1) / widest_member_ * widest_member_;
        spare_lists& kept = spare();
        if (size > kernel_argument::inline_value_bytes &&
            (kept.scalars.use_count() != 1 || kept.scalars_bytes < size)) {
            kept.scalars_bytes = std::max<std::size_t>(size, 256);
            kept.scalars = std::make_shared_for_overwrite<std::byte[]>(kept.scalars_bytes);
        }
        bytes = scalars.scalar_in(kept.scalars, size);
    }
    if (bytes) std::memset(bytes, 0, scalars.size);
    std::size_t at = 0;
    const auto place = [&](const void* value, std::size_t size) {
        at = (at + size - 1) / size * size;
        std::memcpy(bytes + at, value, size);
        at += size;
    };

    std::vector<kernel_argument> passed;
    // As much room as the list it replaces, so that the lists a thread's statements take turns
    // with keep the room of the largest.
    reuse_argument_list(passed, std::max(args.size() + allocations_.size() + 1, args.capacity()));
    std::size_t allocations_passed = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::size_t number = value(passed_[recorded * i]),
                          together = value(passed_[recorded * i + 2]);
        if (number == 0 && together == 0) {
            passed.push_back(std::move(args[i]));
        } else if (number == 0) {
            place(args[i].value(), together);
        } else if (number > allocations_passed) {
            // The allocation's first range: the allocation in its place, its stride in the
            // struct.
            const std::shared_ptr<memory_impl>& allocation = args[i].memory->allocation();
            kernel_argument& whole = passed.emplace_back();
            whole.what = kernel_argument::kind::buffer;
            whole.memory = allocation;
            whole.buffer_device = args[i].buffer_device;
            whole.buffer_mode = access::inout;
            whole.size = allocation->size_bytes();
            whole.element_type = buffer_element_type<unsigned char>();
            const auto stride = static_cast<std::uint64_t>(allocations_[number - 1].second);
            place(&stride, sizeof stride);
            allocations_passed = number;
        }
    }
    if (bytes) passed.push_back(std::move(scalars));
    args.swap(passed);
    recycle_argument_list(std::move(passed));
}

}  // namespace kiln::detail
