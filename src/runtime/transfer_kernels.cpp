// SPDX-License-Identifier: Apache-2.0
// Copies and fills within one CPU device's memory as kernels on every core (transfer_kernels.hpp).
#include "runtime/transfer_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <kiln/runtime/program.hpp>
#include <mutex>
#include <vector>

namespace kiln::detail {
namespace {

constexpr std::size_t smallest_transfer = std::size_t(1) << 20;
constexpr std::size_t smallest_chunk = std::size_t(64) << 10;
constexpr std::size_t groups_per_compute_unit = 16;
constexpr std::size_t line_bytes = 64;

// One serial loop per work-item over a contiguous chunk, which the compiler turns into wide
// loads and stores. Chunks are multiples of 64 bytes: where the destination is aligned, no two
// cores write one cache line.
constexpr const char* transfer_source = R"(
#define KILN_CHUNK_BOUNDS(bytes)                                                                  \
    const ulong share = (bytes + get_global_size(0) - 1) / get_global_size(0);                   \
    const ulong chunk = (share + 63) / 64 * 64;                                                   \
    const ulong first = (ulong)get_global_id(0) * chunk;                                          \
    const ulong begin = first < bytes ? first : bytes;                                            \
    const ulong end = bytes - begin > chunk ? begin + chunk : bytes;

kernel void kiln_copy_bytes(global const uchar* restrict from, ulong from_offset,
                            global uchar* restrict to, ulong to_offset, ulong bytes) {
    KILN_CHUNK_BOUNDS(bytes)
    for (ulong i = begin; i < end; ++i) to[to_offset + i] = from[from_offset + i];
}

// `pattern` holds 64 bytes: the pattern repeated, so that byte i of the range is its byte i % 64.
kernel void kiln_fill_bytes(global uchar* restrict to, ulong offset, ulong bytes, ulong8 pattern) {
    KILN_CHUNK_BOUNDS(bytes)
    const uchar* line = (const uchar*)&pattern;
    for (ulong at = begin; at < end; at += 64) {
        const uint count = end - at < 64 ? (uint)(end - at) : 64;
        for (uint j = 0; j < count; ++j) to[offset + at + j] = line[j];
    }
}
)";

struct transfer_kernels {
    kiln::kernel copy, fill;
};

const transfer_kernels& kernels_for(const device& dev) {
    static std::mutex mutex;
    static std::vector<std::pair<device, transfer_kernels>> built;
    std::lock_guard lock(mutex);
    for (const auto& [where, kernels] : built)
        if (where == dev) return kernels;
    const kiln::program program(dev, transfer_source);
    built.emplace_back(dev, transfer_kernels{program.kernel("kiln_copy_bytes"),
                                             program.kernel("kiln_fill_bytes")});
    return built.back().second;
}

std::size_t groups_for(const device& dev, std::size_t bytes) {
    return std::clamp<std::size_t>(
        bytes / smallest_chunk, 1,
        std::size_t(dev.properties().compute_units) * groups_per_compute_unit);
}

}  // namespace

bool transfers_with_kernels(const queue& q, std::size_t bytes) {
    const device& dev = q.device();
    return bytes >= smallest_transfer && dev.is_cpu() && dev.backend() == backend_kind::opencl;
}

event copy_with_kernel(const queue& q, const buffer_storage& from, std::size_t from_offset,
                       const buffer_storage& to, std::size_t to_offset, std::size_t bytes,
                       const wait_list& after) {
    return kernels_for(q.device())
        .copy
        .bind({storage_argument(from, access::in, "uchar"),
               make_argument(std::uint64_t(from_offset)),
               storage_argument(to, access::out, "uchar"), make_argument(std::uint64_t(to_offset)),
               make_argument(std::uint64_t(bytes))})
        .launch(q, groups_for(q.device(), bytes), 1, {}, after);
}

event fill_with_kernel(const queue& q, const buffer_storage& to, std::size_t offset,
                       const void* pattern, std::size_t pattern_size, std::size_t bytes,
                       const wait_list& after) {
    std::array<std::byte, line_bytes> line;
    for (std::size_t at = 0; at < line_bytes; at += pattern_size)
        std::memcpy(line.data() + at, pattern, pattern_size);
    kernel_argument repeated;
    std::memcpy(repeated.scalar_of_size(line_bytes), line.data(), line_bytes);
    return kernels_for(q.device())
        .fill
        .bind({storage_argument(to, access::out, "uchar"), make_argument(std::uint64_t(offset)),
               make_argument(std::uint64_t(bytes)), repeated})
        .launch(q, groups_for(q.device(), bytes), 1, {}, after);
}

}  // namespace kiln::detail
