// SPDX-License-Identifier: Apache-2.0
// Sources of the FFT kernels: Stockham passes through local memory, specialised to their
// length, and the element-wise steps of Bluestein and of real transforms.
#include <cmath>
#include <cstdio>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/source_builder.hpp>
#include <numbers>
#include <optional>
#include <string_view>

#include "fft_kernel_parts.hpp"

namespace kiln::detail {
namespace fft_source {

fft_types types(bool double_precision, bool wide_index) {
    const std::string real = double_precision ? "double" : "float";
    return {real, real + "2", wide_index ? "ulong" : "uint", double_precision, wide_index};
}

kernel_description step_kernel_description(const std::string& name, const fft_types& t,
                                           bool reads_expression) {
    kernel_description kernel(name);
    if (reads_expression)
        kernel.then_input();
    else
        kernel.global_const(t.complex, "in");
    kernel.global(t.complex, "out").global_const(t.complex, "table");
    for (const char* p : fft_index_slots) kernel.scalar(t.index, p, t.index_bytes());
    return kernel.scalar(t.real, "scale", t.real_bytes());
}

std::string literal(const fft_types& t, double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17e", value);
    return std::string(text) + (t.double_precision ? "" : "f");
}

void define_helpers(source_builder& b, const fft_types& t) {
    const std::string& c = t.complex;
    b.define("kiln_fft_helpers",
             c + " kiln_fft_make(" + t.real + " re, " + t.real + " im) { " + c +
                 " z; z.x = re; z.y = im; return z; }\n" + c + " kiln_fft_add(" + c + " a, " + c +
                 " b) { return kiln_fft_make(a.x + b.x, a.y + b.y); }\n" + c + " kiln_fft_sub(" +
                 c + " a, " + c + " b) { return kiln_fft_make(a.x - b.x, a.y - b.y); }\n" + c +
                 " kiln_fft_mul(" + c + " a, " + c +
                 " b) { return kiln_fft_make(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n" +
                 c + " kiln_fft_neg(" + c + " a) { return kiln_fft_make(-a.x, -a.y); }\n" + c +
                 " kiln_fft_mul_i(" + c + " a) { return kiln_fft_make(-a.y, a.x); }\n" + c +
                 " kiln_fft_mul_minus_i(" + c + " a) { return kiln_fft_make(a.y, -a.x); }\n" + c +
                 " kiln_fft_scaled(" + c + " a, " + t.real +
                 " s) { return kiln_fft_make(a.x * s, a.y * s); }\n"
                 "uint kiln_fft_pad(uint x) { return x + (x >> 4); }\n");
}

// The description's parameters, an input expression's declared where the description says.
std::optional<fft_input_text> declare_parameters(source_builder& b,
                                                 const kernel_description& kernel,
                                                 const fft_input_writer* input) {
    std::optional<fft_input_text> text;
    kernel.declare(b, [&] { text = (*input)(b); });
    return text;
}

std::optional<fft_input_text> begin(source_builder& b, const fft_types& t, const std::string& name,
                                    const fft_input_writer* input = nullptr) {
    b.begin_kernel(name);
    std::optional<fft_input_text> text =
        declare_parameters(b, step_kernel_description(name, t, input != nullptr), input);
    b.begin_body();
    b.line("const " + t.index + " g = (" + t.index + ")get_global_id(0);");
    b.line("if (g >= count) return;");
    return text;
}

std::string call(std::string_view function, std::string_view a, std::string_view b) {
    std::string text(function);
    text.append("(").append(a);
    if (!b.empty()) text.append(", ").append(b);
    return text.append(")");
}

std::string rotated(const fft_types& t, const std::string& v, std::size_t e, std::size_t radix,
                    bool inverse) {
    e %= radix;
    if (e == 0) return v;
    if ((4 * e) % radix == 0) {
        const std::size_t quarters = 4 * e / radix;
        if (quarters == 2) return call("kiln_fft_neg", v);
        const bool plus_i = (quarters == 1) == inverse;
        return call(plus_i ? "kiln_fft_mul_i" : "kiln_fft_mul_minus_i", v);
    }
    const double angle = (inverse ? 2 : -2) * std::numbers::pi * double(e) / double(radix);
    return call("kiln_fft_mul", v,
                call("kiln_fft_make", literal(t, std::cos(angle)), literal(t, std::sin(angle))));
}

// The distance between the group's lines in local memory: a line with one element of padding
// every 16, rounded up so that work-items taking neighbouring lines at neighbouring butterflies
// (16 / G of them per line within the 16 eight-byte banks one access of a half-warp covers)
// fall on different banks: lines 16 / G banks apart, or an odd number of banks for 16 lines
// and more.
std::size_t line_stride(const fft_pass_kernel& k) {
    const std::size_t padded = k.length + (k.length - 1) / 16;
    const std::size_t G = k.lines_per_group;
    const std::size_t banks = G < 16 && 16 % G == 0 ? 16 / G % 16 : 1;
    std::size_t stride = padded;
    while (stride % 16 != banks) ++stride;
    return stride;
}

// The local-memory position of element i of the group's line g: one element of padding every
// 16, so that the strided accesses of the radix stages (stride R) spread over the banks.
std::string local_position(const fft_pass_kernel& k, const std::string& g, const std::string& i) {
    return "(" + g + ") * " + std::to_string(line_stride(k)) + "u + kiln_fft_pad(" + i + ")";
}

std::size_t local_elements(const fft_pass_kernel& k) {
    return k.lines_per_group * line_stride(k);
}

// `if (condition) {`, or a bare block when the condition always holds.
void open_guard(source_builder& b, bool needed, const std::string& condition) {
    b.open(needed ? "if (" + condition + ")" : "");
}

void load_input(source_builder& b, const fft_input_text* input, const std::string& target,
                const std::string& index) {
    if (!input) {
        b.line(target + " = in[" + index + "];");
        return;
    }
    b.open("");
    b.line("const ulong idx = (ulong)(" + index + ");");
    for (const std::string& statement : input->statements) b.line(statement);
    b.line(target + " = " + input->value + ";");
    b.close();
}

// Where a radix stage reads its inputs and writes its outputs: global memory for the pass's
// first and last stage (straight between global memory and registers, no local-memory round
// trip), local memory between stages.
struct stage_ends {
    bool from_global, to_global;
    // Work-items take neighbouring lines (else neighbouring butterflies of one line): for the
    // ends in global memory, whichever neighbours them there.
    bool lines_fastest;
    line_shifts shifts;
};

void line_offsets(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                  const line_shifts& shifts) {
    const std::string& ix = t.index;
    const auto shifted = [](const std::string& shift) {
        return shift.empty() ? std::string() : " + " + shift;
    };
    b.line("const " + ix + " line = first + g;");
    b.line("const " + ix + " inner = line % d, line_j = (line / d) % b, rest = line / d / b;");
    b.line("const " + ix + " line_k = line_j % c;");
    b.line("const " + ix + " in_line = rest * a * d + line_j * d + inner" + shifted(shifts.in) +
           ";");
    b.line("const " + ix + " out_line = rest * a * d + ((line_j - line_k) * " +
           std::to_string(k.length) + "u + line_k) * d + inner" + shifted(shifts.out) + ";");
}

// w_cL^x = w_cL^(x mod L) w_cL^(L floor(x / L)), from the pass's two tables after a first pass.
std::string pass_twiddle(const fft_pass_kernel& k, const std::string& x) {
    const std::string L = std::to_string(k.length);
    return "kiln_fft_mul(table[e + " + L + "u + (" + x + ") % " + L + "u], table[e + " +
           std::to_string(2 * k.length) + "u + (" + x + ") / " + L + "u])";
}

// One radix-R Stockham stage inside every line of the group: R sub-transforms of length `done`
// become one of length done R. Work-item beta does butterfly j of line g; its inputs are
// elements j + r L / R, its outputs (j - k) R + k + m done, k = j mod done. All of a
// work-item's inputs are read before its first output is written: CUDA cannot tell a global
// pointer from local memory, so a local store between two global loads would make each load
// wait for the one before, and stages in local memory work in place (a barrier between).
void write_stage(source_builder& b, const fft_types& t, const fft_pass_kernel& k, std::size_t radix,
                 std::size_t done, const stage_ends& ends, const fft_input_text* input) {
    const std::size_t per_line = k.length / radix;
    const std::size_t total = k.lines_per_group * per_line;
    const std::size_t rounds = (total + k.work_group_size - 1) / k.work_group_size;
    const std::string P = std::to_string(per_line), D = std::to_string(done),
                      G = std::to_string(k.lines_per_group);
    const auto butterfly = [&](std::size_t u, bool global_side) {
        b.line("const uint beta = lid + " + std::to_string(u * k.work_group_size) + "u;");
        b.line(ends.lines_fastest ? "const uint g = beta % " + G + "u, j = beta / " + G + "u;"
                                  : "const uint g = beta / " + P + "u, j = beta % " + P + "u;");
        b.line("const uint k = j % " + D + "u;");
        const bool partial = (u + 1) * k.work_group_size > total;
        if (global_side) {
            open_guard(b, true,
                       (partial ? "beta < " + std::to_string(total) + "u && " : std::string()) +
                           "first + g < count");
            line_offsets(b, t, k, ends.shifts);
        } else {
            open_guard(b, partial, "beta < " + std::to_string(total) + "u");
        }
    };
    for (std::size_t u = 0; u < rounds; ++u)
        for (std::size_t m = 0; m < radix; ++m)
            b.line(t.complex + " o" + std::to_string(u) + "_" + std::to_string(m) + ";");
    for (std::size_t u = 0; u < rounds; ++u) {
        b.open("");
        butterfly(u, ends.from_global);
        // Load twiddles after a first pass: element i = j + r L / R of line_k's line times
        // w_cL^(line_k i). Stage twiddles: input r times w_L^(k r L / (done R)) (from the
        // table's first L).
        twiddle_powers twiddles(b, t, radix);
        const bool load_twiddles = ends.from_global && k.twiddled;
        const std::size_t unit = k.length / (done * radix);
        if (load_twiddles)
            twiddles.declare(
                pass_twiddle(k, "line_k * " + P + "u"),
                pass_twiddle(k, "line_k * " + std::to_string(per_line * twiddles.split()) + "u"),
                pass_twiddle(k, "line_k * j"));
        else if (done > 1)
            twiddles.declare("table[e + k * " + std::to_string(unit) + "u]",
                             "table[e + k * " + std::to_string(unit * twiddles.split()) + "u]", "");
        std::vector<std::string> v;
        for (std::size_t r = 0; r < radix; ++r) {
            const std::string name = "v" + std::to_string(r);
            const std::string i = "(j + " + std::to_string(r * per_line) + "u)";
            std::string value = "data[" + local_position(k, "g", i) + "]";
            if (ends.from_global && input) {
                value = name + "_input";
                b.line(t.complex + " " + value + ";");
                load_input(b, input, value, "in_line + (" + t.index + ")" + i + " * load_step");
            } else if (ends.from_global) {
                const std::string at = "in_line + (" + t.index + ")" + i + " * load_step";
                value = ends.shifts.streaming_loads ? "kiln_load_streaming(in + " + at + ")"
                                                    : "in[" + at + "]";
            }
            if (load_twiddles || done > 1) value = twiddles.times(value, r);
            b.line("const " + t.complex + " " + name + " = " + value + ";");
            v.push_back(name);
        }
        const std::vector<std::string> y = small_dft_writer(b, t, k.inverse).dft(v);
        for (std::size_t m = 0; m < radix; ++m)
            b.line("o" + std::to_string(u) + "_" + std::to_string(m) + " = " + y[m] + ";");
        b.close();
        b.close();
    }
    if (!ends.from_global && !ends.to_global) b.local_barrier();
    for (std::size_t u = 0; u < rounds; ++u) {
        b.open("");
        butterfly(u, ends.to_global);
        for (std::size_t m = 0; m < radix; ++m) {
            const std::string i = "((j - k) * " + std::to_string(radix) + "u + k + " +
                                  std::to_string(m * done) + "u)";
            const std::string o = "o" + std::to_string(u) + "_" + std::to_string(m);
            const std::string at = "out_line + (" + t.index + ")" + i + " * store_step";
            if (ends.to_global && ends.shifts.streaming_stores)
                b.line("kiln_store_streaming(out + " + at + ", kiln_fft_scaled(" + o +
                       ", scale));");
            else if (ends.to_global)
                b.line("out[" + at + "] = kiln_fft_scaled(" + o + ", scale);");
            else
                b.line("data[" + local_position(k, "g", i) + "] = " + o + ";");
        }
        b.close();
        b.close();
    }
    if (!ends.to_global) b.local_barrier();
}

std::optional<fft_input_text> begin_pass_kernel(source_builder& b, const fft_types& t,
                                                const fft_pass_kernel& k,
                                                const fft_input_writer* input) {
    b.begin_kernel(k.name(), k.work_group_size);
    return declare_parameters(
        b, fft_pass_description(k, t.double_precision, t.wide_index, input != nullptr), input);
}

// A pass of one radix stage without local memory, one line per work-item: what CPUs run (their
// caches serve any order, and PoCL compiles kernels without barriers several times faster).
// Same parameters and tables as write_pass_kernel.
void write_direct_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                              const fft_input_writer* input) {
    const std::string& ix = t.index;
    const std::string L = std::to_string(k.length);
    const std::optional<fft_input_text> input_text = begin_pass_kernel(b, t, k, input);
    b.begin_body();
    b.line("const " + ix + " line = (" + ix + ")get_global_id(0);");
    b.line("if (line >= count) return;");
    b.line("const " + ix + " inner = line % d, j = (line / d) % b, rest = line / d / b;");
    b.line("const " + ix + " k = j % c;");
    b.line("const " + ix + " source = rest * a * d + j * d + inner, load_step = b * d;");
    std::vector<std::string> v;
    for (std::size_t r = 0; r < k.length; ++r) {
        const std::string name = "v" + std::to_string(r);
        b.line(t.complex + " " + name + ";");
        load_input(b, input_text ? &*input_text : nullptr, name,
                   "source + " + std::to_string(r) + "u * load_step");
        if (k.twiddled && r > 0) {
            const std::string x = "(k * " + std::to_string(r) + "u)";
            b.line(name + " = kiln_fft_mul(" + name + ", kiln_fft_mul(table[e + " + L + "u + " + x +
                   " % " + L + "u], table[e + " + std::to_string(2 * k.length) + "u + " + x +
                   " / " + L + "u]));");
        }
        v.push_back(name);
    }
    const std::vector<std::string> y = small_dft_writer(b, t, k.inverse).dft(v);
    b.line("const " + ix + " target = rest * a * d + ((j - k) * " + L +
           "u + k) * d + inner, store_step = c * d;");
    for (std::size_t m = 0; m < k.length; ++m)
        b.line("out[target + " + std::to_string(m) + "u * store_step] = kiln_fft_scaled(" + y[m] +
               ", scale);");
    b.end_kernel();
}

void write_pass_body(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                     const fft_input_text* input, const line_shifts& shifts) {
    b.line("const " + t.index + " load_step = b * d, store_step = c * d;");
    std::size_t done = 1;
    for (std::size_t s = 0; s < k.radices.size(); ++s) {
        const bool first = s == 0, last = s + 1 == k.radices.size();
        // A single stage's loads and stores go the same way: its butterflies are whole lines.
        const bool lines_fastest = first  ? k.load_lines_fastest
                                   : last ? k.store_lines_fastest
                                          : false;
        b.open("");
        write_stage(b, t, k, k.radices[s], done, {first, last, lines_fastest, shifts},
                    first ? input : nullptr);
        b.close();
        done *= k.radices[s];
    }
}

// One Stockham pass of length L = k.length over every line of a strided batch: one global read
// and one write per element. The first radix stage loads its butterflies' inputs straight into
// registers and the last stores its outputs straight from them; only the exchanges between
// stages go through local memory (`data`, a local-memory argument of fft_pass_local_bytes, so
// that CUDA can give it more than the 48 KiB of a static array). Parameters: count = the pass's
// lines, a = n (the dimension's size), b = n / L, c = the length of the sub-transforms done by
// earlier passes, d = the stride between a line's elements, e = the offset of the pass's tables
// (w_L^x for x < L, then, after a first pass, w_cL^x for x < L and w_cL^(L y) for y < c). Line
// t combines L sub-transforms of length c into one of length c L, in the natural order.
void write_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                       const fft_input_writer* input) {
    const std::optional<fft_input_text> input_text = begin_pass_kernel(b, t, k, input);
    b.begin_body();
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const " + t.index + " first = (" + t.index + ")get_group_id(0) * " +
           std::to_string(k.lines_per_group) + "u;");
    write_pass_body(b, t, k, input_text ? &*input_text : nullptr, {});
    b.end_kernel();
}

// Bluestein, step 1: each line (a = n elements, stride c) times the chirp (table from d), zero
// padded to b elements, contiguous. With `input`, the line is an expression (the first step of a
// plan given one).
void write_chirp_in(source_builder& b, const fft_types& t,
                    const fft_input_writer* input = nullptr) {
    const std::optional<fft_input_text> text = begin(b, t, fft_chirp_in_kernel, input);
    b.line("const " + t.index + " i = g % b;");
    b.line("const " + t.index + " line = g / b;");
    b.line(t.complex + " v = kiln_fft_make(0, 0);");
    b.open("if (i < a)");
    load_input(b, text ? &*text : nullptr, "v", "(line / c) * a * c + i * c + line % c");
    b.line("v = kiln_fft_mul(v, table[d + i]);");
    b.close();
    b.line("out[g] = v;");
    b.end_kernel();
}

// Bluestein, step 2: the padded lines' spectra (a elements each) times the chirp's (table from
// b). Element-wise, so in and out may be the same memory.
void write_pointwise(source_builder& b, const fft_types& t) {
    begin(b, t, fft_pointwise_kernel);
    b.line("out[g] = kiln_fft_mul(in[g], table[b + g % a]);");
    b.end_kernel();
}

// Bluestein, step 3: the first a elements of each padded line (b elements) times the chirp
// (table from d), scaled, back to the strided layout (stride c).
void write_chirp_out(source_builder& b, const fft_types& t) {
    begin(b, t, fft_chirp_out_kernel);
    b.line("const " + t.index + " i = g % a;");
    b.line("const " + t.index + " line = g / a;");
    b.line(
        "out[(line / c) * a * c + i * c + line % c] = "
        "kiln_fft_scaled(kiln_fft_mul(in[line * b + i], table[d + i]), scale);");
    b.end_kernel();
}

// Real transforms, forward: the first b = a / 2 + 1 elements of each line of a (the rest is
// their complex conjugate).
void write_half(source_builder& b, const fft_types& t) {
    begin(b, t, fft_half_kernel);
    b.line("out[g] = in[(g / b) * a + g % b];");
    b.end_kernel();
}

// Real transforms, inverse: the full spectrum from its first b = a / 2 + 1 columns, through
// X[i0, i1, k] = conj(X[-i0, -i1, -k]) (the input of real data), for arrays of (d, c, a).
// With `input`, the half spectrum is an expression (irfft of an expression).
void write_expand(source_builder& b, const fft_types& t, const fft_input_writer* input = nullptr) {
    const std::optional<fft_input_text> text = begin(b, t, fft_expand_kernel, input);
    const fft_input_text* half = text ? &*text : nullptr;
    const std::string& i = t.index;
    b.line("const " + i + " k = g % a;");
    b.line("const " + i + " rest = g / a;");
    b.line(t.complex + " z;");
    b.open("if (k < b)");
    load_input(b, half, "z", "rest * b + k");
    b.line("out[g] = z;");
    b.close();
    b.open("else");
    b.line("const " + i + " i1 = rest % c;");
    b.line("const " + i + " i0 = (rest / c) % d;");
    b.line("const " + i + " array = rest / c / d;");
    b.line("const " + i + " mirror = (array * d + (d - i0) % d) * c + (c - i1) % c;");
    load_input(b, half, "z", "mirror * b + a - k");
    b.line("out[g] = kiln_fft_make(z.x, -z.y);");
    b.close();
    b.end_kernel();
}

}  // namespace fft_source

using namespace fft_source;

std::string fft_pass_kernel::name() const {
    std::string text = "kiln_fft_pass" + std::to_string(length) + "_r";
    for (std::size_t radix : radices) text += std::to_string(radix) + "_";
    text += "g" + std::to_string(lines_per_group) + "_w" + std::to_string(work_group_size);
    text += inverse ? "_inv" : "_fwd";
    text += twiddled ? "_t" : "_u";
    if (direct) return text + "_direct";
    if (exchange_rounds) return text + "_x" + std::to_string(exchange_rounds);
    text += load_lines_fastest ? "_la" : "_lb";
    return text + (store_lines_fastest ? "_sa" : "_sb");
}

namespace {

// Whether a pass exchanges its lines between radix stages through local memory: not where it
// has one stage (or takes a line per work-item).
bool takes_local(const fft_pass_kernel& kernel) {
    return !kernel.direct && (kernel.exchange_rounds > 0 || kernel.radices.size() > 1);
}

}  // namespace

kernel_description fft_step_description(const std::string& name, bool double_precision,
                                        bool wide_index, bool reads_expression) {
    return step_kernel_description(name, types(double_precision, wide_index), reads_expression);
}

kernel_description fft_pass_description(const fft_pass_kernel& kernel, bool double_precision,
                                        bool wide_index, bool reads_expression) {
    const fft_types t = types(double_precision, wide_index);
    kernel_description described = step_kernel_description(kernel.name(), t, reads_expression);
    if (takes_local(kernel)) described.local(t.complex, "data");
    return described;
}

std::vector<kernel_description> fft_step_descriptions(bool double_precision, bool wide_index) {
    std::vector<kernel_description> kernels;
    for (const char* name : {fft_chirp_in_kernel, fft_pointwise_kernel, fft_chirp_out_kernel,
                             fft_half_kernel, fft_expand_kernel})
        kernels.push_back(fft_step_description(name, double_precision, wide_index, false));
    return kernels;
}

std::string fft_program_key::key() const {
    return std::string("fft ") + (double_precision ? "double" : "float") +
           (wide_index ? " ulong " : " uint ") + kernel + (input.empty() ? "" : " input " + input);
}

std::size_t fft_pass_local_bytes(const fft_pass_kernel& kernel, bool double_precision) {
    if (!takes_local(kernel)) return 0;
    const std::size_t elements =
        kernel.exchange_rounds ? kernel.length / kernel.exchange_rounds : local_elements(kernel);
    return elements * (double_precision ? 16 : 8);
}

std::string fft_program_source(bool double_precision, bool wide_index) {
    const fft_types t = types(double_precision, wide_index);
    source_builder b;
    define_helpers(b, t);
    write_chirp_in(b, t);
    write_pointwise(b, t);
    write_chirp_out(b, t);
    write_half(b, t);
    write_expand(b, t);
    return b.str();
}

namespace {

// A program of one element-wise kernel reading `input` instead of `in`.
using input_kernel_writer = void (*)(source_builder&, const fft_types&, const fft_input_writer*);
std::string input_kernel_source(bool double_precision, bool wide_index, input_kernel_writer write,
                                const fft_input_writer& input) {
    const fft_types t = types(double_precision, wide_index);
    source_builder b;
    define_helpers(b, t);
    write(b, t, &input);
    return b.str();
}

}  // namespace

std::string fft_chirp_in_source(bool double_precision, bool wide_index,
                                const fft_input_writer& input) {
    return input_kernel_source(double_precision, wide_index, write_chirp_in, input);
}

std::string fft_expand_source(bool double_precision, bool wide_index,
                              const fft_input_writer& input) {
    return input_kernel_source(double_precision, wide_index, write_expand, input);
}

std::string fft_pass_source(const std::vector<fft_pass_kernel>& kernels, bool double_precision,
                            bool wide_index, const fft_input_writer* input) {
    const fft_types t = types(double_precision, wide_index);
    source_builder b;
    define_helpers(b, t);
    for (const fft_pass_kernel& kernel : kernels) {
        if (kernel.direct)
            write_direct_pass_kernel(b, t, kernel, input);
        else if (kernel.exchange_rounds)
            write_register_pass_kernel(b, t, kernel, input);
        else
            write_pass_kernel(b, t, kernel, input);
    }
    return b.str();
}

}  // namespace kiln::detail
