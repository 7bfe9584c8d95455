// Sources of the FFT kernels: Stockham passes through local memory, specialised to their
// length, and the element-wise steps of Bluestein and of real transforms.
#include <cmath>
#include <cstdio>
#include <kiln/algo/fft_kernels.hpp>
#include <kiln/detail/source_builder.hpp>
#include <numbers>
#include <optional>
#include <string_view>

namespace kiln::detail {
namespace {

// Everything a kernel needs to know about the element and index types.
struct fft_types {
    std::string real, complex, index;
    bool double_precision;
};

fft_types types(bool double_precision, bool wide_index) {
    const std::string real = double_precision ? "double" : "float";
    return {real, real + "2", wide_index ? "ulong" : "uint", double_precision};
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

// The common signature; see fft_program_source. An input expression's parameters take the place
// of `in`.
std::optional<fft_input_text> begin(source_builder& b, const fft_types& t, const std::string& name,
                                    const fft_input_writer* input = nullptr) {
    b.begin_kernel(name);
    std::optional<fft_input_text> text;
    if (input)
        text = (*input)(b);
    else
        b.parameter("global const " + t.complex + "* in");
    b.parameter("global " + t.complex + "* out");
    b.parameter("global const " + t.complex + "* table");
    for (const char* p : {"count", "a", "b", "c", "d", "e"}) b.parameter(t.index + " " + p);
    b.parameter(t.real + " scale");
    b.begin_body();
    b.line("const " + t.index + " g = (" + t.index + ")get_global_id(0);");
    b.line("if (g >= count) return;");
    return text;
}

// `function(a, b)`, or `function(a)` when b is empty.
std::string call(std::string_view function, std::string_view a, std::string_view b = {}) {
    std::string text(function);
    text.append("(").append(a);
    if (!b.empty()) text.append(", ").append(b);
    return text.append(")");
}

// v w^e, w = exp(sign 2 pi i / R): multiplications by 1, -1, i and -i are negations and swaps.
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

// Writes the small DFT inside a pass, y[m] = sum over r of v[r] w^(r m), into named values.
// Radices 8 and 16 are split into DFTs of 2 x 4 and 4 x 4 with twiddles between them (fewer
// multiplications, and less rounding, than the direct sum); the others are direct sums.
class small_dft_writer {
  public:
    small_dft_writer(source_builder& b, const fft_types& t, bool inverse)
        : b_(b), t_(t), inverse_(inverse) {}

    std::vector<std::string> dft(const std::vector<std::string>& v) {
        const std::size_t radix = v.size();
        const std::size_t a = radix == 16 ? 4 : radix == 8 ? 2 : 1;
        std::vector<std::string> y(radix);
        if (a == 1) {
            for (std::size_t m = 0; m < radix; ++m) {
                std::string sum = v[0];
                for (std::size_t r = 1; r < radix; ++r)
                    sum = call("kiln_fft_add", sum, rotated(t_, v[r], r * m, radix, inverse_));
                y[m] = name(sum);
            }
            return y;
        }
        // r = r1 + a r2 and m = m2 + b m1: DFTs of length b over r2, twiddles w^(r1 m2), then
        // DFTs of length a over r1.
        const std::size_t b = radix / a;
        std::vector<std::vector<std::string>> inner(a);
        for (std::size_t r1 = 0; r1 < a; ++r1) {
            std::vector<std::string> column;
            for (std::size_t r2 = 0; r2 < b; ++r2) column.push_back(v[r1 + a * r2]);
            inner[r1] = dft(column);
            for (std::size_t m2 = 1; m2 < b; ++m2)
                if ((r1 * m2) % radix != 0)
                    inner[r1][m2] = name(rotated(t_, inner[r1][m2], r1 * m2, radix, inverse_));
        }
        for (std::size_t m2 = 0; m2 < b; ++m2) {
            std::vector<std::string> row;
            for (std::size_t r1 = 0; r1 < a; ++r1) row.push_back(inner[r1][m2]);
            const std::vector<std::string> outer = dft(row);
            for (std::size_t m1 = 0; m1 < a; ++m1) y[m2 + b * m1] = outer[m1];
        }
        return y;
    }

  private:
    std::string name(const std::string& value) {
        std::string n = 's' + std::to_string(next_++);
        b_.line("const " + t_.complex + " " + n + " = " + value + ";");
        return n;
    }

    source_builder& b_;
    const fft_types& t_;
    bool inverse_;
    int next_ = 0;
};

// The local-memory position of element i of the group's line g: lines L + 1 apart and one
// element of padding every 16, so that the strided accesses of the radix stages (stride R) and of
// loads across lines spread over the memory banks instead of hitting one.
std::string local_position(const fft_pass_kernel& k, const std::string& g, const std::string& i) {
    const std::string x = "(" + g + ") * " + std::to_string(k.length + 1) + " + (" + i + ")";
    return "kiln_fft_pad(" + x + ")";
}

std::size_t local_elements(const fft_pass_kernel& k) {
    const std::size_t last = k.lines_per_group * (k.length + 1);
    return last + last / 16 + 1;
}

std::size_t index_bytes(bool wide_index) {
    return wide_index ? 8 : 4;
}

// `if (condition) {`, or a bare block when the condition always holds.
void open_guard(source_builder& b, bool needed, const std::string& condition) {
    b.open(needed ? "if (" + condition + ")" : "");
}

// Sets `target` to input element `index`: in[index], or the value of the plan's input expression
// (fused into the first pass) at idx = index.
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

// Moves the group's lines between global and local memory: element i of line g is at
// in[line_in[g] + i * step] (loads) or out[line_out[g] + i * step] (stores). Work-items take
// the elements in the order that neighbours them in global memory: across lines at the same i
// when the group's lines are neighbours, else along a line. Loads go into registers first and
// to local memory after all of them: CUDA cannot tell a global pointer from local memory, so a
// local store between two loads would make each load wait for the one before.
void copy_lines(source_builder& b, const fft_types& t, const fft_pass_kernel& k, bool load,
                bool lines_fastest, const std::string& step, const fft_input_text* input) {
    const std::size_t total = k.lines_per_group * k.length;
    const std::size_t rounds = (total + k.work_group_size - 1) / k.work_group_size;
    const std::string G = std::to_string(k.lines_per_group), L = std::to_string(k.length);
    const auto element = [&](std::size_t u) {
        b.line("const uint f = lid + " + std::to_string(u * k.work_group_size) + "u;");
        b.line(lines_fastest ? "const uint g = f % " + G + "u, i = f / " + G + "u;"
                             : "const uint g = f / " + L + "u, i = f % " + L + "u;");
        const bool partial = (u + 1) * k.work_group_size > total;
        open_guard(b, true,
                   (partial ? "f < " + std::to_string(total) + "u && " : std::string()) +
                       "first + g < count");
    };
    if (load)
        for (std::size_t u = 0; u < rounds; ++u)
            b.line(t.complex + " w" + std::to_string(u) + " = kiln_fft_make(0, 0);");
    for (int phase = load ? 0 : 1; phase < 2; ++phase)
        for (std::size_t u = 0; u < rounds; ++u) {
            const std::string w = "w" + std::to_string(u);
            b.open("");
            element(u);
            if (phase == 0) {
                load_input(b, input, w, "line_in[g] + (" + t.index + ")i * " + step);
                if (k.twiddled) {
                    b.line("const " + t.index + " x = line_k[g] * i;");
                    b.line(w + " = kiln_fft_mul(" + w + ", kiln_fft_mul(table[e + " +
                           std::to_string(k.length) + " + x % " + L + "u], table[e + " +
                           std::to_string(2 * k.length) + " + x / " + L + "u]));");
                }
            } else if (load) {
                b.line("data[" + local_position(k, "g", "i") + "] = " + w + ";");
            } else {
                b.line("out[line_out[g] + (" + t.index + ")i * " + step +
                       "] = kiln_fft_scaled(data[" + local_position(k, "g", "i") + "], scale);");
            }
            b.close();
            b.close();
        }
}

// One radix-R Stockham stage inside every line of the group, in local memory: R sub-transforms
// of length `done` become one of length done R. Each work-item keeps its butterflies' results in
// registers between the barrier after the reads and the writes.
void write_stage(source_builder& b, const fft_types& t, const fft_pass_kernel& k, std::size_t radix,
                 std::size_t done) {
    const std::size_t per_line = k.length / radix;
    const std::size_t total = k.lines_per_group * per_line;
    const std::size_t rounds = (total + k.work_group_size - 1) / k.work_group_size;
    const std::string P = std::to_string(per_line), D = std::to_string(done);
    const auto butterfly = [&](std::size_t u) {
        b.line("const uint beta = lid + " + std::to_string(u * k.work_group_size) + "u;");
        b.line("const uint g = beta / " + P + "u, j = beta % " + P + "u, k = j % " + D + "u;");
    };
    const auto guarded = [&](std::size_t u) { return (u + 1) * k.work_group_size > total; };
    for (std::size_t u = 0; u < rounds; ++u)
        for (std::size_t m = 0; m < radix; ++m)
            b.line(t.complex + " o" + std::to_string(u) + "_" + std::to_string(m) + ";");
    for (std::size_t u = 0; u < rounds; ++u) {
        b.open("");
        butterfly(u);
        open_guard(b, guarded(u), "beta < " + std::to_string(total) + "u");
        std::vector<std::string> v;
        for (std::size_t r = 0; r < radix; ++r) {
            const std::string name = "v" + std::to_string(r);
            std::string value =
                "data[" + local_position(k, "g", "j + " + std::to_string(r * per_line) + "u") + "]";
            // exp(sign 2 pi i k r / (done R)) = w_L^(k r L / (done R)), from the table's first L.
            if (done > 1 && r > 0)
                value = "kiln_fft_mul(" + value + ", table[e + k * " +
                        std::to_string(r * (k.length / (done * radix))) + "u])";
            b.line("const " + t.complex + " " + name + " = " + value + ";");
            v.push_back(name);
        }
        const std::vector<std::string> y = small_dft_writer(b, t, k.inverse).dft(v);
        for (std::size_t m = 0; m < radix; ++m)
            b.line("o" + std::to_string(u) + "_" + std::to_string(m) + " = " + y[m] + ";");
        b.close();
        b.close();
    }
    b.local_barrier();
    for (std::size_t u = 0; u < rounds; ++u) {
        b.open("");
        butterfly(u);
        open_guard(b, guarded(u), "beta < " + std::to_string(total) + "u");
        for (std::size_t m = 0; m < radix; ++m)
            b.line("data[" +
                   local_position(k, "g",
                                  "(j - k) * " + std::to_string(radix) + "u + k + " +
                                      std::to_string(m * done) + "u") +
                   "] = o" + std::to_string(u) + "_" + std::to_string(m) + ";");
        b.close();
        b.close();
    }
    b.local_barrier();
}

// The signature both pass kernels share (parameters as described at write_pass_kernel), with an
// input expression's parameters in place of `in`.
std::optional<fft_input_text> begin_pass_kernel(source_builder& b, const fft_types& t,
                                                const fft_pass_kernel& k,
                                                const fft_input_writer* input) {
    b.begin_kernel(k.name(), k.work_group_size);
    std::optional<fft_input_text> text;
    if (input)
        text = (*input)(b);
    else
        b.parameter("global const " + t.complex + "* in");
    b.parameter("global " + t.complex + "* out");
    b.parameter("global const " + t.complex + "* table");
    for (const char* p : {"count", "a", "b", "c", "d", "e"}) b.parameter(t.index + " " + p);
    b.parameter(t.real + " scale");
    b.begin_body();
    return text;
}

// A pass of one radix stage without local memory, one line per work-item: what CPUs run (their
// caches serve any order, and PoCL compiles kernels without barriers several times faster).
// Same parameters and tables as write_pass_kernel.
void write_direct_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                              const fft_input_writer* input) {
    const std::string& ix = t.index;
    const std::string L = std::to_string(k.length);
    const std::optional<fft_input_text> input_text = begin_pass_kernel(b, t, k, input);
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

// One Stockham pass of length L = k.length over every line of a strided batch, all of its radix
// stages in local memory: one global read and one write per element. Parameters: count = the
// pass's lines, a = n (the dimension's size), b = n / L, c = the length of the sub-transforms
// done by earlier passes, d = the stride between a line's elements, e = the offset of the pass's
// tables (w_L^x for x < L, then, after a first pass, w_cL^x for x < L and w_cL^(L y) for y < c).
// Line t combines L sub-transforms of length c into one of length c L, in the natural order.
void write_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                       const fft_input_writer* input) {
    const std::string& ix = t.index;
    const std::string G = std::to_string(k.lines_per_group);
    const std::optional<fft_input_text> input_text = begin_pass_kernel(b, t, k, input);
    b.local_array(t.complex, "data", std::to_string(local_elements(k)));
    b.local_array(ix, "line_in", G);
    b.local_array(ix, "line_out", G);
    b.local_array(ix, "line_k", G);
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const " + ix + " first = (" + ix + ")get_group_id(0) * " + G + "u;");
    b.open("for (uint g = lid; g < " + G + "u; g += " + std::to_string(k.work_group_size) + "u)");
    b.line("const " + ix + " line = first + g;");
    b.line("const " + ix + " inner = line % d, j = (line / d) % b, rest = line / d / b;");
    b.line("const " + ix + " k = j % c;");
    b.line("line_in[g] = rest * a * d + j * d + inner;");
    b.line("line_out[g] = rest * a * d + ((j - k) * " + std::to_string(k.length) +
           "u + k) * d + inner;");
    b.line("line_k[g] = k;");
    b.close();
    b.local_barrier();
    b.line("const " + ix + " load_step = b * d, store_step = c * d;");
    copy_lines(b, t, k, true, k.load_lines_fastest, "load_step",
               input_text ? &*input_text : nullptr);
    b.local_barrier();
    std::size_t done = 1;
    for (std::size_t radix : k.radices) {
        b.open("");
        write_stage(b, t, k, radix, done);
        b.close();
        done *= radix;
    }
    copy_lines(b, t, k, false, k.store_lines_fastest, "store_step", nullptr);
    b.end_kernel();
}

// Bluestein, step 1: each line (a = n elements, stride c) times the chirp (table from d), zero
// padded to b elements, contiguous.
void write_chirp_in(source_builder& b, const fft_types& t) {
    begin(b, t, fft_chirp_in_kernel);
    b.line("const " + t.index + " i = g % b;");
    b.line("const " + t.index + " line = g / b;");
    b.line(t.complex + " v = kiln_fft_make(0, 0);");
    b.line("if (i < a) v = kiln_fft_mul(in[(line / c) * a * c + i * c + line % c], table[d + i]);");
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

}  // namespace

std::string fft_pass_kernel::name() const {
    std::string text = "kiln_fft_pass" + std::to_string(length) + "_r";
    for (std::size_t radix : radices) text += std::to_string(radix) + "_";
    text += "g" + std::to_string(lines_per_group) + "_w" + std::to_string(work_group_size);
    text += inverse ? "_inv" : "_fwd";
    text += twiddled ? "_t" : "_u";
    if (direct) return text + "_direct";
    text += load_lines_fastest ? "_la" : "_lb";
    return text + (store_lines_fastest ? "_sa" : "_sb");
}

std::size_t fft_pass_local_bytes(const fft_pass_kernel& kernel, bool double_precision,
                                 bool wide_index) {
    return local_elements(kernel) * (double_precision ? 16 : 8) +
           3 * kernel.lines_per_group * index_bytes(wide_index);
}

std::vector<std::string> fft_kernel_names() {
    return {fft_chirp_in_kernel, fft_pointwise_kernel, fft_chirp_out_kernel, fft_half_kernel,
            fft_expand_kernel};
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

std::string fft_expand_source(bool double_precision, bool wide_index,
                              const fft_input_writer& input) {
    const fft_types t = types(double_precision, wide_index);
    source_builder b;
    define_helpers(b, t);
    write_expand(b, t, &input);
    return b.str();
}

std::string fft_pass_source(const std::vector<fft_pass_kernel>& kernels, bool double_precision,
                            bool wide_index, const fft_input_writer* input) {
    const fft_types t = types(double_precision, wide_index);
    source_builder b;
    define_helpers(b, t);
    for (const fft_pass_kernel& kernel : kernels) {
        if (kernel.direct)
            write_direct_pass_kernel(b, t, kernel, input);
        else
            write_pass_kernel(b, t, kernel, input);
    }
    return b.str();
}

}  // namespace kiln::detail
