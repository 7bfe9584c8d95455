// SPDX-License-Identifier: Apache-2.0
// constant_table_bench: a kernel that reads a 16 KiB table through a `constant` parameter against
// the same kernel reading it through `global const`, with every work-item of a warp reading the
// same entry (what the constant cache serves in one access) and with each reading its own. Under
// CUDA the constant launch includes the copy of the table into the kernel's __constant__ area.
// Both kernels' results are checked against the host's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

const char* source = R"(
#define TABLE 4096
#define STEPS 256
kernel void constant_lookup(constant float* table, global float* out, uint per_item) {
    uint i = get_global_id(0);
    float sum = 0.0f;
    for (uint k = 0; k < STEPS; ++k) sum += table[(k * 37u + i * per_item) % TABLE];
    out[i] = sum;
}
kernel void global_lookup(global const float* table, global float* out, uint per_item) {
    uint i = get_global_id(0);
    float sum = 0.0f;
    for (uint k = 0; k < STEPS; ++k) sum += table[(k * 37u + i * per_item) % TABLE];
    out[i] = sum;
}
)";

constexpr std::size_t table_size = 4096, steps = 256;

double best_seconds(kiln::queue& q, const kiln::program& prog, const char* name,
                    const kiln::buffer<float>& table, kiln::buffer<float>& out, unsigned per_item,
                    std::size_t n) {
    auto kernel = prog.kernel(name);
    auto launch = [&] { return kernel(table, out, per_item).launch(q, {n}, {256}); };
    launch().wait();
    double best = 1e30;
    for (int r = 0; r < 20; ++r)
        best = std::min(best, std::chrono::duration<double>(launch().duration()).count());
    return best;
}

bool correct(kiln::queue& q, const kiln::buffer<float>& out, const std::vector<float>& table,
             unsigned per_item) {
    const auto got = out.read(q);
    for (std::size_t i = 0; i < got.size(); i += 997) {
        float sum = 0.0f;
        for (unsigned k = 0; k < steps; ++k)
            sum += table[(k * 37u + static_cast<unsigned>(i) * per_item) % table_size];
        if (got[i] != sum) return false;
    }
    return true;
}

void measure(const kiln::device& dev) {
    kiln::queue q(dev, kiln::profiled);
    kiln::program prog(dev, source);
    const std::size_t n = std::size_t{1} << 22;
    // Small integers: the sums are exact in any order.
    std::vector<float> host(table_size);
    for (std::size_t i = 0; i < table_size; ++i) host[i] = static_cast<float>(i % 8);
    kiln::buffer<float> table(q, host);
    kiln::buffer<float> out(q, n);
    std::printf("\n### %s (%s), 2^22 work-items, %zu reads each of a 16 KiB table\n\n",
                dev.name().c_str(), std::string(kiln::to_string(dev.backend())).c_str(), steps);
    std::printf("| reads | global const (ms) | constant (ms) | global / constant | correct |\n");
    std::printf("|---|---:|---:|---:|---|\n");
    for (auto [shape, per_item] :
         {std::pair{"one entry per warp", 0u}, std::pair{"one entry per work-item", 1u}}) {
        const double global = best_seconds(q, prog, "global_lookup", table, out, per_item, n);
        const bool global_ok = correct(q, out, host, per_item);
        const double constant = best_seconds(q, prog, "constant_lookup", table, out, per_item, n);
        const bool constant_ok = correct(q, out, host, per_item);
        std::printf("| %s | %.3f | %.3f | %.2f | %s |\n", shape, global * 1e3, constant * 1e3,
                    global / constant, global_ok && constant_ok ? "yes" : "NO");
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto devices = argc > 1 ? kiln::devices(kiln::filters::from_spec(argv[1]))
                                  : kiln::devices(kiln::filters::gpu());
    for (const auto& dev : devices) measure(dev);
    return 0;
}
