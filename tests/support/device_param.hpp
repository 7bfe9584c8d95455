// SPDX-License-Identifier: Apache-2.0
// One test body for every device: the GoogleTest fixtures of every suite (runtime, expressions,
// heat world), parametrised over kiln::devices(), and the one way to instantiate them.
//
// Usage:
//   class buffers : public kiln::test::device_test {};
//   TEST_P(buffers, round_trip) { kiln::queue q(device()); ... }
//   KILN_INSTANTIATE_FOR_EVERY_DEVICE(buffers);
//
// The same suite then runs on PoCL in CI and on every OpenCL and CUDA device of a GPU machine;
// test names carry the device, e.g. `devices/buffers.round_trip/0_opencl_pthread_skylake`.
// There is deliberately no GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST anywhere: with no
// device, every suite must fail (tests.device_suites_fail_without_devices checks that).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace kiln {

// GoogleTest prints parameters of failing tests; without this it would dump the object's bytes.
inline void PrintTo(const device& dev, std::ostream* out) {
    *out << dev.index() << ": " << dev.name() << " (" << to_string(dev.backend()) << ")";
}

}  // namespace kiln

namespace kiln::test {

class device_test : public ::testing::TestWithParam<kiln::device> {
  protected:
    const kiln::device& device() const { return GetParam(); }
    bool has_double() const { return device().properties().double_precision; }
};

/// A device_test with a queue on the device, for tests that only launch in order on one queue.
class device_queue_test : public device_test {
  protected:
    kiln::queue q{device()};
};

/// Queues on the first two devices, for suites that split vectors or matrices over them (CTest
/// runs those with POCL_DEVICES="pthread pthread"), or on the first two that the device spec in
/// KILN_TEST_SPLIT_DEVICES matches (`cuda,gpu`: two CUDA GPUs of a machine that has them). With
/// one device such a suite skips; with none the machine is broken and it fails, as every suite
/// must.
class two_devices_test : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_FALSE(kiln::devices().empty()) << "no OpenCL or CUDA device";
        const char* spec = std::getenv("KILN_TEST_SPLIT_DEVICES");
        const std::vector<kiln::device> chosen = spec != nullptr && *spec != '\0'
                                                     ? kiln::devices(kiln::filters::from_spec(spec))
                                                     : kiln::devices();
        if (chosen.size() < 2)
            GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\", or two that "
                            "KILN_TEST_SPLIT_DEVICES matches)";
        for (std::size_t i = 0; i < 2; ++i) queues.emplace_back(chosen[i]);
    }
    std::vector<kiln::queue> queues;
};

/// Queues for the two parts of split vectors: on the first two devices, or two queues on the one
/// device there is, where the parts still run one after another as on two devices. With no
/// device it fails, as every suite must.
class two_parts_test : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_FALSE(kiln::devices().empty()) << "no OpenCL or CUDA device";
        const auto& devices = kiln::devices();
        queues = {kiln::queue(devices[0]), kiln::queue(devices[devices.size() > 1 ? 1 : 0])};
    }
    std::vector<kiln::queue> queues;
};

/// "<index>_<backend>_<name>" with every character GoogleTest rejects turned into '_'.
inline std::string device_test_name(const ::testing::TestParamInfo<kiln::device>& info) {
    std::string name = std::to_string(info.param.index()) + "_" +
                       std::string(to_string(info.param.backend())) + "_" + info.param.name();
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

/// NVIDIA's OpenCL platform, whose driver some tests meet with a documented difference.
inline bool on_nvidia_opencl(const kiln::device& dev) {
    return dev.backend() == kiln::backend_kind::opencl &&
           dev.properties().platform.find("NVIDIA") != std::string::npos;
}

/// Seen on an H100, driver 580.159.04 (2026-11-22): NVIDIA's OpenCL printf loses the text before
/// a vector conversion ("first %v2hlf" printed "1.500000,2.500000"), and capturing such output
/// aborted GoogleTest's capturer in another test.
inline constexpr const char* nvidia_opencl_vector_printf =
    "NVIDIA's OpenCL printf mishandles vector conversions (docs/runtime.md, kernel language)";

}  // namespace kiln::test

/// Instantiates a kiln::test::device_test suite once per device. With no device at all the
/// suite has no instances and GoogleTest reports it as uninstantiated, which fails the run:
/// a machine without devices must not pass silently.
#define KILN_INSTANTIATE_FOR_EVERY_DEVICE(suite)                                     \
    INSTANTIATE_TEST_SUITE_P(devices, suite, ::testing::ValuesIn(::kiln::devices()), \
                             ::kiln::test::device_test_name)
