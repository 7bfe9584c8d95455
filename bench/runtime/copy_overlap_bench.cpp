// SPDX-License-Identifier: Apache-2.0
// copy_overlap_bench: do asynchronous copies between ordinary host memory and a device overlap
// with a kernel running on another queue? Times a kernel alone, a copy alone and both at once,
// on every GPU of every backend (or the devices a KILN_DEVICE-style argument names).
//
// overlap = (kernel + copy - both) / min(kernel, copy): 1 when the shorter one is fully hidden
// behind the other, 0 when they run one after the other.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <kiln/kiln.hpp>
#include <vector>

#include "report_start.hpp"

namespace {

const char* spin_source = R"(
kernel void spin(global float* x, uint iterations) {
    size_t i = get_global_id(0);
    float v = x[i];
    for (uint k = 0; k < iterations; ++k) v = v * 0.999f + 0.001f;
    x[i] = v;
}
)";

double best_seconds(int repeats, const std::function<void()>& work) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        auto start = std::chrono::steady_clock::now();
        work();
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

void measure(const kiln::device& dev) {
    kiln::queue compute(dev), transfer(dev);
    const std::size_t copy_bytes = std::size_t{256} << 20;  // long enough to time, far above caches
    const std::size_t elements = copy_bytes / sizeof(float);
    std::vector<float> host(elements, 1.0f);  // ordinary pageable memory, as users have it
    kiln::buffer<float> staging_target(transfer, elements);
    const std::size_t spin_items = std::size_t{1} << 20;
    kiln::buffer<float> spin_data(compute, std::vector<float>(spin_items, 0.5f));
    auto spin = kiln::program(dev, spin_source).kernel("spin");

    const int repeats = 5;
    auto write_async = [&] {
        return staging_target.write_async(transfer, 0, std::span<const float>(host));
    };
    auto read_async = [&] {
        return staging_target.read_async(transfer, 0, std::span<float>(host));
    };
    write_async().wait();  // first touch of every page, outside the timings
    const double write_alone = best_seconds(repeats, [&] { write_async().wait(); });
    const double read_alone = best_seconds(repeats, [&] { read_async().wait(); });

    // Scale the kernel to last about as long as a copy: overlap is clearest between equals.
    unsigned iterations = 1024;
    auto run_spin = [&] { return spin(spin_data, iterations).launch(compute, {spin_items}); };
    run_spin().wait();
    const double probe = best_seconds(3, [&] { run_spin().wait(); });
    iterations = static_cast<unsigned>(std::clamp(iterations * write_alone / probe, 16.0, 1e7));
    run_spin().wait();
    const double kernel_alone = best_seconds(repeats, [&] { run_spin().wait(); });

    std::printf("\n### %s (%s), %zu MiB copies from/to ordinary host memory\n\n",
                dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(),
                copy_bytes >> 20);
    std::printf("| copy | copy alone (ms) | kernel alone (ms) | both at once (ms) | overlap |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    for (auto [name, copy_alone, copy] :
         {std::tuple{"host to device", write_alone, std::function<kiln::event()>(write_async)},
          std::tuple{"device to host", read_alone, std::function<kiln::event()>(read_async)}}) {
        const double both = best_seconds(repeats, [&] {
            auto kernel_done = run_spin();
            auto copy_done = copy();
            kiln::wait_for_all({kernel_done, copy_done});
        });
        const double overlap =
            (kernel_alone + copy_alone - both) / std::min(kernel_alone, copy_alone);
        std::printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", name, copy_alone * 1e3,
                    kernel_alone * 1e3, both * 1e3, overlap);
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<kiln::device> targets = argc > 1
                                                ? kiln::devices(kiln::filters::from_spec(argv[1]))
                                                : kiln::devices(kiln::filters::gpu());
        if (targets.empty()) targets.push_back(kiln::default_device());
        const std::string date = kiln::bench::today();
        std::printf("## Copy and kernel overlap, %s\n", date.c_str());
        for (const auto& dev : targets) measure(dev);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "copy_overlap_bench: %s\n", e.what());
        return 1;
    }
}
