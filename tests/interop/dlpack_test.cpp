// SPDX-License-Identifier: Apache-2.0
// DLPack tensors in and out of kiln (kiln/interop/dlpack.hpp) on every device: the same memory
// on both sides, the deleter run once when kiln is done, matrices with a row stride, every
// element type, and what is refused before kiln takes a tensor.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/interop/dlpack.hpp>
#include <kiln/interop/native_handles.hpp>
#include <kiln/kiln.hpp>
#include <memory>
#include <numeric>
#include <vector>

#include "support/device_param.hpp"
#include "support/float8_types.hpp"

namespace {

using kiln::invalid_argument_error;

/// A tensor a producer made: `shape` elements (and strides, if any) over `data` on `device`,
/// whose deleter counts its calls and runs `then`.
struct produced {
    std::vector<std::int64_t> shape, strides;
    DLManagedTensorVersioned tensor{};
    int deleted = 0;
    std::function<void()> then;

    produced(void* data, DLDevice device, DLDataType dtype, std::vector<std::int64_t> extents,
             std::vector<std::int64_t> steps = {})
        : shape(std::move(extents)), strides(std::move(steps)) {
        tensor.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
        tensor.manager_ctx = this;
        tensor.deleter = [](DLManagedTensorVersioned* self) {
            auto* owner = static_cast<produced*>(self->manager_ctx);
            ++owner->deleted;
            if (owner->then) owner->then();
        };
        DLTensor& t = tensor.dl_tensor;
        t.data = data;
        t.device = device;
        t.ndim = static_cast<std::int32_t>(shape.size());
        t.dtype = dtype;
        t.shape = shape.data();
        t.strides = strides.empty() ? nullptr : strides.data();
    }
};

/// The backend's handle of a buffer (a cl_mem, a CUDA address), to compare memory.
template <class Buffer>
std::uint64_t handle_of(const Buffer& b) {
    return kiln::detail::interop::native_memory(b.storage(), b.device().backend(), "test");
}

/// A tensor over the memory kiln exported in `exported` (its data and device), of another
/// shape: what a consumer that reshapes a tensor hands back. Deleting it deletes `exported`.
std::unique_ptr<produced> reshaped(DLManagedTensorVersioned* exported, DLDataType dtype,
                                   std::vector<std::int64_t> shape,
                                   std::vector<std::int64_t> strides = {}) {
    auto made = std::make_unique<produced>(exported->dl_tensor.data, exported->dl_tensor.device,
                                           dtype, std::move(shape), std::move(strides));
    made->then = [exported] { exported->deleter(exported); };
    return made;
}

class dlpack : public kiln::test::device_queue_test {
  protected:
    /// Whether the device's memory is the host's, used in place (kDLCPU).
    bool host_memory() {
        kiln::vector<float> probe(q, 1);
        DLManagedTensorVersioned* t = kiln::to_dlpack(probe);
        const bool on_host = t->dl_tensor.device.device_type == kDLCPU;
        t->deleter(t);
        return on_host;
    }
};

TEST_P(dlpack, a_vector_goes_out_and_comes_back_as_the_same_memory) {
    std::vector<float> host(100);
    std::iota(host.begin(), host.end(), 1.0f);
    auto v = std::make_unique<kiln::vector<float>>(q, host);
    DLManagedTensorVersioned* t = kiln::to_dlpack(*v);
    EXPECT_EQ(t->version.major, 1u);
    EXPECT_EQ(t->flags, 0u);
    EXPECT_EQ(t->dl_tensor.ndim, 1);
    EXPECT_EQ(t->dl_tensor.shape[0], 100);
    EXPECT_EQ(t->dl_tensor.strides, nullptr);
    const DLDeviceType expected = device().backend() == kiln::backend_kind::cuda ? kDLCUDA
                                  : host_memory()                                ? kDLCPU
                                                                                 : kDLOpenCL;
    EXPECT_EQ(t->dl_tensor.device.device_type, expected);
    v.reset();  // the tensor keeps the memory
    // Counted: the tensor's own deleter runs once, when kiln is done with the memory.
    int deleted = 0;
    auto counted = reshaped(t, kiln::dlpack_dtype<float>, {100});
    counted->then = [&, t] {
        ++deleted;
        t->deleter(t);
    };
    {
        auto u = kiln::from_dlpack<float>(q, &counted->tensor);
        // The same memory: the same cl_mem or CUDA address, or the same host address.
        if (expected == kDLCPU)
            EXPECT_EQ(kiln::detail::interop::host_address(u.part(0).storage()), t->dl_tensor.data);
        else
            EXPECT_EQ(handle_of(u.part(0)), kiln::detail::interop::to_handle(t->dl_tensor.data));
        EXPECT_EQ(u.read(), host);
        u = u * 2;
        auto copy = u;
        EXPECT_EQ(deleted, 0);
        if (expected == kDLCPU) {
            // The host's side of the same memory: what kiln wrote, and what the host writes.
            q.finish();
            const float* seen = static_cast<const float*>(t->dl_tensor.data);
            EXPECT_EQ(seen[99], 200.0f);
            static_cast<float*>(t->dl_tensor.data)[0] = -1.0f;
            EXPECT_EQ(u[0], -1.0f);
        }
    }
    EXPECT_EQ(deleted, 1);
}

TEST_P(dlpack, host_memory_is_taken_in_place_where_the_device_is_the_host) {
    // Aligned as the device's allocations are, in a larger block.
    const std::size_t align = device().properties().memory_base_alignment_bytes;
    std::vector<std::byte> block(1024 * sizeof(std::int32_t) + align);
    void* start = block.data();
    std::size_t room = block.size();
    ASSERT_NE(std::align(align, 1024 * sizeof(std::int32_t), start, room), nullptr);
    auto* keys = static_cast<std::int32_t*>(start);
    for (int i = 0; i < 1024; ++i) keys[i] = (i * 7919) % 1024;
    produced tensor(keys, {kDLCPU, 0}, kiln::dlpack_dtype<std::int32_t>, {1024});
    if (!host_memory()) {
        EXPECT_THROW(kiln::from_dlpack<std::int32_t>(q, &tensor.tensor), invalid_argument_error);
        EXPECT_EQ(tensor.deleted, 0) << "a refused tensor stays the caller's";
        return;
    }
    {
        auto v = kiln::from_dlpack<std::int32_t>(q, &tensor.tensor);
        kiln::sort(v);
        q.finish();
        for (int i = 0; i < 1024; ++i) ASSERT_EQ(keys[i], i) << "sorted in the host's memory";
    }
    EXPECT_EQ(tensor.deleted, 1);
    // Misaligned for the element: refused, and not taken.
    produced off(reinterpret_cast<std::byte*>(keys) + 2, {kDLCPU, 0},
                 kiln::dlpack_dtype<std::int32_t>, {4});
    EXPECT_THROW(kiln::from_dlpack<std::int32_t>(q, &off.tensor), invalid_argument_error);
    EXPECT_EQ(off.deleted, 0);
}

TEST_P(dlpack, a_matrix_with_a_row_stride_is_a_gemm_operand) {
    // C (2 x 3) in rows 5 apart, in kiln's memory handed out and back as a 2-D tensor.
    kiln::vector<float> memory(q, std::vector<float>(10, -1.0f));
    auto c_tensor = reshaped(kiln::to_dlpack(memory), kiln::dlpack_dtype<float>, {2, 3}, {5, 1});
    {
        auto C = kiln::matrix_from_dlpack<float>(q, &c_tensor->tensor);
        EXPECT_EQ(C.leading_dimension(), 5u);
        kiln::matrix<float> A(q, 2, 2, std::vector<float>{1, 2, 3, 4}),
            B(q, 2, 3, std::vector<float>{1, 0, 2, 0, 1, 3});
        kiln::gemm(C, A, B);
    }
    EXPECT_EQ(memory.read(), (std::vector<float>{1, 2, 8, -1, -1, 3, 4, 18, -1, -1}));
    EXPECT_EQ(c_tensor->deleted, 1);
    // Columns apart are not a row's elements: refused, and not taken.
    auto column_major =
        reshaped(kiln::to_dlpack(memory), kiln::dlpack_dtype<float>, {2, 3}, {1, 2});
    EXPECT_THROW(kiln::matrix_from_dlpack<float>(q, &column_major->tensor), invalid_argument_error);
    EXPECT_EQ(column_major->deleted, 0);
    column_major->tensor.deleter(&column_major->tensor);
}

TEST_P(dlpack, every_element_type_keeps_its_dtype) {
    const auto through_dlpack = [&]<class T>(std::vector<T> values) {
        SCOPED_TRACE(kiln::dlpack_dtype<T>.bits);
        kiln::vector<T> v(q, values);
        DLManagedTensorVersioned* t = kiln::to_dlpack(v);
        EXPECT_EQ(t->dl_tensor.dtype.code, kiln::dlpack_dtype<T>.code);
        EXPECT_EQ(t->dl_tensor.dtype.bits, 8 * sizeof(T));
        EXPECT_EQ(t->dl_tensor.dtype.lanes, 1);
        EXPECT_EQ(kiln::from_dlpack<T>(q, t).read(), values);
    };
    through_dlpack(std::vector<float>{1.5f, -2.0f});
    if (has_double()) through_dlpack(std::vector<double>{1.5, -2.0});
    through_dlpack(std::vector<kiln::half>{kiln::half(1.5f), kiln::half(-2.0f)});
    through_dlpack(std::vector<kiln::bfloat16>{kiln::bfloat16(1.5f), kiln::bfloat16(-2.0f)});
    through_dlpack(
        std::vector<kiln::float8_e4m3>{kiln::float8_e4m3(1.5f), kiln::float8_e4m3(-448.0f)});
    through_dlpack(
        std::vector<kiln::float8_e5m2>{kiln::float8_e5m2(1.5f), kiln::float8_e5m2(-2.0f)});
    through_dlpack(std::vector<std::int32_t>{1, -2});
    through_dlpack(std::vector<std::uint64_t>{1, 2});
    through_dlpack(std::vector<std::complex<float>>{{1, 2}, {3, 4}});
    // The types kiln::vector does not hold come as buffers: bytes of kiln's memory as int8.
    kiln::vector<std::int32_t> words(q, std::vector<std::int32_t>{0x04030201, 0x08070605});
    auto bytes = reshaped(kiln::to_dlpack(words), kiln::dlpack_dtype<std::int8_t>, {8});
    {
        kiln::buffer<std::int8_t> b = kiln::buffer_from_dlpack<std::int8_t>(q, &bytes->tensor);
        EXPECT_EQ(b.read(q), (std::vector<std::int8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    }
    EXPECT_EQ(bytes->deleted, 1);
}

TEST_P(dlpack, fp8_tensors_carry_dlpack_1_1s_codes) {
    // DLPack 1.1: kDLFloat8_e4m3fn is 10 and kDLFloat8_e5m2 12, both of 8 bits, as PyTorch's
    // float8_e4m3fn and float8_e5m2 tensors carry them.
    static_assert(kiln::dlpack_dtype<kiln::float8_e4m3>.code == 10);
    static_assert(kiln::dlpack_dtype<kiln::float8_e5m2>.code == 12);
    const std::vector<kiln::float8_e4m3> values = kiln::test::every_float8<kiln::float8_e4m3>();
    kiln::vector<kiln::float8_e4m3> v(q, values);
    DLManagedTensorVersioned* t = kiln::to_dlpack(v);
    EXPECT_EQ(t->dl_tensor.dtype.code, kDLFloat8_e4m3fn);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 8);
    // The other format's bits are not these values: refused, naming both.
    try {
        kiln::from_dlpack<kiln::float8_e5m2>(q, t);
        ADD_FAILURE() << "an e4m3fn tensor taken as e5m2";
    } catch (const invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("float8_e4m3fn, not the float8_e5m2"),
                  std::string::npos)
            << e.what();
    }
    const auto back = kiln::from_dlpack<kiln::float8_e4m3>(q, t).read();
    for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(back[i].bits(), values[i].bits());
}

TEST_P(dlpack, a_read_only_tensor_is_read_and_never_written) {
    kiln::vector<float> memory(q, std::vector<float>{3, 1, 2, 4});
    auto read_only = reshaped(kiln::to_dlpack(memory), kiln::dlpack_dtype<float>, {4});
    read_only->tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    {
        auto r = kiln::from_dlpack<float>(q, &read_only->tensor);
        kiln::vector<float> w(q, 4);
        w = r * 2;  // read: fine
        EXPECT_EQ(kiln::sum(r), 10.0f);
        EXPECT_EQ(w.read(), (std::vector<float>{6, 2, 4, 8}));
        EXPECT_THROW(r = 1.0f, invalid_argument_error) << "a fill";
        EXPECT_THROW(r = r + 1, invalid_argument_error) << "a kernel that writes it";
        EXPECT_THROW(kiln::sort(r), invalid_argument_error);
        EXPECT_THROW(r.write(std::vector<float>(4, 0.0f)), invalid_argument_error);
        EXPECT_THROW(w.part(0).copy_to(q, r.part(0)), invalid_argument_error);
        DLManagedTensorVersioned* again = kiln::to_dlpack(r);
        EXPECT_EQ(again->flags, DLPACK_FLAG_BITMASK_READ_ONLY) << "handed on read-only";
        again->deleter(again);
    }
    EXPECT_EQ(memory.read(), (std::vector<float>{3, 1, 2, 4}));
}

TEST_P(dlpack, what_kiln_cannot_view_is_refused_and_stays_the_callers) {
    kiln::vector<float> memory(q, 16);
    DLManagedTensorVersioned* exported = kiln::to_dlpack(memory);
    const DLTensor& t = exported->dl_tensor;
    const auto refused = [&](produced& tensor, const char* why, auto take) {
        try {
            take(&tensor.tensor);
            ADD_FAILURE() << "not refused: " << why;
        } catch (const invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
        EXPECT_EQ(tensor.deleted, 0) << why;
    };
    const auto as_floats = [&](DLManagedTensorVersioned* x) { kiln::from_dlpack<float>(q, x); };
    produced doubles(t.data, t.device, kiln::dlpack_dtype<double>, {8});
    refused(doubles, "not the float32", as_floats);
    produced apart(t.data, t.device, kiln::dlpack_dtype<float>, {4, 2}, {4, 1});
    refused(apart, "compact and row-major", as_floats);
    produced backwards(t.data, t.device, kiln::dlpack_dtype<float>, {2, 2}, {-2, 1});
    refused(backwards, "at least a row apart",
            [&](DLManagedTensorVersioned* x) { kiln::matrix_from_dlpack<float>(q, x); });
    produced flat(t.data, t.device, kiln::dlpack_dtype<float>, {16});
    refused(flat, "2 dimensions",
            [&](DLManagedTensorVersioned* x) { kiln::matrix_from_dlpack<float>(q, x); });
    produced vulkan(t.data, {kDLVulkan, 0}, kiln::dlpack_dtype<float>, {16});
    refused(vulkan, "kiln has no device of that type", as_floats);
    const bool cuda = device().backend() == kiln::backend_kind::cuda;
    produced other_api(t.data, {cuda ? kDLOpenCL : kDLCUDA, 0}, kiln::dlpack_dtype<float>, {16});
    refused(other_api, cuda ? "CUDA's" : "OpenCL's", as_floats);
    if (cuda) {
        produced far(t.data, {kDLCUDA, 99}, kiln::dlpack_dtype<float>, {16});
        refused(far, "the queue is on CUDA device", as_floats);
    }
    if (t.device.device_type != kDLCPU) {  // host memory's end is not known to any driver
        produced too_long(t.data, t.device, kiln::dlpack_dtype<float>, {17});
        refused(too_long, "end of", as_floats);
    }
    produced newer(t.data, t.device, kiln::dlpack_dtype<float>, {16});
    newer.tensor.version.major = 2;
    refused(newer, "major version", as_floats);
    EXPECT_THROW(kiln::from_dlpack<float>(q, nullptr), invalid_argument_error);
    exported->deleter(exported);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(dlpack);

}  // namespace
