// SPDX-License-Identifier: Apache-2.0
// One step of the heat world (apps/heat_world/kernels/heat_step.cl with heat_cell.cl) written in
// C++ (KILN_KERNEL): its pragma and build option travel with the body. Both kernels step the same
// world on the device, and their temperatures must agree byte for byte after every step, and
// with a CPU step doing the same float operations.
//
// usage: heat_step_cpp [steps]   (default 40)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <heat_world_kernels.hpp>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

// A cell's flag is 0 (it exchanges heat), 1 (fixed) or 2 (an insulator); its new temperature
// weighs its own by `inner` and each neighbour that passes heat by `outer`, up, down, left, right
// in that order, divided by the sum of the weights taken and clamped to [0, 1]. Cells outside the
// world count as insulators. As heat_cell.cl: no fused multiply-add, and a correctly rounded
// division, so that the reference engine's roundings are kept.
KILN_KERNEL(heat_step,
            (kiln::uint width, kiln::uint height, float inner, float outer,
             kiln::global_ptr<const kiln::uint> flags, kiln::global_ptr<const float> state_in,
             kiln::global_ptr<float> state_out),
            {
                KILN_PRAGMA(OPENCL FP_CONTRACT OFF);
                KILN_BUILD_OPTIONS("-cl-fp32-correctly-rounded-divide-sqrt");
                const size_t x = get_global_id(0), y = get_global_id(1);
                if (x >= width || y >= height) return;
                const size_t index = y * width + x;
                if (flags[index] != 0u) {
                    state_out[index] = state_in[index];
                    return;
                }
                float contrib = inner;
                float acc = inner * state_in[index];
                if (y > 0 && flags[index - width] != 2u) {
                    contrib += outer;
                    acc += outer * state_in[index - width];
                }
                if (y + 1 < height && flags[index + width] != 2u) {
                    contrib += outer;
                    acc += outer * state_in[index + width];
                }
                if (x > 0 && flags[index - 1] != 2u) {
                    contrib += outer;
                    acc += outer * state_in[index - 1];
                }
                if (x + 1 < width && flags[index + 1] != 2u) {
                    contrib += outer;
                    acc += outer * state_in[index + 1];
                }
                // The reference's std::max(0.0f, q) then std::min(1.0f, ...): NaN and -0 give +0.
                const float quotient = acc / contrib;
                const float at_least_0 = 0.0f < quotient ? quotient : 0.0f;
                state_out[index] = at_least_0 < 1.0f ? at_least_0 : 1.0f;
            });

constexpr unsigned width = 203, height = 117;  // neither a multiple of the 16x16 groups
constexpr std::size_t group = 16;

/// Fixed hot and cold cells, an insulating wall with a gap, and random temperatures elsewhere.
void make_world(std::vector<kiln::uint>& flags, std::vector<float>& state) {
    flags.assign(std::size_t(width) * height, 0);
    state.resize(flags.size());
    unsigned seed = 12345;
    for (std::size_t i = 0; i < state.size(); ++i) {
        seed = seed * 1103515245u + 12345u;
        state[i] = static_cast<float>((seed >> 8) % 1000) / 999.0f;
    }
    for (unsigned y = 10; y < height - 10; ++y)
        if (y < 50 || y > 60) flags[y * width + 100] = 2;
    for (unsigned x = 20; x < 40; ++x) {
        flags[30 * width + x] = 1;
        state[30 * width + x] = 1.0f;
        flags[90 * width + x + 120] = 1;
        state[90 * width + x + 120] = 0.0f;
    }
}

/// The same step on the CPU, operation for operation.
void cpu_step(const std::vector<kiln::uint>& flags, const std::vector<float>& in,
              std::vector<float>& out, float inner, float outer) {
    for (std::size_t y = 0; y < height; ++y) {
        for (std::size_t x = 0; x < width; ++x) {
            const std::size_t index = y * width + x;
            if (flags[index] != 0u) {
                out[index] = in[index];
                continue;
            }
            float contrib = inner;
            float acc = inner * in[index];
            const auto take = [&](bool inside, std::size_t neighbour) {
                if (!inside || flags[neighbour] == 2u) return;
                contrib += outer;
                acc += outer * in[neighbour];
            };
            take(y > 0, index - width);
            take(y + 1 < height, index + width);
            take(x > 0, index - 1);
            take(x + 1 < width, index + 1);
            const float quotient = acc / contrib;
            const float at_least_0 = 0.0f < quotient ? quotient : 0.0f;
            out[index] = at_least_0 < 1.0f ? at_least_0 : 1.0f;
        }
    }
}

/// The first index where a and b differ in their bytes, or -1.
long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return long(i);
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int steps = argc > 1 ? std::atoi(argv[1]) : 40;
        auto dev = kiln::default_device();
        kiln::queue q(dev);
        if (heat_step.on(dev).max_work_group_size() < group * group) {
            std::printf("heat_step_cpp: %s cannot run %zux%zu work-groups; skipped\n",
                        dev.name().c_str(), group, group);
            return 77;
        }
        // The heat world's kernel, built as its engine builds it for one cell per work-item.
        const auto string_step =
            kiln::program(dev,
                          {std::string(kiln::examples::heat_cell_cl),
                           std::string(kiln::examples::heat_step_cl)},
                          "-cl-fp32-correctly-rounded-divide-sqrt -DHEAT_GROUP_W=16 "
                          "-DHEAT_GROUP_H=16 -DHEAT_CELLS_X=1 -DHEAT_CELLS_Y=1")
                .kernel("heat_step");

        std::vector<kiln::uint> host_flags;
        std::vector<float> host_state;
        make_world(host_flags, host_state);
        const float outer = 0.2f, inner = 1.0f - outer / 4.0f;
        kiln::buffer<kiln::uint, kiln::in> flags(q, host_flags);
        kiln::buffer<float> cpp_state[2] = {{q, host_state}, {q, host_state.size()}};
        kiln::buffer<float> string_state[2] = {{q, host_state}, {q, host_state.size()}};
        std::vector<float> cpu_state = host_state, cpu_next(host_state.size());

        const kiln::range global = {(width + group - 1) / group * group,
                                    (height + group - 1) / group * group};
        for (int s = 0; s < steps; ++s) {
            const auto& in = cpp_state[s % 2];
            auto& out = cpp_state[(s + 1) % 2];
            heat_step.bind(width, height, inner, outer, flags, in, out)
                .launch(q, global, {group, group});
            string_step(width, height, inner, outer, flags, string_state[s % 2],
                        string_state[(s + 1) % 2])
                .launch(q, global, {group, group});
            cpu_step(host_flags, cpu_state, cpu_next, inner, outer);
            std::swap(cpu_state, cpu_next);

            const auto from_cpp = out.read(q), from_string = string_state[(s + 1) % 2].read(q);
            const long against_string = first_difference(from_cpp, from_string);
            const long against_cpu = first_difference(from_cpp, cpu_state);
            if (against_string >= 0 || against_cpu >= 0) {
                const long at = against_string >= 0 ? against_string : against_cpu;
                std::fprintf(stderr,
                             "heat_step_cpp: step %d, cell %ld: C++ kernel %.9g, string kernel "
                             "%.9g, CPU %.9g\n",
                             s + 1, at, from_cpp[at], from_string[at], cpu_state[at]);
                return 1;
            }
        }
        std::printf(
            "heat_step_cpp: %ux%u world, %d steps on %s: the C++ kernel's temperatures equal the "
            "string kernel's and the CPU's byte for byte: OK\n",
            width, height, steps, dev.name().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "heat_step_cpp: %s\n", e.what());
        return 1;
    }
}
