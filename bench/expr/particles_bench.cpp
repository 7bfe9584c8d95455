// SPDX-License-Identifier: Apache-2.0
// The particle update of examples/expr/particles.cpp in both layouts, against copy bandwidth.
//
//     particles_bench [log2(n)]     (default 24 on GPUs, 20 on CPUs; KILN_DEVICE picks the device)
//
// Prints one markdown table for docs/benchmarks.md. Both layouts move the same useful bytes per
// particle: position, velocity and mass read (36 bytes), position and velocity written (32).
// The array of structs also carries the struct's 12 bytes of padding through the caches, and
// writes two of its three 16-byte fields.
#include <cstdio>
#include <cstdlib>
#include <device_limits.hpp>
#include <kiln/kiln.hpp>
#include <tuple>
#include <vector>

#include "timing.hpp"

KILN_STRUCT(particle, (kiln::float4, position), (kiln::float4, velocity), (float, mass));

namespace {

constexpr float dt = 0.01f;
constexpr float drag = 0.1f;
constexpr kiln::float4 gravity{0.0f, -9.81f, 0.0f, 0.0f};
constexpr double useful_bytes_per_particle = 36 + 32;

void row(const char* what, double seconds, double bytes, double copy_gb_per_s) {
    const double gb_per_s = bytes / seconds / 1e9;
    std::printf("| %s | %.3f ms | %.1f GB/s | %.1f%% |\n", what, seconds * 1e3, gb_per_s,
                100.0 * gb_per_s / copy_gb_per_s);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const kiln::device dev = kiln::default_device();
        const int log2_n = argc > 1 ? std::atoi(argv[1]) : (dev.is_gpu() ? 24 : 20);
        const std::size_t n = std::size_t{1} << log2_n;
        kiln::queue q(dev);

        std::vector<particle> host(n);
        for (std::size_t i = 0; i < n; ++i) {
            const float f = static_cast<float>(i % 1013);
            host[i] = {{f, 2 * f, -f, 1}, {1.0f, 0.5f * f, 0.25f, 0}, 1.0f + 0.01f * f};
        }
        std::vector<kiln::float4> host_positions(n), host_velocities(n);
        std::vector<float> host_masses(n);
        for (std::size_t i = 0; i < n; ++i) {
            host_positions[i] = host[i].position;
            host_velocities[i] = host[i].velocity;
            host_masses[i] = host[i].mass;
        }

        kiln::vector<particle> particles(q, host);
        auto position = kiln::field<&particle::position>(particles);
        auto velocity = kiln::field<&particle::velocity>(particles);
        auto mass = kiln::field<&particle::mass>(particles);
        const double aos = kiln::bench::best_seconds_per_call(q, 5, 20, [&] {
            auto new_velocity = velocity + dt * (gravity - drag * velocity / mass);
            kiln::tie(velocity, position) =
                std::make_tuple(new_velocity, position + dt * new_velocity);
        });

        kiln::vector<kiln::float4> positions(q, host_positions), velocities(q, host_velocities);
        kiln::vector<float> masses(q, host_masses);
        const double soa = kiln::bench::best_seconds_per_call(q, 5, 20, [&] {
            auto new_velocities = velocities + dt * (gravity - drag * velocities / masses);
            kiln::tie(velocities, positions) =
                std::make_tuple(new_velocities, positions + dt * new_velocities);
        });

        const double copy_gb_per_s = kiln::bench::measure_copy_bandwidth(dev, n * sizeof(particle));
        const double bytes = useful_bytes_per_particle * static_cast<double>(n);
        std::printf("particles_bench: %zu particles on %s (%s), copy bandwidth %.1f GB/s\n\n", n,
                    dev.name().c_str(), kiln::to_string(dev.backend()).data(), copy_gb_per_s);
        std::printf("| layout | time per step | useful GB/s | of copy |\n|---|---|---|---|\n");
        row("array of structs (vector<particle>)", aos, bytes, copy_gb_per_s);
        row("struct of arrays (vectors per field)", soa, bytes, copy_gb_per_s);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "particles_bench: %s\n", e.what());
        return 1;
    }
}
