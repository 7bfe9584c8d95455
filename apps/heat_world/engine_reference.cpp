// SPDX-License-Identifier: Apache-2.0
// The reference engine: the original program's step, cell by cell, in the original's arithmetic.
//
// This file is compiled without fast-math and with -ffp-contract=off (see CMakeLists.txt): the
// original was built without FMA, and a fused multiply-add would round acc differently, so the
// text output would no longer match the original's byte for byte.
#include <algorithm>
#include <utility>

#include "engine.hpp"

namespace kiln::heat {
namespace {

class reference_engine final : public engine {
  public:
    std::string_view name() const override { return "reference"; }

    void run(world& w, float dt, unsigned steps, const progress_callback& progress) override {
        check_world(w);
        const std::uint32_t width = w.width;
        const std::uint32_t height = w.height;
        const float outer = w.alpha * dt;   // heat exchanged with each conducting neighbour
        const float inner = 1 - outer / 4;  // heat a cell keeps
        std::vector<float> next(w.cell_count());

        for (unsigned step = 0; step < steps; ++step) {
            const std::vector<float>& now = w.temperatures;
            // Neighbours outside the world count as insulators; the original read past the
            // array there instead.
            auto conducts = [&](std::size_t index) {
                return (w.flags[index] & cell_insulator) == 0;
            };
            for (std::uint32_t y = 0; y < height; ++y) {
                for (std::uint32_t x = 0; x < width; ++x) {
                    const std::size_t index = w.index(x, y);
                    if (w.flags[index] & (cell_fixed | cell_insulator)) {
                        next[index] = now[index];
                        continue;
                    }
                    float contrib = inner;
                    float acc = inner * now[index];
                    // The order up, down, left, right is the original's; float addition is not
                    // associative, so every engine that wants exact agreement keeps it.
                    if (y > 0 && conducts(index - width)) {
                        contrib += outer;
                        acc += outer * now[index - width];
                    }
                    if (y + 1 < height && conducts(index + width)) {
                        contrib += outer;
                        acc += outer * now[index + width];
                    }
                    if (x > 0 && conducts(index - 1)) {
                        contrib += outer;
                        acc += outer * now[index - 1];
                    }
                    if (x + 1 < width && conducts(index + 1)) {
                        contrib += outer;
                        acc += outer * now[index + 1];
                    }
                    next[index] = std::min(1.0f, std::max(0.0f, acc / contrib));
                }
            }
            std::swap(w.temperatures, next);
            w.t += dt;
            if (progress) progress(step + 1);
        }
        if (progress && steps == 0) progress(0);
    }
};

}  // namespace

std::unique_ptr<engine> make_reference_engine() {
    return std::make_unique<reference_engine>();
}

}  // namespace kiln::heat
