// SPDX-License-Identifier: Apache-2.0
// kiln.ndarray's operators and kiln's element-wise functions: each builds a node of a lazy
// expression with NumPy's dtype and broadcasting rules; the tree runs as one kernel when its
// values are needed (expression_kernel.cpp).
#include <vector>

#include "expression.hpp"

namespace kiln::python {

namespace {

// Pending arrays alive, so that a write can first evaluate those that read its memory.
std::vector<std::weak_ptr<ndarray>>& pending_arrays() {
    static std::vector<std::weak_ptr<ndarray>> list;
    return list;
}

bool reads(const expression& e, const memory* m) {
    if (e.what == expression::kind::array) return e.leaf.mem.get() == m;
    return (e.a && reads(*e.a, m)) || (e.b && reads(*e.b, m)) || (e.c && reads(*e.c, m));
}

// Evaluates the pending arrays that read `written` (all of them for null), but `except`.
void evaluate_readers(const memory* written, const expression* except) {
    auto& list = pending_arrays();
    std::vector<std::shared_ptr<ndarray>> due;
    std::erase_if(list, [&](const std::weak_ptr<ndarray>& w) {
        auto a = w.lock();
        if (!a || !a->pending()) return true;
        if (a->expression_of().get() == except) return false;
        if (written && !reads(*a->expression_of(), written)) return false;
        due.push_back(std::move(a));
        return true;
    });
    for (auto& a : due) a->data();
}

// An operand: a kiln.ndarray (its tree, or its memory), a Python number (weak: it takes the
// other operand's dtype, as in NumPy 2), a NumPy scalar, or what kiln.asarray copies.
struct operand {
    std::shared_ptr<const expression> e;
    bool weak = false;
    enum class number { none, boolean, integer, real, complex } kind = number::none;
};

std::shared_ptr<expression> scalar(dtype t, std::complex<double> v, std::int64_t i) {
    auto e = std::make_shared<expression>();
    e->what = expression::kind::scalar;
    e->type = t;
    e->ndim = 1;
    e->shape = {1, 1};
    e->number = v;
    e->integer = i;
    return e;
}

std::shared_ptr<const expression> tree_of(const ndarray& a) {
    if (a.pending()) return a.expression_of();
    return a.leaf();
}

operand operand_of(const py::handle& x, const device_entry* where) {
    if (const ndarray* a = ndarray_of(x)) return {tree_of(*a)};
    if (py::isinstance<py::bool_>(x)) {
        const bool v = x.cast<bool>();
        return {scalar(dtype::bool_, v, v), true, operand::number::boolean};
    }
    if (py::isinstance<py::int_>(x)) {
        // Values past int64 (uint64's upper half) keep their bits.
        std::int64_t v;
        try {
            v = x.cast<std::int64_t>();
        } catch (const py::cast_error&) {
            v = static_cast<std::int64_t>(x.cast<std::uint64_t>());
        }
        return {scalar(dtype::int64, static_cast<double>(v), v), true, operand::number::integer};
    }
    if (py::isinstance<py::float_>(x)) {
        const double v = x.cast<double>();
        return {scalar(dtype::float64, v, static_cast<std::int64_t>(v)), true,
                operand::number::real};
    }
    if (PyComplex_Check(x.ptr())) {
        const auto v = x.cast<std::complex<double>>();
        return {scalar(dtype::complex128, v, 0), true, operand::number::complex};
    }
    py::module_ np = py::module_::import("numpy");
    if (py::isinstance(x, np.attr("generic"))) {
        const dtype t = dtype_of(x.attr("dtype"));
        py::object item = x.attr("item")();
        if (is_complex(t)) return {scalar(t, item.cast<std::complex<double>>(), 0)};
        if (is_floating(t)) return {scalar(t, item.cast<double>(), 0)};
        const std::int64_t v = t == dtype::uint64
                                   ? static_cast<std::int64_t>(item.cast<std::uint64_t>())
                                   : item.cast<std::int64_t>();
        return {scalar(t, static_cast<double>(v), v)};
    }
    if (py::isinstance<py::array>(x) || py::isinstance<py::list>(x) ||
        py::isinstance<py::tuple>(x)) {
        py::object device =
            where ? py::cast(where, py::return_value_policy::reference) : py::none();
        return {tree_of(asarray(py::reinterpret_borrow<py::object>(x), py::none(), device)
                            .cast<const ndarray&>())};
    }
    return {};
}

// A weak scalar's dtype beside an operand of dtype `t`.
dtype adopted(const operand& s, dtype t) {
    switch (s.kind) {
        case operand::number::boolean:
            return t;
        case operand::number::integer:
            return t == dtype::bool_ ? dtype::int64 : t;
        case operand::number::real:
            return is_floating(t) || is_complex(t) ? t : dtype::float64;
        case operand::number::complex:
            if (is_complex(t)) return t;
            return t == dtype::float64 || is_integer(t) || t == dtype::bool_ ? dtype::complex128
                                                                             : dtype::complex64;
        case operand::number::none:
            break;
    }
    return s.e->type;
}

void settle(operand& s, dtype t) {
    if (!s.weak) return;
    // A weak number's node is this operand's own (operand_of made it, non-const): it takes its
    // dtype in place rather than through a copy.
    std::const_pointer_cast<expression>(s.e)->type = adopted(s, t);
}

const device_entry* device_of(const std::shared_ptr<const expression>& e) {
    return e ? e->where : nullptr;
}

// Broadcasts two shapes (NumPy's rules, 1 or 2 dimensions); ValueError where they do not fit.
void broadcast(const char* call, const expression& a, const expression& b, expression& out) {
    out.ndim = std::max(a.ndim, b.ndim);
    for (int d = 0; d < 2; ++d) {
        const std::size_t x = a.shape[d], y = b.shape[d];
        const bool x_absent = d == 0 && a.ndim == 1, y_absent = d == 0 && b.ndim == 1;
        if (x == y || y_absent || y == 1)
            out.shape[d] = x_absent ? y : x;
        else if (x_absent || x == 1)
            out.shape[d] = y;
        else
            throw py::value_error(std::string(call) + ": shapes do not broadcast (" +
                                  std::to_string(a.shape[d]) + " against " +
                                  std::to_string(b.shape[d]) + " in one dimension)");
        if (x_absent && y_absent) out.shape[d] = 1;
    }
}

const char* op_name(op code);

bool is_comparison(op c) {
    return c >= op::less && c <= op::not_equal;
}
bool is_bitwise(op c) {
    return c >= op::bitwise_and && c <= op::right_shift;
}

dtype binary_result(op code, dtype a, dtype b) {
    const dtype p = promote(a, b);
    const bool integral = is_integer(p) || p == dtype::bool_;
    if (is_comparison(code) || code == op::logical_and || code == op::logical_or) {
        if (is_complex(p) && code != op::equal && code != op::not_equal)
            throw py::type_error(std::string("kiln.") + op_name(code) +
                                 ": complex values are not ordered");
        return dtype::bool_;
    }
    if (is_bitwise(code)) {
        if (!integral)
            throw py::type_error(std::string("kiln.") + op_name(code) +
                                 ": needs integer or bool operands, not " +
                                 std::string(name_of(p)));
        return p;
    }
    switch (code) {
        case op::true_divide:
            return integral ? dtype::float64 : p;
        case op::arctan2:
        case op::hypot:
        case op::fmax:
        case op::fmin:
            if (is_complex(p))
                throw py::type_error(std::string("kiln.") + op_name(code) +
                                     ": not for complex values");
            return integral ? dtype::float64 : p;
        case op::floor_divide:
        case op::remainder:
        case op::maximum:
        case op::minimum:
            if (is_complex(p))
                throw py::type_error(std::string("kiln.") + op_name(code) +
                                     ": not for complex values");
            return p;
        case op::power:
            if (is_complex(p)) throw py::type_error("kiln.power: not for complex values");
            return p;
        default:
            return p;
    }
}

py::object binary(op code, const py::handle& x, const py::handle& y) {
    operand a = operand_of(x, nullptr);
    if (!a.e) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    operand b = operand_of(y, device_of(a.e));
    if (!b.e) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    if (a.weak && b.weak) {  // two Python numbers (kiln.maximum(1, 2)): through NumPy
        return py::module_::import("numpy").attr(op_name(code))(x, y);
    }
    if (a.weak) settle(a, b.e->type);
    if (b.weak) settle(b, a.e->type);
    const device_entry* where = a.e->where ? a.e->where : b.e->where;
    if (a.e->where && b.e->where && a.e->where != b.e->where) {
        const std::string call = std::string("kiln.") + op_name(code);
        throw py::value_error(call + ": arrays on different devices (number " +
                              std::to_string(a.e->where->number) + " and number " +
                              std::to_string(b.e->where->number) + ")");
    }
    auto e = std::make_shared<expression>();
    e->what = expression::kind::binary;
    e->code = code;
    e->type = binary_result(code, a.e->type, b.e->type);
    e->where = where;
    if (a.weak) {
        e->ndim = b.e->ndim;
        e->shape = b.e->shape;
    } else if (b.weak) {
        e->ndim = a.e->ndim;
        e->shape = a.e->shape;
    } else
        broadcast(op_name(code), *a.e, *b.e, *e);
    e->a = a.e;
    e->b = b.e;
    return pending_array(e);
}

dtype unary_result(op code, dtype t) {
    const bool integral = is_integer(t) || t == dtype::bool_;
    switch (code) {
        case op::negative:
        case op::positive:
        case op::square:
        case op::conj:
        case op::sign:
            return t;
        case op::reciprocal:
            return t;
        case op::absolute:
            return t == dtype::complex64    ? dtype::float32
                   : t == dtype::complex128 ? dtype::float64
                                            : t;
        case op::real:
        case op::imag:
            return t == dtype::complex64    ? dtype::float32
                   : t == dtype::complex128 ? dtype::float64
                                            : t;
        case op::invert:
            if (!integral)
                throw py::type_error("kiln.invert: needs integer or bool values, not " +
                                     std::string(name_of(t)));
            return t;
        case op::logical_not:
        case op::isnan:
        case op::isinf:
        case op::isfinite:
            return dtype::bool_;
        default:
            if (is_complex(t))
                throw py::type_error(std::string("kiln.") + op_name(code) +
                                     ": kiln's element-wise functions take real values (complex: "
                                     "+, -, *, /, abs, real, imag, conj)");
            return integral ? dtype::float64 : t;
    }
}

py::object unary(op code, const py::handle& x) {
    operand a = operand_of(x, nullptr);
    if (!a.e)
        throw py::type_error(std::string("kiln.") + op_name(code) + ": not an array or a number");
    if (a.weak) return py::module_::import("numpy").attr(op_name(code))(x);
    auto e = std::make_shared<expression>();
    e->what = expression::kind::unary;
    e->code = code;
    e->type = unary_result(code, a.e->type);
    e->where = a.e->where;
    e->ndim = a.e->ndim;
    e->shape = a.e->shape;
    e->a = a.e;
    return pending_array(e);
}

py::object where(const py::handle& c, const py::handle& x, const py::handle& y) {
    operand k = operand_of(c, nullptr);
    if (!k.e) throw py::type_error("kiln.where: the condition is not an array");
    operand a = operand_of(x, k.e->where), b = operand_of(y, k.e->where);
    if (!a.e || !b.e) throw py::type_error("kiln.where: not an array or a number");
    if (a.weak && !b.weak) settle(a, b.e->type);
    if (b.weak && !a.weak) settle(b, a.e->type);
    if (a.weak && b.weak) {
        settle(a, a.e->type);
        settle(b, b.e->type);
    }
    for (const auto* o : {&a, &b})
        if (o->e->where && o->e->where != k.e->where)
            throw py::value_error("kiln.where: arrays on different devices");
    auto e = std::make_shared<expression>();
    e->what = expression::kind::where;
    e->type = promote(a.e->type, b.e->type);
    e->where = k.e->where;
    expression ab;
    broadcast("kiln.where", *a.e, *b.e, ab);
    ab.ndim = a.weak && b.weak ? 1 : ab.ndim;
    broadcast("kiln.where", *k.e, ab, *e);
    e->a = k.e;
    e->b = a.e;
    e->c = b.e;
    return pending_array(e);
}

// x op= y: into x's memory, in x's dtype.
py::object in_place(op code, const py::object& self, const py::handle& y) {
    py::object result = binary(code, self, y);
    if (result.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) return result;
    const ndarray& target = self.cast<const ndarray&>();
    const ndarray& value = result.cast<const ndarray&>();
    const array_data& data = target.data();
    if (value.shape() != data.shape && value.ndim() >= data.ndim)
        throw py::value_error(std::string("kiln.") + op_name(code) +
                              ": the result's shape is not the target's");
    evaluate_readers(data.mem.get(), value.expression_of().get());
    evaluate_into(*value.expression_of(), data);
    return self;
}

void setitem(const py::handle& self, const py::handle& key, const py::handle& value) {
    const ndarray* held = ndarray_of(self);
    if (!held) throw py::type_error("kiln.ndarray.__setitem__: not a kiln.ndarray");
    array_data target = view_of(held->data(), key);
    if (target.ndim == 0) target.ndim = 1;
    operand v = operand_of(value, target.where);
    if (!v.e) throw py::type_error("kiln.ndarray: cannot assign that");
    if (v.weak) settle(v, target.type);
    if (v.e->where && v.e->where != target.where)
        throw py::value_error("kiln.ndarray: assigning an array of another device");
    expression fits;
    expression shape_of_target;
    shape_of_target.ndim = target.ndim;
    shape_of_target.shape = target.shape;
    broadcast("kiln.ndarray.__setitem__", shape_of_target, *v.e, fits);
    if (fits.shape != target.shape)
        throw py::value_error(
            "kiln.ndarray.__setitem__: the value's shape does not fit the target");
    evaluate_readers(target.mem.get(), v.e.get());
    evaluate_into(*v.e, target);
}

constexpr std::pair<op, const char*> names[] = {
    {op::add, "add"},
    {op::subtract, "subtract"},
    {op::multiply, "multiply"},
    {op::true_divide, "true_divide"},
    {op::floor_divide, "floor_divide"},
    {op::remainder, "remainder"},
    {op::power, "power"},
    {op::less, "less"},
    {op::less_equal, "less_equal"},
    {op::greater, "greater"},
    {op::greater_equal, "greater_equal"},
    {op::equal, "equal"},
    {op::not_equal, "not_equal"},
    {op::bitwise_and, "bitwise_and"},
    {op::bitwise_or, "bitwise_or"},
    {op::bitwise_xor, "bitwise_xor"},
    {op::left_shift, "left_shift"},
    {op::right_shift, "right_shift"},
    {op::maximum, "maximum"},
    {op::minimum, "minimum"},
    {op::fmax, "fmax"},
    {op::fmin, "fmin"},
    {op::arctan2, "arctan2"},
    {op::hypot, "hypot"},
    {op::logical_and, "logical_and"},
    {op::logical_or, "logical_or"},
    {op::negative, "negative"},
    {op::positive, "positive"},
    {op::absolute, "absolute"},
    {op::invert, "invert"},
    {op::logical_not, "logical_not"},
    {op::sin, "sin"},
    {op::cos, "cos"},
    {op::tan, "tan"},
    {op::arcsin, "arcsin"},
    {op::arccos, "arccos"},
    {op::arctan, "arctan"},
    {op::sinh, "sinh"},
    {op::cosh, "cosh"},
    {op::tanh, "tanh"},
    {op::arcsinh, "arcsinh"},
    {op::arccosh, "arccosh"},
    {op::arctanh, "arctanh"},
    {op::exp, "exp"},
    {op::exp2, "exp2"},
    {op::expm1, "expm1"},
    {op::log, "log"},
    {op::log2, "log2"},
    {op::log10, "log10"},
    {op::log1p, "log1p"},
    {op::sqrt, "sqrt"},
    {op::cbrt, "cbrt"},
    {op::floor, "floor"},
    {op::ceil, "ceil"},
    {op::trunc, "trunc"},
    {op::rint, "rint"},
    {op::square, "square"},
    {op::reciprocal, "reciprocal"},
    {op::sign, "sign"},
    {op::isnan, "isnan"},
    {op::isinf, "isinf"},
    {op::isfinite, "isfinite"},
    {op::real, "real"},
    {op::imag, "imag"},
    {op::conj, "conj"},
};

const char* op_name(op code) {
    for (const auto& [c, name] : names)
        if (c == code) return name;
    return "?";
}

}  // namespace

py::object pending_array(std::shared_ptr<const expression> e) {
    auto a = std::make_shared<ndarray>(std::move(e));
    auto& list = pending_arrays();
    if (list.size() >= 64) std::erase_if(list, [](const auto& w) { return w.expired(); });
    list.push_back(a);
    return python_of(std::move(a));
}

void evaluate_pending() {
    evaluate_readers(nullptr, nullptr);
}

namespace {

// The result of a slot that CPython calls itself: f's object, or null with the Python error set.
template <class F>
PyObject* slot_result(F&& f) noexcept {
    try {
        return f().release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
template <op code>
PyObject* operator_slot(PyObject* x, PyObject* y) noexcept {
    return slot_result([&] { return binary(code, x, y); });
}
template <op code>
PyObject* in_place_slot(PyObject* self, PyObject* y) noexcept {
    return slot_result([&] { return in_place(code, py::reinterpret_borrow<py::object>(self), y); });
}
int assignment_slot(PyObject* self, PyObject* key, PyObject* value) noexcept {
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "kiln.ndarray: elements cannot be deleted");
        return -1;
    }
    PyObject* done = slot_result([&] {
        setitem(self, key, value);
        return py::none();
    });
    Py_XDECREF(done);
    return done ? 0 : -1;
}

// CPython's own slot for an operator that a class defines as a method looks the method up and
// calls it, here through pybind11's dispatcher: `y[...] = 2*x + z` went through that three times.
// The arithmetic and assignment slots call kiln directly; the methods stay for explicit calls.
void set_operator_slots(PyTypeObject* type) {
    PyNumberMethods& n = *type->tp_as_number;
    n.nb_add = operator_slot<op::add>;
    n.nb_subtract = operator_slot<op::subtract>;
    n.nb_multiply = operator_slot<op::multiply>;
    n.nb_true_divide = operator_slot<op::true_divide>;
    n.nb_floor_divide = operator_slot<op::floor_divide>;
    n.nb_remainder = operator_slot<op::remainder>;
    n.nb_inplace_add = in_place_slot<op::add>;
    n.nb_inplace_subtract = in_place_slot<op::subtract>;
    n.nb_inplace_multiply = in_place_slot<op::multiply>;
    n.nb_inplace_true_divide = in_place_slot<op::true_divide>;
    type->tp_as_mapping->mp_ass_subscript = assignment_slot;
    PyType_Modified(type);
}

}  // namespace

void bind_operators(py::class_<ndarray, std::shared_ptr<ndarray>>& cls) {
    auto forward = [&](const char* method, op code) {
        cls.def(method,
                [code](const py::object& a, const py::object& b) { return binary(code, a, b); });
    };
    auto reflected = [&](const char* method, op code) {
        cls.def(method,
                [code](const py::object& a, const py::object& b) { return binary(code, b, a); });
    };
    auto assigning = [&](const char* method, op code) {
        cls.def(method,
                [code](const py::object& a, const py::object& b) { return in_place(code, a, b); });
    };
    const std::tuple<const char*, const char*, const char*, op> arithmetic[] = {
        {"__add__", "__radd__", "__iadd__", op::add},
        {"__sub__", "__rsub__", "__isub__", op::subtract},
        {"__mul__", "__rmul__", "__imul__", op::multiply},
        {"__truediv__", "__rtruediv__", "__itruediv__", op::true_divide},
        {"__floordiv__", "__rfloordiv__", "__ifloordiv__", op::floor_divide},
        {"__mod__", "__rmod__", "__imod__", op::remainder},
        {"__pow__", "__rpow__", "__ipow__", op::power},
        {"__and__", "__rand__", "__iand__", op::bitwise_and},
        {"__or__", "__ror__", "__ior__", op::bitwise_or},
        {"__xor__", "__rxor__", "__ixor__", op::bitwise_xor},
        {"__lshift__", "__rlshift__", "__ilshift__", op::left_shift},
        {"__rshift__", "__rrshift__", "__irshift__", op::right_shift},
    };
    for (const auto& [f, r, i, code] : arithmetic) {
        forward(f, code);
        reflected(r, code);
        assigning(i, code);
    }
    forward("__lt__", op::less);
    forward("__le__", op::less_equal);
    forward("__gt__", op::greater);
    forward("__ge__", op::greater_equal);
    forward("__eq__", op::equal);
    forward("__ne__", op::not_equal);
    cls.attr("__hash__") = py::none();
    cls.def("__neg__", [](const py::object& a) { return unary(op::negative, a); });
    cls.def("__pos__", [](const py::object& a) { return unary(op::positive, a); });
    cls.def("__abs__", [](const py::object& a) { return unary(op::absolute, a); });
    cls.def("__invert__", [](const py::object& a) { return unary(op::invert, a); });
    cls.def("__setitem__", setitem);
    set_operator_slots(reinterpret_cast<PyTypeObject*>(cls.ptr()));
    cls.def("evaluate", [](const py::object& self) {
        self.cast<const ndarray&>().data();
        return self;
    });
    cls.def_property_readonly("pending", &ndarray::pending);
    cls.def_property_readonly("real", [](const py::object& a) { return unary(op::real, a); });
    cls.def_property_readonly("imag", [](const py::object& a) { return unary(op::imag, a); });
    cls.def("conj", [](const py::object& a) { return unary(op::conj, a); });
}

void bind_elementwise(py::module_& m) {
    for (const auto& [code, name] : names) {
        const op c = code;
        if (c <= op::logical_or)
            m.def(name, [c](const py::object& a, const py::object& b) { return binary(c, a, b); });
        else
            m.def(name, [c](const py::object& a) { return unary(c, a); });
    }
    m.def("where", where, py::arg("condition"), py::arg("x"), py::arg("y"));
    m.def("evaluate_pending", evaluate_pending);
    m.def("_cached_kernels", [](const device_entry& d) { return cached_kernels(d); });
}

}  // namespace kiln::python
