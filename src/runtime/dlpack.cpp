// SPDX-License-Identifier: Apache-2.0
// DLPack tensors as kiln's device memory and back (kiln/interop/dlpack.hpp): the checks of a
// tensor's version, dtype, layout and device, then the memory wrapped through kiln/interop.
#include <algorithm>
#include <array>
#include <kiln/interop/dlpack_memory.hpp>
#include <kiln/interop/native_handles.hpp>
#include <limits>
#include <string>

#include "backend/backend.hpp"

namespace kiln::detail::dlpack {

namespace {

std::string dtype_name(DLDataType t) {
    static constexpr const char* codes[] = {"int",           "uint",
                                            "float",         "opaque handle",
                                            "bfloat",        "complex",
                                            "bool",          "float8_e3m4",
                                            "float8_e4m3",   "float8_e4m3b11fnuz",
                                            "float8_e4m3fn", "float8_e4m3fnuz",
                                            "float8_e5m2",   "float8_e5m2fnuz",
                                            "float8_e8m0fnu"};
    const std::string code =
        t.code < std::size(codes) ? codes[t.code] : "code " + std::to_string(t.code);
    // The FP8 codes name their width; other widths are spelt out.
    const bool float8 = code.starts_with("float8_") && t.bits == 8;
    return code + (float8 ? "" : std::to_string(t.bits)) +
           (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

std::string device_type_name(std::int32_t type) {
    switch (type) {
        case kDLCPU:
            return "kDLCPU";
        case kDLCUDA:
            return "kDLCUDA";
        case kDLCUDAHost:
            return "kDLCUDAHost";
        case kDLOpenCL:
            return "kDLOpenCL";
        case kDLCUDAManaged:
            return "kDLCUDAManaged";
        case kDLROCM:
            return "kDLROCM";
        default:
            return "device type " + std::to_string(type);
    }
}

std::string list(std::span<const std::int64_t> values) {
    std::string text = "(";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + ")";
}

/// The layout of `t`'s elements as `as` views them; invalid_argument_error where it cannot.
tensor_layout layout_of(const DLTensor& t, view as, const char* call) {
    if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
        throw invalid_argument_error(call, "the tensor has no shape");
    const std::span<const std::int64_t> shape(t.shape, static_cast<std::size_t>(t.ndim));
    if (std::any_of(shape.begin(), shape.end(), [](std::int64_t e) { return e < 0; }))
        throw invalid_argument_error(call, "the tensor's shape " + list(shape) + " is negative");
    const std::span<const std::int64_t> strides =
        t.strides != nullptr ? std::span<const std::int64_t>(t.strides, shape.size())
                             : std::span<const std::int64_t>();
    const auto refuse = [&](const std::string& why) {
        throw invalid_argument_error(
            call, "strides " + list(strides) + " of shape " + list(shape) + ": " + why);
    };
    tensor_layout layout;
    if (as == view::matrix) {
        if (shape.size() != 2)
            throw invalid_argument_error(call, "a matrix is a tensor of 2 dimensions, not of " +
                                                   std::to_string(shape.size()));
        layout.rows = static_cast<std::size_t>(shape[0]);
        layout.columns = static_cast<std::size_t>(shape[1]);
        layout.row_stride = layout.columns;
        if (strides.empty()) return layout;
        // A matrix's elements are one after another in a row, its rows equally far apart.
        if (layout.columns > 1 && strides[1] != 1)
            refuse("kiln views a matrix's rows as elements one after another (column stride 1)");
        if (layout.rows > 1) {
            if (strides[0] < shape[1])
                refuse("kiln views a matrix's rows one after another, at least a row apart");
            layout.row_stride = static_cast<std::size_t>(strides[0]);
        }
        return layout;
    }
    layout.rows = 1;
    layout.columns = 1;
    for (const std::int64_t extent : shape) {
        const auto e = static_cast<std::size_t>(extent);
        if (e != 0 && layout.columns > std::numeric_limits<std::size_t>::max() / e)
            throw invalid_argument_error(call, "the tensor's shape " + list(shape) + " overflows");
        layout.columns *= e;
    }
    layout.row_stride = layout.columns;
    // Compact and row-major: each stride the product of the extents after it. A dimension of
    // one element may have any stride (it is never stepped along).
    std::int64_t expected = 1;
    for (std::size_t d = strides.size(); d-- > 0;) {
        if (shape[d] != 1 && strides[d] != expected)
            refuse("kiln views a vector's elements compact and row-major");
        expected *= shape[d];
    }
    return layout;
}

/// Where kiln's OpenCL device stands among kiln's OpenCL devices: DLPack's device_id for it.
std::int32_t opencl_device_id(const kiln::device& d) {
    std::int32_t index = 0;
    for (const kiln::device& listed : kiln::devices()) {
        if (listed.backend() != backend_kind::opencl) continue;
        if (listed == d ||
            (listed.name() == d.name() && listed.properties().platform == d.properties().platform))
            return index;
        ++index;
    }
    return 0;
}

/// What an exported tensor holds: the memory, and the arrays its DLTensor points to.
struct export_context {
    buffer_storage storage;
    std::array<std::int64_t, 4> shape{};
    DLManagedTensorVersioned tensor{};
};

}  // namespace

buffer_storage storage_of(const queue& q, DLManagedTensorVersioned* tensor, DLDataType dtype,
                          std::size_t element_bytes, std::size_t alignment, view as,
                          tensor_layout& layout, const char* call) {
    if (tensor == nullptr) throw invalid_argument_error(call, "the tensor is null");
    if (tensor->version.major != DLPACK_MAJOR_VERSION)
        throw invalid_argument_error(call, "the tensor follows DLPack " +
                                               std::to_string(tensor->version.major) + "." +
                                               std::to_string(tensor->version.minor) +
                                               ", whose major version kiln does not read (" +
                                               std::to_string(DLPACK_MAJOR_VERSION) + ")");
    const DLTensor& t = tensor->dl_tensor;
    if (t.dtype.code != dtype.code || t.dtype.bits != dtype.bits || t.dtype.lanes != dtype.lanes)
        throw invalid_argument_error(call, "the tensor holds " + dtype_name(t.dtype) +
                                               ", not the " + dtype_name(dtype) + " asked for");
    layout = layout_of(t, as, call);
    const std::size_t extent =
        layout.elements() == 0 ? 0 : (layout.rows - 1) * layout.row_stride + layout.columns;
    const std::size_t bytes = checked_bytes(extent, element_bytes);
    const kiln::device& d = q.device();
    const std::int32_t type = t.device.device_type;
    const auto elsewhere = [&](const std::string& why) {
        throw invalid_argument_error(call, "the tensor's memory is " + device_type_name(type) +
                                               " " + std::to_string(t.device.device_id) + ": " +
                                               why);
    };
    const bool cuda = d.backend() == backend_kind::cuda;
    if (type == kDLCUDA && !cuda) elsewhere("the queue's device is OpenCL's (" + d.name() + ")");
    if (type == kDLOpenCL && cuda) elsewhere("the queue's device is CUDA's (" + d.name() + ")");
    if (type != kDLCUDA && type != kDLOpenCL && type != kDLCPU)
        elsewhere("kiln has no device of that type");
    if (type == kDLCUDA) {
        const auto ordinal =
            static_cast<std::int32_t>(interop::native_device(d, backend_kind::cuda, call).device);
        if (t.device.device_id != ordinal)
            elsewhere("the queue is on CUDA device " + std::to_string(ordinal));
    }
    buffer_storage storage;
    if (extent == 0) {
        // Nothing to view (data may be null): the tensor is done with at once.
        if (tensor->deleter != nullptr) tensor->deleter(tensor);
        return storage;
    }
    if (t.data == nullptr) throw invalid_argument_error(call, "the tensor's data is null");
    if (type == kDLCPU)
        storage = interop::wrap_host_memory(q, static_cast<std::byte*>(t.data) + t.byte_offset,
                                            bytes, alignment, call);
    else  // a CUDA address, or a cl_mem and the offset into it
        storage = interop::wrap_memory(q, interop::to_handle(t.data), t.byte_offset, bytes,
                                       alignment, kiln::interop::borrow, call);
    if ((tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0) interop::make_read_only(storage);
    storage.memory()->keep(std::shared_ptr<const void>(tensor, [](DLManagedTensorVersioned* done) {
        if (done->deleter != nullptr) done->deleter(done);
    }));
    return storage;
}

DLManagedTensorVersioned* tensor_of(const buffer_storage& storage, DLDataType dtype,
                                    std::span<const std::int64_t> shape, const char* call) {
    auto* context = new export_context{storage};
    std::copy(shape.begin(), shape.end(), context->shape.begin());
    DLManagedTensorVersioned& out = context->tensor;
    out.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    out.manager_ctx = context;
    out.deleter = [](DLManagedTensorVersioned* self) {
        delete static_cast<export_context*>(self->manager_ctx);
    };
    out.flags = storage.read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    DLTensor& t = out.dl_tensor;
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.shape = context->shape.data();
    t.strides = nullptr;  // compact and row-major
    t.dtype = dtype;
    t.byte_offset = 0;
    const kiln::device& d = storage.device();
    try {
        if (void* host = interop::host_address(storage)) {
            t.data = host;
            t.device = {kDLCPU, 0};
        } else if (d.backend() == backend_kind::cuda) {
            const auto backend = backend_kind::cuda;
            t.data = interop::from_handle<void*>(interop::native_memory(storage, backend, call));
            t.device = {kDLCUDA,
                        static_cast<std::int32_t>(interop::native_device(d, backend, call).device)};
        } else {
            const auto backend = backend_kind::opencl;
            t.data = interop::from_handle<void*>(interop::native_memory(storage, backend, call));
            t.device = {kDLOpenCL, opencl_device_id(d)};
        }
    } catch (...) {
        delete context;
        throw;
    }
    return &out;
}

}  // namespace kiln::detail::dlpack
