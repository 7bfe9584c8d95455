// SPDX-License-Identifier: Apache-2.0
// DLPack tensors in and out of kiln without a copy: what PyTorch, CuPy, JAX, NumPy and the rest
// exchange arrays through. Not included by <kiln/kiln.hpp>.
//
//     DLManagedTensorVersioned* t = kiln::to_dlpack(v);   // v's memory, kept until t's deleter
//     auto u = kiln::from_dlpack<float>(q, t);              // t's memory; kiln calls t's deleter
//     auto M = kiln::matrix_from_dlpack<float>(q, t2);      // 2-D, rows compact or apart
//     kiln::gemm(C, M, B);
//
// kDLCUDA memory goes to CUDA devices, kDLOpenCL (a cl_mem) to OpenCL ones, and kDLCPU to
// devices whose memory is the host's, used in place (PoCL's CPU device). docs/interop.md.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/interop/dlpack/dlpack.h>

#include <array>
#include <complex>
#include <cstdint>
#include <kiln/float8.hpp>
#include <kiln/half.hpp>
#include <kiln/interop/dlpack_memory.hpp>
#include <kiln/interop/native_handles.hpp>
#include <kiln/matrix.hpp>
#include <kiln/vector.hpp>

namespace kiln {

/// DLPack's dtype of an element type kiln exchanges: float, double, kiln::half (kDLFloat 16),
/// kiln::bfloat16 (kDLBfloat 16), kiln::float8_e4m3 (kDLFloat8_e4m3fn 8), kiln::float8_e5m2
/// (kDLFloat8_e5m2 8), the 8- to 64-bit integers, bool and complex float and double.
template <class T>
inline constexpr bool is_dlpack_element_v = false;
/// The DLDataType of an element type T for which is_dlpack_element_v<T> holds.
template <class T>
inline constexpr DLDataType dlpack_dtype{};

#define KILN_DLPACK_ELEMENT(type, code, bits)               \
    template <>                                             \
    inline constexpr bool is_dlpack_element_v<type> = true; \
    template <>                                             \
    inline constexpr DLDataType dlpack_dtype<type> = {code, bits, 1};
KILN_DLPACK_ELEMENT(float, kDLFloat, 32)
KILN_DLPACK_ELEMENT(double, kDLFloat, 64)
KILN_DLPACK_ELEMENT(half, kDLFloat, 16)
KILN_DLPACK_ELEMENT(bfloat16, kDLBfloat, 16)
KILN_DLPACK_ELEMENT(float8_e4m3, kDLFloat8_e4m3fn, 8)
KILN_DLPACK_ELEMENT(float8_e5m2, kDLFloat8_e5m2, 8)
KILN_DLPACK_ELEMENT(std::int8_t, kDLInt, 8)
KILN_DLPACK_ELEMENT(std::int16_t, kDLInt, 16)
KILN_DLPACK_ELEMENT(std::int32_t, kDLInt, 32)
KILN_DLPACK_ELEMENT(std::int64_t, kDLInt, 64)
KILN_DLPACK_ELEMENT(std::uint8_t, kDLUInt, 8)
KILN_DLPACK_ELEMENT(std::uint16_t, kDLUInt, 16)
KILN_DLPACK_ELEMENT(std::uint32_t, kDLUInt, 32)
KILN_DLPACK_ELEMENT(std::uint64_t, kDLUInt, 64)
KILN_DLPACK_ELEMENT(bool, kDLBool, 8)
KILN_DLPACK_ELEMENT(std::complex<float>, kDLComplex, 64)
KILN_DLPACK_ELEMENT(std::complex<double>, kDLComplex, 128)
#undef KILN_DLPACK_ELEMENT

template <class T>
concept dlpack_element = is_dlpack_element_v<T>;

/// A 1-D tensor of v's elements, sharing v's memory (kept until the tensor's deleter runs),
/// once the work enqueued on v's queue has completed: any consumer may read it at once. On
/// kDLCUDA for CUDA devices, kDLOpenCL for OpenCL ones (`data` is the cl_mem), kDLCPU where the
/// device's memory is the host's and the host may use it in place (PoCL's CPU device).
template <vector_value T>
requires dlpack_element<T> DLManagedTensorVersioned* to_dlpack(const vector<T>& v) {
    constexpr const char* call = "kiln::to_dlpack";
    const auto& memory = detail::interop::only_part(v, call);
    v.queue().finish();
    const std::array<std::int64_t, 1> shape{static_cast<std::int64_t>(v.size())};
    return detail::dlpack::tensor_of(memory.storage(), dlpack_dtype<T>, shape, call);
}

/// The memory of `tensor`, of T's dtype and compact and row-major whatever its dimensions, as a
/// buffer of q's device, without a copy. From then on the buffer owns the tensor: its deleter
/// runs once kiln's last use of the memory ends. Throws invalid_argument_error, before taking
/// the tensor (the caller still owns it), for another dtype, strides kiln cannot view, memory on
/// a device q's is not, or memory kiln's kernels cannot read in place (kiln/interop's rules).
/// A read-only tensor (DLPACK_FLAG_BITMASK_READ_ONLY) is read, never written: what would write
/// it throws invalid_argument_error.
template <dlpack_element T>
buffer<T> buffer_from_dlpack(const queue& q, DLManagedTensorVersioned* tensor) {
    detail::dlpack::tensor_layout layout;
    return buffer<T>(detail::dlpack::storage_of(q, tensor, dlpack_dtype<T>, sizeof(T), alignof(T),
                                                detail::dlpack::view::elements, layout,
                                                "kiln::from_dlpack"));
}

/// buffer_from_dlpack as a kiln::vector on q, for the types kiln::vector holds.
template <vector_value T>
requires dlpack_element<T> vector<T> from_dlpack(const queue& q, DLManagedTensorVersioned* tensor) {
    return vector<T>(q, buffer_from_dlpack<T>(q, tensor));
}

/// A matrix in a DLPack tensor's memory, which it owns (matrix_from_dlpack): a kiln::gemm
/// operand itself, and a view() for what takes views.
template <matrix_value T>
class dlpack_matrix {
  public:
    /// A rows x columns matrix over `data` (which owns the tensor), row r at
    /// r * leading_dimension(); matrix_from_dlpack makes it.
    dlpack_matrix(matrix_storage_t<T> data, std::size_t rows, std::size_t columns,
                  std::size_t leading_dimension)
        : data_(std::move(data)),
          rows_(rows),
          columns_(columns),
          leading_dimension_(leading_dimension) {}

    /// The number of rows.
    std::size_t rows() const noexcept { return rows_; }
    /// The number of columns.
    std::size_t columns() const noexcept { return columns_; }
    /// Elements from one row's start to the next's (the tensor's row stride).
    std::size_t leading_dimension() const noexcept { return leading_dimension_; }
    /// The storage the matrix is a window of: the tensor's memory, which it owns.
    const matrix_storage_t<T>& data() const noexcept { return data_; }
    /// The queue the tensor's memory is used on.
    const kiln::queue& queue() const { return data_.queue(); }
    /// The rows x columns window, row r at r * leading_dimension(); it refers to this object.
    matrix_view<T> view() const { return {data_, rows_, columns_, leading_dimension_}; }

  private:
    matrix_storage_t<T> data_;
    std::size_t rows_, columns_, leading_dimension_;
};

/// The 2-D `tensor`'s memory as a matrix on q without a copy: rows of compact elements, one
/// after another or equally far apart (a row stride, the leading dimension). Owns the tensor as
/// buffer_from_dlpack does, and refuses what it refuses, and strides that are not a row's.
template <matrix_value T>
requires dlpack_element<T> dlpack_matrix<T> matrix_from_dlpack(const queue& q,
                                                               DLManagedTensorVersioned* tensor) {
    detail::dlpack::tensor_layout layout;
    buffer<T> memory(detail::dlpack::storage_of(q, tensor, dlpack_dtype<T>, sizeof(T), alignof(T),
                                                detail::dlpack::view::matrix, layout,
                                                "kiln::matrix_from_dlpack"));
    return dlpack_matrix<T>(matrix_storage_t<T>(q, std::move(memory)), layout.rows, layout.columns,
                            layout.row_stride);
}

namespace detail {
template <class T>
struct gemm_operand_traits<dlpack_matrix<T>> {
    using value_type = T;
    static gemm_operand of(const dlpack_matrix<T>& m) { return m.view().operand(false); }
};
}  // namespace detail

}  // namespace kiln
#pragma GCC visibility pop
