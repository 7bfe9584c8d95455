// SPDX-License-Identifier: Apache-2.0
// A kiln::graph_value in expressions: read from its device cell by each kernel, so that a
// captured statement sees the value set before each launch.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/expr/core.hpp>
#include <kiln/runtime/graph.hpp>
#include <string>

namespace kiln::detail {

template <class T>
class graph_value_terminal : public expression_tag {
  public:
    using value_type = T;
    static constexpr std::size_t contiguous_width = any_width;
    static constexpr bool vector_form = vector_form_value<T>;
    explicit graph_value_terminal(const buffer<T>& cell) : cell_(&cell) {}

    std::string generate(generator& g) const {
        const std::string name = g.new_name();
        g.parameter("global const " + opencl_type_name<T>() + "*", name);
        const std::string value = "(" + name + "[0])";
        if (!g.vector_width()) return value;
        return "((" + g.value_type(opencl_type_name<T>()) + ")" + value + ")";
    }
    void collect(argument_list& args) const { args.buffer(*cell_); }
    void check(operand_check&) const {}

  private:
    const buffer<T>* cell_;
};

template <class T>
struct terminal_for<graph_value<T>> {
    static graph_value_terminal<T> make(const graph_value<T>& value) {
        return graph_value_terminal<T>(value.cell());
    }
};

}  // namespace kiln::detail
#pragma GCC visibility pop
