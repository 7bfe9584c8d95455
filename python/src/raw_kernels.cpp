// SPDX-License-Identifier: Apache-2.0
// Kernels of the user's own: kiln.RawKernel (OpenCL C source and a kernel name, launched on kiln
// arrays) and kiln.ElementwiseKernel (typed parameters and a C-like body run for every element,
// in one generated kernel), both built through kiln::program and its compile cache.
#include <pybind11/stl.h>

#include <map>
#include <sstream>

#include "expression.hpp"
#include "expression_text.hpp"

namespace kiln::python {

namespace {

// The OpenCL C pointee a kernel parameter must have for an array of each dtype ("" unchecked:
// 16-bit floats travel as ushort or half, bool as uchar or bool).
std::string_view checked_pointee(dtype t) {
    switch (t) {
        case dtype::int32:
            return "int";
        case dtype::uint32:
            return "uint";
        case dtype::int64:
            return "long";
        case dtype::uint64:
            return "ulong";
        case dtype::float32:
            return "float";
        case dtype::float64:
            return "double";
        case dtype::complex64:
            return "float2";
        case dtype::complex128:
            return "double2";
        default:
            return {};
    }
}

const array_data& writable_array(const py::handle& x, const char* call) {
    const array_data& a = x.cast<const ndarray&>().data();
    if (!a.compact() || a.offset != 0)
        throw py::value_error(std::string(call) +
                              ": arrays passed to kernels are whole and compact (a view is not: "
                              "pass .copy())");
    return a;
}

template <class T>
detail::kernel_argument scalar_argument(const T& value) {
    detail::kernel_argument arg;
    std::memcpy(arg.scalar_of_size(sizeof(T)), &value, sizeof(T));
    return arg;
}

// A Python or NumPy number as a kernel's scalar: NumPy scalars keep their dtype, Python ints are
// int (32 bits) and floats float, OpenCL C's defaults for literals of those kinds.
detail::kernel_argument number_argument(const py::handle& x) {
    py::module_ np = py::module_::import("numpy");
    if (py::isinstance(x, np.attr("generic"))) {
        const dtype t = dtype_of(x.attr("dtype"));
        py::array one = np.attr("asarray")(x);
        detail::kernel_argument arg;
        std::memcpy(arg.scalar_of_size(itemsize(t)), one.data(), itemsize(t));
        return arg;
    }
    if (py::isinstance<py::bool_>(x) || py::isinstance<py::int_>(x))
        return scalar_argument(x.cast<std::int32_t>());
    if (py::isinstance<py::float_>(x)) return scalar_argument(x.cast<float>());
    throw py::type_error("kiln kernels take kiln.ndarray and number arguments, not " +
                         py::str(py::type::handle_of(x)).cast<std::string>());
}

kiln::range range_of(const py::object& sizes) {
    if (py::isinstance<py::int_>(sizes)) return kiln::range(sizes.cast<std::size_t>());
    auto v = sizes.cast<std::vector<std::size_t>>();
    if (v.size() == 1) return kiln::range(v[0]);
    if (v.size() == 2) return kiln::range({v[0], v[1]});
    return kiln::range({v.at(0), v.at(1), v.at(2)});
}

class raw_kernel {
  public:
    raw_kernel(std::string source, std::string name, std::string options)
        : source_(std::move(source)), name_(std::move(name)), options_(std::move(options)) {}

    // CuPy's convention: grid in work-groups, block in work-items per group.
    void launch(const py::object& grid, const py::object& block, const py::sequence& args) {
        const device_entry* where = nullptr;
        std::vector<detail::kernel_argument> bound;
        evaluate_pending();  // the kernel may write any of its arrays
        for (const auto& a : args) {
            if (ndarray_of(a)) {
                const array_data& d = writable_array(a, "kiln.RawKernel");
                if (where && where != d.where) check_same_device("kiln.RawKernel", *where, d);
                where = d.where;
                bound.push_back(
                    detail::storage_argument(d.exact_storage(), checked_pointee(d.type)));
            } else {
                bound.push_back(number_argument(a));
            }
        }
        if (!where) where = &default_device_entry();
        const kiln::kernel& k = kernel_for(*where);
        kiln::range local = range_of(block);
        std::vector<std::size_t> global;
        for (std::size_t d = 0; d < local.dims(); ++d) global.push_back(local[d]);
        if (py::isinstance<py::int_>(grid))
            global[0] *= grid.cast<std::size_t>();
        else {
            auto g = grid.cast<std::vector<std::size_t>>();
            for (std::size_t d = 0; d < g.size() && d < global.size(); ++d) global[d] *= g[d];
        }
        kiln::range global_range = global.size() == 1 ? kiln::range(global[0])
                                   : global.size() == 2
                                       ? kiln::range({global[0], global[1]})
                                       : kiln::range({global[0], global[1], global[2]});
        k.bind(std::move(bound)).launch(where->queue, global_range, local);
    }

  private:
    const kiln::kernel& kernel_for(const device_entry& where) {
        auto found = kernels_.find(where.number);
        if (found == kernels_.end()) {
            kiln::kernel k = [&] {
                py::gil_scoped_release unlocked;
                return kiln::program(where.device, source_, options_).kernel(name_);
            }();
            found = kernels_.emplace(where.number, std::move(k)).first;
        }
        return found->second;
    }

    std::string source_, name_, options_;
    std::map<std::size_t, kiln::kernel> kernels_;
};

struct parameter {
    dtype type;
    std::string name;
};

std::vector<parameter> parse(const std::string& text, const char* call) {
    std::vector<parameter> list;
    std::stringstream all(text);
    std::string one;
    while (std::getline(all, one, ',')) {
        std::stringstream words(one);
        std::string type, name;
        if (!(words >> type >> name))
            throw py::value_error(std::string(call) + ": a parameter is 'dtype name', not '" + one +
                                  "'");
        list.push_back({dtype_of(py::str(type)), name});
    }
    return list;
}

class elementwise_kernel {
  public:
    elementwise_kernel(const std::string& in, const std::string& out, std::string operation,
                       std::string name, std::string options)
        : in_(parse(in, "kiln.ElementwiseKernel")),
          out_(parse(out, "kiln.ElementwiseKernel")),
          operation_(std::move(operation)),
          name_(std::move(name)),
          options_(std::move(options)) {
        if (out_.empty()) throw py::value_error("kiln.ElementwiseKernel: no output parameter");
    }

    py::object call(const py::args& args) {
        if (args.size() != in_.size() && args.size() != in_.size() + out_.size())
            throw py::value_error("kiln.ElementwiseKernel " + name_ + ": takes " +
                                  std::to_string(in_.size()) + " inputs (and optionally " +
                                  std::to_string(out_.size()) + " outputs), got " +
                                  std::to_string(args.size()) + " arguments");
        const device_entry* where = nullptr;
        std::size_t n = 0, ndim = 1;
        std::array<std::size_t, 2> shape{1, 0};
        std::string mask;
        std::vector<array_data> inputs(in_.size());
        for (std::size_t k = 0; k < in_.size(); ++k) {
            const ndarray* held = ndarray_of(args[k]);
            if (!held) {
                mask += 's';
                continue;
            }
            mask += 'a';
            array_data d = compact(converted(held->data(), in_[k].type));
            if (where) check_same_device("kiln.ElementwiseKernel", *where, d);
            if (where && d.size() != n)
                throw py::value_error("kiln.ElementwiseKernel " + name_ +
                                      ": the arrays differ in size");
            where = d.where;
            n = d.size();
            ndim = d.ndim;
            shape = d.shape;
            inputs[k] = std::move(d);
        }
        if (!where)
            throw py::value_error("kiln.ElementwiseKernel " + name_ + ": needs an array argument");
        std::vector<array_data> outputs;
        evaluate_pending();
        for (std::size_t k = 0; k < out_.size(); ++k) {
            if (args.size() > in_.size()) {
                const array_data& d =
                    writable_array(args[in_.size() + k], "kiln.ElementwiseKernel");
                if (d.type != out_[k].type || d.size() != n)
                    throw py::value_error("kiln.ElementwiseKernel " + name_ + ": output " +
                                          out_[k].name + " must be " +
                                          std::string(name_of(out_[k].type)) + " of " +
                                          std::to_string(n) + " elements");
                check_same_device("kiln.ElementwiseKernel", *where, d);
                outputs.push_back(d);
            } else {
                outputs.push_back(array_data::empty(*where, out_[k].type, ndim, shape));
            }
        }
        std::vector<detail::kernel_argument> bound;
        bound.push_back(scalar_argument(static_cast<std::uint64_t>(n)));
        for (std::size_t k = 0; k < in_.size(); ++k) {
            if (mask[k] == 'a')
                bound.push_back(
                    detail::storage_argument(inputs[k].exact_storage(), kiln::access::in));
            else
                bound.push_back(scalar_of(args[k], in_[k].type));
        }
        for (const auto& o : outputs)
            bound.push_back(detail::storage_argument(o.exact_storage(), kiln::access::out));
        if (n > 0) {
            const kiln::kernel& k = kernel_for(*where, mask);
            const std::size_t group = std::min<std::size_t>(256, k.max_work_group_size());
            k.bind(std::move(bound)).launch(where->queue, (n + group - 1) / group * group, group);
        }
        if (outputs.size() == 1) return wrap(std::move(outputs[0]));
        py::tuple result(outputs.size());
        for (std::size_t k = 0; k < outputs.size(); ++k) result[k] = wrap(std::move(outputs[k]));
        return result;
    }

  private:
    static detail::kernel_argument scalar_of(const py::handle& x, dtype t) {
        return visit(t, [&](auto zero) -> detail::kernel_argument {
            using T = decltype(zero);
            if constexpr (std::is_same_v<T, bool>)
                return scalar_argument(static_cast<std::int32_t>(x.cast<bool>()));
            else if constexpr (std::is_same_v<T, kiln::half> || std::is_same_v<T, kiln::bfloat16>)
                return scalar_argument(x.cast<float>());
            else
                return scalar_argument(x.cast<T>());
        });
    }

    std::string source(const std::string& mask) const {
        std::string s = "kernel void " + name_ + "(ulong kiln_n";
        for (std::size_t k = 0; k < in_.size(); ++k) {
            if (mask[k] == 'a')
                s += ", global const " + std::string(storage_type(in_[k].type)) + "* kiln_in_" +
                     in_[k].name;
            else
                s += ", " + std::string(compute_type(in_[k].type)) + " " + in_[k].name;
        }
        for (const auto& o : out_)
            s += ", global " + std::string(storage_type(o.type)) + "* kiln_out_" + o.name;
        s += ") {\n    const ulong i = get_global_id(0);\n    if (i >= kiln_n) return;\n";
        for (std::size_t k = 0; k < in_.size(); ++k)
            if (mask[k] == 'a')
                s += "    const " + std::string(compute_type(in_[k].type)) + " " + in_[k].name +
                     " = " + load(in_[k].type, "kiln_in_" + in_[k].name + "[i]") + ";\n";
        for (const auto& o : out_)
            s += "    " + std::string(compute_type(o.type)) + " " + o.name + ";\n";
        s += "    {\n" + operation_ + ";\n    }\n";
        for (const auto& o : out_)
            s += "    kiln_out_" + o.name + "[i] = " + store(o.type, o.name) + ";\n";
        return s + "}\n";
    }

    const kiln::kernel& kernel_for(const device_entry& where, const std::string& mask) {
        const std::string key = std::to_string(where.number) + mask;
        auto found = kernels_.find(key);
        if (found == kernels_.end()) {
            const std::string text = source(mask);
            kiln::kernel k = [&] {
                py::gil_scoped_release unlocked;
                return kiln::program(where.device, text, options_).kernel(name_);
            }();
            found = kernels_.emplace(key, std::move(k)).first;
        }
        return found->second;
    }

    std::vector<parameter> in_, out_;
    std::string operation_, name_, options_;
    std::map<std::string, kiln::kernel> kernels_;
};

}  // namespace

void bind_raw_kernels(py::module_& m) {
    py::class_<raw_kernel>(m, "RawKernel")
        .def(py::init<std::string, std::string, std::string>(), py::arg("source"), py::arg("name"),
             py::arg("options") = "")
        .def("__call__", &raw_kernel::launch, py::arg("grid"), py::arg("block"), py::arg("args"));
    py::class_<elementwise_kernel>(m, "ElementwiseKernel")
        .def(py::init<std::string, std::string, std::string, std::string, std::string>(),
             py::arg("in_params"), py::arg("out_params"), py::arg("operation"),
             py::arg("name") = "kiln_elementwise_kernel", py::arg("options") = "")
        .def("__call__", &elementwise_kernel::call);
}

}  // namespace kiln::python
