// SPDX-License-Identifier: Apache-2.0
// Tests of the host engines and the engine registry.
#include "engine.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "test_worlds.hpp"
#include "world.hpp"

namespace kiln::heat {
namespace {

world row_world(std::vector<std::uint32_t> flags, std::vector<float> temperatures,
                float alpha = 0.1f) {
    world w;
    w.width = static_cast<std::uint32_t>(flags.size());
    w.height = 1;
    w.alpha = alpha;
    w.flags = std::move(flags);
    w.temperatures = std::move(temperatures);
    return w;
}

// The update rule again, in double precision and with explicit coordinates, as an oracle that
// shares no code with the engines.
void step_in_double(const world& w, std::vector<double>& state, double dt) {
    const double outer = static_cast<double>(w.alpha) * dt;
    const double inner = 1 - outer / 4;
    std::vector<double> next(state.size());
    const int width = static_cast<int>(w.width), height = static_cast<int>(w.height);
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const std::size_t here = static_cast<std::size_t>(y) * width + x;
            if (w.flags[here] != cell_normal) {
                next[here] = state[here];
                continue;
            }
            double contrib = inner, acc = inner * state[here];
            const int offsets[4][2] = {{0, -1}, {0, 1}, {-1, 0}, {1, 0}};
            for (const auto& offset : offsets) {
                const int nx = x + offset[0], ny = y + offset[1];
                if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
                const std::size_t there = static_cast<std::size_t>(ny) * width + nx;
                if (w.flags[there] == cell_insulator) continue;
                contrib += outer;
                acc += outer * state[there];
            }
            next[here] = std::min(1.0, std::max(0.0, acc / contrib));
        }
    }
    state = std::move(next);
}

class host_engine : public ::testing::TestWithParam<const char*> {
  protected:
    std::unique_ptr<engine> make() const {
        return make_engine_registry().create(GetParam(), engine_options{});
    }
};

TEST_P(host_engine, matches_a_hand_computation_between_a_source_and_a_sink) {
    // source (fixed 1) | normal 0 | sink (fixed 0); alpha = dt = 0.1, so outer = 0.01 and
    // inner = 0.9975, and the middle cell has two conducting neighbours and none up or down.
    // By hand: x1 = 0.01 / 1.0175, x(k+1) = (0.9975 x(k) + 0.01) / 1.0175.
    const double expected[] = {0.009828009828009828, 0.019462840101660737, 0.02890828796207035};
    world w = row_world({cell_fixed, cell_normal, cell_fixed}, {1.0f, 0.0f, 0.0f});
    const std::unique_ptr<engine> stepper = make();
    for (double value : expected) {
        stepper->run(w, 0.1f, 1, {});
        EXPECT_NEAR(w.temperatures[1], value, 1e-7);
        EXPECT_EQ(w.temperatures[0], 1.0f);
        EXPECT_EQ(w.temperatures[2], 0.0f);
    }
}

TEST_P(host_engine, matches_a_double_precision_oracle_on_small_worlds) {
    std::vector<world> worlds = {make_test_world(5, 0.1f), make_test_world(8, 0.3f)};
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        worlds.push_back(testing::random_world({.width = 6, .height = 5}, seed));
        worlds.push_back(
            testing::random_world({.width = 1, .height = 7, .insulator_share = 0.1}, seed));
    }
    for (world w : worlds) {
        std::vector<double> state(w.temperatures.begin(), w.temperatures.end());
        const std::unique_ptr<engine> stepper = make();
        for (int step = 0; step < 5; ++step) {
            stepper->run(w, 0.1f, 1, {});
            step_in_double(w, state, 0.1f);
            for (std::size_t i = 0; i < state.size(); ++i) {
                ASSERT_NEAR(w.temperatures[i], state[i], 1e-6) << "cell " << i << " step " << step;
            }
        }
    }
}

TEST_P(host_engine, treats_cells_outside_the_world_as_insulators) {
    // A lone cell keeps its temperature; two cells exchange heat only with each other.
    world lone = row_world({cell_normal}, {0.75f});
    make()->run(lone, 0.1f, 10, {});
    EXPECT_EQ(lone.temperatures[0], 0.75f);

    world pair = row_world({cell_normal, cell_normal}, {1.0f, 0.0f}, 1.0f);
    make()->run(pair, 1.0f, 1, {});
    // outer = 1, inner = 0.75: (0.75 * 1 + 1 * 0) / 1.75 and (0.75 * 0 + 1 * 1) / 1.75.
    EXPECT_NEAR(pair.temperatures[0], 0.75 / 1.75, 1e-7);
    EXPECT_NEAR(pair.temperatures[1], 1.0 / 1.75, 1e-7);
}

TEST_P(host_engine, keeps_fixed_and_insulating_cells_and_clamps_to_0_and_1) {
    world held = row_world({cell_insulator, cell_fixed, cell_normal}, {0.3f, 0.6f, 0.0f});
    make()->run(held, 0.1f, 100, {});
    EXPECT_EQ(held.temperatures[0], 0.3f);
    EXPECT_EQ(held.temperatures[1], 0.6f);

    // alpha * dt = 10 makes inner negative, so the plain quotient leaves [0, 1].
    world cold = row_world({cell_normal, cell_fixed}, {1.0f, 0.0f}, 10.0f);  // -1.5 / 8.5
    make()->run(cold, 1.0f, 1, {});
    EXPECT_EQ(cold.temperatures[0], 0.0f);
    world hot = row_world({cell_normal, cell_fixed}, {0.0f, 1.0f}, 10.0f);  // 10 / 8.5
    make()->run(hot, 1.0f, 1, {});
    EXPECT_EQ(hot.temperatures[0], 1.0f);
}

TEST_P(host_engine, advances_time_and_reports_progress) {
    world w = make_test_world(200, 0.1f);  // large enough for the threads engine to use threads
    std::vector<unsigned> reported;
    make()->run(w, 0.1f, 25, [&](unsigned done) { reported.push_back(done); });
    float expected_t = 0.0f;
    for (int i = 0; i < 25; ++i) expected_t += 0.1f;
    EXPECT_EQ(w.t, expected_t);
    ASSERT_FALSE(reported.empty());
    EXPECT_EQ(reported.back(), 25u);
    EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));

    reported.clear();
    const world before = w;
    make()->run(w, 0.1f, 0, [&](unsigned done) { reported.push_back(done); });
    EXPECT_EQ(w, before);
    EXPECT_EQ(reported, std::vector<unsigned>{0});
}

TEST_P(host_engine, rejects_a_broken_world) {
    world w = make_test_world(5, 0.1f);
    w.temperatures.pop_back();
    EXPECT_THROW(make()->run(w, 0.1f, 1, {}), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(engines, host_engine, ::testing::Values("reference", "threads"));

float max_difference(const world& a, const world& b) {
    float worst = 0.0f;
    for (std::size_t i = 0; i < a.temperatures.size(); ++i) {
        worst = std::max(worst, std::fabs(a.temperatures[i] - b.temperatures[i]));
    }
    return worst;
}

void expect_threads_match_reference(const world& start, unsigned threads, const std::string& what) {
    world expected = start;
    make_reference_engine()->run(expected, 0.1f, 1000, {});
    world actual = start;
    make_threads_engine(threads)->run(actual, 0.1f, 1000, {});
    EXPECT_LE(max_difference(actual, expected), 1e-5f) << what;
    EXPECT_EQ(actual.t, expected.t) << what;
    EXPECT_EQ(actual.flags, start.flags) << what;
}

TEST(threads_engine, matches_reference_after_1000_steps_on_test_worlds) {
    for (std::uint32_t n : {10u, 37u, 100u, 513u}) {
        expect_threads_match_reference(make_test_world(n, 0.1f), 0, "n=" + std::to_string(n));
    }
}

TEST(threads_engine, matches_reference_after_1000_steps_on_random_worlds) {
    auto shapes = testing::edge_case_shapes();
    shapes.insert(
        shapes.end(),
        {
            {.width = 250, .height = 150, .insulator_share = 0.1, .fixed_share = 0.01},  // threaded
            {.width = 300, .height = 201, .corridors = true},                            // threaded
            {.width = 129, .height = 257, .insulating_border = true},                    // threaded
        });
    std::uint64_t seed = 1;
    for (const auto& shape : shapes) {
        for (int repeat = 0; repeat < 2; ++repeat, ++seed) {
            expect_threads_match_reference(testing::random_world(shape, seed), 0,
                                           testing::describe(shape, seed));
        }
    }
}

TEST(threads_engine, splits_any_number_of_rows_over_any_number_of_threads) {
    const world start = testing::random_world({.width = 9000, .height = 5}, 77);
    for (unsigned threads : {1u, 2u, 3u, 5u, 8u}) {
        expect_threads_match_reference(start, threads, std::to_string(threads) + " threads");
    }
}

TEST(engine_registry, has_the_host_engines_with_threads_as_default) {
    const engine_registry registry = make_engine_registry();
    ASSERT_NE(registry.find("reference"), nullptr);
    ASSERT_NE(registry.find("threads"), nullptr);
    EXPECT_FALSE(registry.at("threads").uses_device);
    // Where no device matches, no kiln engine can run and the host engines decide.
    EXPECT_EQ(registry.default_engine({.device = "no-such-device"}), "threads");
    EXPECT_EQ(registry.create("reference", {})->name(), "reference");
}

TEST(engine_registry, names_the_known_engines_when_asked_for_another) {
    const engine_registry registry = make_engine_registry();
    try {
        registry.create("warp-drive", {});
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown engine 'warp-drive' (known: reference, threads, naive, resident, "
                  "packed, tiled, temporal)");
    }
}

TEST(engine_registry, lets_a_device_engine_become_the_default_where_it_can_run) {
    engine_registry registry = make_engine_registry();
    // A stand-in for a device engine: the default wherever its device exists.
    registry.add({.name = "gpu",
                  .summary = "stand-in",
                  .uses_device = true,
                  .create = [](const engine_options&) { return make_reference_engine(); },
                  .default_rank = [](const engine_options& options) -> std::optional<int> {
                      if (options.device == "no-such-device") return std::nullopt;
                      return 100;
                  }});
    EXPECT_EQ(registry.default_engine({.device = ""}), "gpu");
    EXPECT_EQ(registry.default_engine({.device = "no-such-device"}), "threads");
    EXPECT_THROW(
        registry.add({.name = "gpu",
                      .create = [](const engine_options&) { return make_reference_engine(); }}),
        std::invalid_argument);
    EXPECT_THROW(registry.add({.name = "no-factory"}), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::heat
