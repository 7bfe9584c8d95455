// SPDX-License-Identifier: Apache-2.0
// Programs and kernels: sources from strings and files (KILN_KERNEL_PATH), several sources in
// one program, build options, build errors with their log, kernels by name, argument checks
// and typed kernels, including the combinations that must not compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <kiln/kiln.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "support/device_param.hpp"
#include "test_helpers.hpp"

namespace {

using kiln::test::scoped_env;
using kiln::test::temp_dir;

class programs : public kiln::test::device_test {};

const char* scale_source = R"(
kernel void scale(global const float* in, global float* out, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = 2.0f * in[i];
}
kernel void offset_by(global float* data, float amount, uint n) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += amount;
}
kernel void with_scratch(global float* data, local float* scratch) {
    size_t l = get_local_id(0);
    scratch[l] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = scratch[get_local_size(0) - 1 - l];
}
)";

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// --- building -----------------------------------------------------------------------------

TEST_P(programs, from_a_string_with_every_kernel_by_name) {
    kiln::program prog(device(), scale_source);
    EXPECT_EQ(prog.device(), device());
    auto names = prog.kernel_names();
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"offset_by", "scale", "with_scratch"}));
    auto scale = prog.kernel("scale");
    EXPECT_EQ(scale.name(), "scale");
    EXPECT_EQ(scale.parameter_count(), 3u);
    EXPECT_GT(scale.max_work_group_size(), 0u);
    EXPECT_LE(scale.max_work_group_size(), device().properties().max_work_group_size);

    kiln::queue q(device());
    const std::vector<float> host = {1.0f, -2.5f, 1e20f};
    kiln::buffer<float, kiln::in> in(q, host);
    kiln::buffer<float, kiln::out> out(q, host.size());
    auto done = scale(in, out, 3u).launch(q, {3});
    EXPECT_EQ(out.read(q, done), (std::vector<float>{2.0f, -5.0f, 2e20f}));
}

TEST_P(programs, several_sources_form_one_program) {
    // A constant and a device function in one source, the kernel that uses them in another.
    const std::vector<std::string> sources = {
        "constant float bias = 0.5f;\n"
        "float shifted_square(float x) { return x * x + bias; }\n",
        "kernel void apply(global float* data) {\n"
        "    size_t i = get_global_id(0);\n"
        "    data[i] = shifted_square(data[i]);\n"
        "}\n"};
    kiln::program prog(device(), sources);
    kiln::queue q(device());
    kiln::buffer<float> data(q, {1.0f, 2.0f, -3.0f});
    auto done = prog.kernel("apply")(data).launch(q, {3});
    EXPECT_EQ(data.read(q, done), (std::vector<float>{1.5f, 4.5f, 9.5f}));
    EXPECT_THROW(kiln::program(device(), std::vector<std::string>{}), kiln::invalid_argument_error);
}

TEST_P(programs, build_options_define_macros) {
    const char* source =
        "kernel void k(global int* out) { out[get_global_id(0)] = FACTOR * (int)get_global_id(0); "
        "}";
    kiln::queue q(device());
    kiln::buffer<int> out(q, 4);
    for (int factor : {3, -7}) {
        kiln::program prog(device(), source, "-DFACTOR=" + std::to_string(factor));
        auto done = prog.kernel("k")(out).launch(q, {4});
        EXPECT_EQ(out.read(q, done), (std::vector<int>{0, factor, 2 * factor, 3 * factor}));
    }
    EXPECT_THROW(kiln::program(device(), source), kiln::build_error)
        << "FACTOR undefined without the option";
}

TEST_P(programs, a_failed_build_carries_the_log) {
    try {
        kiln::program(
            device(),
            "kernel void broken(global int* out) {\n    out[0] = undeclared_thing_42;\n}\n");
        FAIL() << "a program using an undeclared identifier built";
    } catch (const kiln::build_error& e) {
        EXPECT_FALSE(e.log().empty());
        EXPECT_TRUE(contains(e.log(), "undeclared_thing_42")) << e.log();
        EXPECT_TRUE(contains(e.what(), "undeclared_thing_42")) << "what() includes the log";
        EXPECT_TRUE(contains(e.log(), device().name())) << "the log names the device it is for";
        EXPECT_NE(e.code(), 0);
        if (device().backend() == kiln::backend_kind::opencl) {
            EXPECT_EQ(e.call(), "clBuildProgram");
            EXPECT_EQ(e.code_name(), "CL_BUILD_PROGRAM_FAILURE");
            EXPECT_TRUE(contains(e.what(), "CL_BUILD_PROGRAM_FAILURE"));
        }
    }
}

TEST_P(programs, files_are_found_through_kiln_kernel_path) {
    temp_dir dir;
    write_file(dir.path() / "helpers.cl", "int triple(int x) { return 3 * x; }\n");
    write_file(dir.path() / "use_helpers.cl",
               "kernel void k(global int* data) { size_t i = get_global_id(0); data[i] = "
               "triple(data[i]); }\n");
    kiln::queue q(device());
    {
        scoped_env path("KILN_KERNEL_PATH", "/nonexistent/kiln:" + dir.path().string());
        EXPECT_EQ(kiln::find_kernel_file("helpers.cl"), dir.path() / "helpers.cl");
        auto prog = kiln::program::from_files(device(), {"helpers.cl", "use_helpers.cl"});
        kiln::buffer<int> data(q, {1, -2, 5});
        auto done = prog.kernel("k")(data).launch(q, {3});
        EXPECT_EQ(data.read(q, done), (std::vector<int>{3, -6, 15}));
    }
    {
        scoped_env no_path("KILN_KERNEL_PATH", std::nullopt);
        try {
            (void)kiln::program::from_file(device(), "use_helpers.cl");
            FAIL() << "found a kernel file without KILN_KERNEL_PATH";
        } catch (const kiln::error& e) {
            EXPECT_EQ(e.code_name(), "KILN_FILE_NOT_FOUND");
            EXPECT_TRUE(contains(e.what(), "use_helpers.cl")) << e.what();
        }
        // An absolute path needs no search path.
        auto prog = kiln::program::from_files(
            device(), {dir.path() / "helpers.cl", dir.path() / "use_helpers.cl"});
        EXPECT_EQ(prog.kernel_names(), std::vector<std::string>{"k"});
        EXPECT_THROW((void)kiln::find_kernel_file(dir.path() / "missing.cl"), kiln::error);
    }
}

// A file planted in the directory a program runs in must not become its kernel: a bare name is
// searched for only where the user said (KILN_KERNEL_PATH, the executable's kernels/), and the
// current directory is used only when named, as "./name" or as "." in KILN_KERNEL_PATH.
TEST(kernel_files, a_bare_name_is_never_found_in_the_current_directory) {
    temp_dir dir;
    write_file(dir.path() / "planted.cl", "kernel void planted(global int* x) { x[0] = 1; }\n");
    kiln::test::scoped_cwd in_dir(dir.path());
    auto not_found = [](const std::filesystem::path& file) {
        try {
            (void)kiln::find_kernel_file(file);
            return false;
        } catch (const kiln::error& e) {
            EXPECT_EQ(e.code_name(), "KILN_FILE_NOT_FOUND");
            EXPECT_TRUE(contains(e.what(), "never the current directory")) << e.what();
            return true;
        }
    };
    {
        scoped_env no_path("KILN_KERNEL_PATH", std::nullopt);
        EXPECT_TRUE(not_found("planted.cl"));
    }
    {
        // Empty entries do not stand for the current directory, as they would in a shell's PATH.
        scoped_env empty_entries("KILN_KERNEL_PATH", ":/nonexistent/kiln::");
        EXPECT_TRUE(not_found("planted.cl"));
    }
    {
        scoped_env dot("KILN_KERNEL_PATH", ".");
        EXPECT_EQ(kiln::find_kernel_file("planted.cl"), std::filesystem::path(".") / "planted.cl");
    }
    // A path with a directory component is taken as given, relative to the current directory,
    // and is not searched for in KILN_KERNEL_PATH.
    scoped_env elsewhere("KILN_KERNEL_PATH", dir.path().string());
    EXPECT_EQ(kiln::find_kernel_file("./planted.cl"), std::filesystem::path("./planted.cl"));
    std::filesystem::create_directory(dir.path() / "sub");
    write_file(dir.path() / "sub" / "nested.cl", "kernel void nested(global int* x) {}\n");
    EXPECT_EQ(kiln::find_kernel_file("sub/nested.cl"), std::filesystem::path("sub/nested.cl"));
    {
        temp_dir other;
        kiln::test::scoped_cwd in_other(other.path());
        EXPECT_THROW((void)kiln::find_kernel_file("sub/nested.cl"), kiln::error)
            << "a relative path with a directory was searched for in KILN_KERNEL_PATH";
    }
}

TEST_P(programs, build_errors_in_files_name_the_file) {
    temp_dir dir;
    write_file(dir.path() / "broken_kernel.cl",
               "kernel void k(global int* out) {\n\n    out[0] = not_declared;\n}\n");
    scoped_env path("KILN_KERNEL_PATH", dir.path().string());
    try {
        (void)kiln::program::from_file(device(), "broken_kernel.cl");
        FAIL() << "built a broken file";
    } catch (const kiln::build_error& e) {
        // NVIDIA's OpenCL compiler ignores the file name of #line (driver 580 says
        // "<kernel>:4:14: error: ..."), so only compilers that honour it can name the file.
        if (device().properties().platform.find("NVIDIA") == std::string::npos) {
            EXPECT_TRUE(contains(e.log(), "broken_kernel.cl")) << e.log();
        }
        EXPECT_TRUE(contains(e.log(), "not_declared")) << e.log();
    }
}

// --- kernels and their arguments ------------------------------------------------------------

TEST_P(programs, an_unknown_kernel_name_lists_the_kernels) {
    kiln::program prog(device(), scale_source);
    try {
        (void)prog.kernel("scael");
        FAIL() << "found a kernel that does not exist";
    } catch (const kiln::error& e) {
        EXPECT_TRUE(contains(e.what(), "scael")) << e.what();
        for (const char* name : {"scale", "offset_by", "with_scratch"})
            EXPECT_TRUE(contains(e.what(), name)) << e.what();
        if (device().backend() == kiln::backend_kind::opencl) {
            EXPECT_EQ(e.code_name(), "CL_INVALID_KERNEL_NAME");
            EXPECT_EQ(e.call(), "clCreateKernel");
        }
    }
}

TEST_P(programs, arity_and_argument_kinds_are_checked) {
    kiln::program prog(device(), scale_source);
    kiln::queue q(device());
    kiln::buffer<float> a(q, 8), b(q, 8);
    kiln::buffer<float, kiln::out> write_only(q, 8);
    auto scale = prog.kernel("scale");
    auto offset_by = prog.kernel("offset_by");
    auto with_scratch = prog.kernel("with_scratch");
    auto rejects = [](auto bind, const std::string& expected) {
        try {
            bind();
            ADD_FAILURE() << "accepted arguments that should be rejected (" << expected << ")";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_TRUE(contains(e.what(), expected)) << e.what();
        }
    };
    rejects([&] { scale(a, b); }, "takes 3 arguments but 2 were given");
    rejects([&] { scale(a, b, 8u, 1u); }, "takes 3 arguments but 4 were given");
    rejects([&] { scale(a, b, a); }, "expects a scalar, got a buffer");
    rejects([&] { scale(1.0f, b, 8u); }, "expects a buffer, got a scalar");
    rejects([&] { scale(kiln::local<float>(8), b, 8u); },
            "expects a buffer, got kiln::local memory");
    rejects([&] { offset_by(a, 1.0, 8u); },
            "expects 4 bytes, got a 8-byte value");  // double for float
    rejects([&] { scale(a, b, std::uint64_t{8}); }, "expects 4 bytes, got a 8-byte value");
    rejects([&] { with_scratch(a, b); }, "expects kiln::local<T>(n), got a buffer");
    rejects([&] { with_scratch(a, 4.0f); }, "expects kiln::local<T>(n), got a scalar");
    rejects([&] { with_scratch(a, kiln::local<float>(0)); }, "a local allocation of 0 bytes");
    rejects([&] { scale(write_only, b, 8u); }, "declared kiln::out");
    // The messages name the parameter as the kernel declares it.
    rejects([&] { offset_by(a, a, 8u); }, "'amount'");

    // What is right is accepted and runs.
    a.fill(q, 1.5f).wait();
    auto done = offset_by(a, 2.0f, 8u).launch(q, {8});
    EXPECT_EQ(a.read(q, done), std::vector<float>(8, 3.5f));
}

TEST_P(programs, buffer_element_types_are_checked_unless_reinterpreted) {
    const char* source = R"(
kernel void write_floats(global float* out, uint n) {
    for (uint i = 0; i < n; ++i) out[i] = 1.0f;
}
kernel void sum_pairs(global const uint2* in, global uint* out) { out[0] = in[0].x + in[0].y; }
typedef struct { float x, y; } point;
kernel void first_x(global const point* in, global float* out) { out[0] = in[0].x; }
)";
    kiln::program prog(device(), source);
    kiln::queue q(device());
    auto write_floats = prog.kernel("write_floats");
    auto rejects = [](auto bind, const std::string& expected) {
        try {
            bind();
            ADD_FAILURE() << "accepted a buffer of the wrong element type (" << expected << ")";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_TRUE(contains(e.what(), expected)) << e.what();
        }
    };
    kiln::buffer<int> ints(q, 4);
    rejects([&] { write_floats(ints, 4u); }, "expects a buffer of float, got a buffer of int");
    // 16 bytes where the kernel would write 1000 floats: the type check is what stops it.
    kiln::buffer<char> bytes(q, 16);
    rejects([&] { write_floats(bytes, 1000u); }, "got a buffer of char");
    kiln::buffer<double> doubles(q, 4);
    rejects([&] { write_floats(doubles, 4u); }, "got a buffer of double");
    kiln::buffer<unsigned> pairs(q, {3u, 4u});
    kiln::buffer<unsigned> sum(q, 1);
    rejects([&] { prog.kernel("sum_pairs")(pairs, sum); }, "expects a buffer of uint2");
    kiln::program scale_prog(device(), scale_source);
    kiln::buffer<float> floats(q, 4);
    rejects([&] { scale_prog.kernel("with_scratch")(floats, kiln::local<char>(4)); },
            "expects kiln::local<float>, got kiln::local<char>");

    // kiln::reinterpret passes a buffer as it is; float bits of 1.0f are 0x3f800000.
    kiln::buffer<std::uint32_t> bits(q, 4);
    auto done = write_floats(kiln::reinterpret(bits), 4u).launch(q, {1});
    EXPECT_EQ(bits.read(q, done), std::vector<std::uint32_t>(4, 0x3f800000u));
    done = prog.kernel("sum_pairs")(kiln::reinterpret(pairs), sum).launch(q, {1});
    EXPECT_EQ(sum.read(q, done), std::vector<unsigned>{7u});
    // A struct's type name is not a built-in type, so kiln cannot check it and accepts it.
    kiln::buffer<float> point_data(q, {2.5f, 3.5f});
    kiln::buffer<float> x(q, 1);
    done = prog.kernel("first_x")(point_data, x).launch(q, {1});
    EXPECT_EQ(x.read(q, done), std::vector<float>{2.5f});
}

TEST_P(programs, local_memory_arguments) {
    kiln::program prog(device(), scale_source);
    kiln::queue q(device());
    const std::vector<float> host = {0, 1, 2, 3, 4, 5, 6, 7};
    kiln::buffer<float> data(q, host);
    // Each group of 4 reverses itself through local memory.
    auto done = prog.kernel("with_scratch")(data, kiln::local<float>(4)).launch(q, {8}, {4});
    EXPECT_EQ(data.read(q, done), (std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4}));
    EXPECT_EQ(kiln::local<double>(3).bytes(), 24u);
}

// --- typed kernels ----------------------------------------------------------------------

using scale_kernel = kiln::typed_kernel<kiln::param::in<float>, kiln::param::out<float>, unsigned>;
using scratch_kernel = kiln::typed_kernel<kiln::param::inout<float>, kiln::param::local<float>>;
template <kiln::access A>
using floats = kiln::buffer<float, A>&;

// What a declared signature accepts: `in` takes in and inout buffers, `out` takes out and inout,
// scalars take anything convertible. These pairs show that the checks below can fail.
static_assert(
    std::is_invocable_v<const scale_kernel&, floats<kiln::in>, floats<kiln::out>, unsigned>);
static_assert(
    std::is_invocable_v<const scale_kernel&, floats<kiln::inout>, floats<kiln::inout>, int>);
static_assert(std::is_invocable_v<const scale_kernel&, kiln::single<float, kiln::in>&,
                                  floats<kiln::out>, unsigned>);
static_assert(std::is_invocable_v<const scratch_kernel&, floats<kiln::inout>, kiln::local<float>>);
// ...and what it rejects at compile time.
static_assert(
    !std::is_invocable_v<const scale_kernel&, floats<kiln::in>, floats<kiln::in>, unsigned>,
    "an `in` buffer passed where the kernel writes");
static_assert(
    !std::is_invocable_v<const scale_kernel&, floats<kiln::out>, floats<kiln::out>, unsigned>,
    "an `out` buffer passed where the kernel reads");
static_assert(!std::is_invocable_v<const scale_kernel&, kiln::buffer<double, kiln::in>&,
                                   floats<kiln::out>, unsigned>,
              "the wrong element type");
static_assert(!std::is_invocable_v<const scale_kernel&, floats<kiln::in>, floats<kiln::out>>,
              "too few arguments");
static_assert(!std::is_invocable_v<const scale_kernel&, floats<kiln::in>, floats<kiln::out>,
                                   unsigned, unsigned>,
              "too many arguments");
static_assert(!std::is_invocable_v<const scale_kernel&, floats<kiln::in>, floats<kiln::out>,
                                   floats<kiln::in>>,
              "a buffer where a scalar is declared");
static_assert(!std::is_invocable_v<const scratch_kernel&, floats<kiln::in>, kiln::local<float>>,
              "an `in` buffer where the kernel reads and writes");
static_assert(!std::is_invocable_v<const scratch_kernel&, floats<kiln::inout>, kiln::local<int>>,
              "local memory of the wrong type");
static_assert(!std::is_invocable_v<const scratch_kernel&, floats<kiln::inout>, float>,
              "a scalar where local memory is declared");

TEST_P(programs, typed_kernels_accept_compatible_buffers_and_convert_scalars) {
    kiln::program prog(device(), scale_source);
    kiln::queue q(device());
    scale_kernel scale =
        prog.kernel<kiln::param::in<float>, kiln::param::out<float>, unsigned>("scale");
    EXPECT_EQ(scale.untyped().name(), "scale");
    kiln::buffer<float, kiln::in> in(q, {1.0f, 2.0f, 3.0f});
    kiln::buffer<float, kiln::out> out(q, 3);
    // 3 is an int; the declaration makes it the kernel's 4-byte uint.
    auto done = scale(in, out, 3).launch(q, {3});
    EXPECT_EQ(out.read(q, done), (std::vector<float>{2.0f, 4.0f, 6.0f}));

    kiln::buffer<float> both(q, {5.0f, 6.0f});
    done = scale(both, both, 2).launch(q, {2});
    EXPECT_EQ(both.read(q, done), (std::vector<float>{10.0f, 12.0f}));

    auto scratch =
        prog.kernel<kiln::param::inout<float>, kiln::param::local<float>>("with_scratch");
    kiln::buffer<float> data(q, {1.0f, 2.0f});
    done = scratch(data, kiln::local<float>(2)).launch(q, {2}, {2});
    EXPECT_EQ(data.read(q, done), (std::vector<float>{2.0f, 1.0f}));

    // The runtime checks still apply beneath the declaration: it names the wrong kernel here.
    auto mismatched = prog.kernel<kiln::param::inout<float>, float, unsigned>("scale");
    kiln::buffer<float> x(q, 2);
    EXPECT_THROW(mismatched(x, 1.0f, 2u), kiln::invalid_argument_error);
    EXPECT_THROW((void)prog.kernel<kiln::param::in<float>>("no_such_kernel"), kiln::error);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(programs);

}  // namespace
