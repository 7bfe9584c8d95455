// SPDX-License-Identifier: Apache-2.0
// The code quoted in docs/runtime.md, compiled and run on every device. Each quoted block sits
// between "// guide: <name>" and "// end guide" lines; the last test checks that the guide
// still quotes every block verbatim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <kiln/kiln.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/device_param.hpp"
#include "test_helpers.hpp"

namespace {

class guide : public kiln::test::device_test {};

TEST_P(guide, devices_and_filters) {
    std::ostringstream out;
    // guide: devices
    for (const kiln::device& d : kiln::devices())
        out << d.index() << ": " << d.name() << " (" << kiln::to_string(d.backend()) << ")\n";

    using namespace kiln::filters;
    auto big_gpus = kiln::devices(gpu() && double_precision() && min_global_memory(4ull << 30));
    auto not_nvidia = kiln::devices(!vendor("nvidia"));
    auto one_cpu = kiln::devices(cpu() && first(1));
    auto many_units =
        kiln::devices(any([](const kiln::device& d) { return d.properties().compute_units >= 8; }));
    auto atomics =
        kiln::devices(extension("cl_khr_int64_base_atomics") || backend(kiln::backend_kind::cuda));

    kiln::device dev = kiln::default_device();  // KILN_DEVICE, else the strongest GPU, else a CPU
    std::cout << dev.summary();  // every property, one per line; dev.to_json() for scripts
    // end guide
    for (const auto& d : big_gpus) EXPECT_TRUE(d.is_gpu() && d.properties().double_precision);
    for (const auto& d : not_nvidia)
        EXPECT_EQ(d.properties().vendor.find("NVIDIA"), std::string::npos);
    EXPECT_LE(one_cpu.size(), 1u);
    for (const auto& d : many_units) EXPECT_GE(d.properties().compute_units, 8u);
    for (const auto& d : atomics)
        EXPECT_TRUE(d.properties().has_extension("cl_khr_int64_base_atomics") ||
                    d.backend() == kiln::backend_kind::cuda);
    EXPECT_NE(out.str().find(device().name()), std::string::npos);
    EXPECT_TRUE(dev);
}

TEST_P(guide, queues_buffers_and_transfers) {
    const kiln::device& dev = device();
    // guide: buffers
    kiln::queue q(dev);                              // in order
    kiln::queue unordered(dev, kiln::out_of_order);  // order only through wait lists
    kiln::queue timed(dev, {.out_of_order = false, .profiling = true});

    std::vector<float> host(1000, 1.5f);
    kiln::buffer<float, kiln::in> input(q, host);           // kernels read it; blocks until copied
    kiln::buffer<float, kiln::out> output(q, host.size());  // kernels write it; uninitialised
    kiln::buffer<int> grid(q, kiln::shape{480, 640});       // inout, 480 rows of 640, row-major
    kiln::single<unsigned> counter(q, 0u);                  // one value, e.g. a result counter

    std::vector<float> back = input.read(q);             // the whole buffer
    input.write(q, 10, std::vector<float>{2.0f, 3.0f});  // elements 10 and 11 only
    kiln::event filled = grid.fill(q, -1);               // asynchronous: returns an event
    kiln::event copied = input.copy_to(q, 0, output, 500, 500, filled);  // waits for `filled`
    std::vector<float> tail(500);
    output.read_async(q, 500, tail, copied).wait();
    unsigned count = counter.get(q);
    // end guide
    EXPECT_EQ(back, host);
    EXPECT_EQ(tail[10], 2.0f);
    EXPECT_EQ(tail[12], 1.5f);
    EXPECT_EQ(grid.read_element(q, 640 * 479 + 639), -1);
    EXPECT_EQ(count, 0u);
    EXPECT_TRUE(unordered.options().out_of_order);
    EXPECT_TRUE(timed.options().profiling);
}

TEST_P(guide, bad_transfers_throw) {
    const kiln::device& dev = device();
    kiln::queue q(dev);
    kiln::buffer<float> buffer(q, 100);
    std::vector<float> ninety(90);
    // guide: transfer errors
    try {
        buffer.write(q, ninety);  // 90 elements into 100: an error, never a partial copy
    } catch (const kiln::invalid_argument_error& e) {
        // "kiln::buffer::write failed: KILN_INVALID_ARGUMENT: the host range has 90 elements..."
        std::cerr << e.what() << "\n";
    }
    try {
        kiln::buffer<char> huge(q, 1ull << 50);
    } catch (const kiln::out_of_memory_error& e) {
        std::cerr << e.requested_bytes() << " > " << e.max_allocation_bytes() << "\n";
    }
    // end guide
    EXPECT_THROW(buffer.write(q, ninety), kiln::invalid_argument_error);
    EXPECT_THROW(kiln::buffer<char>(q, 1ull << 50), kiln::out_of_memory_error);
}

TEST_P(guide, programs_kernels_and_launches) {
    const kiln::device& dev = device();
    kiln::queue q(dev, kiln::profiled);
    // guide: programs
    const std::vector<std::string> sources = {
        "float scaled(float x) { return SCALE * x; }\n",  // a device function...
        "kernel void scale(global const float* in, global float* out, uint n) {\n"
        "    size_t i = get_global_id(0);\n"
        "    if (i < n) out[i] = scaled(in[i]);\n"  // ...used by a kernel in another source
        "}\n"};
    kiln::program prog(dev, sources, "-DSCALE=2.0f");
    kiln::kernel scale = prog.kernel("scale");

    const unsigned n = 1000;
    kiln::buffer<float, kiln::in> in(q, std::vector<float>(n, 4.0f));
    kiln::buffer<float, kiln::out> out(q, n);
    // 1000 work-items rounded up to groups of 64; the kernel ignores the extra 24.
    kiln::event done = scale(in, out, n).launch(q, {1024}, {64});
    std::vector<float> result = out.read(q, done);
    std::cout << "took " << done.duration().count() << " ns\n";
    // end guide
    EXPECT_EQ(result, std::vector<float>(n, 8.0f));
    // guide: reinterpret
    kiln::buffer<std::uint32_t, kiln::out> bits(q, n);
    // scale(in, bits, n);  // invalid_argument_error: expects a buffer of float, got uint
    scale(in, kiln::reinterpret(bits), n).launch(q, {1024}, {64}).wait();  // 8.0f is 0x41000000
    // end guide
    EXPECT_EQ(bits.read(q), std::vector<std::uint32_t>(n, 0x41000000u));
    EXPECT_THROW(scale(in, bits, n), kiln::invalid_argument_error);
    auto t = done.times();
    EXPECT_LE(t.queued_ns, t.submitted_ns);
    EXPECT_LE(t.started_ns, t.ended_ns);

    // guide: launch geometry
    kiln::buffer<float> image(q, kiln::shape{600, 800});
    // global {x, y}, local {x, y}, offset {x, y}; the local range must divide the global one
    const std::string where_source =
        "kernel void where(global float* image) {\n"
        "    size_t x = get_global_id(0), y = get_global_id(1);\n"
        "    image[y * get_global_size(0) + x] = get_group_id(0);\n"
        "}\n";
    auto where = kiln::program(dev, where_source).kernel("where");
    where(image).launch(q, {800, 600}, {16, 8}).wait();
    try {
        where(image).launch(q, {800, 600}, {16, 7});  // 7 does not divide 600: nothing is enqueued
    } catch (const kiln::invalid_argument_error& e) {
        std::cerr << e.what() << "\n";
    }
    // end guide
    EXPECT_EQ(image.read_element(q, 800 * 599 + 799), 49.0f);
    EXPECT_THROW(where(image).launch(q, {800, 600}, {16, 7}), kiln::invalid_argument_error);
}

TEST_P(guide, kernel_files) {
    const kiln::device& dev = device();
    kiln::test::temp_dir dir;
    std::ofstream(dir.path() / "negate.cl")
        << "kernel void negate(global int* x) { x[get_global_id(0)] *= -1; }\n";
    kiln::test::scoped_env path("KILN_KERNEL_PATH", dir.path().string());
    // guide: kernel files
    // A bare name is searched for in each directory of KILN_KERNEL_PATH, then in the
    // executable's kernels/ directory; never in the current directory.
    kiln::program from_file = kiln::program::from_file(dev, "negate.cl");
    // end guide
    kiln::queue q(dev);
    kiln::buffer<int> x(q, {1, -2});
    auto done = from_file.kernel("negate")(x).launch(q, {2});
    EXPECT_EQ(x.read(q, done), (std::vector<int>{-1, 2}));
}

TEST_P(guide, local_memory_and_typed_kernels) {
    const kiln::device& dev = device();
    kiln::queue q(dev);
    const char* source = R"(
kernel void block_sums(global const int* in, global int* sums, local int* scratch) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        int sum = 0;
        for (size_t i = 0; i < get_local_size(0); ++i) sum += scratch[i];
        sums[get_group_id(0)] = sum;
    }
}
)";
    kiln::program prog(dev, source);
    kiln::buffer<int, kiln::in> in(q, std::vector<int>(256, 1));
    kiln::buffer<int, kiln::out> sums(q, 4);
    // guide: local memory
    auto block_sums = prog.kernel("block_sums");
    block_sums(in, sums, kiln::local<int>(64)).launch(q, {256}, {64});  // 64 ints per work-group
    // end guide
    EXPECT_EQ(sums.read(q), std::vector<int>(4, 64));

    // guide: typed kernels
    auto typed = prog.kernel<kiln::param::in<int>, kiln::param::out<int>, kiln::param::local<int>>(
        "block_sums");
    typed(in, sums, kiln::local<int>(64)).launch(q, {256}, {64});
    // typed(sums, in, kiln::local<int>(64));  // does not compile: out and in buffers swapped
    // end guide
    EXPECT_EQ(sums.read(q), std::vector<int>(4, 64));
    static_assert(
        !std::is_invocable_v<decltype(typed), decltype(sums)&, decltype(in)&, kiln::local<int>>);
}

TEST_P(guide, compile_cache_and_errors) {
    const kiln::device& dev = device();
    kiln::test::temp_dir dir;
    kiln::test::scoped_env cache("KILN_CACHE_DIR", dir.path().string());
    const std::string source =
        "// " + kiln::test::unique_token() + "\nkernel void k(global int* x) { x[0] = 1; }\n";
    // guide: cache
    kiln::program first(dev, source);   // compiled, then stored in memory and in KILN_CACHE_DIR
    kiln::program second(dev, source);  // program_origin::memory_cache: no work at all
    kiln::program_cache::clear_memory();
    kiln::program third(dev, source);  // program_origin::disk_cache: loads the stored binary
    std::cout << "compiled in " << first.build_time().count() << " ns, loaded in "
              << third.build_time().count() << " ns; " << kiln::program_cache::stats().disk_hits
              << " disk hits so far\n";
    // end guide
    EXPECT_EQ(first.origin(), kiln::program_origin::compiled);
    EXPECT_EQ(second.origin(), kiln::program_origin::memory_cache);
    EXPECT_EQ(third.origin(), kiln::program_origin::disk_cache);

    std::string log;
    // guide: errors
    try {
        kiln::program broken(dev, "kernel void k(global int* x) { x[0] = y; }");
    } catch (const kiln::build_error& e) {
        log = e.log();  // the compiler's messages, for every device
        // "clBuildProgram CL_BUILD_PROGRAM_FAILURE"
        std::cerr << e.call() << " " << e.code_name() << "\n";
    } catch (const kiln::error& e) {
        // Any other failing call: its name, the error code's name, the details.
        std::cerr << e.what() << "\n";
    }
    // end guide
    EXPECT_FALSE(log.empty());
}

TEST_P(guide, pinned_host_memory) {
    const kiln::device& dev = device();
    // guide: pinned
    kiln::queue q(dev);
    kiln::buffer<float> data(q, 1 << 20);
    // Page-locked memory through q's device; kiln::host_vector<float> h(n) uses the default device.
    kiln::host_vector<float> host(data.size(), 1.0f, kiln::pinned_allocator<float>(q));
    data.write(q, host);                             // no staging: at the link's speed
    kiln::event done = data.read_async(q, 0, host);  // into pinned memory, asynchronously
    done.wait();
    std::vector<float> ordinary = data.read(q);  // ordinary memory still works (staged)
    // end guide
    EXPECT_TRUE(std::equal(ordinary.begin(), ordinary.end(), host.begin()));
    EXPECT_EQ(host[12345], 1.0f);
}

TEST_P(guide, kernel_language) {
    const kiln::device& dev = device();
    if (kiln::test::on_nvidia_opencl(dev)) GTEST_SKIP() << kiln::test::nvidia_opencl_vector_printf;
    const char* source = R"(
kernel void add_to(global float* total, float v) { atomic_add(total, v); }  // float: kiln's CAS loop
kernel void add_all(global const float* values, global float* total) {
    add_to(total, values[get_global_id(0)]);  // a kernel called as a function
    if (get_global_id(0) == 0) printf("first %v2hlf\n", vload2(0, values));
}
)";
    ::testing::internal::CaptureStdout();
    // guide: kernel language
    kiln::program prog(dev, source);
    kiln::queue q(dev);
    kiln::buffer<float> values(q, std::vector<float>{1.5f, 2.5f, 3.0f, 4.0f});
    kiln::buffer<float> total(q, std::vector<float>{0.0f});
    prog.kernel("add_all")(values, total).launch(q, {4});
    q.finish();  // printf output appears when the host synchronises: "first 1.500000,2.500000"
    float sum = total.read(q)[0];  // 11
    // end guide
    std::fflush(stdout);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(sum, 11.0f);
    EXPECT_NE(printed.find("first 1.500000,2.500000\n"), std::string::npos) << printed;
}

TEST_P(guide, records_and_replays_work) {
    kiln::queue q(device());
    const kiln::queue other_queue(device());
    // guide: graphs
    kiln::vector<float> x(q, std::vector<float>(1024, 1.0f));
    kiln::vector<float> y(q, std::vector<float>(1024, 0.0f)), sums(q, 1024);
    kiln::graph_value<float> a(q, 2.0f);
    kiln::graph step = kiln::capture(q, [&] {  // records; runs nothing
        y = a * x + y;
        kiln::inclusive_scan(y, sums);
    });
    for (float value : {1.0f, 0.5f}) {
        a.set(value);   // read by the next launch
        step.launch();  // y = 1, then 1.5
    }
    step.launch(other_queue).wait();  // another queue of the device: y = 2
    // end guide
    EXPECT_EQ(y.read(), std::vector<float>(1024, 2.0f));
    EXPECT_EQ(sums.read().back(), 2048.0f);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(guide);

std::string read_text(const char* path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The guide must not drift from the code: every block above appears in it, unindented.
TEST(guide_document, quotes_every_block_verbatim) {
    const std::string source = read_text(KILN_RUNTIME_GUIDE_TEST),
                      document = read_text(KILN_RUNTIME_GUIDE);
    ASSERT_FALSE(source.empty()) << KILN_RUNTIME_GUIDE_TEST;
    ASSERT_FALSE(document.empty()) << KILN_RUNTIME_GUIDE;
    const std::string start_marker = "// guide: ", end_marker = "// end guide";
    std::size_t blocks = 0;
    for (std::size_t at = source.find(start_marker); at != std::string::npos;
         at = source.find(start_marker, at + 1)) {
        const std::size_t line_start = source.rfind('\n', at) + 1;
        const std::size_t indent = at - line_start;
        const std::size_t name_end = source.find('\n', at);
        const std::string name =
            source.substr(at + start_marker.size(), name_end - at - start_marker.size());
        if (source.find_first_not_of(' ', line_start) != at) continue;  // a mention, not a marker
        std::string block;
        std::size_t line = name_end + 1;
        while (source.compare(line + indent, end_marker.size(), end_marker) != 0) {
            const std::size_t next = source.find('\n', line);
            ASSERT_NE(next, std::string::npos) << "guide block '" << name << "' has no end marker";
            block += source.size() > line + indent && next > line + indent
                         ? source.substr(line + indent, next - line - indent)
                         : "";
            block += "\n";
            line = next + 1;
        }
        ++blocks;
        EXPECT_NE(document.find(block), std::string::npos)
            << "docs/runtime.md does not quote the guide block '" << name << "':\n"
            << block;
    }
    EXPECT_GE(blocks, 10u);
}

}  // namespace
