// SPDX-License-Identifier: Apache-2.0
// The wrappers of the PTX instruction table (include/kiln/detail/ptx_instructions.hpp), in OpenCL
// C with inline asm or as the CUDA prelude's __device__ functions: one asm statement per row (one
// per choice of its immediates), its operands numbered outputs first as GCC's asm has them.
#include <cctype>
#include <kiln/detail/ptx_instructions.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::detail {
namespace {

using use = ptx_operand_use;

bool is_output(use u) {
    return u == use::accumulate || u == use::write;
}

std::string scalar_type(ptx_value v, ptx_dialect dialect) {
    const bool cl = dialect == ptx_dialect::opencl_inline_asm;
    switch (v) {
        case ptx_value::u32:
            return cl ? "uint" : "unsigned";
        case ptx_value::s32:
            return "int";
        case ptx_value::u64:
            return cl ? "ulong" : "unsigned long long";
        case ptx_value::f32:
            return "float";
        case ptx_value::f64:
            return "double";
        case ptx_value::u16:
            return cl ? "ushort" : "unsigned short";
        case ptx_value::tile_map:
            return "kiln_tile_map";
    }
    return {};
}

std::string parameter(const ptx_operand& o, ptx_dialect dialect) {
    const bool cl = dialect == ptx_dialect::opencl_inline_asm;
    const std::string type = scalar_type(o.value, dialect), name(o.name);
    switch (o.use) {
        case use::accumulate:
        case use::write:
            return type + "* " + name;
        case use::read:
            return o.count > 0 ? "const " + type + "* " + name : type + " " + name;
        case use::shared_address:
            return std::string(o.written ? "" : "const ") + (cl ? "local " : "") + type + "* " +
                   name;
        case use::global_address:
            return "const " + std::string(cl ? "global " : "") + type + "* " + name;
        case use::reference_address:
            return "const " + type + "& " + name;
        case use::immediate:
            return "int " + name;
    }
    return {};
}

std::string constraint(const ptx_operand& o) {
    switch (o.use) {
        case use::accumulate:
            return o.value == ptx_value::f64 ? "+d" : "+f";
        case use::write:
            return "=r";
        case use::read:
            return o.value == ptx_value::f32   ? "f"
                   : o.value == ptx_value::f64 ? "d"
                   : o.value == ptx_value::u64 ? "l"
                                               : "r";
        case use::shared_address:
            return "r";
        case use::global_address:
        case use::reference_address:
            return "l";
        case use::immediate:
            break;
    }
    return {};
}

// The C expression of one register (or the scalar) that the operand hands the asm statement.
std::string operand_expression(const ptx_operand& o, unsigned index, ptx_dialect dialect) {
    const bool cl = dialect == ptx_dialect::opencl_inline_asm;
    const std::string name(o.name);
    switch (o.use) {
        case use::shared_address:
            return cl ? "(uint)(ulong)" + name
                      : "static_cast<unsigned>(__cvta_generic_to_shared(" + name + "))";
        case use::global_address:
            return cl ? "(ulong)" + name : name;
        case use::reference_address:
            return "&" + name;
        default:
            return o.count > 0 ? name + "[" + std::to_string(index) + "]" : name;
    }
}

struct numbered_operand {
    const ptx_operand* operand;
    unsigned first;  // its first register's number in the asm statement
};

// The PTX with each $name (and $name[i]) replaced by its numbered operands, and each immediate
// by its value in `choice` (bit i for the row's i-th immediate, the first the highest).
std::string numbered_ptx(const ptx_instruction& row, const std::vector<numbered_operand>& numbered,
                         const std::vector<const ptx_operand*>& immediates, unsigned choice) {
    std::string out;
    const std::string_view ptx = row.ptx;
    for (std::size_t i = 0; i < ptx.size();) {
        if (ptx[i] != '$') {
            out += ptx[i++];
            continue;
        }
        std::size_t end = i + 1;
        while (end < ptx.size() &&
               (std::isalnum(static_cast<unsigned char>(ptx[end])) || ptx[end] == '_'))
            ++end;
        const std::string_view name = ptx.substr(i + 1, end - i - 1);
        i = end;
        bool found = false;
        for (std::size_t k = 0; k < immediates.size(); ++k)
            if (immediates[k]->name == name) {
                out += (choice >> (immediates.size() - 1 - k)) & 1u ? '1' : '0';
                found = true;
            }
        for (const numbered_operand& n : numbered) {
            if (n.operand->name != name) continue;
            found = true;
            if (i < ptx.size() && ptx[i] == '[') {
                const std::size_t close = ptx.find(']', i);
                const unsigned element = std::stoul(std::string(ptx.substr(i + 1, close - i - 1)));
                out += "%" + std::to_string(n.first + element);
                i = close + 1;
            } else if (n.operand->count == 0) {
                out += "%" + std::to_string(n.first);
            } else {
                out += "{";
                for (unsigned r = 0; r < n.operand->count; ++r)
                    out += (r ? ", %" : "%") + std::to_string(n.first + r);
                out += "}";
            }
        }
        if (!found)
            throw std::logic_error("PTX of " + std::string(row.function) + " names no operand " +
                                   std::string(name));
    }
    return out;
}

std::string escaped(const std::string& ptx) {
    std::string out;
    for (const char c : ptx) out += c == '\n' ? std::string("\\n") : std::string(1, c);
    return out;
}

std::string operand_list(const std::vector<numbered_operand>& numbered, bool outputs,
                         ptx_dialect dialect) {
    std::string list;
    for (const numbered_operand& n : numbered) {
        if (is_output(n.operand->use) != outputs) continue;
        const unsigned registers = n.operand->count > 0 ? n.operand->count : 1;
        for (unsigned r = 0; r < registers; ++r)
            list += (list.empty() ? "" : ", ") + ("\"" + constraint(*n.operand) + "\"(") +
                    operand_expression(*n.operand, r, dialect) + ")";
    }
    return list;
}

std::string asm_statement(const ptx_instruction& row, const std::vector<numbered_operand>& numbered,
                          const std::vector<const ptx_operand*>& immediates, unsigned choice,
                          ptx_dialect dialect, const std::string& indent) {
    const std::string outputs = operand_list(numbered, true, dialect),
                      inputs = operand_list(numbered, false, dialect);
    std::string s = indent + (row.has_effects ? "asm volatile(\"" : "asm(\"") +
                    escaped(numbered_ptx(row, numbered, immediates, choice)) + "\"";
    if (!outputs.empty() || !inputs.empty() || row.clobbers_memory) {
        s += "\n" + indent + "    : " + outputs;
        if (!inputs.empty() || row.clobbers_memory) s += "\n" + indent + "    : " + inputs;
        if (row.clobbers_memory) s += "\n" + indent + "    : \"memory\"";
    }
    return s + ");\n";
}

std::string wrapper(const ptx_instruction& row, ptx_dialect dialect) {
    std::vector<numbered_operand> numbered;
    std::vector<const ptx_operand*> immediates;
    std::string parameters;
    unsigned next = 0;
    // Outputs first, then inputs, each in the parameters' order.
    for (const bool outputs : {true, false})
        for (const ptx_operand& o : row.operands) {
            if (o.use == use::immediate || is_output(o.use) != outputs) continue;
            numbered.push_back({&o, next});
            next += o.count > 0 ? o.count : 1;
        }
    for (const ptx_operand& o : row.operands) {
        parameters += (parameters.empty() ? "" : ", ") + parameter(o, dialect);
        if (o.use == use::immediate) immediates.push_back(&o);
    }
    const bool cuda = dialect == ptx_dialect::cuda_prelude;
    std::string text = std::string(cuda ? "__device__ inline " : "") + "void " +
                       std::string(row.function) + "(" +
                       (parameters.empty() && !cuda ? "void" : parameters) + ") {\n";
    const bool guarded = cuda && row.set == ptx_set::tensor_cores;
    if (guarded) text += "#if __CUDA_ARCH__ >= " + std::to_string(row.architecture * 10) + "\n";
    // One statement per choice of the immediates, all of them set first.
    const unsigned choices = 1u << immediates.size();
    for (unsigned choice = choices; choice-- > 0;) {
        std::string condition;
        for (std::size_t k = 0; k < immediates.size(); ++k)
            if ((choice >> (immediates.size() - 1 - k)) & 1u)
                condition += (condition.empty() ? "" : " && ") + std::string(immediates[k]->name);
        std::string indent = "    ";
        if (choices > 1) {
            text += choice == choices - 1 ? "    if (" + condition + ")\n"
                    : choice > 0          ? "    else if (" + condition + ")\n"
                                          : "    else\n";
            indent = "        ";
        }
        text += asm_statement(row, numbered, immediates, choice, dialect, indent);
    }
    if (guarded) text += "#endif\n";
    return text + "}\n";
}

}  // namespace

std::string ptx_wrappers(ptx_dialect dialect, ptx_set set) {
    std::string text;
    for (const ptx_instruction& row : ptx_instructions())
        if (row.set == set) text += wrapper(row, dialect) + "\n";
    return text;
}

}  // namespace kiln::detail
