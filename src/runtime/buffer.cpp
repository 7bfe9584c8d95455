// SPDX-License-Identifier: Apache-2.0
// Shapes and the untyped, bounds-checked transfers beneath every kiln::buffer.
#include <array>
#include <bit>
#include <cstring>
#include <kiln/detail/tile_map.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/pinned.hpp>
#include <limits>
#include <optional>

#include "backend/backend.hpp"
#include "runtime/command_target.hpp"
#include "runtime/device_label.hpp"
#include "runtime/graph_recording.hpp"
#include "runtime/profiler.hpp"
#include "runtime/transfer_kernels.hpp"

namespace kiln {

shape::shape(std::initializer_list<std::size_t> extents) : rank_(extents.size()) {
    if (extents.size() < 1 || extents.size() > 3)
        throw invalid_argument_error(
            "kiln::shape", "a shape has 1 to 3 extents, not " + std::to_string(extents.size()));
    std::size_t i = 0;
    for (auto e : extents) extents_[i++] = e;
}

std::size_t shape::size() const {
    std::size_t total = 1;
    for (std::size_t i = 0; i < rank_; ++i) {
        if (extents_[i] != 0 && total > std::numeric_limits<std::size_t>::max() / extents_[i])
            throw invalid_argument_error("kiln::shape::size",
                                         "element count of " + to_string() + " overflows");
        total *= extents_[i];
    }
    return total;
}

std::string shape::to_string() const {
    std::string text = "{";
    for (std::size_t i = 0; i < rank_; ++i) text += (i ? ", " : "") + std::to_string(extents_[i]);
    return text + "}";
}

namespace detail {

void throw_size_mismatch(const char* call, std::size_t expected, std::size_t got) {
    throw invalid_argument_error(
        call, "the host range has " + std::to_string(got) + " elements but the buffer has " +
                  std::to_string(expected) + " (use the offset overload for a sub-range)");
}

void throw_out_of_range(const char* call, std::size_t offset, std::size_t count, std::size_t size) {
    throw invalid_argument_error(call, "elements [" + std::to_string(offset) + ", " +
                                           std::to_string(offset) + " + " + std::to_string(count) +
                                           ") are outside the buffer's " + std::to_string(size) +
                                           " elements");
}

std::size_t checked_bytes(std::size_t count, std::size_t element_size) {
    if (element_size != 0 && count > std::numeric_limits<std::size_t>::max() / element_size)
        throw invalid_argument_error("kiln::buffer", std::to_string(count) + " elements of " +
                                                         std::to_string(element_size) +
                                                         " bytes overflow the address space");
    return count * element_size;
}

namespace {

void check_same_device(const char* call, const kiln::device& buffer_device, const queue& q) {
    if (!(buffer_device == q.device()))
        throw invalid_argument_error(call, "the buffer lives on " + device_label(buffer_device) +
                                               " but the queue is on " + device_label(q.device()));
}

/// Whether the queue's backend copies between the two devices itself (CUDA: peer to peer, or
/// staged on the queue's stream), so that the copy is one command on the queue.
bool backend_copies(const kiln::device& from, const kiln::device& to) {
    return from == to || (from.backend() == to.backend() &&
                          from.impl().copy_between(to.impl()) != device_impl::device_copy::none);
}

/// Pinned memory of this thread's staged copies between devices, kept between calls (pinning
/// takes the driver long, next to moving a few MiB).
std::byte* thread_staging(const kiln::device& dev, std::size_t bytes) {
    struct staging {
        kiln::device owner;
        host_vector<std::byte> memory;
    };
    thread_local std::optional<staging> mine;
    if (!mine || !(mine->owner == dev) || mine->memory.size() < bytes) {
        mine.reset();  // frees the old memory before pinning more
        mine.emplace(staging{dev, host_vector<std::byte>(bytes, pinned_allocator<std::byte>(dev))});
    }
    return mine->memory.data();
}

/// A copy between devices that no queue reaches both of: chunks read into pinned host memory on
/// a queue of the source's device and written from there on one of the destination's, two
/// chunks in flight so that one's write overlaps the next one's read. Complete on return.
void copy_through_host(const buffer_storage& from, const queue& from_queue, std::size_t offset,
                       const buffer_storage& to, const queue& to_queue, std::size_t to_offset,
                       std::size_t count) {
    constexpr std::size_t chunk = std::size_t{4} << 20;
    std::byte* staging = thread_staging(from.device(), 2 * std::min(chunk, count));
    std::array<event, 2> written;
    for (std::size_t done = 0, k = 0; done < count; done += chunk, k ^= 1) {
        const std::size_t piece = std::min(chunk, count - done);
        std::byte* slot = staging + k * chunk;
        written[k].wait();  // the write from this slot two chunks ago
        from.read_bytes(from_queue, offset + done, slot, piece, {}, true);
        written[k] = to.write_bytes(to_queue, to_offset + done, slot, piece, {}, false);
    }
    for (const event& e : written) e.wait();
}

}  // namespace

buffer_storage::buffer_storage(const kiln::device& dev, std::size_t bytes, access mode)
    : device_(dev), bytes_(bytes), mode_(mode) {
    // Zero-byte buffers are legal and common (empty inputs); they own no device memory.
    if (bytes > 0) memory_ = dev.impl().allocate(bytes, mode);
    // Memory made inside a capture (an algorithm's temporaries) belongs to the graph, which
    // keeps it for its launches.
    if (auto* recorder = active_recorder(); recorder && memory_) [[unlikely]]
        recorder->allocated(dev, memory_);
}

buffer_storage::buffer_storage(const buffer_storage& allocation, std::size_t offset,
                               std::size_t bytes)
    : device_(allocation.device_), bytes_(bytes), mode_(allocation.mode_) {
    const std::size_t alignment = device_.properties().memory_base_alignment_bytes;
    if (offset > allocation.bytes_ || bytes > allocation.bytes_ - offset ||
        (alignment > 0 && offset % alignment != 0))
        throw invalid_argument_error(
            "kiln::buffer",
            "a range of " + std::to_string(bytes) + " bytes at byte " + std::to_string(offset) +
                " of an allocation of " + std::to_string(allocation.bytes_) +
                " bytes (ranges begin at multiples of " + std::to_string(alignment) + " bytes)");
    if (bytes == 0) return;
    memory_ = device_.impl().allocate_range(*allocation.memory_, offset, bytes);
    const std::size_t unit = std::max<std::size_t>(alignment, 1),
                      stride = (bytes + unit - 1) / unit * unit;
    memory_->make_range_of(allocation.memory_,
                           offset % stride == 0 ? memory_impl::range_place{offset / stride, stride}
                                                : memory_impl::range_place{});
    if (auto* recorder = active_recorder(); recorder) [[unlikely]]
        recorder->allocated(device_, memory_);
}

buffer_storage::buffer_storage(const kiln::device& dev, std::shared_ptr<memory_impl> memory,
                               std::size_t bytes)
    : device_(dev), bytes_(bytes), memory_(std::move(memory)) {}

bool buffer_storage::read_only() const noexcept {
    return memory_ && memory_->read_only();
}

namespace {
void check_writable(const char* call, const buffer_storage& storage) {
    if (storage.read_only())
        throw invalid_argument_error(call,
                                     "the memory is read-only (a DLPack tensor flagged "
                                     "DLPACK_FLAG_BITMASK_READ_ONLY): kiln does not write it");
}
}  // namespace

event buffer_storage::write_bytes(const queue& q, std::size_t offset, const void* src,
                                  std::size_t count, const wait_list& after, bool blocking) const {
    const command_target target = command_target_for(q);
    check_same_device("kiln::buffer::write", device_, q);
    check_writable("kiln::buffer::write", *this);
    if (count == 0) return blocking ? (wait_for_all(after.events()), event()) : q.marker(after);
    if (target.recorder) [[unlikely]]
        return event(target.recorder->write(q, memory_, offset, src, count, after));
    return profiling::recorded(
        q, {profiling::record_kind::write, count, nullptr, nullptr, blocking},
        [&] { return target.queue.write(*memory_, offset, src, count, after.events(), blocking); });
}

event buffer_storage::read_bytes(const queue& q, std::size_t offset, void* dst, std::size_t count,
                                 const wait_list& after, bool blocking) const {
    const command_target target = command_target_for(q);
    check_same_device("kiln::buffer::read", device_, q);
    if (target.recorder) [[unlikely]]
        target.recorder->refuse("kiln::buffer::read",
                                "a read of device memory to the host (an "
                                "algorithm that reads a result back mid-way, "
                                "such as a count, cannot be captured)");
    if (count == 0) return blocking ? (wait_for_all(after.events()), event()) : q.marker(after);
    return profiling::recorded(
        q, {profiling::record_kind::read, count, nullptr, nullptr, blocking},
        [&] { return target.queue.read(*memory_, offset, dst, count, after.events(), blocking); });
}

event buffer_storage::copy_bytes(const queue& q, std::size_t offset, const buffer_storage& dst,
                                 std::size_t dst_offset, std::size_t count,
                                 const wait_list& after) const {
    const command_target target = command_target_for(q);
    const bool from_here = device_ == q.device(), to_here = dst.device_ == q.device();
    if (!from_here && !to_here)
        throw invalid_argument_error("kiln::buffer::copy_to",
                                     "the source lives on " + device_label(device_) +
                                         " and the destination on " + device_label(dst.device_) +
                                         " but the queue is on " + device_label(q.device()) +
                                         ": a copy runs on a queue of one of the two devices");
    check_writable("kiln::buffer::copy_to (destination)", dst);
    if (count == 0) return q.marker(after);
    if (target.recorder && !(from_here && to_here)) [[unlikely]]
        target.recorder->refuse("kiln::buffer::copy_to", "a copy between two devices");
    // Overlapping ranges go to the copy command, which reports them.
    const bool overlap =
        memory_ == dst.memory_ && offset < dst_offset + count && dst_offset < offset + count;
    if (from_here && to_here && !overlap && transfers_with_kernels(q, count))
        return copy_with_kernel(q, *this, offset, dst, dst_offset, count, after);
    if (target.recorder) [[unlikely]]
        return event(
            target.recorder->copy(q, memory_, offset, dst.memory_, dst_offset, count, after));
    if (backend_copies(device_, dst.device_))
        return profiling::recorded(q, {profiling::record_kind::copy, count}, [&] {
            return target.queue.copy(*memory_, offset, *dst.memory_, dst_offset, count,
                                     after.events());
        });
    // The other device's side runs on a queue of its own: OpenCL queues reach one context.
    wait_for_all(after.events());
    const queue other(from_here ? dst.device_ : device_);
    copy_through_host(*this, from_here ? q : other, offset, dst, from_here ? other : q, dst_offset,
                      count);
    return q.marker();
}

event buffer_storage::fill_bytes(const queue& q, std::size_t offset, const void* pattern,
                                 std::size_t pattern_size, std::size_t count,
                                 const wait_list& after) const {
    const command_target target = command_target_for(q);
    check_same_device("kiln::buffer::fill", device_, q);
    check_writable("kiln::buffer::fill", *this);
    if (count == 0) return q.marker(after);
    if (std::has_single_bit(pattern_size) && pattern_size <= 64 && transfers_with_kernels(q, count))
        return fill_with_kernel(q, *this, offset, pattern, pattern_size, count, after);
    if (target.recorder && std::has_single_bit(pattern_size) && pattern_size <= 128) [[unlikely]]
        return event(
            target.recorder->fill(q, memory_, offset, pattern, pattern_size, count, after));
    if (std::has_single_bit(pattern_size) && pattern_size <= 128)
        return profiling::recorded(q, {profiling::record_kind::fill, count}, [&] {
            return target.queue.fill(*memory_, offset, pattern, pattern_size, count,
                                     after.events());
        });
    // Devices fill only power-of-two patterns; other element sizes are expanded on the host.
    std::vector<std::byte> expanded(count);
    for (std::size_t at = 0; at < count; at += pattern_size)
        std::memcpy(expanded.data() + at, pattern, pattern_size);
    if (target.recorder) [[unlikely]]
        return event(target.recorder->write(q, memory_, offset, expanded.data(), count, after));
    return profiling::recorded(q, {profiling::record_kind::fill, count, nullptr, nullptr, true},
                               [&] {
                                   return target.queue.write(*memory_, offset, expanded.data(),
                                                             count, after.events(), true);
                               });
}

tile_map encode_tile_map(const buffer_storage& storage, const tile_map_request& request) {
    if (storage.memory() == nullptr)
        throw invalid_argument_error("kiln tile map", "the buffer holds no memory");
    return storage.memory()->encode_tile_map(request);
}

}  // namespace detail

copy_route copy_route_between(const kiln::device& from, const kiln::device& to) {
    if (from == to) return copy_route::within_device;
    if (from.backend() == to.backend() &&
        from.impl().copy_between(to.impl()) == detail::device_impl::device_copy::peer)
        return copy_route::peer_to_peer;
    return copy_route::staged;
}

std::size_t device_sizeof_size_t(const device& dev) {
    return dev.properties().address_bits / 8;
}

}  // namespace kiln
