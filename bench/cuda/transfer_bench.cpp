// SPDX-License-Identifier: Apache-2.0
// transfer_bench: host-device transfer bandwidth through kiln on every GPU of both backends, from
// ordinary (pageable) memory and from kiln::host_vector (pinned), 1 MiB to 1 GiB, beside
// cudaMemcpy on the same sizes when the CUDA runtime was found at build time.
//
// Prints Markdown tables for docs/benchmarks.md. Each figure is the best of several transfers,
// timed on the host's clock from the call to the data being in place.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "report_start.hpp"
#include "timing.hpp"
#ifdef KILN_BENCH_HAVE_CUDART
#include "cuda_memcpy_reference.hpp"
#endif

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
std::vector<std::size_t> sizes{1 * mib, 4 * mib, 16 * mib, 64 * mib, 256 * mib, 1024 * mib};

int repeats_for(std::size_t bytes) {
    return static_cast<int>(std::clamp<std::size_t>(512 * mib / bytes, 3, 20));
}

double gbps(std::size_t bytes, double seconds) {
    return static_cast<double>(bytes) / seconds / 1e9;
}

/// A transfer path: its name and how to run one transfer of the given bytes.
struct path {
    std::string name;
    std::function<void(std::size_t bytes)> transfer;
};

void measure(const kiln::device& dev) {
    kiln::queue q(dev);
    const std::size_t largest = sizes.back();
    kiln::buffer<std::byte> device_memory(q, largest);
    device_memory.fill(q, std::byte{3}).wait();
    std::vector<std::byte> ordinary(largest, std::byte{1});
    kiln::host_vector<std::byte> pinned(largest, std::byte{1},
                                        kiln::pinned_allocator<std::byte>(q));
    auto span_of = [](auto& host, std::size_t bytes) { return std::span(host).first(bytes); };
    const std::vector<path> paths{
        {"write, ordinary",
         [&](std::size_t n) {
             device_memory.write(q, 0, std::span<const std::byte>(span_of(ordinary, n)));
         }},
        {"write_async, ordinary",
         [&](std::size_t n) {
             device_memory.write_async(q, 0, std::span<const std::byte>(span_of(ordinary, n)))
                 .wait();
         }},
        {"write, pinned",
         [&](std::size_t n) {
             device_memory.write(q, 0, std::span<const std::byte>(span_of(pinned, n)));
         }},
        {"read, ordinary", [&](std::size_t n) { device_memory.read(q, 0, span_of(ordinary, n)); }},
        {"read_async, ordinary",
         [&](std::size_t n) { device_memory.read_async(q, 0, span_of(ordinary, n)).wait(); }},
        {"read, pinned", [&](std::size_t n) { device_memory.read(q, 0, span_of(pinned, n)); }},
    };
    std::printf("\n### %s, %s backend (GB/s, best of 3-20)\n\n| path |", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str());
    for (auto bytes : sizes) std::printf(" %zu MiB |", bytes / mib);
    std::printf("\n| --- |");
    for (std::size_t i = 0; i < sizes.size(); ++i) std::printf(" ---: |");
    std::printf("\n");
    for (const auto& p : paths) {
        std::printf("| kiln %s |", p.name.c_str());
        for (auto bytes : sizes) {
            p.transfer(bytes);  // first touch and warm-up, not timed
            std::printf(" %.1f |",
                        gbps(bytes, kiln::bench::best_host_seconds(repeats_for(bytes),
                                                                   [&] { p.transfer(bytes); })));
        }
        std::printf("\n");
        std::fflush(stdout);
    }
}

#ifdef KILN_BENCH_HAVE_CUDART
void measure_cuda_memcpy() {
    std::printf("\n### cudaMemcpy, device 0 (GB/s, best of 3-20)\n\n| path |");
    for (auto bytes : sizes) std::printf(" %zu MiB |", bytes / mib);
    std::printf("\n| --- |");
    for (std::size_t i = 0; i < sizes.size(); ++i) std::printf(" ---: |");
    std::printf("\n");
    for (auto direction : {memcpy_direction::host_to_device, memcpy_direction::device_to_host}) {
        for (bool pinned : {false, true}) {
            std::printf("| cudaMemcpy %s, %s |",
                        direction == memcpy_direction::host_to_device ? "HtoD" : "DtoH",
                        pinned ? "cudaMallocHost" : "ordinary");
            for (auto bytes : sizes)
                std::printf(" %.1f |", gbps(bytes, cuda_memcpy_seconds(direction, bytes, pinned,
                                                                       repeats_for(bytes))));
            std::printf("\n");
            std::fflush(stdout);
        }
    }
}
#endif

}  // namespace

/// Usage: transfer_bench [device spec, default "gpu"] [largest size in MiB, default 1024]
int main(int argc, char** argv) {
    const std::string date = kiln::bench::today();
    std::printf("## Host-device transfers, %s\n", date.c_str());
    if (argc > 2)
        std::erase_if(sizes, [&](std::size_t bytes) { return bytes > std::stoul(argv[2]) * mib; });
    const auto gpus = kiln::devices(kiln::filters::from_spec(argc > 1 ? argv[1] : "gpu"));
    if (gpus.empty()) std::printf("\nno GPU: nothing to measure\n");
    for (const auto& dev : gpus) measure(dev);
#ifdef KILN_BENCH_HAVE_CUDART
    if (!kiln::devices(kiln::filters::backend(kiln::backend_kind::cuda)).empty())
        measure_cuda_memcpy();
#endif
    return 0;
}
