// SPDX-License-Identifier: Apache-2.0
// The OpenCL C text of element-wise operations on kiln.ndarray's dtypes: how kernels hold and
// store each dtype, conversions, and each operation as NumPy defines it. Element-wise
// expressions and ElementwiseKernel generate their kernels from it.
#include "expression_text.hpp"

#include <kiln/expr/core.hpp>

namespace kiln::python {

namespace {

std::string complex_helper(detail::source_builder& s, dtype t, std::string_view name) {
    if (t == dtype::complex64) return detail::complex_helper<std::complex<float>>(s, name);
    return detail::complex_helper<std::complex<double>>(s, name);
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

}  // namespace

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

}  // namespace kiln::python
