// SPDX-License-Identifier: Apache-2.0
// Tests of the kiln engines on every device: each against the reference engine, on the
// coursework's test worlds, random worlds and odd shapes, plus their place in the registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.hpp"
#include "support/device_param.hpp"
#include "test_worlds.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace kiln::heat {
namespace {

const char* const kiln_engines[] = {"naive", "resident", "packed", "tiled", "temporal"};

// The bound: every engine within 1e-5 of the reference after 1000 steps. On PoCL the
// kernels are in fact bit-exact; GPUs may differ in the last bit of a division or an FMA.
constexpr float tolerance = 1e-5f;
constexpr unsigned steps = 1000;

float max_difference(const world& a, const world& b) {
    float worst = 0.0f;
    for (std::size_t i = 0; i < a.temperatures.size(); ++i) {
        worst = std::max(worst, std::fabs(a.temperatures[i] - b.temperatures[i]));
    }
    return worst;
}

// The reference result, computed once per world and step count for all engines and devices.
const world& reference_after(const world& start, unsigned step_count, const std::string& key) {
    static std::map<std::string, world> results;
    const std::string full_key = key + " after " + std::to_string(step_count);
    auto found = results.find(full_key);
    if (found == results.end()) {
        world stepped = start;
        make_reference_engine()->run(stepped, 0.1f, step_count, {});
        found = results.emplace(full_key, std::move(stepped)).first;
    }
    return found->second;
}

class kiln_engine : public kiln::test::device_test {
  protected:
    engine_options options() const { return {.device = std::to_string(device().index())}; }

    std::unique_ptr<engine> make(const std::string& name) const {
        return make_engine_registry().create(name, options());
    }

    void expect_matches_reference(const std::string& name, const world& start, unsigned step_count,
                                  const std::string& what) const {
        const world& expected = reference_after(start, step_count, what);
        world actual = start;
        make(name)->run(actual, 0.1f, step_count, {});
        EXPECT_LE(max_difference(actual, expected), tolerance) << name << " on " << what;
        EXPECT_EQ(actual.t, expected.t) << name << " on " << what;
        EXPECT_EQ(actual.flags, start.flags) << name << " on " << what;
    }
};

TEST_P(kiln_engine, matches_reference_after_1000_steps_on_test_worlds) {
    for (std::uint32_t n : {10u, 37u, 100u, 513u}) {
        const world start = make_test_world(n, 0.1f);
        for (const char* name : kiln_engines) {
            expect_matches_reference(name, start, steps, "test world n=" + std::to_string(n));
        }
    }
}

TEST_P(kiln_engine, matches_reference_after_1000_steps_on_random_worlds) {
    // Sizes around the work-group and tile shapes (32, 64, 256 wide), 1-wide worlds and
    // corridors, worlds with and without an insulating border.
    auto shapes = testing::edge_case_shapes();
    shapes.insert(shapes.end(),
                  {
                      {.width = 257, .height = 65, .insulator_share = 0.1, .fixed_share = 0.01},
                      {.width = 129, .height = 97, .corridors = true},
                      {.width = 95, .height = 130, .insulating_border = true},
                  });
    std::uint64_t seed = 1;
    for (const auto& shape : shapes) {
        const world start = testing::random_world(shape, seed);
        for (const char* name : kiln_engines) {
            expect_matches_reference(name, start, steps, testing::describe(shape, seed));
        }
        ++seed;
    }
}

TEST_P(kiln_engine, takes_any_number_of_steps_and_reports_progress) {
    // Step counts that end a temporal launch early, on a world that spans several tiles.
    const world start = testing::random_world({.width = 150, .height = 90}, 42);
    for (const char* name : kiln_engines) {
        const std::unique_ptr<engine> stepper = make(name);
        for (unsigned step_count : {0u, 1u, 2u, 3u, 5u, 7u, 9u, 17u}) {
            const std::string what =
                std::string(name) + ", " + std::to_string(step_count) + " steps";
            const world& expected = reference_after(start, step_count, "random 150x90");
            world actual = start;
            std::vector<unsigned> reported;
            stepper->run(actual, 0.1f, step_count,
                         [&](unsigned done) { reported.push_back(done); });
            EXPECT_LE(max_difference(actual, expected), tolerance) << what;
            EXPECT_EQ(actual.t, expected.t) << what;
            ASSERT_FALSE(reported.empty()) << what;
            EXPECT_EQ(reported.back(), step_count) << what;
            EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end())) << what;
        }
    }
}

TEST_P(kiln_engine, describes_itself_and_rejects_a_broken_world) {
    for (const char* name : kiln_engines) {
        const std::unique_ptr<engine> stepper = make(name);
        EXPECT_EQ(stepper->name(), name);
        EXPECT_NE(stepper->description().find(device().name()), std::string::npos)
            << stepper->description();
        world broken = make_test_world(5, 0.1f);
        broken.temperatures.pop_back();
        EXPECT_THROW(stepper->run(broken, 0.1f, 1, {}), std::invalid_argument) << name;
    }
}

TEST_P(kiln_engine, clamps_a_negative_zero_to_zero_as_the_reference_does) {
    // With alpha * dt > 4, inner = 1 - outer / 4 is negative: the middle-left cell, holding four
    // times the smallest subnormal with one conducting neighbour at 0, gets acc = -2^-149, and
    // acc / contrib rounds to -0. The reference clamps that to +0 ("0.00000000"); an engine that
    // kept -0 would print "-0.00000000" and no longer match the reference byte for byte.
    world start;
    start.width = 4;
    start.height = 3;
    start.alpha = 1.0f;
    start.flags = {2, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2, 2};
    start.temperatures.assign(12, 0.0f);
    start.temperatures[5] = 4 * std::numeric_limits<float>::denorm_min();
    world expected = start;
    make_reference_engine()->run(expected, 5.0f, 1, {});
    ASSERT_FALSE(std::signbit(expected.temperatures[5]));
    for (const char* name : kiln_engines) {
        world actual = start;
        make(name)->run(actual, 5.0f, 1, {});
        EXPECT_FALSE(std::signbit(actual.temperatures[5])) << name;
        EXPECT_EQ(world_to_string(actual, world_format::text),
                  world_to_string(expected, world_format::text))
            << name;
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(kiln_engine);

// step_world_mpi's use of a session: step, replace rows from outside, step again. The result
// is the reference's on the world with those rows replaced between the two halves (within the
// engines' tolerance: bit for bit on PoCL).
TEST_P(kiln_engine, sessions_step_in_parts_with_rows_replaced_between) {
    const world start = make_test_world(37, 0.1f);
    std::vector<float> replacement(std::size_t{3} * start.width);
    for (std::size_t i = 0; i < replacement.size(); ++i)
        replacement[i] = static_cast<float>(i % 7) / 8;
    for (const char* name :
         {"reference", "threads", "naive", "resident", "packed", "tiled", "temporal"}) {
        world expected = start;
        const std::unique_ptr<engine> reference = make_reference_engine();
        reference->run(expected, 0.1f, 20, {});
        std::vector<float> expected_rows(replacement.size());
        std::copy_n(expected.temperatures.begin() + 30 * start.width, expected_rows.size(),
                    expected_rows.begin());
        std::copy(replacement.begin(), replacement.end(),
                  expected.temperatures.begin() + 5 * start.width);
        reference->run(expected, 0.1f, 13, {});

        world actual = start;
        const std::unique_ptr<engine> stepper = make(name);
        const std::unique_ptr<stepping_session> session = stepper->start(actual, 0.1f);
        session->step(20);
        std::vector<float> rows(replacement.size());
        session->read_rows(30, rows);
        for (std::size_t i = 0; i < rows.size(); ++i)
            EXPECT_NEAR(rows[i], expected_rows[i], tolerance) << name << ", cell " << i;
        session->write_rows(5, replacement);
        session->step(13);
        session->finish();
        EXPECT_LE(max_difference(actual, expected), tolerance) << name;
        EXPECT_EQ(actual.t, start.t) << name << ": a session leaves the time to its caller";
    }
}

TEST(kiln_engine_registry, registers_every_kiln_engine_as_a_device_engine) {
    const engine_registry registry = make_engine_registry();
    for (const char* name : kiln_engines) {
        const engine_entry* entry = registry.find(name);
        ASSERT_NE(entry, nullptr) << name;
        EXPECT_TRUE(entry->uses_device) << name;
        EXPECT_FALSE(entry->summary.empty()) << name;
    }
}

TEST(kiln_engine_registry, leaves_the_default_to_the_host_when_no_device_matches) {
    const engine_registry registry = make_engine_registry();
    const engine_options nowhere{.device = "no-such-device-anywhere"};
    EXPECT_EQ(registry.default_engine(nowhere), "threads");
    try {
        registry.create("packed", nowhere);
        FAIL() << "created an engine on a device that does not exist";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(
            std::string(e.what()).find("no device matches 'no-such-device-anywhere' (devices: "),
            std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
}

TEST(kiln_engine_registry, makes_a_kiln_engine_the_default_on_a_gpu) {
    const std::vector<kiln::device> gpus = kiln::devices(kiln::filters::gpu());
    if (gpus.empty()) GTEST_SKIP() << "no GPU";
    const engine_registry registry = make_engine_registry();
    const std::string chosen =
        registry.default_engine({.device = std::to_string(gpus.front().index())});
    EXPECT_TRUE(registry.at(chosen).uses_device) << chosen;
}

}  // namespace
}  // namespace kiln::heat
