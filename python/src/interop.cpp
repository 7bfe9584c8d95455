// SPDX-License-Identifier: Apache-2.0
// DLPack in Python: kiln.ndarray.__dlpack__ / __dlpack_device__ and kiln.from_dlpack, through
// kiln/interop's tensors (no copy on the same device). Capsules follow the Python array API:
// "dltensor_versioned" (DLPack 1.x) when the consumer asks for it, "dltensor" otherwise, renamed
// "used_..." once consumed.
#include <pybind11/stl.h>

#include <algorithm>
#include <kiln/interop/dlpack.hpp>
#include <kiln/interop/dlpack_memory.hpp>
#include <kiln/interop/native_handles.hpp>
#include <optional>
#include <span>
#include <string_view>

#include "expression.hpp"

namespace kiln::python {

namespace {

constexpr const char* versioned_name = "dltensor_versioned";
constexpr const char* legacy_name = "dltensor";

DLDataType dl_type(dtype t) {
    return visit(t, [](auto zero) { return kiln::dlpack_dtype<decltype(zero)>; });
}

dtype from_dl_type(DLDataType t) {
    for (std::size_t k = 0; k < dtype_count; ++k) {
        const DLDataType candidate = dl_type(static_cast<dtype>(k));
        if (candidate.code == t.code && candidate.bits == t.bits && t.lanes == 1)
            return static_cast<dtype>(k);
    }
    throw py::type_error("kiln.from_dlpack: kiln has no dtype of DLPack code " +
                         std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
                         std::to_string(t.lanes) + " lanes");
}

// An exported tensor that also keeps the array's memory (which may be a pool block that must
// not be handed out again while the consumer uses it).
struct export_holder {
    DLManagedTensorVersioned tensor;
    DLManagedTensorVersioned* inner;
    std::shared_ptr<memory> keep;
};
// The same tensor as DLPack 0.x's DLManagedTensor, for consumers that ask for no version.
struct legacy_holder {
    DLManagedTensor tensor;
    DLManagedTensorVersioned* versioned;
};

DLManagedTensorVersioned* export_tensor(const array_data& compact_data) {
    const std::array<std::int64_t, 2> extents{static_cast<std::int64_t>(compact_data.shape[0]),
                                              static_cast<std::int64_t>(compact_data.shape[1])};
    const std::span<const std::int64_t> shape =
        compact_data.ndim == 2 ? std::span(extents) : std::span(extents).last(1);
    DLManagedTensorVersioned* inner = kiln::detail::dlpack::tensor_of(
        compact_data.exact_storage(), dl_type(compact_data.type), shape, "kiln.ndarray.__dlpack__");
    auto* holder = new export_holder{*inner, inner, compact_data.mem};
    holder->tensor.manager_ctx = holder;
    holder->tensor.deleter = [](DLManagedTensorVersioned* self) {
        auto* h = static_cast<export_holder*>(self->manager_ctx);
        if (h->inner->deleter) h->inner->deleter(h->inner);
        delete h;
    };
    return &holder->tensor;
}

// (device type, device id) of `where`'s memory as DLPack names it.
std::pair<int, int> find_dlpack_device(const device_entry& where) {
    const kiln::device& d = where.device;
    if (d.backend() == kiln::backend_kind::cuda)
        return {kDLCUDA,
                static_cast<int>(kiln::detail::interop::native_device(
                                     d, kiln::backend_kind::cuda, "kiln.ndarray.__dlpack_device__")
                                     .device)};
    // An OpenCL device exports host memory where its driver keeps buffers there (PoCL's CPU).
    const array_data probe = array_data::empty(where, dtype::float32, 1, {1, 1});
    if (kiln::detail::interop::host_address(probe.mem->storage())) return {kDLCPU, 0};
    int opencl = 0;
    for (const auto& other : kiln::devices()) {
        if (other == d) break;
        if (other.backend() == kiln::backend_kind::opencl) ++opencl;
    }
    return {kDLOpenCL, opencl};
}

// The same, found once per device: where a device keeps its buffers does not change, and the
// probe (a map and unmap on an OpenCL device) cost more than the rest of an export.
std::pair<int, int> dlpack_device_of(const device_entry& where) {
    static std::vector<std::optional<std::pair<int, int>>> found;
    if (found.size() <= where.number) found.resize(where.number + 1);
    auto& known = found[where.number];
    if (!known) known = find_dlpack_device(where);
    return *known;
}

py::capsule capsule_of(const ndarray& self, const py::object& stream,
                       const py::object& max_version) {
    const array_data data = compact(self.data());
    // The consumer may read at once, on any stream; a stream of -1 says it orders its reads
    // itself (the Python array API's __dlpack__), and waits for nothing here.
    const bool consumer_orders = PyLong_Check(stream.ptr()) && stream.cast<long long>() == -1;
    if (!consumer_orders) {
        py::gil_scoped_release unlocked;
        data.where->queue.finish();
    }
    DLManagedTensorVersioned* tensor = export_tensor(data);
    bool versioned = false;
    if (!max_version.is_none()) versioned = max_version.cast<std::pair<int, int>>().first >= 1;
    if (versioned) {
        return py::capsule(tensor, versioned_name, [](PyObject* capsule) {
            if (PyCapsule_IsValid(capsule, versioned_name)) {
                auto* t = static_cast<DLManagedTensorVersioned*>(
                    PyCapsule_GetPointer(capsule, versioned_name));
                if (t->deleter) t->deleter(t);
            }
        });
    }
    auto* legacy = new legacy_holder{{tensor->dl_tensor, nullptr, nullptr}, tensor};
    legacy->tensor.manager_ctx = legacy;
    legacy->tensor.deleter = [](DLManagedTensor* self) {
        auto* h = static_cast<legacy_holder*>(self->manager_ctx);
        if (h->versioned->deleter) h->versioned->deleter(h->versioned);
        delete h;
    };
    return py::capsule(&legacy->tensor, legacy_name, [](PyObject* capsule) {
        if (PyCapsule_IsValid(capsule, legacy_name)) {
            auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, legacy_name));
            if (t->deleter) t->deleter(t);
        }
    });
}

// A DLPack 0.x tensor seen as a 1.x one, which owns it.
struct adopted_legacy {
    DLManagedTensorVersioned tensor;
    DLManagedTensor* legacy;
};
DLManagedTensorVersioned* versioned_of(DLManagedTensor* legacy) {
    auto* a = new adopted_legacy{{}, legacy};
    a->tensor.version = {1, 0};
    a->tensor.manager_ctx = a;
    a->tensor.flags = 0;
    a->tensor.dl_tensor = legacy->dl_tensor;
    a->tensor.deleter = [](DLManagedTensorVersioned* self) {
        auto* h = static_cast<adopted_legacy*>(self->manager_ctx);
        if (h->legacy->deleter) h->legacy->deleter(h->legacy);
        delete h;
    };
    return &a->tensor;
}

// Producer types whose __dlpack__ takes no max_version (NumPy before 2.0, CuPy and PyTorch before
// DLPack 1.0): once one refused it, its arrays are asked without it, rather than through a
// TypeError, a C++ exception and a second call on every import. The types are held, so that an
// address is never another type's (and never released: the list outlives the interpreter).
std::vector<py::handle>& refusing_types() {
    static std::vector<py::handle> types;
    return types;
}
bool refuses_max_version(py::handle type) {
    return std::any_of(refusing_types().begin(), refusing_types().end(),
                       [&](py::handle t) { return t.is(type); });
}
void remember_refusal(py::handle type) {
    refusing_types().push_back(type.inc_ref());
}

// CUDA's handle of the legacy default stream (cuda.h's CU_STREAM_LEGACY), as the Python array
// API's __dlpack__ names it too.
constexpr kiln::detail::interop::handle legacy_stream = 1;

// kiln's queue over CUDA stream `stream` of `where`'s device (0, the null stream, is the legacy
// one), made once a stream: a wrap costs more than the import it orders. A handle is only used
// while its stream lives (the producer names it now), so a stream made later at a freed one's
// address is served by the same wrap, which borrows the handle and holds nothing else of it.
const kiln::queue& stream_queue(const device_entry& where, kiln::detail::interop::handle stream) {
    struct wrapped {
        std::size_t device;
        kiln::detail::interop::handle stream;
        kiln::queue queue;
    };
    static std::vector<wrapped> made;
    if (stream == 0) stream = legacy_stream;
    for (const wrapped& w : made)
        if (w.device == where.number && w.stream == stream) return w.queue;
    // Programs use a few streams; one that makes a new stream for every tensor is not let grow
    // the list without end. A wrap only borrows its stream: dropping one releases kiln's own
    // objects, never the stream, which may be gone by then.
    constexpr std::size_t most_kept = 64;
    if (made.size() == most_kept) made.erase(made.begin());
    made.push_back({where.number, stream,
                    kiln::detail::interop::wrap_queue(where.device, stream, kiln::interop::borrow,
                                                      "kiln.from_dlpack")});
    return made.back().queue;
}

// PyTorch's current CUDA stream of a device, as a handle, where PyTorch is imported and has its
// C-level query (torch.cuda.current_stream() costs 6 us in Python, the query 0.15 us on an H200);
// none otherwise. kiln never imports PyTorch itself.
struct torch_streams {
    py::object tensor_type, current_raw_stream;
};
const std::optional<torch_streams>& torch_stream_query() {
    static std::optional<torch_streams> found;
    static bool looked = false;
    if (looked) return found;
    static const py::handle modules =
        py::object(py::module_::import("sys").attr("modules")).release();
    if (!py::reinterpret_borrow<py::dict>(modules).contains("torch"))
        return found;  // looked for again at the next import: PyTorch may be imported later

    looked = true;
    const py::object torch = py::reinterpret_borrow<py::dict>(modules)["torch"];
    const py::object c = py::getattr(torch, "_C", py::none());
    const py::object query =
        c.is_none() ? py::none() : py::getattr(c, "_cuda_getCurrentRawStream", py::none());
    if (!query.is_none()) found = torch_streams{torch.attr("Tensor"), query};
    return found;
}

// The kiln device of a producer's (device type, id).
const device_entry& device_for(int type, int id) {
    const auto& all = kiln::devices();
    if (type == kDLCUDA) {
        for (std::size_t k = 0; k < all.size(); ++k)
            if (all[k].backend() == kiln::backend_kind::cuda &&
                static_cast<int>(kiln::detail::interop::native_device(
                                     all[k], kiln::backend_kind::cuda, "kiln.from_dlpack")
                                     .device) == id)
                return device_number(k);
        throw py::value_error("kiln.from_dlpack: kiln has no CUDA device " + std::to_string(id));
    }
    if (type == kDLCPU) {
        const device_entry& chosen = default_device_entry();
        if (chosen.device.is_cpu() && chosen.device.backend() == kiln::backend_kind::opencl)
            return chosen;
        for (std::size_t k = 0; k < all.size(); ++k)
            if (all[k].is_cpu() && all[k].backend() == kiln::backend_kind::opencl)
                return device_number(k);
        throw py::value_error(
            "kiln.from_dlpack: host memory, and kiln has no device that uses it "
            "in place (kiln.asarray copies it)");
    }
    if (type == kDLOpenCL) {
        int opencl = 0;
        for (std::size_t k = 0; k < all.size(); ++k)
            if (all[k].backend() == kiln::backend_kind::opencl && opencl++ == id)
                return device_number(k);
    }
    throw py::value_error("kiln.from_dlpack: kiln has no device of DLPack device type " +
                          std::to_string(type) + ", id " + std::to_string(id));
}

}  // namespace

py::object from_dlpack(const py::object& producer, const device_entry& requested,
                       const py::object& type) {
    const device_entry* where = &requested;
    py::object capsule = producer;
    if (!PyCapsule_CheckExact(producer.ptr())) {
        const py::object dlpack = py::getattr(producer, "__dlpack__", py::none());
        if (dlpack.is_none())
            throw py::type_error(
                "kiln.from_dlpack: takes an object with __dlpack__ or a DLPack capsule");
        const py::object device_method = py::getattr(producer, "__dlpack_device__", py::none());
        if (!device_method.is_none()) {
            auto [device_type, id] = device_method().cast<std::pair<int, int>>();
            where = &device_for(device_type, id);
        }
        // A CUDA producer is asked for its tensor on the legacy default stream, where CuPy and
        // PyTorch work unless told otherwise: they then order nothing (PyTorch would build a
        // stream object and an event in Python, about 12 us, for kiln's own stream), and kiln's
        // stream waits for that stream's work below, on the device. A PyTorch tensor is asked
        // with stream -1 (the consumer orders), and kiln's stream waits for PyTorch's current
        // one, which it asks for itself: PyTorch's own ordering for stream 1 took 9 of the 11 us
        // that its __dlpack__ cost (H200, 2026-11-29; docs/python.md).
        const bool cuda = where->device.backend() == kiln::backend_kind::cuda;
        const auto& torch = torch_stream_query();
        kiln::detail::interop::handle producer_stream = legacy_stream;
        py::object stream = cuda ? py::object(py::int_(legacy_stream)) : py::none();
        if (cuda && torch && PyObject_IsInstance(producer.ptr(), torch->tensor_type.ptr()) == 1) {
            const auto ordinal = kiln::detail::interop::native_device(
                                     where->device, kiln::backend_kind::cuda, "kiln.from_dlpack")
                                     .device;
            producer_stream = torch->current_raw_stream(static_cast<int>(ordinal))
                                  .cast<kiln::detail::interop::handle>();
            stream = py::int_(-1);
        }
        const auto legacy_call = [&] {
            return stream.is_none() ? dlpack() : dlpack(py::arg("stream") = stream);
        };
        const py::handle type = py::type::handle_of(producer);
        if (refuses_max_version(type)) {
            capsule = legacy_call();
        } else {
            try {
                static const py::handle version = py::make_tuple(1, 0).release();
                capsule = dlpack(py::arg("stream") = stream, py::arg("max_version") = version);
            } catch (const py::error_already_set& e) {
                if (!e.matches(PyExc_TypeError)) throw;
                capsule = legacy_call();
                remember_refusal(type);
            }
        }
        if (cuda) where->queue.marker({stream_queue(*where, producer_stream).marker()});
    }
    const char* name = PyCapsule_GetName(capsule.ptr());
    const std::string_view capsule_name = name ? name : "";
    if (capsule_name.starts_with("used_"))
        throw py::value_error(
            "kiln.from_dlpack: this DLPack capsule was used already (a capsule "
            "hands its tensor over once)");
    const bool versioned = capsule_name == versioned_name;
    if (!versioned && capsule_name != legacy_name)
        throw py::type_error("kiln.from_dlpack: not a DLPack capsule ('" +
                             std::string(capsule_name) + "')");
    void* pointer = PyCapsule_GetPointer(capsule.ptr(), name);
    const DLTensor& t = versioned ? static_cast<DLManagedTensorVersioned*>(pointer)->dl_tensor
                                  : static_cast<DLManagedTensor*>(pointer)->dl_tensor;
    if (t.ndim < 1 || t.ndim > 2)
        throw py::value_error("kiln.from_dlpack: kiln arrays have 1 or 2 dimensions, the tensor " +
                              std::to_string(t.ndim));
    const dtype element = from_dl_type(t.dtype);
    if (PyCapsule_CheckExact(producer.ptr()))
        where = &device_for(t.device.device_type, t.device.device_id);
    std::array<std::size_t, 2> shape{1, static_cast<std::size_t>(t.shape[t.ndim - 1])};
    if (t.ndim == 2) shape[0] = static_cast<std::size_t>(t.shape[0]);
    DLManagedTensorVersioned* tensor = versioned
                                           ? static_cast<DLManagedTensorVersioned*>(pointer)
                                           : versioned_of(static_cast<DLManagedTensor*>(pointer));
    kiln::detail::dlpack::tensor_layout layout;
    kiln::detail::buffer_storage storage;
    try {
        storage = kiln::detail::dlpack::storage_of(
            where->queue, tensor, t.dtype, itemsize(element),
            std::min<std::size_t>(itemsize(element), 8),
            t.ndim == 2 ? kiln::detail::dlpack::view::matrix : kiln::detail::dlpack::view::elements,
            layout, "kiln.from_dlpack");
    } catch (...) {
        if (!versioned) delete static_cast<adopted_legacy*>(tensor->manager_ctx);
        throw;
    }
    PyCapsule_SetName(capsule.ptr(), versioned ? "used_dltensor_versioned" : "used_dltensor");
    array_data a;
    a.where = where;
    a.type = element;
    a.mem = memory::adopt(std::move(storage));
    a.ndim = static_cast<std::size_t>(t.ndim == 2 ? 2 : 1);
    a.shape = shape;
    a.strides = {static_cast<std::ptrdiff_t>(t.ndim == 2 ? layout.row_stride : shape[1]), 1};
    if (!type.is_none()) return wrap(converted(a, dtype_of(type)));
    return wrap(std::move(a));
}

void bind_dlpack(py::class_<ndarray, std::shared_ptr<ndarray>>& holder) {
    holder.def(
        "__dlpack__",
        [](const ndarray& self, const py::object& stream, const py::object& max_version,
           const py::object&, const py::object& copy) {
            if (!copy.is_none() && copy.cast<bool>())
                return capsule_of(ndarray(copied(self.data())), stream, max_version);
            return capsule_of(self, stream, max_version);
        },
        py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
        py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
    holder.def("__dlpack_device__",
               [](const ndarray& self) { return dlpack_device_of(self.where()); });
}

void bind_interop(py::module_& m) {
    m.def(
        "from_dlpack",
        [](const py::object& x, const py::object& device) {
            const device_entry& where =
                device.is_none() ? default_device_entry() : device.cast<const device_entry&>();
            return from_dlpack(x, where, py::none());
        },
        py::arg("x"), py::arg("device") = py::none());
}

}  // namespace kiln::python
