// SPDX-License-Identifier: Apache-2.0
// Vector addition: the smallest complete kiln program, checked against the CPU.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <kiln/kiln.hpp>
#include <vector>

namespace {

const char* source = R"(
kernel void add(global const float* a, global const float* b, global float* c, uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
)";

}  // namespace

int main(int argc, char** argv) {
    try {
        const unsigned n =
            argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 1'000'003;
        std::vector<float> host_a(n), host_b(n);
        for (unsigned i = 0; i < n; ++i) {
            host_a[i] = static_cast<float>(i) * 0.5f;
            host_b[i] = 1.0f - static_cast<float>(i % 97);
        }

        auto dev = kiln::default_device();
        kiln::queue q(dev);
        kiln::buffer<float, kiln::in> a(q, host_a), b(q, host_b);
        kiln::buffer<float, kiln::out> c(q, n);
        auto add = kiln::program(dev, source).kernel("add");
        auto done = add(a, b, c, n).launch(q, {n});
        std::vector<float> result = c.read(q, done);

        for (unsigned i = 0; i < n; ++i) {
            if (result[i] != host_a[i] + host_b[i]) {
                std::fprintf(stderr, "vector_add: mismatch at %u: %g != %g\n", i, result[i],
                             host_a[i] + host_b[i]);
                return 1;
            }
        }
        std::printf("vector_add: %u elements on %s: OK\n", n, dev.name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vector_add: %s\n", e.what());
        return 1;
    }
}
