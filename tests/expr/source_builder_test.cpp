// SPDX-License-Identifier: Apache-2.0
// The kernel source builder on its own: definitions once, the fp64 pragma only when needed,
// loop shapes, numbered listings, and user-function declarations.
#include <gtest/gtest.h>

#include <complex>
#include <kiln/detail/source_builder.hpp>
#include <kiln/expr/functions.hpp>

namespace {

using kiln::detail::source_builder;

TEST(source_builder, adds_each_definition_once_in_order) {
    source_builder builder;
    EXPECT_TRUE(builder.define("a", "int a(void) { return 1; }"));
    EXPECT_TRUE(builder.define("b", "int b(void) { return a(); }"));
    EXPECT_FALSE(builder.define("a", "int a(void) { return 2; }"));
    EXPECT_TRUE(builder.is_defined("b"));
    const std::string source = builder.str();
    EXPECT_EQ(source, "int a(void) { return 1; }\n\nint b(void) { return a(); }\n\n");
}

TEST(source_builder, writes_kernels_with_parameters_and_a_chosen_loop) {
    for (auto style : {kiln::detail::loop_style::strided, kiln::detail::loop_style::chunked}) {
        source_builder builder;
        builder.begin_kernel("scale");
        builder.parameter("ulong n");
        builder.parameter("global float* x");
        builder.begin_body();
        builder.open_element_loop(builder.declare_element_range(style, "n"), "idx");
        builder.line("x[idx] *= 2;");
        builder.end_kernel();
        const std::string source = builder.str();
        EXPECT_NE(source.find("kernel void scale(\n    ulong n,\n    global float* x\n) {\n"),
                  std::string::npos)
            << source;
        EXPECT_NE(source.find("x[idx] *= 2;"), std::string::npos);
        const bool strided = style == kiln::detail::loop_style::strided;
        EXPECT_EQ(source.find("idx += (ulong)get_global_size(0)") != std::string::npos, strided)
            << source;
        EXPECT_EQ(source.find("idx += 1)") != std::string::npos, !strided) << source;
    }
}

TEST(source_builder, enables_fp64_only_when_double_appears) {
    source_builder floats;
    floats.define("f", "float doubled(float x) { return 2 * x; }");
    EXPECT_EQ(floats.str().find("cl_khr_fp64"), std::string::npos);
    source_builder doubles;
    doubles.define("d", "double2 twice(double2 x) { return x; }");
    EXPECT_EQ(doubles.str().rfind("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", 0), 0u);
}

TEST(source_builder, maps_host_types_to_opencl_names) {
    using kiln::detail::opencl_type_name;
    EXPECT_EQ(opencl_type_name<float>(), "float");
    EXPECT_EQ(opencl_type_name<bool>(), "int");
    EXPECT_EQ(opencl_type_name<std::int64_t>(), "long");
    EXPECT_EQ(opencl_type_name<std::uint32_t>(), "uint");
    EXPECT_EQ(opencl_type_name<unsigned char>(), "uchar");
    EXPECT_EQ(opencl_type_name<std::complex<double>>(), "double2");
    EXPECT_EQ(opencl_type_name<kiln::detail::pair_state<float>>(), "float2");
}

TEST(source_builder, numbers_lines_for_error_reports) {
    EXPECT_EQ(kiln::detail::with_line_numbers("a\nb\n"), "   1 | a\n   2 | b\n");
}

TEST(source_builder, user_function_pointers_get_the_global_address_space) {
    EXPECT_EQ(kiln::detail::user_function_source(
                  "float", "f", "(ulong n, const float* x, local int* y)", " return x[n]; "),
              "float f(ulong n, global const float* x, local int* y) {\n    return x[n];\n}\n");
}

}  // namespace
