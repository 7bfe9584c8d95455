// SPDX-License-Identifier: Apache-2.0
// Split vectors over several devices against one device, in the same run: `y = 2*x + 3*z` and
// `sum(x)` on the same n elements spread over the first 1, 2, 4, ... and all N of the chosen
// devices.
//
//     split_bench [log2(n)] [spec]
//
// log2(n): default 30 on GPUs, 22 elsewhere. spec: the devices, in KILN_DEVICE syntax (default:
// $KILN_DEVICE, else every GPU of kiln::default_device()'s backend, else that device's type);
// a GPU seen through both CUDA and OpenCL counts once, under the first device's backend.
// Prints one markdown table for docs/benchmarks.md: per device count the parts' sizes, the
// time per statement (wall clock, all devices finished), GB/s and the speed-up over one device.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_rows.hpp"
#include "timing.hpp"

namespace {

using kiln::bench::best_seconds_per_call;

std::vector<kiln::device> chosen_devices(const char* spec_argument) {
    const kiln::device first = kiln::default_device();
    std::string spec;
    if (spec_argument != nullptr) {
        spec = spec_argument;
    } else if (const char* env = std::getenv("KILN_DEVICE"); env != nullptr && *env != '\0') {
        spec = env;
    } else {
        spec = first.is_gpu() ? "gpu" : first.is_cpu() ? "cpu" : "accelerator";
    }
    std::vector<kiln::device> chosen = kiln::devices(kiln::filters::from_spec(spec));
    if (chosen.empty()) throw std::runtime_error("split_bench: no device matches " + spec);
    // One backend only: the same GPU under CUDA and under OpenCL would be counted twice.
    const kiln::backend_kind backend = chosen.front().backend();
    std::erase_if(chosen, [&](const kiln::device& d) { return d.backend() != backend; });
    return chosen;
}

struct measurement {
    double axpy_seconds = 0;
    double sum_seconds = 0;
    std::string parts;  // the elements each device holds, in millions
};

measurement measure(const std::vector<kiln::device>& devices, std::size_t n) {
    std::vector<kiln::queue> queues(devices.begin(), devices.end());
    kiln::vector<float> x(queues, n), z(queues, n), y(queues, n);
    // Exact in float, so the device's results can be checked exactly.
    x = kiln::cast<float>(kiln::element_index() % 1024) / 1024.0f;
    z = 1.0f - kiln::cast<float>(kiln::element_index() % 512) / 512.0f;

    measurement m;
    for (const auto& part : x.layout()) {
        char text[48];
        std::snprintf(text, sizeof text, "%s%.1fM", m.parts.empty() ? "" : " + ",
                      static_cast<double>(part.size) / 1e6);
        m.parts += text;
    }
    m.axpy_seconds = best_seconds_per_call(queues, 5, 20, [&] { y = 2 * x + 3 * z; });
    float device_sum = 0;
    m.sum_seconds = best_seconds_per_call(queues, 5, 20, [&] { device_sum = kiln::sum(x); });

    // sum over i of (i % 1024) / 1024, for whole periods of 1024 and the rest.
    const std::size_t periods = n / 1024, rest = n % 1024;
    const double exact = static_cast<double>(periods) * 1023.0 * 1024.0 / 2.0 / 1024.0 +
                         static_cast<double>(rest) * static_cast<double>(rest - 1) / 2.0 / 1024.0;
    if (std::fabs(device_sum - exact) > 1e-5 * exact)
        throw std::runtime_error("split_bench: sum on " + std::to_string(devices.size()) +
                                 " devices is " + std::to_string(device_sum) + ", not " +
                                 std::to_string(exact));
    const std::vector<float> result = y.read();
    for (std::size_t i = 0; i < n; ++i) {
        const float expected = 2 * (static_cast<float>(i % 1024) / 1024.0f) +
                               3 * (1.0f - static_cast<float>(i % 512) / 512.0f);
        if (result[i] != expected)
            throw std::runtime_error(
                "split_bench: y[" + std::to_string(i) + "] on " + std::to_string(devices.size()) +
                " devices is " + std::to_string(result[i]) + ", not " + std::to_string(expected));
    }
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::vector<kiln::device> devices = chosen_devices(argc > 2 ? argv[2] : nullptr);
        const int log2_n = argc > 1 ? std::atoi(argv[1]) : (devices.front().is_gpu() ? 30 : 22);
        const std::size_t n = std::size_t{1} << log2_n;

        std::printf("### %s x %zu (%s), n = 2^%d floats, split weighting: %s\n\n",
                    devices.front().name().c_str(), devices.size(),
                    std::string(kiln::to_string(devices.front().backend())).c_str(), log2_n,
                    kiln::current_split_weighting() == kiln::split_weighting::compute
                        ? "compute"
                        : "memory bandwidth");
        for (const kiln::device& d : devices)
            std::printf("- device %zu: %s, weighed at %.0f GB/s\n", d.index(), d.name().c_str(),
                        kiln::memory_bandwidth(kiln::queue(d)) / 1e9);
        std::printf(
            "\n| devices | parts | `y = 2*x + 3*z` | GB/s | speed-up | `sum(x)` | GB/s | speed-up "
            "|\n|---:|---|---:|---:|---:|---:|---:|---:|\n");
        measurement one;
        kiln::bench::record_rows_of(devices.front(), "several GPUs");
        // 1, 2, 4, ... devices and all of them: the counts docs/benchmarks.md compares.
        for (std::size_t count = 1; count <= devices.size();
             count = count * 2 > devices.size() && count < devices.size() ? devices.size()
                                                                          : count * 2) {
            const measurement m =
                measure(std::vector<kiln::device>(devices.begin(), devices.begin() + count), n);
            if (count == 1) one = m;
            const double bytes = static_cast<double>(n * sizeof(float));
            std::printf("| %zu | %s | %.3f ms | %.0f | %.2fx | %.3f ms | %.0f | %.2fx |\n", count,
                        m.parts.c_str(), m.axpy_seconds * 1e3, 3 * bytes / m.axpy_seconds / 1e9,
                        one.axpy_seconds / m.axpy_seconds, m.sum_seconds * 1e3,
                        bytes / m.sum_seconds / 1e9, one.sum_seconds / m.sum_seconds);
            if (count > 1) {
                const std::string on = ", 2^" + std::to_string(log2_n) + " floats, " +
                                       std::to_string(count) + " devices";
                kiln::bench::record_ratio("split y = 2*x + 3*z" + on,
                                          one.axpy_seconds / m.axpy_seconds,
                                          kiln::bench::measure::speed, "1 device");
                kiln::bench::record_ratio("split sum(x)" + on, one.sum_seconds / m.sum_seconds,
                                          kiln::bench::measure::speed, "1 device");
            }
            std::fflush(stdout);
        }
        std::printf(
            "\nwall clock per statement, best of 5 batches of 20; results checked exactly\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "split_bench: %s\n", e.what());
        return 2;
    }
}
