// SPDX-License-Identifier: Apache-2.0
// Kernel descriptions and their checked bindings (kiln/detail/kernel_description.hpp).
#include <kiln/detail/kernel_description.hpp>
#include <kiln/error.hpp>

namespace kiln::detail {

std::string parameter_slot::declaration() const {
    const std::string pointer = restricted ? "* restrict " : "* ";
    switch (kind) {
        case slot_kind::global:
            return "global " + type + pointer + name;
        case slot_kind::global_const:
            return "global const " + type + pointer + name;
        case slot_kind::local:
            return "local " + type + pointer + name;
        case slot_kind::scalar:
            break;
    }
    return type + " " + name;
}

kernel_description& kernel_description::add(parameter_slot slot) {
    for (const auto& known : slots_)
        if (known.name == slot.name)
            throw invalid_argument_error(
                "kiln::detail::kernel_description",
                "kernel " + name_ + " declares slot '" + slot.name + "' twice");
    slots_.push_back(std::move(slot));
    return *this;
}

kernel_description& kernel_description::global(std::string type, std::string name) {
    return add({std::move(name), slot_kind::global, std::move(type)});
}

kernel_description& kernel_description::global_const(std::string type, std::string name) {
    return add({std::move(name), slot_kind::global_const, std::move(type)});
}

kernel_description& kernel_description::scalar(std::string type, std::string name,
                                               std::size_t bytes) {
    return add({std::move(name), slot_kind::scalar, std::move(type), bytes});
}

kernel_description& kernel_description::local(std::string type, std::string name) {
    return add({std::move(name), slot_kind::local, std::move(type)});
}

kernel_description& kernel_description::restricted() {
    if (slots_.empty() || slots_.back().kind == slot_kind::scalar)
        throw invalid_argument_error("kiln::detail::kernel_description",
                                     "kernel " + name_ + ": only a pointer is restrict");
    slots_.back().restricted = true;
    return *this;
}

kernel_description& kernel_description::then_input() {
    takes_input_ = true;
    input_position_ = slots_.size();
    return *this;
}

std::size_t kernel_description::slot_index(std::string_view name) const {
    for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].name == name) return i;
    throw invalid_argument_error("kiln::detail::kernel_binding",
                                 "kernel " + name_ + " has no slot '" + std::string(name) + "'");
}

void kernel_description::declare(source_builder& b,
                                 const std::function<void()>& declare_input) const {
    for (std::size_t i = 0; i <= slots_.size(); ++i) {
        if (takes_input_ && i == input_position_ && declare_input) declare_input();
        if (i < slots_.size()) b.parameter(slots_[i].declaration());
    }
}

std::vector<std::string> kernel_names(const std::vector<kernel_description>& kernels) {
    std::vector<std::string> names;
    names.reserve(kernels.size());
    for (const auto& kernel : kernels) names.push_back(kernel.name());
    return names;
}

kernel_binding::kernel_binding(const kernel_description& kernel)
    : kernel_(&kernel), arguments_(kernel.slots().size()), bound_(kernel.slots().size(), false) {}

void kernel_binding::fail(std::string_view slot, const std::string& why) const {
    throw invalid_argument_error(
        "kiln::detail::kernel_binding",
        "kernel " + kernel_->name() + ", slot '" + std::string(slot) + "': " + why);
}

kernel_binding& kernel_binding::set(std::string_view slot, kernel_argument arg, std::string type) {
    const std::size_t index = kernel_->slot_index(slot);
    const parameter_slot& declared = kernel_->slots()[index];
    if (bound_[index]) fail(slot, "bound twice");
    const bool memory = arg.what == kernel_argument::kind::buffer;
    if (declared.kind == slot_kind::local) {
        if (arg.what != kernel_argument::kind::local)
            fail(slot, "local memory is declared (" + declared.declaration() + ")");
    } else if (declared.kind == slot_kind::scalar) {
        if (arg.what != kernel_argument::kind::scalar)
            fail(slot, "a scalar of " + declared.type + " is declared, not memory");
        if (!type.empty() && type != declared.type)
            fail(slot, "a scalar of " + declared.type + " is declared, got " + type);
        if (declared.bytes != 0 && arg.size != declared.bytes)
            fail(slot, "a scalar of " + std::to_string(declared.bytes) +
                           " bytes is declared, got " + std::to_string(arg.size));
    } else {
        const std::string pointer = declared.declaration();
        if (!memory) fail(slot, "a buffer is declared (" + pointer + "), not a scalar");
        if (!type.empty() && type != declared.type)
            fail(slot, "a buffer of " + declared.type + " is declared, got one of " + type);
        if (declared.kind == slot_kind::global && arg.buffer_mode == access::in)
            fail(slot, "the kernel writes it (" + pointer + "), but the buffer is read-only");
    }
    arguments_[index] = std::move(arg);
    bound_[index] = true;
    return *this;
}

kernel_binding& kernel_binding::local(std::string_view slot, std::size_t bytes) {
    kernel_argument arg;
    arg.what = kernel_argument::kind::local;
    arg.size = bytes;
    return set(slot, std::move(arg), "");
}

kernel_binding& kernel_binding::input(std::vector<kernel_argument> arguments) {
    if (!kernel_->takes_input()) fail("input", "the kernel takes no input expression");
    if (input_bound_) fail("input", "bound twice");
    input_ = std::move(arguments);
    input_bound_ = true;
    return *this;
}

std::vector<kernel_argument> kernel_binding::take() && {
    for (std::size_t i = 0; i < bound_.size(); ++i)
        if (!bound_[i]) fail(kernel_->slots()[i].name, "not bound");
    if (kernel_->takes_input() && !input_bound_) fail("input", "not bound");
    std::vector<kernel_argument> all = std::move(arguments_);
    all.insert(all.begin() + static_cast<std::ptrdiff_t>(kernel_->input_position()),
               std::make_move_iterator(input_.begin()), std::make_move_iterator(input_.end()));
    return all;
}

}  // namespace kiln::detail
