// SPDX-License-Identifier: Apache-2.0
// kiln.ndarray's memory, dtypes and devices: NumPy arrays in and out, views by slicing.
#include "array.hpp"

#include <pybind11/stl.h>

#include <kiln/detail/temporary_pool.hpp>
#include <mutex>

#include "expression.hpp"

namespace kiln::python {

namespace {

struct dtype_row {
    dtype type;
    const char* name;
    std::size_t bytes;
};
constexpr std::array<dtype_row, dtype_count> dtype_rows{{
    {dtype::bool_, "bool", 1},
    {dtype::int32, "int32", 4},
    {dtype::uint32, "uint32", 4},
    {dtype::int64, "int64", 8},
    {dtype::uint64, "uint64", 8},
    {dtype::float16, "float16", 2},
    {dtype::bfloat16, "bfloat16", 2},
    {dtype::float32, "float32", 4},
    {dtype::float64, "float64", 8},
    {dtype::complex64, "complex64", 8},
    {dtype::complex128, "complex128", 16},
}};

// Allocations up to this size come from kiln's temporary pool (rounded up to a power of two), so
// that a statement or an algorithm's result at 2^28 floats costs no allocation and no
// synchronising free; larger ones are allocated as asked, where the rounding would waste more.
constexpr std::size_t pooled_bytes = std::size_t{1} << 30;

py::object ml_dtypes_bfloat16() {
    static py::object type = [] {
        try {
            return py::object(py::module_::import("ml_dtypes").attr("bfloat16"));
        } catch (const py::error_already_set&) {
            return py::object(py::none());
        }
    }();
    return type;
}

}  // namespace

std::string_view name_of(dtype t) noexcept {
    return dtype_rows[static_cast<std::size_t>(t)].name;
}
std::size_t itemsize(dtype t) noexcept {
    return dtype_rows[static_cast<std::size_t>(t)].bytes;
}
bool is_integer(dtype t) noexcept {
    return t >= dtype::int32 && t <= dtype::uint64;
}
bool is_floating(dtype t) noexcept {
    return t >= dtype::float16 && t <= dtype::float64;
}
bool is_complex(dtype t) noexcept {
    return t == dtype::complex64 || t == dtype::complex128;
}

dtype dtype_of(const py::handle& object) {
    if (py::isinstance<py::str>(object) && object.cast<std::string>() == "bfloat16")
        return dtype::bfloat16;
    py::dtype dt;
    try {
        dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(object));
    } catch (const py::error_already_set&) {
        throw py::type_error("kiln has no dtype " + py::str(object).cast<std::string>());
    }
    const std::string name = py::str(dt.attr("name")).cast<std::string>();
    for (const auto& row : dtype_rows)
        if (name == row.name) return row.type;
    std::string known;
    for (const auto& row : dtype_rows) known += std::string(known.empty() ? "" : ", ") + row.name;
    throw py::type_error("kiln has no dtype " + name + " (kiln's dtypes: " + known + ")");
}

py::dtype numpy_dtype(dtype t) {
    if (t == dtype::bfloat16) {
        py::object type = ml_dtypes_bfloat16();
        if (type.is_none())
            throw py::type_error(
                "bfloat16 values reach NumPy through ml_dtypes, which is not installed: "
                "convert with astype('float32') first");
        return py::dtype::from_args(type);
    }
    return py::dtype(std::string(name_of(t)));
}

dtype promote(dtype a, dtype b) {
    if (a == b) return a;
    if (a > b) std::swap(a, b);  // a is the "smaller" kind: bool < integers < floats < complex
    if (a == dtype::bool_) return b;
    if (is_integer(a) && is_integer(b)) {
        const bool a_signed = a == dtype::int32 || a == dtype::int64;
        const bool b_signed = b == dtype::int32 || b == dtype::int64;
        if (a_signed == b_signed) return b;  // the wider
        if (a == dtype::int32 && b == dtype::uint32) return dtype::int64;
        if (a == dtype::uint32 && b == dtype::int64) return dtype::int64;
        return dtype::float64;  // 64-bit signed with unsigned, as NumPy
    }
    if (is_integer(a)) {  // with a float or complex: 32- and 64-bit integers need 64-bit floats
        if (is_complex(b)) return dtype::complex128;
        return dtype::float64;
    }
    if (is_floating(a) && is_floating(b)) {
        if (a == dtype::float16 && b == dtype::bfloat16) return dtype::float32;
        return b;
    }
    // a floating, b complex.
    if (a == dtype::float64) return dtype::complex128;
    return b;
}

// --- devices ------------------------------------------------------------------------------------

namespace {
std::vector<std::unique_ptr<device_entry>>& entries() {
    static std::vector<std::unique_ptr<device_entry>> list(kiln::devices().size());
    return list;
}
}  // namespace

const device_entry& device_number(std::size_t number) {
    auto& list = entries();
    if (number >= list.size())
        throw py::value_error("kiln.Device: no device number " + std::to_string(number) +
                              " (kiln sees " + std::to_string(list.size()) + " devices)");
    if (!list[number]) {
        const kiln::device& d = kiln::devices()[number];
        list[number] = std::make_unique<device_entry>(device_entry{d, kiln::queue(d), number});
    }
    return *list[number];
}

const device_entry& entry_of(const kiln::device& d) {
    const auto& all = kiln::devices();
    for (std::size_t k = 0; k < all.size(); ++k)
        if (all[k] == d) return device_number(k);
    throw py::value_error("kiln: device '" + d.name() + "' is not among kiln.devices()");
}

const device_entry& default_device_entry() {
    static const device_entry* chosen = &entry_of(kiln::default_device());
    return *chosen;
}

// --- memory -------------------------------------------------------------------------------------

std::shared_ptr<memory> memory::allocate(const device_entry& where, std::size_t bytes) {
    auto m = std::make_shared<memory>();
    if (bytes > 0 && bytes <= pooled_bytes) {
        m->lease_ = kiln::detail::temporary_pool::acquire(where.queue, bytes);
        m->storage_ = m->lease_.bytes().storage();
    } else {
        m->storage_ = kiln::detail::buffer_storage(where.device, bytes, kiln::access::inout);
    }
    return m;
}

std::shared_ptr<memory> memory::adopt(kiln::detail::buffer_storage storage) {
    auto m = std::make_shared<memory>();
    m->storage_ = std::move(storage);
    return m;
}

bool array_data::compact() const noexcept {
    if (ndim == 1) return strides[1] == 1 || shape[1] <= 1;
    return (strides[1] == 1 || shape[1] <= 1) &&
           (strides[0] == static_cast<std::ptrdiff_t>(shape[1]) || shape[0] <= 1);
}

array_data array_data::empty(const device_entry& where, dtype t, std::size_t ndim,
                             std::array<std::size_t, 2> shape) {
    array_data a;
    a.where = &where;
    a.type = t;
    a.ndim = ndim;
    a.shape = shape;
    a.strides = {static_cast<std::ptrdiff_t>(shape[1]), 1};
    const std::size_t count =
        kiln::detail::checked_product(shape[0], shape[1], "kiln.empty", "the shape");
    a.mem = memory::allocate(where, kiln::detail::checked_bytes(count, itemsize(t)));
    return a;
}

kiln::detail::buffer_storage array_data::exact_storage() const {
    const auto& whole = mem->storage();
    const std::size_t bytes = size() * itemsize(type);
    if (offset == 0 && bytes == whole.bytes()) return whole;
    return kiln::detail::buffer_storage(whole, offset * itemsize(type), bytes);
}

void check_same_device(const char* call, const device_entry& where, const array_data& other) {
    if (other.where != &where)
        throw py::value_error(std::string(call) + ": arrays on different devices ('" +
                              where.device.name() + "' number " + std::to_string(where.number) +
                              " and '" + other.where->device.name() + "' number " +
                              std::to_string(other.where->number) + "); copy one with to_device()");
}

// --- ndarray ------------------------------------------------------------------------------------

ndarray::ndarray(array_data data) : data_(std::move(data)) {}
ndarray::ndarray(std::shared_ptr<const expression> pending) : pending_(std::move(pending)) {}

const array_data& ndarray::data() const {
    if (pending_) {
        data_ = evaluate(*pending_);
        pending_.reset();
    }
    return data_;
}
dtype ndarray::type() const noexcept {
    return pending_ ? pending_->type : data_.type;
}
std::size_t ndarray::ndim() const noexcept {
    return pending_ ? pending_->ndim : data_.ndim;
}
std::array<std::size_t, 2> ndarray::shape() const noexcept {
    return pending_ ? pending_->shape : data_.shape;
}
const device_entry& ndarray::where() const noexcept {
    return pending_ ? *pending_->where : *data_.where;
}

py::object wrap(array_data data) {
    return python_of(std::make_shared<ndarray>(std::move(data)));
}

namespace {

const device_entry& device_argument(const py::object& device) {
    if (device.is_none()) return default_device_entry();
    if (py::isinstance<device_entry>(device))
        return device_number(device.cast<const device_entry&>().number);
    return device_number(device.cast<std::size_t>());
}

// A copy of a NumPy array (C-contiguous first, if it is not) on `where`.
array_data from_numpy(const py::object& object, const py::object& type, const device_entry& where) {
    py::module_ np = py::module_::import("numpy");
    py::array host = np.attr("ascontiguousarray")(object);
    const bool converting = !type.is_none();
    const dtype wanted = converting ? dtype_of(type) : dtype::float64;
    dtype t = wanted;
    try {
        t = dtype_of(host.attr("dtype"));
    } catch (const py::type_error&) {
        if (!converting) throw;
        host = np.attr("ascontiguousarray")(host, numpy_dtype(wanted));  // int16 and such
    }
    if (host.ndim() == 0 || host.ndim() > 2)
        throw py::value_error("kiln.asarray: kiln arrays have 1 or 2 dimensions, this one has " +
                              std::to_string(host.ndim()));
    std::array<std::size_t, 2> shape{1, static_cast<std::size_t>(host.shape(host.ndim() - 1))};
    if (host.ndim() == 2) shape[0] = static_cast<std::size_t>(host.shape(0));
    array_data a = array_data::empty(where, t, static_cast<std::size_t>(host.ndim()), shape);
    const std::size_t bytes = a.size() * itemsize(t);
    if (bytes > 0) {
        const void* data = host.data();
        py::gil_scoped_release unlocked;
        a.mem->storage().write_bytes(where.queue, 0, data, bytes, {}, true);
    }
    return converting ? converted(a, wanted) : a;
}

py::array to_numpy(const array_data& a) {
    const array_data c = compact(a);
    std::vector<py::ssize_t> shape;
    if (c.ndim == 2) shape.push_back(static_cast<py::ssize_t>(c.shape[0]));
    shape.push_back(static_cast<py::ssize_t>(c.shape[1]));
    py::array host(numpy_dtype(c.type), shape);
    const std::size_t bytes = c.size() * itemsize(c.type);
    if (bytes > 0) {
        void* data = host.mutable_data();
        py::gil_scoped_release unlocked;
        c.mem->storage().read_bytes(c.where->queue, c.offset * itemsize(c.type), data, bytes, {},
                                    true);
    }
    return host;
}

// The range a slice selects along an extent; only forward steps (views need no reversal).
struct picked {
    std::size_t start, count;
    std::ptrdiff_t step;
};
picked pick(const py::handle& index, std::size_t extent) {
    if (py::isinstance<py::slice>(index)) {
        py::ssize_t start = 0, stop = 0, step = 0, count = 0;
        if (!index.cast<py::slice>().compute(static_cast<py::ssize_t>(extent), &start, &stop, &step,
                                             &count))
            throw py::error_already_set();
        if (step <= 0)
            throw py::value_error("kiln.ndarray: slices step forward (a step of " +
                                  std::to_string(step) + " is not a view kiln makes)");
        return {static_cast<std::size_t>(count > 0 ? start : 0), static_cast<std::size_t>(count),
                step};
    }
    auto i = index.cast<py::ssize_t>();
    if (i < 0) i += static_cast<py::ssize_t>(extent);
    if (i < 0 || static_cast<std::size_t>(i) >= extent)
        throw py::index_error("kiln.ndarray: index " + py::str(index).cast<std::string>() +
                              " is out of bounds for an extent of " + std::to_string(extent));
    return {static_cast<std::size_t>(i), 1, 0};  // step 0: the dimension goes
}

}  // namespace

array_data view_of(const array_data& a, const py::handle& key) {
    // At most two indices and two kept dimensions: fixed arrays, no allocation per view.
    std::array<py::handle, 2> indices;
    std::size_t count = 1;
    if (PyTuple_Check(key.ptr())) {
        count = static_cast<std::size_t>(PyTuple_GET_SIZE(key.ptr()));
        if (count > a.ndim)
            throw py::index_error("kiln.ndarray: " + std::to_string(count) +
                                  " indices for an array of " + std::to_string(a.ndim) +
                                  " dimensions");
        for (std::size_t k = 0; k < count; ++k)
            indices[k] = PyTuple_GET_ITEM(key.ptr(), static_cast<py::ssize_t>(k));
    } else {
        indices[0] = key;
    }
    array_data v = a;
    std::array<std::size_t, 2> kept_shape{};
    std::array<std::ptrdiff_t, 2> kept_strides{};
    std::size_t kept = 0;
    const std::size_t first = 2 - a.ndim;  // the entry of shape and strides dimension 0 is
    for (std::size_t d = 0; d < a.ndim; ++d) {
        const std::size_t slot = first + d;
        const bool whole = d >= count || indices[d].is_none() || indices[d].ptr() == Py_Ellipsis;
        const picked p = whole ? picked{0, a.shape[slot], 1} : pick(indices[d], a.shape[slot]);
        v.offset += p.start * static_cast<std::size_t>(a.strides[slot]);
        if (p.step != 0) {
            kept_shape[kept] = p.count;
            kept_strides[kept] = a.strides[slot] * p.step;
            ++kept;
        }
    }
    v.ndim = kept;
    if (v.ndim == 2) {
        v.shape = kept_shape;
        v.strides = kept_strides;
    } else if (v.ndim == 1) {
        v.shape = {1, kept_shape[0]};
        v.strides = {0, kept_strides[0]};
    } else {
        v.shape = {1, 1};
        v.strides = {0, 1};
    }
    return v;
}

namespace {

py::object element(const array_data& a) {  // a 0-dimensional view: its value as NumPy's scalar
    array_data one = a;
    one.ndim = 1;
    py::array host = to_numpy(one);
    return host.attr("__getitem__")(0);
}

py::object getitem(const ndarray& self, const py::object& key) {
    array_data v = view_of(self.data(), key);
    if (v.ndim == 0) return element(v);
    return wrap(std::move(v));
}

// The value of a one-element array, for bool(), float() and int(); NumPy's ValueError otherwise.
py::object single_value(const ndarray& a, const char* what) {
    const array_data& d = a.data();
    if (d.size() != 1)
        throw py::value_error(std::string("kiln.ndarray: ") + what + "() of an array of " +
                              std::to_string(d.size()) +
                              " elements is ambiguous (use kiln.sum, kiln.max... )");
    return element(d);
}

std::string device_repr(const device_entry& e) {
    return "<kiln.Device " + std::to_string(e.number) + ": " + e.device.name() + " (" +
           std::string(kiln::to_string(e.device.backend())) + ")>";
}

}  // namespace

py::object asarray(const py::object& object, const py::object& type, const py::object& device) {
    const device_entry& where = device_argument(device);
    if (const ndarray* held = ndarray_of(object)) {
        const ndarray& a = *held;
        array_data d = a.data();
        if (d.where != &where) d = to_device(d, where);
        if (!type.is_none()) d = converted(d, dtype_of(type));
        if (d.mem == a.data().mem && d.offset == a.data().offset && d.type == a.type())
            return object;
        return wrap(std::move(d));
    }
    if (py::hasattr(object, "__dlpack__") && !py::isinstance<py::array>(object))
        return from_dlpack(object, where, type);
    return wrap(from_numpy(object, type, where));
}

array_data to_device(const array_data& a, const device_entry& where) {
    const array_data c = compact(a);
    array_data out = array_data::empty(where, c.type, c.ndim, c.shape);
    const std::size_t bytes = c.size() * itemsize(c.type);
    if (bytes == 0) return out;
    std::vector<std::byte> host(bytes);
    py::gil_scoped_release unlocked;
    c.mem->storage().read_bytes(c.where->queue, c.offset * itemsize(c.type), host.data(), bytes, {},
                                true);
    out.mem->storage().write_bytes(where.queue, 0, host.data(), bytes, {}, true);
    return out;
}

void bind_arrays(py::module_& m) {
    py::class_<device_entry, std::unique_ptr<device_entry, py::nodelete>>(m, "Device")
        .def(py::init([](std::size_t number) {
                 return const_cast<device_entry*>(&device_number(number));
             }),
             py::arg("number"))
        .def_readonly("number", &device_entry::number)
        .def_property_readonly("name", [](const device_entry& e) { return e.device.name(); })
        .def_property_readonly(
            "backend",
            [](const device_entry& e) { return std::string(kiln::to_string(e.device.backend())); })
        .def_property_readonly(
            "type",
            [](const device_entry& e) { return std::string(kiln::to_string(e.device.type())); })
        .def_property_readonly("summary", [](const device_entry& e) { return e.device.summary(); })
        .def("synchronize",
             [](const device_entry& e) {
                 py::gil_scoped_release unlocked;
                 e.queue.finish();
             })
        .def(
            "__eq__", [](const device_entry& a, const device_entry& b) { return &a == &b; },
            py::is_operator())
        .def("__hash__", [](const device_entry& e) { return e.number; })
        .def("__repr__", device_repr);

    m.def(
        "devices",
        [] {
            std::vector<const device_entry*> list;
            for (std::size_t k = 0; k < kiln::devices().size(); ++k)
                list.push_back(&device_number(k));
            return list;
        },
        py::return_value_policy::reference);
    m.def(
        "default_device", [] { return &default_device_entry(); },
        py::return_value_policy::reference);

    auto cls = py::class_<ndarray, std::shared_ptr<ndarray>>(m, "ndarray");
    cls.def_property_readonly("dtype",
                              [](const ndarray& a) -> py::object {
                                  if (a.type() == dtype::bfloat16 && ml_dtypes_bfloat16().is_none())
                                      return py::str("bfloat16");
                                  return numpy_dtype(a.type());
                              })
        .def_property_readonly("shape",
                               [](const ndarray& a) {
                                   const auto s = a.shape();
                                   return a.ndim() == 2 ? py::tuple(py::make_tuple(s[0], s[1]))
                                                        : py::tuple(py::make_tuple(s[1]));
                               })
        .def_property_readonly("ndim", &ndarray::ndim)
        .def_property_readonly("size", [](const ndarray& a) { return a.shape()[0] * a.shape()[1]; })
        .def_property_readonly("itemsize", [](const ndarray& a) { return itemsize(a.type()); })
        .def_property_readonly(
            "nbytes",
            [](const ndarray& a) { return a.shape()[0] * a.shape()[1] * itemsize(a.type()); })
        .def_property_readonly(
            "device", [](const ndarray& a) { return &a.where(); },
            py::return_value_policy::reference)
        .def_property_readonly(
            "strides",
            [](const ndarray& a) {
                const array_data& d = a.data();
                const auto b = static_cast<py::ssize_t>(itemsize(d.type));
                return d.ndim == 2 ? py::tuple(py::make_tuple(d.strides[0] * b, d.strides[1] * b))
                                   : py::tuple(py::make_tuple(d.strides[1] * b));
            })
        .def_property_readonly("T",
                               [](const ndarray& a) {
                                   array_data d = a.data();
                                   if (d.ndim == 2) {
                                       std::swap(d.shape[0], d.shape[1]);
                                       std::swap(d.strides[0], d.strides[1]);
                                   }
                                   return wrap(std::move(d));
                               })
        .def("get", [](const ndarray& a) { return to_numpy(a.data()); })
        .def(
            "__array__",
            [](const ndarray& a, const py::object& type, const py::object&) {
                py::object host = to_numpy(a.data());
                if (!type.is_none()) host = host.attr("astype")(type);
                return host;
            },
            py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("__getitem__", getitem)
        .def("__bool__", [](const ndarray& a) { return single_value(a, "bool").cast<bool>(); })
        .def("__float__", [](const ndarray& a) { return single_value(a, "float").cast<double>(); })
        .def("__int__", [](const ndarray& a) { return single_value(a, "int").attr("__int__")(); })
        .def("__len__",
             [](const ndarray& a) { return a.ndim() == 2 ? a.shape()[0] : a.shape()[1]; })
        .def("copy", [](const ndarray& a) { return wrap(copied(a.data())); })
        .def("astype",
             [](const ndarray& a, const py::object& type) {
                 return wrap(converted(a.data(), dtype_of(type)));
             })
        .def("to_device",
             [](const ndarray& a, const py::object& device) {
                 return wrap(to_device(a.data(), device_argument(device)));
             })
        .def("reshape",
             [](const ndarray& a, const py::args& args) {
                 std::vector<py::ssize_t> sizes;
                 py::object shape = args.size() == 1 ? py::object(args[0]) : py::object(args);
                 if (py::isinstance<py::int_>(shape))
                     sizes.push_back(shape.cast<py::ssize_t>());
                 else
                     for (const auto& s : shape) sizes.push_back(s.cast<py::ssize_t>());
                 return wrap(reshaped(a.data(), sizes));
             })
        .def("ravel", [](const ndarray& a) { return wrap(reshaped(a.data(), {-1})); })
        .def("__repr__", [](const ndarray& a) {
            return "kiln.ndarray(" + py::repr(to_numpy(a.data())).cast<std::string>() +
                   ", device=" + std::to_string(a.where().number) + ")";
        });
    cls.def("__matmul__", matmul);
    cls.def("__rmatmul__", [](const py::object& a, const py::object& b) { return matmul(b, a); });
    bind_operators(cls);
    bind_dlpack(cls);

    m.def("asarray", asarray, py::arg("a"), py::arg("dtype") = py::none(),
          py::arg("device") = py::none());
    m.def(
        "empty",
        [](const py::object& shape, const py::object& type, const py::object& device) {
            std::vector<py::ssize_t> sizes;
            if (py::isinstance<py::int_>(shape))
                sizes.push_back(shape.cast<py::ssize_t>());
            else
                for (const auto& s : shape) sizes.push_back(s.cast<py::ssize_t>());
            if (sizes.empty() || sizes.size() > 2 ||
                std::any_of(sizes.begin(), sizes.end(), [](auto s) { return s < 0; }))
                throw py::value_error(
                    "kiln.empty: kiln arrays have 1 or 2 dimensions of sizes >= 0");
            const std::array<std::size_t, 2> extents =
                sizes.size() == 2
                    ? std::array<std::size_t, 2>{static_cast<std::size_t>(sizes[0]),
                                                 static_cast<std::size_t>(sizes[1])}
                    : std::array<std::size_t, 2>{1, static_cast<std::size_t>(sizes[0])};
            return wrap(
                array_data::empty(device_argument(device), dtype_of(type), sizes.size(), extents));
        },
        py::arg("shape"), py::arg("dtype") = "float64", py::arg("device") = py::none());
    m.def(
        "_device_argument", [](const py::object& d) { return &device_argument(d); },
        py::return_value_policy::reference);
}

array_data reshaped(const array_data& a, std::vector<py::ssize_t> sizes) {
    if (sizes.empty() || sizes.size() > 2)
        throw py::value_error("kiln.ndarray.reshape: kiln arrays have 1 or 2 dimensions");
    const auto n = static_cast<py::ssize_t>(a.size());
    py::ssize_t known = 1;
    int unknown = -1;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        if (sizes[k] == -1)
            unknown = static_cast<int>(k);
        else
            known *= sizes[k];
    }
    if (unknown >= 0 && known > 0) sizes[static_cast<std::size_t>(unknown)] = n / known;
    py::ssize_t total = 1;
    for (auto s : sizes) total *= s;
    if (total != n || std::any_of(sizes.begin(), sizes.end(), [](auto s) { return s < 0; }))
        throw py::value_error("kiln.ndarray.reshape: cannot reshape " + std::to_string(n) +
                              " elements into that shape");
    array_data c = a.compact() ? a : compact(a);
    c.ndim = sizes.size();
    c.shape = sizes.size() == 2 ? std::array<std::size_t, 2>{static_cast<std::size_t>(sizes[0]),
                                                             static_cast<std::size_t>(sizes[1])}
                                : std::array<std::size_t, 2>{1, static_cast<std::size_t>(sizes[0])};
    c.strides = {static_cast<std::ptrdiff_t>(c.shape[1]), 1};
    return c;
}

}  // namespace kiln::python
