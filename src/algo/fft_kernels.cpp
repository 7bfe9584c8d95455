// Source of the FFT program: Stockham radix passes and the three element-wise steps of Bluestein.
#include <cmath>
#include <cstdio>
#include <kiln/algo/fft_kernels.hpp>
#include <kiln/detail/source_builder.hpp>
#include <numbers>
#include <string_view>

namespace kiln::detail {
namespace {

// Everything a kernel needs to know about the element and index types.
struct fft_types {
    std::string real, complex, index;
    bool double_precision;
};

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
                 " s) { return kiln_fft_make(a.x * s, a.y * s); }\n");
}

// The common signature; see fft_program_source.
void begin(source_builder& b, const fft_types& t, const std::string& name) {
    b.begin_kernel(name);
    b.parameter("global const " + t.complex + "* in");
    b.parameter("global " + t.complex + "* out");
    b.parameter("global const " + t.complex + "* table");
    for (const char* p : {"count", "a", "b", "c", "d", "e"}) b.parameter(t.index + " " + p);
    b.parameter(t.real + " scale");
    b.begin_body();
    b.line("const " + t.index + " g = (" + t.index + ")get_global_id(0);");
    b.line("if (g >= count) return;");
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

// One Stockham autosort pass of radix R over every line of a strided batch (a = n, b = n / R,
// c = the length of the sub-transforms already done, d = the stride between a line's
// elements, e = the offset of this pass's twiddles in the table): it combines R sub-transforms
// of length c into one of length c R, reading and writing in the natural order.
void write_radix_kernel(source_builder& b, const fft_types& t, std::size_t radix, bool inverse) {
    begin(b, t, fft_radix_kernel_name(radix, inverse));
    const std::string& i = t.index;
    const std::string r_text = std::to_string(radix);
    b.line("const " + i + " inner = g % d;");
    b.line("const " + i + " rest = g / d;");
    b.line("const " + i + " j = rest % b;");
    b.line("const " + i + " base = (rest / b) * a * d + inner;");
    b.line("const " + i + " k = j % c;");
    b.line(t.complex + " v0 = in[base + j * d];");
    for (std::size_t r = 1; r < radix; ++r) {
        const std::string rs = std::to_string(r);
        b.line(t.complex + " v" + rs + " = kiln_fft_mul(in[base + (j + " + rs + " * b) * d], " +
               "table[e + k * " + std::to_string(radix - 1) + " + " + std::to_string(r - 1) +
               "]);");
    }
    std::vector<std::string> v;
    for (std::size_t r = 0; r < radix; ++r) v.push_back('v' + std::to_string(r));
    const std::vector<std::string> y = small_dft_writer(b, t, inverse).dft(v);
    b.line("const " + i + " target = base + ((j - k) * " + r_text + " + k) * d;");
    for (std::size_t r = 0; r < radix; ++r) {
        const std::string rs = std::to_string(r);
        b.line("out[target + " + rs + " * c * d] = kiln_fft_scaled(" + y[r] + ", scale);");
    }
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
void write_expand(source_builder& b, const fft_types& t) {
    begin(b, t, fft_expand_kernel);
    const std::string& i = t.index;
    b.line("const " + i + " k = g % a;");
    b.line("const " + i + " rest = g / a;");
    b.open("if (k < b)");
    b.line("out[g] = in[rest * b + k];");
    b.close();
    b.open("else");
    b.line("const " + i + " i1 = rest % c;");
    b.line("const " + i + " i0 = (rest / c) % d;");
    b.line("const " + i + " array = rest / c / d;");
    b.line("const " + i + " mirror = (array * d + (d - i0) % d) * c + (c - i1) % c;");
    b.line(t.complex + " z = in[mirror * b + a - k];");
    b.line("out[g] = kiln_fft_make(z.x, -z.y);");
    b.close();
    b.end_kernel();
}

}  // namespace

std::string fft_radix_kernel_name(std::size_t radix, bool inverse) {
    return "kiln_fft_radix" + std::to_string(radix) + (inverse ? "_inverse" : "_forward");
}

std::vector<std::string> fft_kernel_names() {
    std::vector<std::string> names;
    for (std::size_t radix : fft_radices)
        for (bool inverse : {false, true}) names.push_back(fft_radix_kernel_name(radix, inverse));
    names.insert(names.end(), {fft_chirp_in_kernel, fft_pointwise_kernel, fft_chirp_out_kernel,
                               fft_half_kernel, fft_expand_kernel});
    return names;
}

std::string fft_program_source(bool double_precision, bool wide_index) {
    const std::string real = double_precision ? "double" : "float";
    const fft_types t{real, real + "2", wide_index ? "ulong" : "uint", double_precision};
    source_builder b;
    define_helpers(b, t);
    for (std::size_t radix : fft_radices)
        for (bool inverse : {false, true}) write_radix_kernel(b, t, radix, inverse);
    write_chirp_in(b, t);
    write_pointwise(b, t);
    write_chirp_out(b, t);
    write_half(b, t);
    write_expand(b, t);
    return b.str();
}

}  // namespace kiln::detail
