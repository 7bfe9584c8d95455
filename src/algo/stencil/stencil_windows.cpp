// SPDX-License-Identifier: Apache-2.0
#include <kiln/detail/algo/stencil_kernels.hpp>
#include <kiln/detail/algo/stencil_windows.hpp>

namespace kiln::detail {
namespace {

/// "type xs, ..., uint at_start, uint at_end": the parameters of one part of x and its halos.
std::string part_parameters(const std::string& type) {
    const std::string pointer = "global const " + type + "* ";
    return pointer + "xs, " + pointer + "before, " + pointer +
           "after, long m, uint at_start, uint at_end";
}

std::string coefficient_parameters(const std::string& type, std::size_t width) {
    std::string text;
    for (std::size_t k = 0; k < width; ++k) text += ", " + type + " c" + std::to_string(k);
    return text;
}

/// Position k of the window whose position `center` is `base`: "s - 1", "s", "s + 2".
std::string moved(const std::string& base, std::size_t k, std::size_t center) {
    if (k == center) return base;
    return k > center ? base + " + " + std::to_string(k - center)
                      : base + " - " + std::to_string(center - k);
}

/// "    sum += c0 * <tap(0)>;" and so on, between the declaration of sum and its return.
template <class Tap>
std::string sum_of_taps(const std::string& type, std::size_t width, const std::string& indent,
                        const Tap& tap) {
    std::string text = indent + type + " sum = 0;\n";
    for (std::size_t k = 0; k < width; ++k)
        text += indent + "sum += c" + std::to_string(k) + " * " + tap(k) + ";\n";
    return text + indent + "return sum;\n";
}

}  // namespace

std::string define_stencil_window(source_builder& b, const std::string& type, std::size_t width,
                                  std::size_t center, unsigned lanes) {
    const std::string load = define_stencil_load(b, type);
    const std::string c = std::to_string(center), l = std::to_string(lanes);
    const std::string name =
        "kiln_stencil_window_" + type + "_" + std::to_string(width) + "_" + c + "_" + l;
    const std::size_t count = width + lanes - 1;
    const std::string wide = type + l;
    std::string text = "void " + name + "(" + part_parameters(type) + ", long s, " + type +
                       "* window) {\n    if (s >= " + c + " && s + " +
                       std::to_string(count - center) + " <= m) {\n        const " + wide +
                       " mid = *(global const " + wide + "*)(xs + s);\n";
    for (std::size_t k = 0; k < count; ++k) {
        const bool in_mid = k >= center && k - center < lanes;
        const std::string value =
            in_mid ? std::string("mid.") + "xyzw"[k - center] : "xs[" + moved("s", k, center) + "]";
        text += "        window[" + std::to_string(k) + "] = " + value + ";\n";
    }
    text += "        return;\n    }\n";
    for (std::size_t k = 0; k < count; ++k)
        text += "    window[" + std::to_string(k) + "] = " + load + "(xs, before, " + c +
                ", after, " + moved("s", k, center) + ", m, at_start, at_end);\n";
    b.define(name, text + "}\n");
    return name;
}

std::string define_stencil_taps(source_builder& b, const std::string& type, std::size_t width) {
    const std::string name = "kiln_stencil_taps_" + type + "_" + std::to_string(width);
    b.define(name, type + " " + name + "(const " + type + "* w" +
                       coefficient_parameters(type, width) + ") {\n" +
                       sum_of_taps(type, width, "    ",
                                   [](std::size_t k) { return "w[" + std::to_string(k) + "]"; }) +
                       "}\n");
    return name;
}

std::string define_stencil_element(source_builder& b, const std::string& type, std::size_t width,
                                   std::size_t center) {
    const std::string load = define_stencil_load(b, type);
    const std::string c = std::to_string(center);
    const std::string name = "kiln_stencil_" + type + "_" + std::to_string(width) + "_" + c;
    // Away from the part's ends one contiguous window, with no halo to consult.
    b.define(name, type + " " + name + "(" + part_parameters(type) +
                       coefficient_parameters(type, width) + ", long i) {\n    if (i >= " + c +
                       " && i + " + std::to_string(width - center) +
                       " <= m) {\n        global const " + type + "* w = xs + (i - " + c + ");\n" +
                       sum_of_taps(type, width, "        ",
                                   [](std::size_t k) { return "w[" + std::to_string(k) + "]"; }) +
                       "    }\n" +
                       sum_of_taps(type, width, "    ",
                                   [&](std::size_t k) {
                                       return load + "(xs, before, " + c + ", after, " +
                                              moved("i", k, center) + ", m, at_start, at_end)";
                                   }) +
                       "}\n");
    return name;
}

}  // namespace kiln::detail
