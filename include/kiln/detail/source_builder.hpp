// SPDX-License-Identifier: Apache-2.0
// The one backend-neutral generator of kernel source: every kernel kiln writes goes through it.
//
// It writes portable OpenCL C 1.2 (kernel/global/local, get_global_id & co, barrier, scalar and
// vector types, the common math built-ins), the subset that kiln's CUDA backend translates for
// NVRTC. Helper definitions are added once by key, whatever the order in which the parts of an
// expression ask for them; the fp64 pragma appears only when the finished source uses double.
#pragma once
#pragma GCC visibility push(default)

#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/device_type_names.hpp>
#include <kiln/half.hpp>
#include <kiln/vector_types.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::detail {

/// How the work-items of a launch share the elements of a 1-D problem.
enum class loop_style {
    /// Work-item g visits g, g + G, g + 2G... (G work-items in all): neighbouring work-items
    /// touch neighbouring elements at the same time, which is what GPUs coalesce.
    strided,
    /// Work-item g visits one contiguous chunk: what CPU caches and vectorisers want, since CPU
    /// implementations run a work-group's items one after another on one core.
    chunked,
};

/// The elements one work-item visits: `for (i = begin; i < end; i += step)`.
struct element_range {
    std::string begin, end, step;
};

/// Writes one program: helper definitions first, then kernels, indented and readable (users see
/// it with KILN_SHOW_KERNELS=1 and in compile errors).
class source_builder {
  public:
    /// Adds a definition (function, typedef) once under `key`; later calls with the same key are
    /// ignored. Returns whether it was added now.
    bool define(std::string_view key, std::string_view text);
    bool is_defined(std::string_view key) const;
    /// Adds each of `other`'s definitions, in its order, that is not defined here.
    void define_all(const source_builder& other);

    /// Starts `kernel void name(`; parameters follow, then begin_body().
    void begin_kernel(std::string_view name);
    /// The same for a kernel that is always launched in groups of `work_group_size` items:
    /// reqd_work_group_size lets the compiler size local arrays and unroll group loops (CUDA:
    /// __launch_bounds__).
    void begin_kernel(std::string_view name, std::size_t work_group_size);
    /// One parameter declaration, e.g. "global const float* p0" or "ulong n".
    void parameter(std::string_view declaration);
    /// Typed parameters: `global T* name`, `global const T* name`, `T name`.
    template <device_representable T>
    void global_parameter(std::string_view name) {
        parameter("global " + opencl_type_name<T>() + "* " + std::string(name));
    }
    template <device_representable T>
    void global_const_parameter(std::string_view name) {
        parameter("global const " + opencl_type_name<T>() + "* " + std::string(name));
    }
    template <device_representable T>
    void scalar_parameter(std::string_view name) {
        parameter(opencl_type_name<T>() + " " + std::string(name));
    }

    /// `type name = (type)parameter;` where the body begins: another name for a parameter
    /// declared before, where code is generated as if the kernel took one argument for each name
    /// (a vector read twice, which the launch passes once: fused_context::declared).
    void parameter_alias(std::string_view type, std::string_view name, std::string_view parameter);

    /// How the launch passes a parameter (expr/launch.hpp, packed_arguments): as
    /// declared; as range `index` (from 0) of allocation `allocation` (from 1), whose ranges are
    /// `kiln_stride<allocation>` bytes apart; or, where `together` is its size in bytes, as a
    /// member of one struct of the kernel's scalars, its last parameter.
    struct passed_parameter {
        std::uint32_t allocation = 0, index = 0, together = 0;
    };
    /// For the current kernel, before begin_body(): each range `global T* name` becomes a pointer
    /// into `global uchar* kiln_allocation<number>` (a parameter in place of the allocation's
    /// first range), each scalar passed together (and each allocation's stride) a member of
    /// `kiln_scalars`, and `name` a copy of the member.
    void pass_parameters(std::vector<passed_parameter> how);

    /// A compile-time constant of the program (a tuning value): `#define NAME value`, once.
    void constant(std::string_view name, std::uint64_t value);
    void begin_body();
    void end_kernel();

    /// One line of code at the current indentation.
    void line(std::string_view text);
    /// `header {` (a bare block when header is empty) and one more level of indentation, until
    /// close().
    void open(std::string_view header);
    void close();
    /// `} trailer`, e.g. the `while (...);` of a do loop.
    void close_with(std::string_view trailer);

    /// Declares whatever `range` needs for a problem of `size` elements (a variable holding the
    /// size) split across the launch the way `style` says, and returns the range. Chunks are
    /// multiples of `granule` elements (but the last).
    element_range declare_element_range(loop_style style, std::string_view size,
                                        std::size_t granule = 1);
    /// `for (ulong index = begin; index < end; index += step) {` over the range; close() ends it.
    void open_element_loop(const element_range& range, std::string_view index);
    /// Waits for every work-item of the group and makes local-memory writes visible to them.
    void local_barrier();
    /// `local type name[count];` in the kernel body: a work-group array sized at compile time.
    void local_array(std::string_view type, std::string_view name, std::string_view count);
    /// `for (ulong row = ...; row < rows; ...) for (ulong column = ...; column < columns; ...)`
    /// over a 2-D launch (dimension 1 rows, dimension 0 columns, so that neighbouring work-items
    /// touch neighbouring columns); close() twice ends it.
    void open_2d_loop(std::string_view rows, std::string_view columns, std::string_view row,
                      std::string_view column);

    // Ids as 32-bit (within a group) or 64-bit (global) unsigned values, the same text on every
    // backend.
    static std::string local_id() { return "(uint)get_local_id(0)"; }
    static std::string group_id() { return "(ulong)get_group_id(0)"; }
    static std::string group_count() { return "(ulong)get_num_groups(0)"; }
    static std::string local_size() { return "(uint)get_local_size(0)"; }
    static std::string global_id() { return "(ulong)get_global_id(0)"; }

    /// Look-back flags between work-groups of one launch, in OpenCL C 1.2 (which the CUDA
    /// translation understands): a release store makes the writes before it visible to a
    /// work-group that sees the stored value through an acquire load. Volatile accesses go to the
    /// coherent level of the memory hierarchy (L2 on GPUs) and the global fence orders them
    /// (CUDA: __threadfence()). Aligned 32- and 64-bit volatile accesses are single accesses on
    /// every device kiln runs on, so a reader never sees half of a flag-and-value word.
    /// `pointer` is a `global T*` expression and `type` its element type.
    void release_store(std::string_view type, std::string_view pointer, std::string_view value);
    /// `target = acquire load of *pointer` (target must be declared).
    void acquire_load(std::string_view type, std::string_view pointer, std::string_view target);

    /// `#pragma OPENCL FP_CONTRACT OFF` for the whole program: no a * b + c fused into one
    /// rounding, on any backend (the CUDA translation compiles it with --fmad=false).
    void turn_off_contraction() { contraction_off_ = true; }

    /// The finished program.
    std::string str() const;

  private:
    std::vector<std::pair<std::string, std::string>> definitions_;
    std::string kernels_;
    std::vector<std::string> parameters_, parameter_aliases_;
    std::vector<passed_parameter> passed_;
    int scalar_structs_ = 0;
    int indent_ = 0;
    bool contraction_off_ = false;
};

/// Adds what a kernel using T needs declared: a KILN_STRUCT's declaration (built-in types need
/// nothing).
template <device_representable T>
void declare_type(source_builder& source) {
    if constexpr (declared_struct<T>)
        source.define(std::string("struct ") + T::kiln_struct_name, T::kiln_struct_declaration());
}

/// The source with numbered lines, as compile errors show it.
std::string with_line_numbers(std::string_view source);

}  // namespace kiln::detail
#pragma GCC visibility pop
