// SPDX-License-Identifier: Apache-2.0
// Tile maps: the descriptors through which Hopper's tensor memory accelerator (TMA) copies a box
// of a matrix into local memory in one instruction (cp.async.bulk.tensor), the driver encoding
// them on the host (cuTensorMapEncodeTiled). Kernels receive one by value, as a parameter of the
// CUDA vocabulary's type kiln_tile_map, and read it where the launch left it (the translation
// makes such parameters __grid_constant__).
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::detail {

class buffer_storage;

/// The encoded descriptor: 128 opaque bytes, aligned as the driver and the copy instruction
/// require.
struct alignas(64) tile_map {
    static constexpr const char* kiln_struct_name = "kiln_tile_map";
    /// Declared by the CUDA vocabulary (kiln_vocabulary.cuh), which alone runs the copies.
    static std::string kiln_struct_declaration() { return {}; }
    std::array<std::uint64_t, 16> bits{};
};

/// A three-dimensional array of elements in a buffer, innermost dimension first, and the box
/// that one copy moves: box[0] x box[1] x box[2] elements, whose rows of box[0] elements land
/// in local memory `swizzle_bytes` apart with 16-byte chunks swizzled over that span (wgmma's
/// layouts). Elements past an extent arrive as zeros.
struct tile_map_request {
    std::size_t element_bytes = 2;  ///< 1, 2, 4 or 8; the copies move bits, not values
    std::size_t offset_bytes = 0;   ///< of element (0, 0, 0) in the buffer; a multiple of 16
    std::array<std::uint64_t, 3> extents{1, 1, 1};
    /// The byte distance between consecutive indices of dimensions 1 and 2; multiples of 16.
    std::array<std::uint64_t, 2> strides_bytes{16, 16};
    std::array<std::uint32_t, 3> box{1, 1, 1};
    std::size_t swizzle_bytes = 128;  ///< 0 (none), 32, 64 or 128
};

/// The tile map of `request` over `storage`'s memory. Throws kiln::error where the device's
/// backend has no tile maps (OpenCL) or the driver rejects the request.
tile_map encode_tile_map(const buffer_storage& storage, const tile_map_request& request);

}  // namespace kiln::detail

#pragma GCC visibility pop
