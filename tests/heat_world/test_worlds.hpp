// SPDX-License-Identifier: Apache-2.0
// Worlds for the heat-world tests: random ones with a printed seed, and hand-made corner cases.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "world.hpp"

namespace kiln::heat::testing {

struct random_world_shape {
    std::uint32_t width;
    std::uint32_t height;
    double insulator_share = 0.2;
    double fixed_share = 0.05;
    bool insulating_border = false;
    // Walls every other row, each with one random gap, leaving 1-wide corridors between them.
    bool corridors = false;
};

// The small and degenerate shapes every engine must get right: non-square, 1-wide in either
// direction, a single cell, no insulators or fixed cells, corridors. Tests add their own larger
// shapes after these.
inline std::vector<random_world_shape> edge_case_shapes() {
    return {
        {.width = 64, .height = 33},
        {.width = 33, .height = 64, .insulator_share = 0.4, .fixed_share = 0.1},
        {.width = 1, .height = 300},
        {.width = 300, .height = 1},
        {.width = 1, .height = 1},
        {.width = 7, .height = 3, .insulator_share = 0.0, .fixed_share = 0.0},
        {.width = 41, .height = 29, .corridors = true},
    };
}

inline world random_world(const random_world_shape& shape, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    world w;
    w.width = shape.width;
    w.height = shape.height;
    w.alpha = 0.1f;
    w.flags.assign(w.cell_count(), cell_normal);
    w.temperatures.assign(w.cell_count(), 0.0f);
    for (std::size_t i = 0; i < w.cell_count(); ++i) {
        const float pick = unit(random);
        if (pick < shape.insulator_share) {
            w.flags[i] = cell_insulator;
        } else if (pick < shape.insulator_share + shape.fixed_share) {
            w.flags[i] = cell_fixed;
        }
        w.temperatures[i] = unit(random);
    }
    if (shape.corridors) {
        for (std::uint32_t y = 1; y < w.height; y += 2) {
            const std::uint32_t gap = static_cast<std::uint32_t>(random() % w.width);
            for (std::uint32_t x = 0; x < w.width; ++x) {
                w.flags[w.index(x, y)] = x == gap ? cell_normal : cell_insulator;
            }
        }
    }
    if (shape.insulating_border) {
        for (std::uint32_t x = 0; x < w.width; ++x) {
            w.flags[w.index(x, 0)] = cell_insulator;
            w.flags[w.index(x, w.height - 1)] = cell_insulator;
        }
        for (std::uint32_t y = 0; y < w.height; ++y) {
            w.flags[w.index(0, y)] = cell_insulator;
            w.flags[w.index(w.width - 1, y)] = cell_insulator;
        }
    }
    return w;
}

inline std::string describe(const random_world_shape& shape, std::uint64_t seed) {
    return std::to_string(shape.width) + "x" + std::to_string(shape.height) +
           (shape.corridors ? " corridors" : "") + (shape.insulating_border ? " bordered" : "") +
           " seed " + std::to_string(seed);
}

}  // namespace kiln::heat::testing
