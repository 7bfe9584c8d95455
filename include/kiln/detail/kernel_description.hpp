// SPDX-License-Identifier: Apache-2.0
// Kernel descriptions: a generated kernel's name and its parameter slots, written once and read
// by both sides of the launch. The generator declares the kernel's parameters from the
// description, so their names and order cannot drift from what the host binds; the host binds
// its arguments by slot name through a kernel_binding, which rejects an argument of the wrong
// kind or type, a slot bound twice and a slot left unbound when the arguments are taken, before
// anything reaches the device.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/program.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::detail {

/// What a parameter slot holds.
enum class slot_kind {
    global,        ///< `global T* name`: memory the kernel may write
    global_const,  ///< `global const T* name`: memory the kernel only reads
    scalar,        ///< `T name`: a value
    local,         ///< `local T* name`: the group's memory, sized at the launch
};

/// One parameter of a kernel.
struct parameter_slot {
    std::string name;
    slot_kind kind = slot_kind::scalar;
    /// The OpenCL C type: the pointee of a pointer, the value's type of a scalar.
    std::string type;
    /// A scalar's bytes on the host, which an argument must have.
    std::size_t bytes = 0;
    /// A pointer declared `restrict`: the kernel reaches its memory through no other pointer.
    bool restricted = false;
    /// The slot's declaration in the kernel's parameter list.
    std::string declaration() const;
};

/// A kernel's name and its parameters in order. A kernel may take the parameters of an input
/// expression among its slots (takes_input): those are declared by the expression's generate()
/// and bound in the order its collect() gives, a contract of their own (kiln/expr/core.hpp).
class kernel_description {
  public:
    explicit kernel_description(std::string name) : name_(std::move(name)) {}

    kernel_description& global(std::string type, std::string name);
    kernel_description& global_const(std::string type, std::string name);
    kernel_description& scalar(std::string type, std::string name, std::size_t bytes);
    kernel_description& local(std::string type, std::string name);
    /// Declares the last slot's pointer restrict.
    kernel_description& restricted();
    template <device_representable T>
    kernel_description& global(std::string name) {
        return global(opencl_type_name<T>(), std::move(name));
    }
    template <device_representable T>
    kernel_description& global_const(std::string name) {
        return global_const(opencl_type_name<T>(), std::move(name));
    }
    /// bool travels as int (opencl_type_name), so it is not a scalar type here.
    template <device_representable T>
    requires(!std::is_same_v<T, bool>) kernel_description& scalar(std::string name) {
        return scalar(opencl_type_name<T>(), std::move(name), sizeof(T));
    }
    /// The input expression's parameters come here: after the slots declared so far, before
    /// those declared after.
    kernel_description& then_input();

    const std::string& name() const noexcept { return name_; }
    const std::vector<parameter_slot>& slots() const noexcept { return slots_; }
    bool takes_input() const noexcept { return takes_input_; }
    /// The slots before the input's parameters.
    std::size_t input_position() const noexcept { return input_position_; }
    /// The position of the slot `name`; throws invalid_argument_error naming the kernel.
    std::size_t slot_index(std::string_view name) const;

    /// Declares the slots as the kernel's parameters, in order, after begin_kernel, calling
    /// declare_input where the input's parameters come. Without declare_input the input must
    /// come last, declared by the caller after this.
    void declare(source_builder& b, const std::function<void()>& declare_input = {}) const;

  private:
    kernel_description& add(parameter_slot slot);

    std::string name_;
    std::vector<parameter_slot> slots_;
    bool takes_input_ = false;
    std::size_t input_position_ = 0;  ///< the slots before the input's parameters
};

/// The names of `kernels`, in order (what algorithm_program creates its kernels from).
std::vector<std::string> kernel_names(const std::vector<kernel_description>& kernels);

/// The OpenCL C element type a buffer<T> binds to, as kernel_binding checks it: raw bytes are
/// `uchar`; "" where kiln cannot tell (bool, types without an OpenCL C name), which any slot
/// accepts.
template <class T>
std::string bound_element_type() {
    if constexpr (std::is_same_v<T, std::byte>)
        return "uchar";
    else
        return std::string(buffer_element_type<T>());
}

/// The arguments of one launch of a described kernel, bound by slot name. Every check throws
/// invalid_argument_error naming the kernel and the slot.
class kernel_binding {
  public:
    /// Refers to `kernel`, which must outlive the binding.
    explicit kernel_binding(const kernel_description& kernel);
    explicit kernel_binding(kernel_description&&) = delete;

    /// A value for a scalar slot of T's OpenCL C type (bool binds to an int slot).
    template <class T>
    requires device_representable<T> kernel_binding& scalar(std::string_view slot, const T& value) {
        if constexpr (std::is_same_v<T, bool>) {
            return scalar(slot, static_cast<std::int32_t>(value));
        } else {
            return set(slot, make_argument(value), opencl_type_name<T>());
        }
    }
    /// A buffer for a pointer slot to its element type; `in` buffers only to const slots.
    template <class T, access A>
    kernel_binding& buffer(std::string_view slot, const kiln::buffer<T, A>& memory) {
        return set(slot, make_argument(memory), bound_element_type<T>());
    }
    /// `bytes` of the group's memory for a local slot.
    kernel_binding& local(std::string_view slot, std::size_t bytes);
    /// An argument already made (type-erased operands, as the sort's): checked by its kind, a
    /// scalar's size and a buffer's element type where known.
    kernel_binding& argument(std::string_view slot, kernel_argument arg) {
        std::string type(arg.element_type);
        return set(slot, std::move(arg), std::move(type));
    }
    /// The input expression's arguments, once, for a kernel that takes_input.
    kernel_binding& input(std::vector<kernel_argument> arguments);

    const kernel_description& description() const noexcept { return *kernel_; }
    /// The arguments in the kernel's order; throws if a slot (or the input) is left unbound.
    std::vector<kernel_argument> take() &&;

  private:
    /// Binds `arg`, whose OpenCL C type (a buffer's element, a scalar's value) is `type`, or ""
    /// where unknown.
    kernel_binding& set(std::string_view slot, kernel_argument arg, std::string type);
    [[noreturn]] void fail(std::string_view slot, const std::string& why) const;

    const kernel_description* kernel_;
    std::vector<kernel_argument> arguments_;
    std::vector<bool> bound_;
    std::vector<kernel_argument> input_;
    bool input_bound_ = false;
};

}  // namespace kiln::detail
#pragma GCC visibility pop
