// SPDX-License-Identifier: Apache-2.0
// What every part of the _kiln extension shares: dtypes, an array's memory and layout, the
// device each array lives on, and the lazy element-wise expressions that operators build.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::python {

namespace py = pybind11;

/// The element types a kiln.ndarray holds: NumPy's names. bool is stored as one byte.
enum class dtype : std::uint8_t {
    bool_,
    int32,
    uint32,
    int64,
    uint64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
};
inline constexpr std::size_t dtype_count = 11;

std::string_view name_of(dtype t) noexcept;
std::size_t itemsize(dtype t) noexcept;
bool is_integer(dtype t) noexcept;   ///< int32 ... uint64
bool is_floating(dtype t) noexcept;  ///< float16 ... float64
bool is_complex(dtype t) noexcept;
/// The dtype of a NumPy dtype (or anything np.dtype() takes: "float32", np.float32...); a
/// TypeError for one kiln does not have.
dtype dtype_of(const py::handle& numpy_dtype);
/// The NumPy dtype object (ml_dtypes' bfloat16 where it is importable).
py::dtype numpy_dtype(dtype t);
/// The result of an arithmetic operation on `a` and `b` (NumPy's promotion for kiln's dtypes).
dtype promote(dtype a, dtype b);

/// `f(T{})` for the C++ type of `t`: bool, the integers, kiln::half, kiln::bfloat16, float,
/// double, std::complex. A kiln::half for float16.
template <class F>
decltype(auto) visit(dtype t, F&& f) {
    switch (t) {
        case dtype::bool_:
            return f(bool{});
        case dtype::int32:
            return f(std::int32_t{});
        case dtype::uint32:
            return f(std::uint32_t{});
        case dtype::int64:
            return f(std::int64_t{});
        case dtype::uint64:
            return f(std::uint64_t{});
        case dtype::float16:
            return f(kiln::half{});
        case dtype::bfloat16:
            return f(kiln::bfloat16{});
        case dtype::float32:
            return f(float{});
        case dtype::float64:
            return f(double{});
        case dtype::complex64:
            return f(std::complex<float>{});
        case dtype::complex128:
            break;
    }
    return f(std::complex<double>{});
}

/// A device as Python sees it, with the one in-order queue its arrays' work goes to.
struct device_entry {
    kiln::device device;
    kiln::queue queue;
    std::size_t number = 0;  ///< its place in kiln.devices()
};
/// kiln's devices, each with its queue (made on first use).
const device_entry& device_number(std::size_t number);
/// The default device (KILN_DEVICE, else kiln's choice).
const device_entry& default_device_entry();
const device_entry& entry_of(const kiln::device& d);

/// Device memory an array (and its views) holds. Small allocations come from kiln's temporary
/// pool: a cudaMalloc and its synchronising free per statement would cost more than the
/// statement. All work on it goes to its device's one queue, so a block given back is reused in
/// that queue's order.
class memory {
  public:
    static std::shared_ptr<memory> allocate(const device_entry& where, std::size_t bytes);
    /// Memory made elsewhere (a DLPack tensor's), kept as it is.
    static std::shared_ptr<memory> adopt(kiln::detail::buffer_storage storage);
    /// The whole allocation, which may be larger than asked for.
    const kiln::detail::buffer_storage& storage() const noexcept { return storage_; }

  private:
    kiln::detail::temporary_lease lease_;
    kiln::detail::buffer_storage storage_;
};

/// An array's memory and layout: element (r, c) at offset + r * strides[0] + c * strides[1], in
/// elements. A 1-D array uses the last entry of shape and strides (shape[0] is 1).
struct array_data {
    const device_entry* where = nullptr;
    dtype type = dtype::float32;
    std::shared_ptr<memory> mem;
    std::size_t ndim = 1;
    std::array<std::size_t, 2> shape{1, 0};
    std::array<std::ptrdiff_t, 2> strides{0, 1};
    std::size_t offset = 0;

    std::size_t size() const noexcept { return shape[0] * shape[1]; }
    /// Row-major and gap-free, wherever it starts.
    bool compact() const noexcept;
    /// A fresh, compact array of `shape`.
    static array_data empty(const device_entry& where, dtype t, std::size_t ndim,
                            std::array<std::size_t, 2> shape);
    /// Its elements as a kiln::vector on its queue: its own memory when compact and at the
    /// allocation's start, else a copy that the vector alone owns.
    template <class T>
    kiln::vector<T> as_vector() const;
    /// Memory for a contiguous copy.
    kiln::detail::buffer_storage exact_storage() const;
};

class expression;

/// kiln.ndarray: device memory, or a pending element-wise expression that becomes memory when
/// something needs its values (one generated kernel).
class ndarray {
  public:
    explicit ndarray(array_data data);
    explicit ndarray(std::shared_ptr<const expression> pending);

    /// The values, computing a pending expression first.
    const array_data& data() const;
    bool pending() const noexcept { return pending_ != nullptr; }
    const std::shared_ptr<const expression>& expression_of() const noexcept { return pending_; }
    /// Its values as a leaf of expressions, made once: every operator on it reads the leaf.
    const std::shared_ptr<const expression>& leaf() const;

    dtype type() const noexcept;
    std::size_t ndim() const noexcept;
    std::array<std::size_t, 2> shape() const noexcept;
    const device_entry& where() const noexcept;

  private:
    mutable std::shared_ptr<const expression> pending_;
    mutable array_data data_;
    mutable std::shared_ptr<const expression> leaf_;
};

/// The kiln.ndarray `x` holds, or null when it is something else: one type check against the
/// class, whose pybind11 record is looked up once (py::isinstance and cast each look it up in a
/// hash map, several times per operator).
const ndarray* ndarray_of(py::handle x);
/// A new kiln.ndarray holding `a`, made through the same record (py::cast looks it up again).
py::object python_of(std::shared_ptr<ndarray> a);
/// The values of the kiln.ndarray `x`; a TypeError naming `call` when `x` is something else.
const array_data& data_of(py::handle x, const char* call);

/// A compact copy of `a` at the start of its own memory (a's own data when it is so already).
array_data compact(const array_data& a);
/// `a` converted to `t` (one kernel; a's data where the types are the same).
array_data converted(const array_data& a, dtype t);
/// A compact copy of `a` in memory of its own.
array_data copied(const array_data& a);
/// A copy of `a` on another device (through the host).
array_data to_device(const array_data& a, const device_entry& where);
/// The view `a[key]` (ranges with forward steps, integers); ndim 0 for a single element.
array_data view_of(const array_data& a, const py::handle& key);
/// `a` with another shape of as many elements (a view where a is compact).
array_data reshaped(const array_data& a, std::vector<py::ssize_t> sizes);
/// kiln.asarray: a kiln.ndarray as it is (or moved, converted), a DLPack producer's memory
/// without a copy, anything else through NumPy, copied.
py::object asarray(const py::object& object, const py::object& type, const py::object& device);
/// The memory of a DLPack producer (or capsule) as an array on `where`, without a copy.
py::object from_dlpack(const py::object& producer, const device_entry& where,
                       const py::object& type);

/// a @ b (kiln::gemm); NotImplemented for operands that are not kiln arrays.
py::object matmul(const py::object& a, const py::object& b);

/// Raises ValueError unless every array is on `where`'s device.
void check_same_device(const char* call, const device_entry& where, const array_data& other);

/// The Python side of a finished kiln::python::array_data.
py::object wrap(array_data data);

/// Evaluates all pending expressions that are alive, so that a write to memory they read comes
/// after they have read it.
void evaluate_pending();

void bind_arrays(py::module_& m);
void bind_elementwise(py::module_& m);
void bind_algorithms(py::module_& m);
void bind_linalg(py::module_& m);
void bind_interop(py::module_& m);
void bind_errors(py::module_& m);
/// The Python error for a C++ exception, as pybind11 and kiln's translator set it, for functions
/// that CPython calls without pybind11 (the operator slots).
void set_python_error(std::exception_ptr p);
void bind_raw_kernels(py::module_& m);

/// `a` itself when it is 1-D; a ValueError naming `call` otherwise.
array_data flat_for(const char* call, const array_data& a);

/// A compact copy of `a` in memory that only the storage returned holds, never a pool block: see
/// array_data::as_vector.
kiln::detail::buffer_storage owned_compact_copy(const array_data& a);

template <class T>
kiln::vector<T> array_data::as_vector() const {
    // A copy in pooled memory would go back to the pool when its array_data ends here, while the
    // vector is still read: the algorithm's own temporaries, or the next operand's copy, could
    // then take the block over (kiln.sort of a view came out half unsorted so).
    kiln::detail::buffer_storage exact =
        compact() && offset == 0 ? exact_storage() : owned_compact_copy(*this);
    return kiln::vector<T>(where->queue, kiln::buffer<T>(std::move(exact)));
}

}  // namespace kiln::python
