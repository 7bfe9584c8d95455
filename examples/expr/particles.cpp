// SPDX-License-Identifier: Apache-2.0
// The lecture's particle update in both layouts: an array of structs (kiln::vector<particle>)
// and a struct of arrays (one kiln::vector per field), checked against a loop on the CPU.
#include <cmath>
#include <cstdio>
#include <exception>
#include <kiln/kiln.hpp>
#include <tuple>
#include <vector>

// [doc:particle_struct]
KILN_STRUCT(particle, (kiln::float4, position), (kiln::float4, velocity), (float, mass));
// [/doc]

namespace {

constexpr float dt = 0.01f;
constexpr float drag = 0.1f;
constexpr kiln::float4 gravity{0.0f, -9.81f, 0.0f, 0.0f};

std::vector<particle> initial_particles(std::size_t n) {
    std::vector<particle> host(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float f = static_cast<float>(i % 1013);
        host[i] = {{f, 2 * f, -f, 1}, {1.0f, 0.5f * f, 0.25f, 0}, 1.0f + 0.01f * f};
    }
    return host;
}

/// One step on the CPU: the reference.
particle step(particle p) {
    p.velocity = p.velocity + dt * (gravity - drag * p.velocity / p.mass);
    p.position = p.position + dt * p.velocity;
    return p;
}

bool close(const kiln::float4& a, const kiln::float4& b) {
    // The device may contract a * b + c into one fused multiply-add: one rounding less.
    for (int k = 0; k < 4; ++k)
        if (std::fabs(a[k] - b[k]) > 1e-5f * std::fmax(1.0f, std::fabs(b[k]))) return false;
    return true;
}

}  // namespace

int main() {
    try {
        const std::size_t n = 100003;
        const std::vector<particle> host = initial_particles(n);
        kiln::queue q(kiln::default_device());

        // [doc:particles_aos]
        kiln::vector<particle> particles(q, host);
        auto position = kiln::field<&particle::position>(particles);
        auto velocity = kiln::field<&particle::velocity>(particles);
        auto mass = kiln::field<&particle::mass>(particles);
        auto new_velocity = velocity + dt * (gravity - drag * velocity / mass);
        kiln::tie(velocity, position) = std::make_tuple(new_velocity, position + dt * new_velocity);
        // [/doc]

        std::vector<kiln::float4> host_positions(n), host_velocities(n);
        std::vector<float> host_masses(n);
        for (std::size_t i = 0; i < n; ++i) {
            host_positions[i] = host[i].position;
            host_velocities[i] = host[i].velocity;
            host_masses[i] = host[i].mass;
        }
        // [doc:particles_soa]
        kiln::vector<kiln::float4> positions(q, host_positions), velocities(q, host_velocities);
        kiln::vector<float> masses(q, host_masses);
        auto new_velocities = velocities + dt * (gravity - drag * velocities / masses);
        kiln::tie(velocities, positions) =
            std::make_tuple(new_velocities, positions + dt * new_velocities);
        // [/doc]

        const auto aos = particles.read();
        const auto soa_positions = positions.read();
        const auto soa_velocities = velocities.read();
        for (std::size_t i = 0; i < n; ++i) {
            const particle expected = step(host[i]);
            if (!close(aos[i].position, expected.position) ||
                !close(aos[i].velocity, expected.velocity) || aos[i].mass != expected.mass ||
                !close(soa_positions[i], expected.position) ||
                !close(soa_velocities[i], expected.velocity)) {
                std::fprintf(stderr,
                             "particles: particle %zu: AoS position (%g, %g, %g), SoA (%g, %g, "
                             "%g), expected (%g, %g, %g)\n",
                             i, aos[i].position.x, aos[i].position.y, aos[i].position.z,
                             soa_positions[i].x, soa_positions[i].y, soa_positions[i].z,
                             expected.position.x, expected.position.y, expected.position.z);
                return 1;
            }
        }
        std::printf("particles: %zu particles on %s, AoS and SoA match the CPU\n", n,
                    q.device().name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "particles: %s\n", e.what());
        return 1;
    }
}
