// SPDX-License-Identifier: Apache-2.0
// DLPack tensors as kiln's device memory and back, whatever the element type: what
// kiln/interop/dlpack.hpp's typed calls stand on.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/interop/dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/queue.hpp>
#include <span>

namespace kiln::detail::dlpack {

/// How a tensor's elements lie: `rows` rows of `columns`, `row_stride` elements apart.
struct tensor_layout {
    std::size_t rows = 0, columns = 0, row_stride = 0;
    std::size_t elements() const noexcept { return rows * columns; }
};
/// Which layouts a caller views: any tensor whose elements are compact and row-major, as one row,
/// or a tensor of two dimensions whose rows may be apart.
enum class view { elements, matrix };

/// The memory of `tensor` as q's device's, used in place, and its layout. The storage owns the
/// tensor from then on: its deleter runs once kiln's last use of the memory ends (at once for a
/// tensor of no elements). Throws invalid_argument_error naming `call` where the tensor is of
/// another DLPack major version, its dtype is not `dtype`, kiln cannot view its strides as
/// `as`, or its memory is on a device that q's is not, before it takes the tensor; the caller
/// still owns it then.
buffer_storage storage_of(const queue& q, DLManagedTensorVersioned* tensor, DLDataType dtype,
                          std::size_t element_bytes, std::size_t alignment, view as,
                          tensor_layout& layout, const char* call);

/// A tensor of `storage`'s elements, of `dtype` and `shape` (compact and row-major), sharing its
/// memory: it keeps the memory until its deleter runs. On kDLCPU where the device's memory is
/// the host's and the host may use it in place (PoCL's CPU device), on kDLCUDA or kDLOpenCL
/// otherwise. Flagged read-only where kiln does not write the memory.
DLManagedTensorVersioned* tensor_of(const buffer_storage& storage, DLDataType dtype,
                                    std::span<const std::int64_t> shape, const char* call);

}  // namespace kiln::detail::dlpack
#pragma GCC visibility pop
