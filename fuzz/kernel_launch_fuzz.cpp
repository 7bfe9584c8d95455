// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: random kernel arguments (kinds, element types, sizes, devices, arity) and
// launch geometries (global, local and offset ranges, small and past every limit) against a few
// kernels on PoCL. Every call must either run or throw kiln::invalid_argument_error; any other
// exception, a crash or a sanitizer report is a finding (scripts/fuzz.sh kernel_launch). PoCL
// shows its CPU as two devices here, so that kernels, queues and buffers of two devices mix.
//
// Launches that kiln accepts must stay cheap and memory-safe whatever the input: the kernels
// guard every access with a count `n`, and every integer scalar passed is a count that fits the
// smallest buffer passed. Global extents are either small or at least 2^40 with small local
// extents, so an accepted launch has few work-items and a huge one must be rejected.
#include <fuzzer/FuzzedDataProvider.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <kiln/kiln.hpp>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* source = R"(
kernel void fill(global float* out, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = 1.0f;
}
kernel void scale_pairs(global const uint2* in, global uint2* out, ulong n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 2u;
}
kernel void group_first(global int* out, local int* scratch, uint n) {
    if (get_local_id(0) == 0) scratch[0] = (int)get_group_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t g = get_group_id(0);
    if (get_local_id(0) == 0 && g < n) out[g] = scratch[0];
}
kernel void own_array(global char* out, uint n) {
    local int own[64];
    own[get_local_id(0) % 64] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t i = get_global_id(0);
    if (i < n) out[i] = (char)own[0];
}
kernel void values(global long* out, char c, short s, float f, ulong u, float4 v, uint n) {
    if (n > 0 && get_global_id(0) == 0) out[0] = c + s + (long)f + (long)u + (long)v.w;
}
)";
const char* kernel_names[] = {"fill", "scale_pairs", "group_first", "own_array", "values"};
constexpr std::size_t kernel_count = sizeof kernel_names / sizeof kernel_names[0];

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "kernel_launch_fuzz: %s\n", what.c_str());
    std::abort();
}

/// Programs and queues of up to two devices, built once per process: PoCL compiles are slow.
struct setup {
    std::vector<kiln::device> devices;
    std::vector<kiln::queue> queues;
    std::vector<std::vector<kiln::kernel>> kernels;  // [device][kernel]

    setup() {
        for (const auto& dev : kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl)))
            if (devices.size() < 2) devices.push_back(dev);
        if (devices.empty()) broken("no OpenCL device");
        for (const auto& dev : devices) {
            queues.emplace_back(dev);
            kiln::program prog(dev, source);
            kernels.emplace_back();
            for (const char* name : kernel_names) kernels.back().push_back(prog.kernel(name));
        }
    }
};

const setup& the_setup() {
    static const setup s;
    return s;
}

/// One argument, kept alive until the launch: buffers own their memory here.
struct argument_maker {
    argument_maker(FuzzedDataProvider& provider, const setup& fixture) : in(provider), s(fixture) {}

    FuzzedDataProvider& in;
    const setup& s;
    std::vector<kiln::buffer<char>> char_buffers;
    std::vector<kiln::buffer<int>> int_buffers;
    std::vector<kiln::buffer<std::uint32_t>> uint_buffers;
    std::vector<kiln::buffer<float>> float_buffers;
    std::vector<kiln::buffer<std::int64_t>> long_buffers;
    std::size_t smallest_buffer_bytes = std::numeric_limits<std::size_t>::max();

    template <class T>
    kiln::detail::kernel_argument buffer(std::vector<kiln::buffer<T>>& keep) {
        const auto& q = s.queues[in.ConsumeIntegralInRange<std::size_t>(0, s.queues.size() - 1)];
        const auto count = in.ConsumeIntegralInRange<std::size_t>(0, 64);
        keep.emplace_back(q, std::vector<T>(count, T{}));
        smallest_buffer_bytes = std::min(smallest_buffer_bytes, count * sizeof(T));
        if (in.ConsumeBool()) return kiln::detail::make_argument(kiln::reinterpret(keep.back()));
        return kiln::detail::make_argument(keep.back());
    }

    template <class T>
    kiln::detail::kernel_argument local() {
        // Up to twice PoCL's local memory, and now and then a count whose bytes overflow.
        const std::size_t count = in.ConsumeBool()
                                      ? in.ConsumeIntegralInRange<std::size_t>(0, 1 << 19)
                                      : in.ConsumeIntegral<std::size_t>();
        return kiln::detail::make_argument(kiln::local<T>(count));
    }

    /// What each position gets is decided first; scalar values come last, once the smallest
    /// buffer is known.
    enum class scalar { char_, short_, uint_, ulong_, float_, float4_ };

    std::optional<scalar> add(std::vector<kiln::detail::kernel_argument>& args) {
        const int choice = in.ConsumeIntegralInRange(0, 13);
        switch (choice) {
            case 0:
                args.push_back(buffer(char_buffers));
                break;
            case 1:
                args.push_back(buffer(int_buffers));
                break;
            case 2:
                args.push_back(buffer(uint_buffers));
                break;
            case 3:
                args.push_back(buffer(float_buffers));
                break;
            case 4:
                args.push_back(buffer(long_buffers));
                break;
            case 5:
                args.push_back(local<int>());
                break;
            case 6:
                args.push_back(local<float>());
                break;
            case 7:
                args.push_back(local<char>());
                break;
            default:
                args.emplace_back();
                return static_cast<scalar>(choice - 8);
        }
        return std::nullopt;
    }

    /// Integer scalars are counts that keep every kernel inside the smallest buffer passed.
    kiln::detail::kernel_argument value(scalar kind) const {
        const std::uint64_t count = smallest_buffer_bytes == std::numeric_limits<std::size_t>::max()
                                        ? 0
                                        : smallest_buffer_bytes / 8;
        switch (kind) {
            case scalar::char_:
                return kiln::detail::make_argument(static_cast<char>(count));
            case scalar::short_:
                return kiln::detail::make_argument(static_cast<short>(count));
            case scalar::uint_:
                return kiln::detail::make_argument(static_cast<std::uint32_t>(count));
            case scalar::ulong_:
                return kiln::detail::make_argument(count);
            // A float may land on a `uint n` parameter too: its bits are the count.
            case scalar::float_:
                return kiln::detail::make_argument(
                    std::bit_cast<float>(static_cast<std::uint32_t>(count)));
            case scalar::float4_: {
                struct alignas(16) float4 {
                    float v[4];
                };
                return kiln::detail::make_argument(float4{{1, 2, 3, 4}});
            }
        }
        return {};
    }
};

/// One extent: small, or huge (2^40 and more, or near SIZE_MAX) so that it must be rejected.
std::size_t extent(FuzzedDataProvider& in, bool huge) {
    if (!huge) return in.ConsumeIntegralInRange<std::size_t>(0, 40);
    const int shift = in.ConsumeIntegralInRange(40, 63);
    return (std::size_t{1} << shift) | in.ConsumeIntegralInRange<std::size_t>(0, 1 << 20);
}

/// Builds a range, which may itself reject what it is given (a total past SIZE_MAX).
kiln::range make_range(std::size_t dims, const std::size_t* sizes) {
    switch (dims) {
        case 1:
            return kiln::range{sizes[0]};
        case 2:
            return kiln::range{sizes[0], sizes[1]};
        case 3:
            return kiln::range{sizes[0], sizes[1], sizes[2]};
        default:
            return kiln::range();
    }
}

void launch_one(FuzzedDataProvider& in, const setup& s) {
    argument_maker maker{in, s};
    const auto device_index = in.ConsumeIntegralInRange<std::size_t>(0, s.devices.size() - 1);
    const auto& kernel =
        s.kernels[device_index][in.ConsumeIntegralInRange<std::size_t>(0, kernel_count - 1)];
    const auto& q = s.queues[in.ConsumeIntegralInRange<std::size_t>(0, s.queues.size() - 1)];

    std::vector<kiln::detail::kernel_argument> args;
    std::vector<std::pair<std::size_t, argument_maker::scalar>> scalars;
    const auto arity = in.ConsumeIntegralInRange<std::size_t>(0, 8);
    for (std::size_t i = 0; i < arity; ++i)
        if (auto kind = maker.add(args)) scalars.emplace_back(i, *kind);
    for (auto [position, kind] : scalars) args[position] = maker.value(kind);

    // Geometry: each dimension small or huge, local extents small, absent, zero or past the
    // device's work-item limit, offsets absent, small or huge.
    const auto dims = in.ConsumeIntegralInRange<std::size_t>(0, 3);
    std::size_t global[3], local[3], offset[3];
    for (std::size_t d = 0; d < 3; ++d) {
        global[d] = extent(in, in.ConsumeIntegralInRange(0, 7) == 0);
        local[d] = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(0, 64)
                                    : in.ConsumeIntegralInRange<std::size_t>(4097, 1 << 20);
        offset[d] = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(0, 100)
                                     : std::numeric_limits<std::size_t>::max() -
                                           in.ConsumeIntegralInRange<std::size_t>(0, 100);
    }
    const bool with_local = in.ConsumeBool(), with_offset = in.ConsumeBool();
    auto global_range = make_range(dims, global);
    auto local_range = with_local ? make_range(dims, local) : kiln::range();
    auto offset_range = with_offset ? make_range(dims, offset) : kiln::range();
    kernel.bind(std::move(args)).launch(q, global_range, local_range, offset_range).wait();
}

}  // namespace

namespace {

// How many inputs ran a kernel and how many were rejected: a run that only ever rejects
// would test half of the promise.
std::size_t launches_run = 0, launches_rejected = 0;

void report_counts() {
    std::fprintf(stderr, "kernel_launch_fuzz: %zu launches ran, %zu were rejected\n", launches_run,
                 launches_rejected);
}

}  // namespace

// Builds the programs before the first input, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::atexit(report_counts);
    ::setenv("POCL_DEVICES", "pthread pthread", 0);
    // The disk cache would outlive the run; PoCL keeps its own compiled kernels anyway.
    ::setenv("KILN_CACHE_DIR", "", 0);
    (void)the_setup();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    try {
        launch_one(in, the_setup());
        ++launches_run;
    } catch (const kiln::invalid_argument_error& e) {
        ++launches_rejected;
        if (std::string(e.what()).find('\n') != std::string::npos) broken("a multi-line message");
    } catch (const std::exception& e) {
        broken(std::string("not an invalid_argument_error: ") + e.what());
    }
    return 0;
}
