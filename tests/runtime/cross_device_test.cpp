// SPDX-License-Identifier: Apache-2.0
// Kernels, buffers and queues of different devices and backends: every mix that a launch or a
// transfer cannot take is an invalid_argument_error before anything is enqueued, down to the
// backends' own casts; buffers copy between devices on a queue of either. CTest runs it with
// POCL_DEVICES="pthread pthread pthread", so a CPU-only machine has three devices; a GPU machine
// adds its OpenCL and CUDA devices, one GPU being one of each.
#include <gtest/gtest.h>

#include <algorithm>
#include <kiln/kiln.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::kernel_argument;

class cross_device : public kiln::test::device_test {};

const char* source = "kernel void add_one(global int* data) { data[get_global_id(0)] += 1; }\n";

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

kiln::backend_kind other_backend(kiln::backend_kind kind) {
    return kind == kiln::backend_kind::opencl ? kiln::backend_kind::cuda
                                              : kiln::backend_kind::opencl;
}

TEST_P(cross_device, a_kernel_launches_only_on_a_queue_of_its_device) {
    kiln::program prog(device(), source);
    auto add_one = prog.kernel("add_one");
    EXPECT_EQ(add_one.device(), device());
    kiln::queue own(device());
    kiln::buffer<int> data(own, std::vector<int>(4, 0));
    std::size_t others = 0;
    for (const auto& other : kiln::devices()) {
        if (other == device()) continue;
        ++others;
        SCOPED_TRACE("kernel on " + device().name() + ", queue on " + other.name() + " (" +
                     std::string(kiln::to_string(other.backend())) + ")");
        kiln::queue theirs(other);
        // The buffer is on the queue's device, so only the kernel's device is wrong.
        kiln::buffer<int> their_data(theirs, std::vector<int>(4, 0));
        for (const auto* buffer : {&data, &their_data}) {
            try {
                (void)add_one(*buffer).launch(theirs, {4});
                ADD_FAILURE() << "launched a kernel on a queue of another device";
            } catch (const kiln::invalid_argument_error& e) {
                EXPECT_TRUE(contains(e.what(), "the kernel was built for device " +
                                                   std::to_string(device().index()) + " (" +
                                                   device().name()))
                    << e.what();
            }
        }
        EXPECT_EQ(their_data.read(theirs), std::vector<int>(4, 0));
    }
    EXPECT_EQ(data.read(own), std::vector<int>(4, 0));
    if (others == 0) GTEST_SKIP() << "needs a second device (POCL_DEVICES=\"pthread pthread\")";
}

KILN_KERNEL(add_one_in_cpp, (kiln::global_ptr<int> data), { data[get_global_id(0)] += 1; });

// A KILN_KERNEL given a vector of another device: the message tells the two devices apart by
// their kiln-info indices, since PoCL's devices here all have one name.
TEST_P(cross_device, a_launch_names_the_devices_of_a_misplaced_argument_by_index) {
    kiln::queue own(device());
    kiln::vector<int> data(own, std::vector<int>(4, 0));
    std::size_t others = 0;
    for (const auto& other : kiln::devices()) {
        if (other == device()) continue;
        ++others;
        kiln::queue theirs(other);
        try {
            (void)add_one_in_cpp(theirs, kiln::range{4}, data);
            ADD_FAILURE() << "launched with a vector of another device";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_TRUE(contains(e.what(), "argument 0 is a buffer on device " +
                                               std::to_string(device().index()) + " ("))
                << e.what();
            EXPECT_TRUE(contains(
                e.what(), "not on the queue's device " + std::to_string(other.index()) + " ("))
                << e.what();
        }
    }
    EXPECT_EQ(data.read(), std::vector<int>(4, 0));
    if (others == 0) GTEST_SKIP() << "needs a second device (POCL_DEVICES=\"pthread pthread\")";
}

// copy_to between devices, on a queue of either one: the whole buffer, and a sub-range of over
// two of kiln's 4 MiB staging chunks (the last one partial) between offsets, each way.
TEST_P(cross_device, buffers_copy_to_another_devices_buffers) {
    kiln::queue own(device());
    const std::size_t n = 2'500'000;
    std::vector<int> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<int>(i * 7 + 3);
    kiln::buffer<int> here(own, values);
    std::size_t others = 0;
    for (const auto& other : kiln::devices()) {
        if (other == device()) continue;
        ++others;
        SCOPED_TRACE("from " + device().name() + " to " + other.name() + " (" +
                     std::string(kiln::to_string(other.backend())) + ")");
        const kiln::copy_route route = kiln::copy_route_between(device(), other);
        if (device().backend() == kiln::backend_kind::opencl ||
            other.backend() != device().backend()) {
            EXPECT_EQ(route, kiln::copy_route::staged);
        }
        EXPECT_NE(route, kiln::copy_route::within_device);
        kiln::queue theirs(other);
        kiln::buffer<int> there(theirs, n);
        there.fill(theirs, -1).wait();
        here.copy_to(own, there).wait();  // the source's queue
        EXPECT_EQ(there.read(theirs), values);

        kiln::buffer<int> back(own, n);
        back.fill(own, -1).wait();
        const std::size_t from = 11, to = 5, count = n - 20;
        there.copy_to(own, from, back, to, count).wait();  // the destination's queue
        const std::vector<int> arrived = back.read(own);
        EXPECT_EQ(arrived[to - 1], -1);
        EXPECT_TRUE(
            std::equal(values.begin() + from, values.begin() + from + count, arrived.begin() + to));
        EXPECT_EQ(arrived[to + count], -1);
    }
    if (others == 0) GTEST_SKIP() << "needs a second device (POCL_DEVICES=\"pthread pthread\")";
}

// A copy between two devices must run on a queue of one of them; no bytes move otherwise.
TEST_P(cross_device, a_copy_between_devices_on_a_third_devices_queue_is_an_error) {
    const auto all = kiln::devices();
    std::vector<kiln::device> others;
    for (const auto& other : all)
        if (!(other == device())) others.push_back(other);
    if (others.size() < 2)
        GTEST_SKIP() << "needs three devices (POCL_DEVICES=\"pthread pthread pthread\")";
    kiln::queue first(others[0]), second(others[1]), own(device());
    kiln::buffer<int> from(first, std::vector<int>(8, 1)), to(second, std::vector<int>(8, 2));
    try {
        (void)from.copy_to(own, to);
        ADD_FAILURE() << "copied on a queue of neither device";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_TRUE(
            contains(e.what(), "but the queue is on device " + std::to_string(device().index())))
            << e.what();
    }
    EXPECT_EQ(to.read(second), std::vector<int>(8, 2));
}

// Stand-ins for objects of the other backend: all a backend's cast looks at.
class foreign_kernel final : public kiln::detail::kernel_impl {
  public:
    explicit foreign_kernel(kiln::backend_kind kind) : kind_(kind) {}
    kiln::backend_kind backend() const noexcept override { return kind_; }
    const std::string& name() const noexcept override { return name_; }
    std::size_t parameter_count() const override { return 0; }
    const std::vector<kiln::detail::parameter_info>& parameters() const override {
        return parameters_;
    }
    std::size_t max_work_group_size() const override { return 1; }
    std::size_t local_memory_bytes() const override { return 0; }
    std::size_t local_memory_limit() const override { return 0; }

  private:
    kiln::backend_kind kind_;
    std::string name_ = "foreign";
    std::vector<kiln::detail::parameter_info> parameters_;
};

class foreign_memory final : public kiln::detail::memory_impl {
  public:
    explicit foreign_memory(kiln::backend_kind kind) : kind_(kind) {}
    kiln::backend_kind backend() const noexcept override { return kind_; }
    std::size_t size_bytes() const noexcept override { return 16; }
    kiln::detail::tile_map encode_tile_map(const kiln::detail::tile_map_request&) const override {
        throw kiln::error("foreign tile map", 0, "KILN_FEATURE_UNSUPPORTED", "a foreign buffer");
    }
    kiln::detail::native_handle native() const noexcept override { return 0; }

  private:
    kiln::backend_kind kind_;
};

void expect_names_both_backends(const auto& call, kiln::backend_kind ours,
                                kiln::backend_kind theirs) {
    try {
        call();
        ADD_FAILURE() << "an object of the " << kiln::to_string(theirs) << " backend was used";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_TRUE(contains(e.what(), "of the " + std::string(kiln::to_string(theirs)) +
                                           " backend reached the " +
                                           std::string(kiln::to_string(ours)) + " backend"))
            << e.what();
    }
}

TEST_P(cross_device, backend_casts_reject_objects_of_another_backend) {
    const auto ours = device().backend();
    const auto theirs = other_backend(ours);
    auto queue = device().impl().create_queue({});
    const std::vector<std::string> sources{source};
    auto program = device().impl().build(sources, "");
    auto kernel = program->create_kernel("add_one");
    const kiln::detail::launch_geometry geometry;

    foreign_kernel stranger(theirs);
    expect_names_both_backends([&] { queue->launch(stranger, geometry, {}, {}); }, ours, theirs);
    kernel_argument argument;
    argument.what = kernel_argument::kind::buffer;
    argument.memory = std::make_shared<foreign_memory>(theirs);
    expect_names_both_backends(
        [&] {
            queue->launch(*kernel, geometry, {&argument, 1}, {});
        },
        ours, theirs);
    int host[4] = {};
    expect_names_both_backends(
        [&] { queue->write(*argument.memory, 0, host, sizeof host, {}, true); }, ours, theirs);

    // Real objects of the other backend, where this machine has it (one GPU through OpenCL
    // and CUDA): the H200 died in a static_cast here before the casts were checked.
    for (const auto& other : kiln::devices()) {
        if (other.backend() == ours) continue;
        auto their_queue = other.impl().create_queue({});
        expect_names_both_backends([&] { their_queue->launch(*kernel, geometry, {}, {}); },
                                   other.backend(), ours);
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(cross_device);

}  // namespace
