// SPDX-License-Identifier: Apache-2.0
// Element-wise expressions as kernels: the tree's structure and dtypes are the key of one
// generated OpenCL C kernel per device (built through kiln's program cache, launched through
// kiln's repeated launches); its arrays and scalars are the arguments, bound anew each time.
#include <cstring>
#include <kiln/detail/source_builder.hpp>
#include <kiln/expr/core.hpp>
#include <unordered_map>

#include "expression.hpp"

namespace kiln::python {

namespace {

// How a kernel's code holds a value of each dtype: 16-bit floats as float, bool as int.
const char* compute_type(dtype t) {
    switch (t) {
        case dtype::bool_:
        case dtype::int32:
            return "int";
        case dtype::uint32:
            return "uint";
        case dtype::int64:
            return "long";
        case dtype::uint64:
            return "ulong";
        case dtype::float16:
        case dtype::bfloat16:
        case dtype::float32:
            return "float";
        case dtype::float64:
            return "double";
        case dtype::complex64:
            return "float2";
        case dtype::complex128:
            break;
    }
    return "double2";
}
// How memory holds it.
const char* storage_type(dtype t) {
    switch (t) {
        case dtype::bool_:
            return "uchar";
        case dtype::float16:
        case dtype::bfloat16:
            return "ushort";
        default:
            return compute_type(t);
    }
}
const char* real_type(dtype t) {
    return t == dtype::complex64 || t == dtype::float32 ? "float" : "double";
}

// One element of memory as its compute type, and a compute-type value as memory's.
std::string load(dtype t, const std::string& at) {
    if (t == dtype::float16) return "kiln_half_to_float(" + at + ")";
    if (t == dtype::bfloat16) return "kiln_bf16_to_float(" + at + ")";
    if (t == dtype::bool_) return "(int)" + at;
    return at;
}
std::string store(dtype t, const std::string& v) {
    if (t == dtype::float16) return "kiln_float_to_half(" + v + ")";
    if (t == dtype::bfloat16) return "kiln_float_to_bf16(" + v + ")";
    if (t == dtype::bool_) return "(uchar)((" + v + ") != 0)";
    return v;
}

std::string complex_helper(detail::source_builder& s, dtype t, std::string_view name) {
    if (t == dtype::complex64) return detail::complex_helper<std::complex<float>>(s, name);
    return detail::complex_helper<std::complex<double>>(s, name);
}

// A value of dtype `from` as `to`, in compute types.
std::string convert(detail::source_builder& s, const std::string& v, dtype from, dtype to) {
    if (from == to) return v;
    if (to == dtype::bool_) {
        if (is_complex(from)) return "(int)((" + v + ").x != 0 || (" + v + ").y != 0)";
        return "(int)((" + v + ") != 0)";
    }
    if (is_complex(to)) {
        const std::string make = complex_helper(s, to, "cmake");
        const std::string r = real_type(to);
        if (is_complex(from)) return make + "((" + r + ")(" + v + ").x, (" + r + ")(" + v + ").y)";
        return make + "((" + r + ")(" + v + "), 0)";
    }
    if (is_complex(from)) return "((" + std::string(compute_type(to)) + ")(" + v + ").x)";
    if (std::string_view(compute_type(from)) == compute_type(to)) return v;
    return "((" + std::string(compute_type(to)) + ")(" + v + "))";
}

// Helpers the integer operations need, per compute type: NumPy's floor division and remainder
// (which take the divisor's sign), division by zero giving 0 as NumPy does (and no trap on the
// CPU), and powers by squaring.
std::string integer_helper(detail::source_builder& s, const std::string& t, const char* what) {
    const bool is_signed = t == "int" || t == "long";
    const std::string name = std::string("kiln_py_") + what + "_" + t;
    if (std::string_view(what) == "floordiv")
        s.define(name,
                 t + " " + name + "(" + t + " a, " + t + " b) {\n" + "    if (b == 0) return 0;\n" +
                     (is_signed ? "    if (b == -1) return -a;\n" + ("    " + t + " q = a / b;\n") +
                                      "    if (a % b != 0 && ((a < 0) != (b < 0))) --q;\n" +
                                      "    return q;\n"
                                : "    return a / b;\n") +
                     "}\n");
    else if (std::string_view(what) == "mod")
        s.define(name,
                 t + " " + name + "(" + t + " a, " + t + " b) {\n" + "    if (b == 0) return 0;\n" +
                     (is_signed ? "    if (b == -1) return 0;\n" + ("    " + t + " r = a % b;\n") +
                                      "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n" +
                                      "    return r;\n"
                                : "    return a % b;\n") +
                     "}\n");
    else
        s.define(
            name,
            t + " " + name + "(" + t + " b, " + t + " e) {\n" +
                (is_signed
                     ? "    if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);\n"
                     : "") +
                "    " + t + " r = 1;\n" +
                "    while (e > 0) { if (e & 1) r *= b; b *= b; e >>= 1; }\n" +
                "    return r;\n}\n");
    return name;
}

std::string float_remainder(detail::source_builder& s, const std::string& t) {
    const std::string name = "kiln_py_fmod_" + t;
    s.define(name, t + " " + name + "(" + t + " a, " + t + " b) {\n" + "    " + t +
                       " r = fmod(a, b);\n" + "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n" +
                       "    return r == 0 ? copysign((" + t + ")0, b) : r;\n}\n");
    return name;
}

const char* unary_function(op code) {
    switch (code) {
        case op::sin:
            return "sin";
        case op::cos:
            return "cos";
        case op::tan:
            return "tan";
        case op::arcsin:
            return "asin";
        case op::arccos:
            return "acos";
        case op::arctan:
            return "atan";
        case op::sinh:
            return "sinh";
        case op::cosh:
            return "cosh";
        case op::tanh:
            return "tanh";
        case op::arcsinh:
            return "asinh";
        case op::arccosh:
            return "acosh";
        case op::arctanh:
            return "atanh";
        case op::exp:
            return "exp";
        case op::exp2:
            return "exp2";
        case op::expm1:
            return "expm1";
        case op::log:
            return "log";
        case op::log2:
            return "log2";
        case op::log10:
            return "log10";
        case op::log1p:
            return "log1p";
        case op::sqrt:
            return "sqrt";
        case op::cbrt:
            return "cbrt";
        case op::floor:
            return "floor";
        case op::ceil:
            return "ceil";
        case op::trunc:
            return "trunc";
        case op::rint:
            return "rint";
        default:
            return nullptr;
    }
}

std::string unary_text(detail::source_builder& s, op code, const std::string& x, dtype in,
                       dtype out) {
    const std::string t = compute_type(in);
    if (const char* f = unary_function(code)) return std::string(f) + "(" + x + ")";
    switch (code) {
        case op::negative:
            return is_complex(in) ? complex_helper(s, in, "cneg") + "(" + x + ")" : "(-" + x + ")";
        case op::positive:
            return x;
        case op::absolute:
            if (is_complex(in)) return complex_helper(s, in, "cabs") + "(" + x + ")";
            if (is_floating(in)) return "fabs(" + x + ")";
            if (in == dtype::uint32 || in == dtype::uint64 || in == dtype::bool_) return x;
            return "((" + t + ")abs(" + x + "))";
        case op::invert:
            return in == dtype::bool_ ? "(!" + x + ")" : "(~" + x + ")";
        case op::logical_not:
            return "(int)!(" + x + ")";
        case op::square:
            return is_complex(in) ? complex_helper(s, in, "cmul") + "(" + x + ", " + x + ")"
                                  : "(" + x + " * " + x + ")";
        case op::reciprocal:
            return is_complex(in) ? complex_helper(s, in, "cdiv") + "(" +
                                        convert(s, "1", dtype::int32, in) + ", " + x + ")"
                                  : "((" + t + ")1 / " + x + ")";
        case op::sign:
            if (is_floating(in))
                return "(isnan(" + x + ") ? " + x + " : (" + t + ")((" + x + " > 0) - (" + x +
                       " < 0)))";
            return "((" + t + ")((" + x + " > 0) - (" + x + " < 0)))";
        case op::isnan:
            return is_complex(in)    ? "(int)(isnan((" + x + ").x) || isnan((" + x + ").y))"
                   : is_floating(in) ? "(int)isnan(" + x + ")"
                                     : "0";
        case op::isinf:
            return is_complex(in)    ? "(int)(isinf((" + x + ").x) || isinf((" + x + ").y))"
                   : is_floating(in) ? "(int)isinf(" + x + ")"
                                     : "0";
        case op::isfinite:
            return is_complex(in)    ? "(int)(isfinite((" + x + ").x) && isfinite((" + x + ").y))"
                   : is_floating(in) ? "(int)isfinite(" + x + ")"
                                     : "1";
        case op::real:
            return is_complex(in) ? "(" + x + ").x" : x;
        case op::imag:
            return is_complex(in) ? "(" + x + ").y" : "(" + std::string(compute_type(out)) + ")0";
        case op::conj:
            return is_complex(in) ? complex_helper(s, in, "conj") + "(" + x + ")" : x;
        default:
            break;
    }
    throw py::type_error("kiln: no element-wise operation " +
                         std::to_string(static_cast<int>(code)));
}

// `a op b`, both of dtype `in` (converted already), giving `out`.
std::string binary_text(detail::source_builder& s, op code, const std::string& a,
                        const std::string& b, dtype in) {
    const std::string t = compute_type(in);
    const bool complex = is_complex(in);
    const bool floating = is_floating(in);
    auto infix = [&](const char* symbol) { return "(" + a + " " + symbol + " " + b + ")"; };
    switch (code) {
        case op::add:
            return complex ? complex_helper(s, in, "cadd") + "(" + a + ", " + b + ")" : infix("+");
        case op::subtract:
            return complex ? complex_helper(s, in, "csub") + "(" + a + ", " + b + ")" : infix("-");
        case op::multiply:
            return complex ? complex_helper(s, in, "cmul") + "(" + a + ", " + b + ")" : infix("*");
        case op::true_divide:
            return complex ? complex_helper(s, in, "cdiv") + "(" + a + ", " + b + ")" : infix("/");
        case op::floor_divide:
            return floating ? "floor(" + a + " / " + b + ")"
                            : integer_helper(s, t, "floordiv") + "(" + a + ", " + b + ")";
        case op::remainder:
            return floating ? float_remainder(s, t) + "(" + a + ", " + b + ")"
                            : integer_helper(s, t, "mod") + "(" + a + ", " + b + ")";
        case op::power:
            return floating ? "pow(" + a + ", " + b + ")"
                            : integer_helper(s, t, "pow") + "(" + a + ", " + b + ")";
        case op::less:
            return "(int)" + infix("<");
        case op::less_equal:
            return "(int)" + infix("<=");
        case op::greater:
            return "(int)" + infix(">");
        case op::greater_equal:
            return "(int)" + infix(">=");
        case op::equal:
            return complex
                       ? "(int)((" + a + ").x == (" + b + ").x && (" + a + ").y == (" + b + ").y)"
                       : "(int)" + infix("==");
        case op::not_equal:
            return complex
                       ? "(int)((" + a + ").x != (" + b + ").x || (" + a + ").y != (" + b + ").y)"
                       : "(int)" + infix("!=");
        case op::bitwise_and:
            return infix("&");
        case op::bitwise_or:
            return infix("|");
        case op::bitwise_xor:
            return infix("^");
        case op::left_shift:
            return infix("<<");
        case op::right_shift:
            return infix(">>");
        case op::logical_and:
            return "(int)(" + a + " && " + b + ")";
        case op::logical_or:
            return "(int)(" + a + " || " + b + ")";
        case op::maximum:
        case op::minimum: {
            const char* f = code == op::maximum ? "max" : "min";
            if (!floating) return "((" + t + ")" + f + "(" + a + ", " + b + "))";
            // NumPy's maximum and minimum give NaN where either operand is NaN.
            return "((isnan(" + a + ") || isnan(" + b + ")) ? " + a + " + " + b + " : f" + f + "(" +
                   a + ", " + b + "))";
        }
        case op::fmax:
            return "fmax(" + a + ", " + b + ")";
        case op::fmin:
            return "fmin(" + a + ", " + b + ")";
        case op::arctan2:
            return "atan2(" + a + ", " + b + ")";
        case op::hypot:
            return "hypot(" + a + ", " + b + ")";
        default:
            break;
    }
    throw py::type_error("kiln: no element-wise operation " +
                         std::to_string(static_cast<int>(code)));
}

// The dtype both operands of a binary operation are converted to before it.
dtype operand_type(const expression& e) {
    const dtype common = promote(e.a->type, e.b->type);
    switch (e.code) {
        case op::true_divide:
        case op::arctan2:
        case op::hypot:
        case op::fmax:
        case op::fmin:
            return e.type;
        default:
            return common;
    }
}

// One pass over a tree: the key and the arguments, and on a cache miss the kernel's source.
struct kernel_walk {
    std::string key;
    std::vector<detail::kernel_argument> args;
    detail::source_builder* source = nullptr;  // only when generating
    std::vector<const array_data*> leaves;     // the distinct arrays read, parameter order
    std::vector<std::array<std::ptrdiff_t, 2>> leaf_strides;
    std::size_t scalars = 0;
    std::size_t out_ndim = 1;
    std::array<std::size_t, 2> out_shape{};
    bool strided = false;  // some operand needs the element's row and column

    // Strides of `a` over the output's elements (0 along broadcast dimensions).
    std::array<std::ptrdiff_t, 2> strides_over_output(const array_data& a) const {
        std::array<std::ptrdiff_t, 2> s = a.strides;
        if (a.ndim == 1 && out_ndim == 2) s[0] = 0;
        for (int d = 0; d < 2; ++d)
            if (a.shape[d] == 1 && out_shape[d] != 1) s[d] = 0;
        return s;
    }
    bool runs_with_output(const std::array<std::ptrdiff_t, 2>& s) const {
        const bool rows_follow =
            out_shape[0] <= 1 || s[0] == static_cast<std::ptrdiff_t>(out_shape[1]);
        return (out_shape[1] <= 1 || s[1] == 1) && rows_follow;
    }

    std::string array_leaf(const array_data& a) {
        const auto s = strides_over_output(a);
        std::size_t k = 0;
        for (; k < leaves.size(); ++k)
            if (leaves[k]->mem == a.mem && leaves[k]->offset == a.offset &&
                leaves[k]->type == a.type && leaf_strides[k] == s)
                break;
        const bool runs = runs_with_output(s);
        const std::string name = "a" + std::to_string(k);
        if (k == leaves.size()) {
            leaves.push_back(&a);
            leaf_strides.push_back(s);
            if (!source) {
                args.push_back(detail::storage_argument(a.mem->storage(), kiln::access::in));
                args.push_back(scalar_argument(static_cast<std::uint64_t>(a.offset)));
                if (!runs) {
                    args.push_back(scalar_argument(static_cast<std::int64_t>(s[0])));
                    args.push_back(scalar_argument(static_cast<std::int64_t>(s[1])));
                }
            } else {
                source->parameter("global const " + std::string(storage_type(a.type)) + "* " +
                                  name);
                source->parameter("ulong " + name + "_offset");
                if (!runs) {
                    source->parameter("long " + name + "_row");
                    source->parameter("long " + name + "_column");
                }
            }
        }
        key += 'a';
        key += static_cast<char>('0' + k);
        key += static_cast<char>('A' + static_cast<int>(a.type));
        key += runs ? 'r' : 's';
        if (!runs) strided = true;
        if (runs) return load(a.type, name + "[" + name + "_offset + i]");
        return load(a.type, name + "[" + name + "_offset + (long)row * " + name +
                                "_row + (long)column * " + name + "_column]");
    }

    template <class T>
    static detail::kernel_argument scalar_argument(const T& value) {
        detail::kernel_argument arg;
        std::memcpy(arg.scalar_of_size(sizeof(T)), &value, sizeof(T));
        return arg;
    }

    std::string scalar_leaf(const expression& e) {
        const std::string name = "s" + std::to_string(scalars++);
        key += 's';
        key += static_cast<char>('A' + static_cast<int>(e.type));
        if (source) {
            source->parameter(std::string(compute_type(e.type)) + " " + name);
            return name;
        }
        switch (e.type) {
            case dtype::bool_:
            case dtype::int32:
                args.push_back(scalar_argument(static_cast<std::int32_t>(e.integer)));
                break;
            case dtype::uint32:
                args.push_back(scalar_argument(static_cast<std::uint32_t>(e.integer)));
                break;
            case dtype::int64:
                args.push_back(scalar_argument(e.integer));
                break;
            case dtype::uint64:
                args.push_back(scalar_argument(static_cast<std::uint64_t>(e.integer)));
                break;
            case dtype::float16:
            case dtype::bfloat16:
            case dtype::float32:
                args.push_back(scalar_argument(static_cast<float>(e.number.real())));
                break;
            case dtype::float64:
                args.push_back(scalar_argument(e.number.real()));
                break;
            case dtype::complex64:
                args.push_back(scalar_argument(std::complex<float>(e.number)));
                break;
            case dtype::complex128:
                args.push_back(scalar_argument(e.number));
                break;
        }
        return name;
    }

    // The OpenCL C text of e's value (meaningful when generating), in e's compute type.
    std::string visit(const expression& e) {
        switch (e.what) {
            case expression::kind::array:
                return array_leaf(e.leaf);
            case expression::kind::scalar:
                return scalar_leaf(e);
            case expression::kind::cast: {
                key += 'c';
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                return source ? convert(*source, x, e.a->type, e.type) : std::string();
            }
            case expression::kind::unary: {
                key += 'u';
                key += static_cast<char>(e.code);
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                if (!source) return {};
                // Functions of integers compute in the result's (floating) type.
                const bool widen = unary_function(e.code) != nullptr;
                const dtype in = widen ? e.type : e.a->type;
                return unary_text(*source, e.code, convert(*source, x, e.a->type, in), in, e.type);
            }
            case expression::kind::binary: {
                key += 'b';
                key += static_cast<char>(e.code);
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                const std::string y = visit(*e.b);
                if (!source) return {};
                const dtype in = operand_type(e);
                return binary_text(*source, e.code, convert(*source, x, e.a->type, in),
                                   convert(*source, y, e.b->type, in), in);
            }
            case expression::kind::where: {
                key += 'w';
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string c = visit(*e.a);
                const std::string x = visit(*e.b);
                const std::string y = visit(*e.c);
                if (!source) return {};
                return "((" + c + ") ? " + convert(*source, x, e.b->type, e.type) + " : " +
                       convert(*source, y, e.c->type, e.type) + ")";
            }
        }
        return {};
    }
};

struct cached_kernel {
    explicit cached_kernel(kiln::kernel k)
        : launch(k), work_group(std::min<std::size_t>(256, k.max_work_group_size())) {}
    detail::repeated_launch launch;
    std::size_t work_group;
};

// Per device, the kernels of the trees met so far, by key (the GIL guards the maps).
std::unordered_map<std::string, std::unique_ptr<cached_kernel>>& kernels_of(const device_entry& d) {
    static std::vector<std::unordered_map<std::string, std::unique_ptr<cached_kernel>>> maps;
    if (maps.size() <= d.number) maps.resize(d.number + 1);
    return maps[d.number];
}

}  // namespace

std::size_t cached_kernels(const device_entry& d) {
    return kernels_of(d).size();
}

std::shared_ptr<const expression> leaf_of(const array_data& a) {
    auto e = std::make_shared<expression>();
    e->what = expression::kind::array;
    e->type = a.type;
    e->where = a.where;
    e->ndim = a.ndim;
    e->shape = a.shape;
    e->leaf = a;
    return e;
}

void evaluate_into(const expression& e, const array_data& target) {
    const std::size_t n = target.size();
    if (n == 0) return;
    kernel_walk walk;
    walk.out_ndim = target.ndim;
    walk.out_shape = target.shape;
    const auto out_strides = target.strides;
    const bool out_runs = walk.runs_with_output(out_strides);
    walk.key = out_runs ? "o" : "O";
    walk.key += static_cast<char>('A' + static_cast<int>(target.type));
    walk.visit(e);
    // An operand that reads the target's memory elsewhere than at each element's own place
    // would race with the writes: evaluate into new memory first (as NumPy copies overlaps).
    for (std::size_t k = 0; k < walk.leaves.size(); ++k) {
        const array_data& leaf = *walk.leaves[k];
        if (leaf.mem == target.mem &&
            (leaf.offset != target.offset || walk.leaf_strides[k] != out_strides)) {
            const array_data staged = evaluate(e);
            evaluate_into(*leaf_of(staged), target);
            return;
        }
    }
    const device_entry& where = *target.where;
    auto& cache = kernels_of(where);
    auto found = cache.find(walk.key);
    if (found == cache.end()) {
        detail::source_builder source;
        kernel_walk generating;
        generating.source = &source;
        generating.out_ndim = walk.out_ndim;
        generating.out_shape = walk.out_shape;
        source.begin_kernel("kiln_elementwise");
        source.parameter("ulong n");
        source.parameter("ulong columns");
        source.parameter("global " + std::string(storage_type(target.type)) + "* out");
        source.parameter("ulong out_offset");
        if (!out_runs) {
            source.parameter("long out_row");
            source.parameter("long out_column");
        }
        const std::string value = generating.visit(e);
        source.begin_body();
        source.line("const ulong i = get_global_id(0);");
        source.line("if (i >= n) return;");
        if (generating.strided || !out_runs)
            source.line("const ulong row = i / columns, column = i - row * columns;");
        const std::string at =
            out_runs ? "out[out_offset + i]"
                     : "out[out_offset + (long)row * out_row + (long)column * out_column]";
        source.line(at + " = " + store(target.type, convert(source, value, e.type, target.type)) +
                    ";");
        source.end_kernel();
        const std::string text = source.str();
        kiln::kernel k = [&] {
            py::gil_scoped_release unlocked;
            return kiln::program(where.device, text).kernel("kiln_elementwise");
        }();
        found = cache.emplace(walk.key, std::make_unique<cached_kernel>(std::move(k))).first;
    }
    std::vector<detail::kernel_argument> args;
    args.reserve(walk.args.size() + 6);
    args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(n)));
    args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(target.shape[1])));
    args.push_back(detail::storage_argument(target.mem->storage(), kiln::access::out));
    args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(target.offset)));
    if (!out_runs) {
        args.push_back(kernel_walk::scalar_argument(static_cast<std::int64_t>(out_strides[0])));
        args.push_back(kernel_walk::scalar_argument(static_cast<std::int64_t>(out_strides[1])));
    }
    for (auto& a : walk.args) args.push_back(std::move(a));
    const std::size_t group = found->second->work_group;
    found->second->launch.enqueue(where.queue, (n + group - 1) / group * group, group, args);
}

array_data evaluate(const expression& e) {
    array_data out = array_data::empty(*e.where, e.type, e.ndim, e.shape);
    evaluate_into(e, out);
    return out;
}

array_data compact(const array_data& a) {
    if (a.compact() && a.offset == 0) return a;
    return copied(a);
}

array_data copied(const array_data& a) {
    return evaluate(*leaf_of(a));
}

array_data converted(const array_data& a, dtype t) {
    if (a.type == t) return a;
    auto e = std::make_shared<expression>(*leaf_of(a));
    auto cast = std::make_shared<expression>();
    cast->what = expression::kind::cast;
    cast->type = t;
    cast->where = a.where;
    cast->ndim = a.ndim;
    cast->shape = a.shape;
    cast->a = e;
    return evaluate(*cast);
}

}  // namespace kiln::python
