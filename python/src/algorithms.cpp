// SPDX-License-Identifier: Apache-2.0
// kiln's reductions and algorithms on kiln.ndarray: sum, min, max, dot; sort, argsort,
// sort_by_key; cumsum; unique, compress, nonzero, reduce_by_key; histogram; the segmented
// reduce, scan and sort. Each wraps the C++ call on the array's memory; the GIL is released
// while kiln works and waits.
#include <pybind11/stl.h>

#include <kiln/algo/sort_copy.hpp>
#include <kiln/algorithm.hpp>

#include "expression.hpp"

namespace kiln::python {

namespace {

// The dtypes kiln's scans, reductions and sorts take (detail::scan_value), as their C++ type.
template <class F>
decltype(auto) visit_number(const char* call, dtype t, F&& f) {
    switch (t) {
        case dtype::int32:
            return f(std::int32_t{});
        case dtype::uint32:
            return f(std::uint32_t{});
        case dtype::int64:
            return f(std::int64_t{});
        case dtype::uint64:
            return f(std::uint64_t{});
        case dtype::float32:
            return f(float{});
        case dtype::float64:
            return f(double{});
        default:
            break;
    }
    throw py::type_error(std::string(call) + ": not for " + std::string(name_of(t)) +
                         " arrays (int32, uint32, int64, uint64, float32, float64)");
}

template <class T>
constexpr dtype dtype_of_type() {
    if constexpr (std::is_same_v<T, std::int32_t>)
        return dtype::int32;
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        return dtype::uint32;
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return dtype::int64;
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return dtype::uint64;
    else if constexpr (std::is_same_v<T, float>)
        return dtype::float32;
    else if constexpr (std::is_same_v<T, double>)
        return dtype::float64;
    else if constexpr (std::is_same_v<T, std::complex<float>>)
        return dtype::complex64;
    else
        return dtype::complex128;
}

// A flat, compact array of n elements of T on `where`, and its kiln::vector.
template <class T>
std::pair<array_data, kiln::vector<T>> fresh(const device_entry& where, std::size_t n) {
    array_data a = array_data::empty(where, dtype_of_type<T>(), 1, {1, n});
    kiln::vector<T> v = a.as_vector<T>();
    return {std::move(a), std::move(v)};
}

array_data flat(const array_data& a) {
    return reshaped(a, {-1});
}

// Sums are NumPy's: integers of 32 bits and bool accumulate in 64, 16-bit floats in float32.
array_data summable(const array_data& a) {
    switch (a.type) {
        case dtype::bool_:
        case dtype::int32:
            return converted(a, dtype::int64);
        case dtype::uint32:
            return converted(a, dtype::uint64);
        case dtype::float16:
        case dtype::bfloat16:
            return converted(a, dtype::float32);
        default:
            return a;
    }
}

// Python's complex is double's: a complex64 sum widens on its way out, as NumPy's item() does.
template <class T>
py::object complex_sum(const array_data& a) {
    std::complex<T> s{};
    if (a.size()) {
        auto v = a.as_vector<std::complex<T>>();
        py::gil_scoped_release unlocked;
        s = kiln::sum(v);
    }
    return py::cast(std::complex<double>(s));
}

py::object sum(const py::object& x) {
    const array_data a = summable(data_of(x, "kiln.sum"));
    if (a.type == dtype::complex64) return complex_sum<float>(a);
    if (a.type == dtype::complex128) return complex_sum<double>(a);
    return visit_number("kiln.sum", a.type, [&](auto zero) -> py::object {
        using T = decltype(zero);
        if (a.size() == 0) return py::cast(T{});
        auto v = a.as_vector<T>();
        T s;
        {
            py::gil_scoped_release unlocked;
            s = static_cast<T>(kiln::sum(v));
        }
        return py::cast(s);
    });
}

template <class Reducer>
py::object extreme(const py::object& x, const char* call) {
    array_data a = data_of(x, call);
    if (a.type == dtype::float16 || a.type == dtype::bfloat16) a = converted(a, dtype::float32);
    if (a.size() == 0)
        throw py::value_error(
            std::string(call) + ": an empty array has no " +
            (std::is_same_v<Reducer, kiln::reducers::minimum> ? "minimum" : "maximum"));
    return visit_number(call, a.type, [&](auto zero) -> py::object {
        using T = decltype(zero);
        auto v = a.as_vector<T>();
        T r;
        {
            py::gil_scoped_release unlocked;
            r = kiln::reduce<Reducer>(v);
            // NumPy's min and max are NaN where any element is; kiln's ignore NaNs.
            if constexpr (std::is_floating_point_v<T>)
                if (kiln::count(v != v) > 0) r = std::numeric_limits<T>::quiet_NaN();
        }
        return py::cast(r);
    });
}

py::object dot(const py::object& x, const py::object& y) {
    const array_data& a = data_of(x, "kiln.dot");
    const array_data& b = data_of(y, "kiln.dot");
    if (a.ndim != 1 || b.ndim != 1) return py::module_::import("kiln").attr("matmul")(x, y);
    if (a.size() != b.size())
        throw py::value_error("kiln.dot: sizes differ (" + std::to_string(a.size()) + " and " +
                              std::to_string(b.size()) + ")");
    check_same_device("kiln.dot", *a.where, b);
    return sum(py::reinterpret_borrow<py::object>(x) * py::reinterpret_borrow<py::object>(y));
}

py::object sort(const py::object& x) {
    const array_data a = flat_for("kiln.sort", data_of(x, "kiln.sort"));
    return visit_number("kiln.sort", a.type, [&](auto zero) {
        using T = decltype(zero);
        // The sort reads a and writes the new array: no copy of a to sort in place.
        array_data out = array_data::empty(*a.where, a.type, 1, {1, a.size()});
        const auto input = a.as_vector<T>();
        auto v = out.as_vector<T>();
        {
            py::gil_scoped_release unlocked;
            kiln::sort(input, v);
        }
        return wrap(std::move(out));
    });
}

// a.sort(): in place where a is compact (no copy, as kiln::sort); a view is sorted through a copy
// written back.
void sort_in_place(const py::object& x) {
    const array_data& a = flat_for("kiln.ndarray.sort", data_of(x, "kiln.ndarray.sort"));
    visit_number("kiln.ndarray.sort", a.type, [&](auto zero) {
        using T = decltype(zero);
        evaluate_pending();  // expressions that read a see its values before the sort
        const bool in_place = a.compact() && a.offset == 0;
        const array_data keys = in_place ? a : copied(a);
        auto v = keys.as_vector<T>();
        {
            py::gil_scoped_release unlocked;
            kiln::sort(v);
        }
        if (!in_place) evaluate_into(*leaf_of(keys), a);
    });
}

py::object argsort(const py::object& x) {
    const array_data a = flat_for("kiln.argsort", data_of(x, "kiln.argsort"));
    return visit_number("kiln.argsort", a.type, [&](auto zero) {
        using T = decltype(zero);
        array_data keys = copied(a);
        auto k = keys.as_vector<T>();
        auto [indices, i] = fresh<std::int64_t>(*a.where, a.size());
        {
            py::gil_scoped_release unlocked;
            if (a.size()) {
                i = kiln::cast<std::int64_t>(kiln::element_index());
                kiln::sort_by_key(k, i);
            }
        }
        return wrap(std::move(indices));
    });
}

py::object sort_by_key(const py::object& keys_in, const py::object& values_in) {
    const array_data a = flat_for("kiln.sort_by_key", data_of(keys_in, "kiln.sort_by_key"));
    const array_data b = flat_for("kiln.sort_by_key", data_of(values_in, "kiln.sort_by_key"));
    check_same_device("kiln.sort_by_key", *a.where, b);
    if (a.size() != b.size())
        throw py::value_error("kiln.sort_by_key: keys and values differ in size");
    return visit_number("kiln.sort_by_key", a.type, [&](auto key_zero) {
        using K = decltype(key_zero);
        return visit_number("kiln.sort_by_key", b.type, [&](auto value_zero) {
            using V = decltype(value_zero);
            array_data keys = copied(a), values = copied(b);
            auto k = keys.as_vector<K>();
            auto v = values.as_vector<V>();
            {
                py::gil_scoped_release unlocked;
                if (a.size()) kiln::sort_by_key(k, v);
            }
            return py::make_tuple(wrap(std::move(keys)), wrap(std::move(values)));
        });
    });
}

py::object cumsum(const py::object& x, bool exclusive) {
    const array_data a = summable(flat(data_of(x, "kiln.cumsum")));
    return visit_number("kiln.cumsum", a.type, [&](auto zero) {
        using T = decltype(zero);
        auto in = a.as_vector<T>();
        auto [out, o] = fresh<T>(*a.where, a.size());
        {
            py::gil_scoped_release unlocked;
            if (a.size()) {
                if (exclusive)
                    kiln::exclusive_scan(in, o, T{});
                else
                    kiln::inclusive_scan(in, o);
            }
        }
        return wrap(std::move(out));
    });
}

array_data first(array_data a, std::size_t n) {
    a.shape = {1, n};
    a.ndim = 1;
    return a;
}

py::object unique(const py::object& x) {
    const array_data a = flat(data_of(x, "kiln.unique"));
    return visit_number("kiln.unique", a.type, [&](auto zero) {
        using T = decltype(zero);
        array_data keys = copied(a);
        auto k = keys.as_vector<T>();
        std::size_t n = 0;
        {
            py::gil_scoped_release unlocked;
            if (a.size()) {
                kiln::sort(k);
                n = kiln::unique(k);
            }
        }
        return wrap(first(std::move(keys), n));
    });
}

// The values of x where condition is not zero, in order.
py::object compress(const py::object& condition, const py::object& x) {
    const array_data c = converted(flat(data_of(condition, "kiln.compress")), dtype::int32);
    const array_data a = flat(data_of(x, "kiln.compress"));
    check_same_device("kiln.compress", *a.where, c);
    if (a.size() != c.size())
        throw py::value_error("kiln.compress: the condition and the array differ in size");
    return visit_number("kiln.compress", a.type, [&](auto zero) {
        using T = decltype(zero);
        auto in = a.as_vector<T>();
        auto flags = c.as_vector<std::int32_t>();
        auto [out, o] = fresh<T>(*a.where, a.size());
        std::size_t kept = 0;
        {
            py::gil_scoped_release unlocked;
            if (a.size()) kept = kiln::copy_if(in, flags, o);
        }
        return wrap(first(std::move(out), kept));
    });
}

py::object nonzero(const py::object& x) {
    const array_data a = data_of(x, "kiln.nonzero");
    if (a.ndim != 1) throw py::value_error("kiln.nonzero: takes a 1-D array");
    const array_data c = converted(a, dtype::int32);
    auto flags = c.as_vector<std::int32_t>();
    auto [out, o] = fresh<std::int64_t>(*a.where, a.size());
    std::size_t kept = 0;
    {
        py::gil_scoped_release unlocked;
        if (a.size())
            kept =
                kiln::copy_if(kiln::cast<std::int64_t>(kiln::element_index(0, a.size())), flags, o);
    }
    return py::make_tuple(wrap(first(std::move(out), kept)));
}

py::object reduce_by_key(const py::object& keys_in, const py::object& values_in) {
    const array_data a = flat(data_of(keys_in, "kiln.reduce_by_key"));
    const array_data b = summable(flat(data_of(values_in, "kiln.reduce_by_key")));
    check_same_device("kiln.reduce_by_key", *a.where, b);
    if (a.size() != b.size())
        throw py::value_error("kiln.reduce_by_key: keys and values differ in size");
    return visit_number("kiln.reduce_by_key", a.type, [&](auto key_zero) {
        using K = decltype(key_zero);
        return visit_number("kiln.reduce_by_key", b.type, [&](auto value_zero) {
            using V = decltype(value_zero);
            auto k = a.as_vector<K>();
            auto v = b.as_vector<V>();
            auto [out_keys, ok] = fresh<K>(*a.where, a.size());
            auto [out_values, ov] = fresh<V>(*a.where, a.size());
            std::size_t runs = 0;
            {
                py::gil_scoped_release unlocked;
                if (a.size()) runs = kiln::reduce_by_key(k, v, ok, ov);
            }
            return py::make_tuple(wrap(first(std::move(out_keys), runs)),
                                  wrap(first(std::move(out_values), runs)));
        });
    });
}

py::object histogram(const py::object& x, std::size_t bins, const py::object& range) {
    array_data a = flat(data_of(x, "kiln.histogram"));
    if (bins == 0) throw py::value_error("kiln.histogram: bins must be at least 1");
    if (a.type != dtype::float32 && a.type != dtype::float64) a = converted(a, dtype::float64);
    double lo, hi;
    if (range.is_none()) {
        if (a.size() == 0) {
            lo = 0;
            hi = 1;
        } else {
            lo = py::module_::import("kiln").attr("min")(wrap(a)).cast<double>();
            hi = py::module_::import("kiln").attr("max")(wrap(a)).cast<double>();
        }
    } else {
        auto r = range.cast<std::pair<double, double>>();
        lo = r.first;
        hi = r.second;
    }
    if (!(lo <= hi)) throw py::value_error("kiln.histogram: max must be larger than min in range");
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    auto [counts, c] = fresh<std::int32_t>(*a.where, bins);
    {
        auto run = [&](auto zero) {
            using T = decltype(zero);
            auto v = a.as_vector<T>();
            py::gil_scoped_release unlocked;
            c = 0;
            // NumPy's last bin holds hi too; kiln's bins are half-open: count hi apart.
            if (a.size()) kiln::histogram(v, c, static_cast<T>(lo), static_cast<T>(hi));
        };
        if (a.type == dtype::float32)
            run(float{});
        else
            run(double{});
    }
    py::module_ np = py::module_::import("numpy");
    py::object edges = np.attr("linspace")(lo, hi, bins + 1);
    py::object kiln_module = py::module_::import("kiln");
    py::object result = kiln_module.attr("asarray")(wrap(counts), "int64");
    if (a.size()) {
        // Elements equal to hi belong to the last bin in NumPy.
        py::object at_hi =
            kiln_module.attr("sum")(py::reinterpret_borrow<py::object>(wrap(a)).attr("__eq__")(hi));
        const auto extra = at_hi.cast<std::int64_t>();
        if (extra) {
            py::object last = result.attr("__getitem__")(bins - 1);
            result.attr("__setitem__")(bins - 1, last.cast<std::int64_t>() + extra);
        }
    }
    return py::make_tuple(
        result, kiln_module.attr("asarray")(edges, py::none(),
                                            py::cast(a.where, py::return_value_policy::reference)));
}

py::object segmented_sum(const py::object& x, const py::object& offsets_in) {
    const array_data a = flat(data_of(x, "kiln.segmented_reduce"));
    const array_data o =
        converted(flat(data_of(offsets_in, "kiln.segmented_reduce")), dtype::int64);
    check_same_device("kiln.segmented_reduce", *a.where, o);
    if (o.size() == 0)
        throw py::value_error("kiln.segmented_reduce: offsets hold at least one value");
    return visit_number("kiln.segmented_reduce", a.type, [&](auto zero) {
        using T = decltype(zero);
        auto v = a.as_vector<T>();
        auto off = o.as_vector<std::int64_t>();
        auto [out, r] = fresh<T>(*a.where, o.size() - 1);
        {
            py::gil_scoped_release unlocked;
            if (o.size() > 1) kiln::segmented_reduce(v, off, r);
        }
        return wrap(std::move(out));
    });
}

py::object segmented_cumsum(const py::object& x, const py::object& offsets_in) {
    const array_data a = flat(data_of(x, "kiln.segmented_cumsum"));
    const array_data o =
        converted(flat(data_of(offsets_in, "kiln.segmented_cumsum")), dtype::int64);
    check_same_device("kiln.segmented_cumsum", *a.where, o);
    return visit_number("kiln.segmented_cumsum", a.type, [&](auto zero) {
        using T = decltype(zero);
        array_data out = copied(a);
        auto v = a.as_vector<T>();
        auto off = o.as_vector<std::int64_t>();
        auto y = out.as_vector<T>();
        {
            py::gil_scoped_release unlocked;
            if (a.size() && o.size() > 1) kiln::segmented_inclusive_scan(v, off, y);
        }
        return wrap(std::move(out));
    });
}

py::object segmented_sort(const py::object& x, const py::object& offsets_in) {
    const array_data a = flat(data_of(x, "kiln.segmented_sort"));
    const array_data o = converted(flat(data_of(offsets_in, "kiln.segmented_sort")), dtype::int64);
    check_same_device("kiln.segmented_sort", *a.where, o);
    return visit_number("kiln.segmented_sort", a.type, [&](auto zero) {
        using T = decltype(zero);
        array_data out = copied(a);
        auto k = out.as_vector<T>();
        auto off = o.as_vector<std::int64_t>();
        {
            py::gil_scoped_release unlocked;
            if (a.size() && o.size() > 1) kiln::segmented_sort(k, off);
        }
        return wrap(std::move(out));
    });
}

}  // namespace

array_data flat_for(const char* call, const array_data& a) {
    if (a.ndim != 1)
        throw py::value_error(std::string(call) +
                              ": takes a 1-D array (this one is 2-D; "
                              "kiln.segmented_sort sorts rows)");
    return a;
}

void bind_algorithms(py::module_& m) {
    m.def("sum", sum, py::arg("a"));
    m.def("min",
          [](const py::object& x) { return extreme<kiln::reducers::minimum>(x, "kiln.min"); });
    m.def("max",
          [](const py::object& x) { return extreme<kiln::reducers::maximum>(x, "kiln.max"); });
    m.def("dot", dot);
    m.def("sort", sort);
    m.def("_sort_in_place", sort_in_place);
    m.def("argsort", argsort);
    m.def("sort_by_key", sort_by_key, py::arg("keys"), py::arg("values"));
    m.def("cumsum", cumsum, py::arg("a"), py::arg("exclusive") = false);
    m.def("unique", unique);
    m.def("compress", compress, py::arg("condition"), py::arg("a"));
    m.def("nonzero", nonzero);
    m.def("reduce_by_key", reduce_by_key, py::arg("keys"), py::arg("values"));
    m.def("histogram", histogram, py::arg("a"), py::arg("bins") = 10,
          py::arg("range") = py::none());
    m.def("segmented_reduce", segmented_sum, py::arg("a"), py::arg("offsets"));
    m.def("segmented_cumsum", segmented_cumsum, py::arg("a"), py::arg("offsets"));
    m.def("segmented_sort", segmented_sort, py::arg("a"), py::arg("offsets"));
}

}  // namespace kiln::python
