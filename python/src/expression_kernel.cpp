// SPDX-License-Identifier: Apache-2.0
// Element-wise expressions as kernels: the tree's structure and dtypes are the key of one
// generated OpenCL C kernel per device (built through kiln's program cache, launched through
// kiln's repeated launches); its arrays and scalars are the arguments, bound anew each time.
#include <cstring>
#include <kiln/detail/source_builder.hpp>
#include <kiln/expr/core.hpp>
#include <memory_resource>
#include <string_view>
#include <unordered_map>

#include "expression.hpp"
#include "expression_text.hpp"

namespace kiln::python {

namespace {

// One pass over a tree: the key and the arguments, and on a cache miss the kernel's source. Its
// containers draw on the caller's arena: a statement's walk then allocates nothing, and builds
// no text unless it generates.
struct kernel_walk {
    explicit kernel_walk(std::pmr::memory_resource* arena)
        : key(arena), args(arena), leaves(arena) {}

    struct leaf {
        const array_data* data;
        std::array<std::ptrdiff_t, 2> strides;  // over the output's elements
    };
    std::pmr::string key;
    std::pmr::vector<detail::kernel_argument> args;
    detail::source_builder* source = nullptr;  // only when generating
    std::pmr::vector<leaf> leaves;             // the distinct arrays read, parameter order
    std::size_t scalars = 0;
    std::size_t out_ndim = 1;
    std::array<std::size_t, 2> out_shape{};
    bool strided = false;  // some operand needs the element's row and column

    // Strides of `a` over the output's elements (0 along broadcast dimensions).
    std::array<std::ptrdiff_t, 2> strides_over_output(const array_data& a) const {
        std::array<std::ptrdiff_t, 2> s = a.strides;
        if (a.ndim == 1 && out_ndim == 2) s[0] = 0;
        for (int d = 0; d < 2; ++d)
            if (a.shape[d] == 1 && out_shape[d] != 1) s[d] = 0;
        return s;
    }
    bool runs_with_output(const std::array<std::ptrdiff_t, 2>& s) const {
        const bool rows_follow =
            out_shape[0] <= 1 || s[0] == static_cast<std::ptrdiff_t>(out_shape[1]);
        return (out_shape[1] <= 1 || s[1] == 1) && rows_follow;
    }

    std::string array_leaf(const array_data& a) {
        const auto s = strides_over_output(a);
        std::size_t k = 0;
        for (; k < leaves.size(); ++k)
            if (leaves[k].data->mem == a.mem && leaves[k].data->offset == a.offset &&
                leaves[k].data->type == a.type && leaves[k].strides == s)
                break;
        const bool runs = runs_with_output(s);
        key += 'a';
        key += static_cast<char>('0' + k);
        key += static_cast<char>('A' + static_cast<int>(a.type));
        key += runs ? 'r' : 's';
        if (!runs) strided = true;
        const bool first = k == leaves.size();
        if (first) leaves.push_back({&a, s});
        if (!source) {
            if (first) {
                args.push_back(detail::storage_argument(a.mem->storage(), kiln::access::in));
                args.push_back(scalar_argument(static_cast<std::uint64_t>(a.offset)));
                if (!runs) {
                    args.push_back(scalar_argument(static_cast<std::int64_t>(s[0])));
                    args.push_back(scalar_argument(static_cast<std::int64_t>(s[1])));
                }
            }
            return {};
        }
        const std::string name = "a" + std::to_string(k);
        if (first) {
            source->parameter("global const " + std::string(storage_type(a.type)) + "* " + name);
            source->parameter("ulong " + name + "_offset");
            if (!runs) {
                source->parameter("long " + name + "_row");
                source->parameter("long " + name + "_column");
            }
        }
        if (runs) return load(a.type, name + "[" + name + "_offset + i]");
        return load(a.type, name + "[" + name + "_offset + (long)row * " + name +
                                "_row + (long)column * " + name + "_column]");
    }

    template <class T>
    static detail::kernel_argument scalar_argument(const T& value) {
        detail::kernel_argument arg;
        std::memcpy(arg.scalar_of_size(sizeof(T)), &value, sizeof(T));
        return arg;
    }

    std::string scalar_leaf(const expression& e) {
        key += 's';
        key += static_cast<char>('A' + static_cast<int>(e.type));
        if (source) {
            const std::string name = "s" + std::to_string(scalars++);
            source->parameter(std::string(compute_type(e.type)) + " " + name);
            return name;
        }
        switch (e.type) {
            case dtype::bool_:
            case dtype::int32:
                args.push_back(scalar_argument(static_cast<std::int32_t>(e.integer)));
                break;
            case dtype::uint32:
                args.push_back(scalar_argument(static_cast<std::uint32_t>(e.integer)));
                break;
            case dtype::int64:
                args.push_back(scalar_argument(e.integer));
                break;
            case dtype::uint64:
                args.push_back(scalar_argument(static_cast<std::uint64_t>(e.integer)));
                break;
            case dtype::float16:
            case dtype::bfloat16:
            case dtype::float32:
                args.push_back(scalar_argument(static_cast<float>(e.number.real())));
                break;
            case dtype::float64:
                args.push_back(scalar_argument(e.number.real()));
                break;
            case dtype::complex64:
                args.push_back(scalar_argument(std::complex<float>(e.number)));
                break;
            case dtype::complex128:
                args.push_back(scalar_argument(e.number));
                break;
        }
        return {};
    }

    // The OpenCL C text of e's value (meaningful when generating), in e's compute type.
    std::string visit(const expression& e) {
        switch (e.what) {
            case expression::kind::array:
                return array_leaf(e.leaf);
            case expression::kind::scalar:
                return scalar_leaf(e);
            case expression::kind::cast: {
                key += 'c';
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                return source ? convert(*source, x, e.a->type, e.type) : std::string();
            }
            case expression::kind::unary: {
                key += 'u';
                key += static_cast<char>(e.code);
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                if (!source) return {};
                // Functions of integers compute in the result's (floating) type.
                const bool widen = unary_function(e.code) != nullptr;
                const dtype in = widen ? e.type : e.a->type;
                return unary_text(*source, e.code, convert(*source, x, e.a->type, in), in, e.type);
            }
            case expression::kind::binary: {
                key += 'b';
                key += static_cast<char>(e.code);
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string x = visit(*e.a);
                const std::string y = visit(*e.b);
                if (!source) return {};
                const dtype in = operand_type(e);
                return binary_text(*source, e.code, convert(*source, x, e.a->type, in),
                                   convert(*source, y, e.b->type, in), in);
            }
            case expression::kind::where: {
                key += 'w';
                key += static_cast<char>('A' + static_cast<int>(e.type));
                const std::string c = visit(*e.a);
                const std::string x = visit(*e.b);
                const std::string y = visit(*e.c);
                if (!source) return {};
                return "((" + c + ") ? " + convert(*source, x, e.b->type, e.type) + " : " +
                       convert(*source, y, e.c->type, e.type) + ")";
            }
        }
        return {};
    }
};

struct cached_kernel {
    explicit cached_kernel(kiln::kernel k)
        : launch(k), work_group(std::min<std::size_t>(256, k.max_work_group_size())) {}
    detail::repeated_launch launch;
    std::size_t work_group;
};

// Looked up by the walk's key as it is, without a std::string made of it.
struct key_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
        return std::hash<std::string_view>{}(key);
    }
};
using kernel_map =
    std::unordered_map<std::string, std::unique_ptr<cached_kernel>, key_hash, std::equal_to<>>;

// Per device, the kernels of the trees met so far, by key (the GIL guards the maps).
kernel_map& kernels_of(const device_entry& d) {
    static std::vector<kernel_map> maps;
    if (maps.size() <= d.number) maps.resize(d.number + 1);
    return maps[d.number];
}

}  // namespace

std::size_t cached_kernels(const device_entry& d) {
    return kernels_of(d).size();
}

std::shared_ptr<const expression> leaf_of(const array_data& a) {
    auto e = std::make_shared<expression>();
    e->what = expression::kind::array;
    e->type = a.type;
    e->where = a.where;
    e->ndim = a.ndim;
    e->shape = a.shape;
    e->leaf = a;
    return e;
}

namespace {
const py::detail::type_info* ndarray_record() {
    static const py::detail::type_info* const record = py::detail::get_type_info(typeid(ndarray));
    return record;
}
}  // namespace

const ndarray* ndarray_of(py::handle x) {
    const py::detail::type_info* record = ndarray_record();
    if (!PyObject_TypeCheck(x.ptr(), record->type)) return nullptr;
    py::detail::type_caster_generic caster(record);
    if (!caster.load(x, false)) return nullptr;
    return static_cast<const ndarray*>(caster.value);
}

const array_data& data_of(py::handle x, const char* call) {
    const ndarray* a = ndarray_of(x);
    if (a == nullptr)
        throw py::type_error(std::string(call) + ": takes a kiln.ndarray (kiln.asarray makes one)");
    return a->data();
}

py::object python_of(std::shared_ptr<ndarray> a) {
    // As pybind11's holder caster does: the instance takes a copy of the holder.
    return py::reinterpret_steal<py::object>(
        py::detail::type_caster_generic::cast(a.get(), py::return_value_policy::take_ownership, {},
                                              ndarray_record(), nullptr, nullptr, &a));
}

const std::shared_ptr<const expression>& ndarray::leaf() const {
    if (!leaf_) leaf_ = leaf_of(data());
    return leaf_;
}

void evaluate_into(const expression& e, const array_data& target) {
    const std::size_t n = target.size();
    if (n == 0) return;
    // Room for the key, leaves and arguments of a tree of a dozen operands; larger ones spill
    // to the heap.
    std::array<std::byte, 4096> scratch;
    std::pmr::monotonic_buffer_resource arena(scratch.data(), scratch.size());
    kernel_walk walk(&arena);
    walk.args.reserve(16);
    walk.out_ndim = target.ndim;
    walk.out_shape = target.shape;
    const auto out_strides = target.strides;
    const bool out_runs = walk.runs_with_output(out_strides);
    walk.key = out_runs ? "o" : "O";
    walk.key += static_cast<char>('A' + static_cast<int>(target.type));
    // The output's arguments come first, as the kernel's parameters do.
    walk.args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(n)));
    walk.args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(target.shape[1])));
    walk.args.push_back(detail::storage_argument(target.mem->storage(), kiln::access::out));
    walk.args.push_back(kernel_walk::scalar_argument(static_cast<std::uint64_t>(target.offset)));
    if (!out_runs) {
        walk.args.push_back(
            kernel_walk::scalar_argument(static_cast<std::int64_t>(out_strides[0])));
        walk.args.push_back(
            kernel_walk::scalar_argument(static_cast<std::int64_t>(out_strides[1])));
    }
    walk.visit(e);
    // An operand that reads the target's memory elsewhere than at each element's own place
    // would race with the writes: evaluate into new memory first (as NumPy copies overlaps).
    for (const auto& leaf : walk.leaves) {
        if (leaf.data->mem == target.mem &&
            (leaf.data->offset != target.offset || leaf.strides != out_strides)) {
            const array_data staged = evaluate(e);
            evaluate_into(*leaf_of(staged), target);
            return;
        }
    }
    const device_entry& where = *target.where;
    auto& cache = kernels_of(where);
    auto found = cache.find(std::string_view(walk.key));
    if (found == cache.end()) {
        detail::source_builder source;
        kernel_walk generating(std::pmr::new_delete_resource());
        generating.source = &source;
        generating.out_ndim = walk.out_ndim;
        generating.out_shape = walk.out_shape;
        source.begin_kernel("kiln_elementwise");
        source.parameter("ulong n");
        source.parameter("ulong columns");
        source.parameter("global " + std::string(storage_type(target.type)) + "* out");
        source.parameter("ulong out_offset");
        if (!out_runs) {
            source.parameter("long out_row");
            source.parameter("long out_column");
        }
        const std::string value = generating.visit(e);
        source.begin_body();
        source.line("const ulong i = get_global_id(0);");
        source.line("if (i >= n) return;");
        if (generating.strided || !out_runs)
            source.line("const ulong row = i / columns, column = i - row * columns;");
        const std::string at =
            out_runs ? "out[out_offset + i]"
                     : "out[out_offset + (long)row * out_row + (long)column * out_column]";
        source.line(at + " = " + store(target.type, convert(source, value, e.type, target.type)) +
                    ";");
        source.end_kernel();
        const std::string text = source.str();
        kiln::kernel k = [&] {
            py::gil_scoped_release unlocked;
            return kiln::program(where.device, text).kernel("kiln_elementwise");
        }();
        found = cache.emplace(std::string(walk.key), std::make_unique<cached_kernel>(std::move(k)))
                    .first;
    }
    const std::size_t group = found->second->work_group;
    found->second->launch.enqueue(where.queue, (n + group - 1) / group * group, group, walk.args);
}

array_data evaluate(const expression& e) {
    array_data out = array_data::empty(*e.where, e.type, e.ndim, e.shape);
    evaluate_into(e, out);
    return out;
}

array_data compact(const array_data& a) {
    if (a.compact() && a.offset == 0) return a;
    return copied(a);
}

array_data copied(const array_data& a) {
    return evaluate(*leaf_of(a));
}

kiln::detail::buffer_storage owned_compact_copy(const array_data& a) {
    array_data copy;
    copy.where = a.where;
    copy.type = a.type;
    copy.ndim = a.ndim;
    copy.shape = a.shape;
    copy.strides = {static_cast<std::ptrdiff_t>(a.shape[1]), 1};
    copy.mem = memory::adopt(kiln::detail::buffer_storage(
        a.where->device, kiln::detail::checked_bytes(a.size(), itemsize(a.type)),
        kiln::access::inout));
    evaluate_into(*leaf_of(a), copy);
    return copy.mem->storage();
}

array_data converted(const array_data& a, dtype t) {
    if (a.type == t) return a;
    auto e = std::make_shared<expression>(*leaf_of(a));
    auto cast = std::make_shared<expression>();
    cast->what = expression::kind::cast;
    cast->type = t;
    cast->where = a.where;
    cast->ndim = a.ndim;
    cast->shape = a.shape;
    cast->a = e;
    return evaluate(*cast);
}

}  // namespace kiln::python
