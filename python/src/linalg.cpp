// SPDX-License-Identifier: Apache-2.0
// Linear algebra and transforms on kiln.ndarray: matmul / @ (kiln::gemm on the arrays' memory,
// views and transposes included), the FFTs (kiln::fft, rfft, irfft), sparse matrix times vector
// from CSR arrays, and kiln's counter-based random numbers.
#include <pybind11/stl.h>

#include <kiln/fft.hpp>
#include <kiln/matrix.hpp>
#include <kiln/random.hpp>
#include <kiln/sparse.hpp>

#include "expression.hpp"

namespace kiln::python {

namespace {

// A 2-D operand of gemm: the array's rows in place (row-major, or transposed), else a copy.
template <class T>
struct gemm_operand {
    matrix_storage_t<T> storage;
    std::size_t rows, columns, leading, offset;
    bool transposed;

    explicit gemm_operand(const array_data& in)
        : storage(make(in)),
          rows(in.shape[0]),
          columns(in.shape[1]),
          leading(0),
          offset(in.offset),
          transposed(false) {
        if (in.strides[1] == 1 && in.strides[0] >= static_cast<std::ptrdiff_t>(in.shape[1])) {
            leading = static_cast<std::size_t>(std::max<std::ptrdiff_t>(in.strides[0], 1));
        } else {
            transposed = true;  // strides[0] == 1: the transpose of a row-major matrix
            leading = static_cast<std::size_t>(std::max<std::ptrdiff_t>(in.strides[1], 1));
        }
    }
    static matrix_storage_t<T> make(const array_data& a) {
        kiln::buffer<T> whole(a.mem->storage());
        return matrix_storage_t<T>(a.where->queue, std::move(whole));
    }
    static bool usable(const array_data& a) {
        const bool rows =
            a.strides[1] == 1 && a.strides[0] >= static_cast<std::ptrdiff_t>(a.shape[1]);
        const bool columns =
            a.strides[0] == 1 && a.strides[1] >= static_cast<std::ptrdiff_t>(a.shape[0]);
        return (rows || columns) && (a.mem->storage().bytes() % sizeof(T)) == 0;
    }
};

template <class T, class Out>
void run_gemm(const array_data& a, const array_data& b, const array_data& c) {
    const gemm_operand<T> x(a), y(b);
    kiln::vector<Out> out = c.as_vector<Out>();
    kiln::matrix_view<Out> result(out, c.shape[0], c.shape[1], c.shape[1]);
    auto view = [](const gemm_operand<T>& o) {
        if (!o.transposed)
            return kiln::matrix_view<T>(o.storage, o.rows, o.columns, o.leading, o.offset);
        return kiln::matrix_view<T>(o.storage, o.columns, o.rows, o.leading, o.offset);
    };
    const auto va = view(x), vb = view(y);
    py::gil_scoped_release unlocked;
    if (!x.transposed && !y.transposed)
        kiln::gemm(result, va, vb);
    else if (x.transposed && !y.transposed)
        kiln::gemm(result, kiln::transposed(va), vb);
    else if (!x.transposed)
        kiln::gemm(result, va, kiln::transposed(vb));
    else
        kiln::gemm(result, kiln::transposed(va), kiln::transposed(vb));
}

}  // namespace

py::object matmul(const py::object& left, const py::object& right) {
    const ndarray* held_left = ndarray_of(left);
    const ndarray* held_right = ndarray_of(right);
    if (!held_left || !held_right) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    array_data a = held_left->data();
    array_data b = held_right->data();
    check_same_device("kiln.matmul", *a.where, b);
    const bool vector_left = a.ndim == 1, vector_right = b.ndim == 1;
    if (vector_left) a = reshaped(a, {1, static_cast<py::ssize_t>(a.size())});
    if (vector_right) b = reshaped(b, {static_cast<py::ssize_t>(b.size()), 1});
    if (a.shape[1] != b.shape[0])
        throw py::value_error("kiln.matmul: shapes (" + std::to_string(a.shape[0]) + ", " +
                              std::to_string(a.shape[1]) + ") and (" + std::to_string(b.shape[0]) +
                              ", " + std::to_string(b.shape[1]) + ") do not match: " +
                              std::to_string(a.shape[1]) + " != " + std::to_string(b.shape[0]));
    dtype t = promote(a.type, b.type);
    const bool sixteen = t == dtype::float16 || t == dtype::bfloat16;
    if (!sixteen && t != dtype::float32 && t != dtype::float64)
        throw py::type_error(
            std::string(
                "kiln.matmul: multiplies float16, bfloat16, float32 and float64 matrices, not ") +
            std::string(name_of(t)));
    const dtype out_type = sixteen ? dtype::float32 : t;
    array_data c = array_data::empty(*a.where, out_type, 2, {a.shape[0], b.shape[1]});
    auto prepared = [&](array_data m) {
        if (m.type != t) m = converted(m, t);
        bool fine = false;
        visit(t, [&](auto zero) {
            using T = decltype(zero);
            if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, kiln::half> || std::is_same_v<T, kiln::bfloat16>)
                fine = gemm_operand<T>::usable(m);
        });
        return fine ? m : copied(m);
    };
    if (c.size() > 0) {
        a = prepared(a);
        b = prepared(b);
        if (a.shape[1] == 0) {
            c = converted(reshaped(wrap(c).attr("__mul__")(0).cast<const ndarray&>().data(),
                                   {static_cast<py::ssize_t>(c.shape[0]),
                                    static_cast<py::ssize_t>(c.shape[1])}),
                          out_type);
        } else {
            switch (t) {
                case dtype::float32:
                    run_gemm<float, float>(a, b, c);
                    break;
                case dtype::float64:
                    run_gemm<double, double>(a, b, c);
                    break;
                case dtype::float16:
                    run_gemm<kiln::half, float>(a, b, c);
                    break;
                default:
                    run_gemm<kiln::bfloat16, float>(a, b, c);
                    break;
            }
        }
    }
    if (vector_left && vector_right) return py::module_::import("kiln").attr("sum")(wrap(c));
    if (vector_left) c = reshaped(c, {static_cast<py::ssize_t>(c.shape[1])});
    if (vector_right) c = reshaped(c, {static_cast<py::ssize_t>(c.shape[0])});
    return wrap(std::move(c));
}

namespace {

// --- FFT ----------------------------------------------------------------------------------------

enum class transform { forward, inverse, real_forward, real_inverse };

// Transforms of the last axis (each row of a 2-D array), or of both axes (`both`).
py::object fft(const py::object& x, transform kind, bool both, std::optional<std::size_t> n_out) {
    array_data a = data_of(x, "kiln.fft");
    const bool real_in = kind == transform::real_forward;
    const bool real_out = kind == transform::real_inverse;
    const bool doubled =
        a.type == dtype::float64 || a.type == dtype::complex128 || is_integer(a.type);
    if (real_in) {
        if (is_complex(a.type)) throw py::type_error("kiln.fft.rfft: takes real values");
        a = converted(a, doubled ? dtype::float64 : dtype::float32);
    } else {
        a = converted(a, doubled ? dtype::complex128 : dtype::complex64);
    }
    a = compact(a);
    const std::size_t rows = a.shape[0], columns = a.shape[1];
    const std::size_t last = real_out ? n_out.value_or(2 * (columns - 1)) : columns;
    if (last == 0 || (real_out && columns != last / 2 + 1))
        throw py::value_error(
            "kiln.fft: " +
            std::string(real_out ? "irfft needs n with n // 2 + 1 == the input's last extent"
                                 : "no elements to transform"));
    std::vector<std::size_t> sizes =
        both && a.ndim == 2 ? std::vector<std::size_t>{rows, last} : std::vector<std::size_t>{last};
    const std::size_t batch = both && a.ndim == 2 ? 1 : rows;
    const std::size_t out_columns = real_in ? last / 2 + 1 : last;
    const dtype out_type = real_out ? (doubled ? dtype::float64 : dtype::float32)
                                    : (doubled ? dtype::complex128 : dtype::complex64);
    array_data out = array_data::empty(*a.where, out_type, a.ndim, {rows, out_columns});
    auto run = [&](auto zero) {
        using T = decltype(zero);
        const kiln::queue& q = a.where->queue;
        py::gil_scoped_release unlocked;
        if (kind == transform::forward || kind == transform::inverse) {
            auto in = a.as_vector<std::complex<T>>();
            auto o = out.as_vector<std::complex<T>>();
            if (kind == transform::forward)
                o = kiln::fft<T>(q, sizes, batch)(in);
            else
                o = kiln::fft<T>(q, sizes, kiln::inverse, batch)(in);
        } else if (real_in) {
            auto in = a.as_vector<T>();
            auto o = out.as_vector<std::complex<T>>();
            kiln::rfft<T>(q, sizes, batch)(in, o);
        } else {
            auto in = a.as_vector<std::complex<T>>();
            auto o = out.as_vector<T>();
            kiln::irfft<T>(q, sizes, batch)(in, o);
        }
    };
    if (doubled)
        run(double{});
    else
        run(float{});
    return wrap(std::move(out));
}

// --- sparse -------------------------------------------------------------------------------------

py::object spmv(const py::object& data_in, const py::object& indices_in,
                const py::object& indptr_in, std::size_t columns, const py::object& x_in) {
    py::module_ np = py::module_::import("numpy");
    const array_data& x = data_of(x_in, "kiln.spmv");
    if (x.size() != columns)
        throw py::value_error("kiln.spmv: the vector has " + std::to_string(x.size()) +
                              " elements, the matrix " + std::to_string(columns) + " columns");
    const bool doubled = x.type == dtype::float64;
    py::array values = np.attr("ascontiguousarray")(data_in, doubled ? "float64" : "float32");
    py::array_t<std::int64_t> column_index = np.attr("ascontiguousarray")(indices_in, "int64");
    py::array_t<std::int64_t> row_pointer = np.attr("ascontiguousarray")(indptr_in, "int64");
    const std::size_t rows = static_cast<std::size_t>(row_pointer.size()) - 1;
    array_data out =
        array_data::empty(*x.where, doubled ? dtype::float64 : dtype::float32, 1, {1, rows});
    auto run = [&](auto zero) {
        using T = decltype(zero);
        const T* v = static_cast<const T*>(values.data());
        const std::span<const std::int64_t> ptr(row_pointer.data(), rows + 1);
        const std::span<const std::int64_t> col(column_index.data(),
                                                static_cast<std::size_t>(column_index.size()));
        const std::span<const T> val(v, static_cast<std::size_t>(values.size()));
        kiln::vector<T> xv = (x.type == (doubled ? dtype::float64 : dtype::float32)
                                  ? x
                                  : converted(x, doubled ? dtype::float64 : dtype::float32))
                                 .template as_vector<T>();
        kiln::vector<T> y = out.as_vector<T>();
        py::gil_scoped_release unlocked;
        kiln::sparse_matrix<T> A(x.where->queue, rows, columns, ptr, col, val);
        y = A * xv;
    };
    if (rows > 0) {
        if (doubled)
            run(double{});
        else
            run(float{});
    }
    return wrap(std::move(out));
}

// --- random -------------------------------------------------------------------------------------

py::object random_numbers(std::size_t n, std::uint64_t seed, std::uint64_t offset, bool normal,
                          const py::object& type, const py::object& device) {
    const dtype t = type.is_none() ? dtype::float64 : dtype_of(type);
    if (t != dtype::float32 && t != dtype::float64)
        throw py::type_error("kiln.random: makes float32 or float64 values");
    const device_entry& where = py::module_::import("kiln._kiln")
                                    .attr("_device_argument")(device)
                                    .cast<const device_entry&>();
    array_data out = array_data::empty(where, t, 1, {1, n});
    auto run = [&](auto zero) {
        using T = decltype(zero);
        kiln::vector<T> v = out.as_vector<T>();
        py::gil_scoped_release unlocked;
        if (n == 0) return;
        if (normal)
            v = kiln::random_normal<T>{}(kiln::element_index(offset), seed);
        else
            v = kiln::random_uniform<T>{}(kiln::element_index(offset), seed);
    };
    if (t == dtype::float32)
        run(float{});
    else
        run(double{});
    return wrap(std::move(out));
}

}  // namespace

void bind_linalg(py::module_& m) {
    m.def("matmul", matmul);
    m.def("_fft", [](const py::object& x, const std::string& kind, bool both,
                     std::optional<std::size_t> n) {
        const transform t = kind == "fft"    ? transform::forward
                            : kind == "ifft" ? transform::inverse
                            : kind == "rfft" ? transform::real_forward
                                             : transform::real_inverse;
        return fft(x, t, both, n);
    });
    m.def("_spmv", spmv);
    m.def("_random", random_numbers, py::arg("n"), py::arg("seed"), py::arg("offset"),
          py::arg("normal"), py::arg("dtype"), py::arg("device"));
}

}  // namespace kiln::python
