// Test fixture for vector expressions: each test body runs once per available device.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <random>
#include <string>
#include <vector>

namespace kiln::testing {

class device_test : public ::testing::TestWithParam<kiln::device> {
  protected:
    const kiln::device& device() const { return GetParam(); }
    bool has_double() const { return device().properties().double_precision; }

    kiln::queue q{GetParam()};
};

/// "d0_pthread_skylake_avx512_AMD_EPYC": a GoogleTest-safe name per device.
inline std::string device_test_name(const ::testing::TestParamInfo<kiln::device>& info) {
    std::string name = std::string("d") + std::to_string(info.index) + "_";
    for (char c : info.param.name()) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return name;
}

/// Random host data, with the seed in the failure output so that a failure can be replayed.
template <class T>
std::vector<T> random_values(std::size_t n, double low, double high, unsigned seed = 20240521) {
    SCOPED_TRACE("random_values seed " + std::to_string(seed));
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(low, high);
    std::vector<T> values(n);
    for (auto& v : values) v = static_cast<T>(uniform(engine));
    return values;
}

/// Sizes that exercise the edges: empty, one element, not a multiple of any work-group size,
/// and a few work-groups' worth.
inline const std::vector<std::size_t>& edge_sizes() {
    static const std::vector<std::size_t> sizes = {0, 1, 7, 1000, 65537};
    return sizes;
}

}  // namespace kiln::testing

#define KILN_INSTANTIATE_DEVICE_TEST(suite)                                        \
    GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(suite);                          \
    INSTANTIATE_TEST_SUITE_P(devices, suite, ::testing::ValuesIn(kiln::devices()), \
                             ::kiln::testing::device_test_name)
