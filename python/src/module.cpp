// SPDX-License-Identifier: Apache-2.0
// The _kiln extension module: kiln's exceptions as Python's, and each part's bindings.
#include "array.hpp"

namespace kiln::python {

namespace {
PyObject* kiln_error_type = nullptr;
}  // namespace

void set_python_error(std::exception_ptr p) {
    try {
        std::rethrow_exception(p);
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (const py::builtin_exception& e) {
        e.set_error();
    } catch (const kiln::invalid_argument_error& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const kiln::out_of_memory_error& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const kiln::error& e) {
        // PyErr_SetString rather than error(e.what()), which pybind11 3 deprecates, or
        // py::set_error, which Debian's pybind11 2.10 lacks.
        PyErr_SetString(kiln_error_type, e.what());
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "kiln: an unknown C++ exception");
    }
}

void bind_errors(py::module_& m) {
    static py::exception<kiln::error> error(m, "Error", PyExc_RuntimeError);
    kiln_error_type = error.ptr();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const kiln::error&) {
            set_python_error(std::current_exception());
        }
    });
}

}  // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
    using namespace kiln::python;
    m.doc() = "kiln's C++ library for Python: arrays, element-wise kernels, algorithms, DLPack";
    bind_errors(m);
    bind_arrays(m);
    bind_elementwise(m);
    bind_algorithms(m);
    bind_linalg(m);
    bind_interop(m);
    bind_raw_kernels(m);
}
