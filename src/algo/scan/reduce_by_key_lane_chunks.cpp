// SPDX-License-Identifier: Apache-2.0
// reduce_by_key's chunk loops by vectors (scan_chunks.hpp, scan_policy::chunk_lanes): for integer
// values under a sum.
//
// Element by element, the finish is a chain of one combine and one branch per element, about two
// cycles each on a CPU core, while the memory delivers an element in under one. Here the finish
// walks the chunk by vectors, and a run's sum is the difference of two prefix sums: each vector
// is scanned in registers (log2(lanes) shifts and adds, no flags) and offset by the running
// prefix; the heads are one comparison of the keys with the keys one lane before, as a bit mask,
// and only the heads are visited, to write each one's key and the sum of the run it closes (the
// prefix before the head less the prefix where that run began). A vector that is all heads
// (runs of one element) writes its keys and values by whole vectors instead. Integer sums wrap,
// so the differences are exact; other operations (and float sums, which the differences would
// round) take the element loops.
//
// The first loop counts the heads by vectors and keeps each lane's last head, and, unless the
// chunk begins with mostly heads, sums the values as it goes (runs_and_open says why). The finish
// walks the elements after the last whole vector with the element loops.
#include <kiln/detail/algo/scan_chunks.hpp>

#include "reduce_by_key_chunks.hpp"

namespace kiln::detail {
namespace {

class prefix_run_loops final : public run_loops {
  public:
    prefix_run_loops(const scan_operation& pairs, const value_combine& combine, std::size_t lanes)
        : run_loops(pairs, combine), lanes_(lanes) {}

    void finish(source_builder& b, const reduce_by_key_input& input) const override {
        const std::string n = std::to_string(lanes_);
        const std::string v = input.value_type;
        const std::string u = sum_type(v);
        const std::string uv = u + n;
        const std::string keys = run_outputs::keys, values = run_outputs::values,
                          capacity = run_outputs::capacity, base = run_outputs::run_base;
        open_runs(b, input);
        // kiln_carry: the prefix of the chunk's elements walked so far (every lane),
        // kiln_began: the prefix where the open run began.
        b.line(uv + " kiln_carry = (" + uv + ")(0);");
        b.line(u + " kiln_began = -as_" + u + "(kiln_open);");
        b.line("ulong kiln_at = begin + 1;");
        b.open("for (; end - kiln_at >= " + n + "; kiln_at += " + n + ")");
        load_keys(b, input, "kiln_at");
        load(b, input, v, input.value, "kiln_at", "kiln_values");
        b.line(uv + " kiln_x = as_" + uv + "(kiln_values);");
        for (std::size_t step = 1; step < lanes_; step *= 2) {
            std::string shifted = "(" + uv + ")(";
            for (std::size_t j = 0; j < lanes_; ++j)
                shifted += (j ? ", " : "") + (j >= step ? "kiln_x" + lane(j - step) : "0");
            b.line("kiln_x += " + shifted + ");");
        }
        // The prefix before each lane: kiln_prefix[j] (the vector before's last at j = 0).
        b.line(u + " kiln_prefix[" + std::to_string(lanes_ + 1) + "];");
        b.line("kiln_prefix[0] = kiln_carry.s0;");
        b.line("kiln_x += kiln_carry;");
        b.line("vstore" + n + "(kiln_x, 0, kiln_prefix + 1);");
        b.line("kiln_carry = (" + uv + ")(kiln_x" + lane(lanes_ - 1) + ");");
        std::string mask = "0u";
        for (std::size_t j = 0; j < lanes_; ++j)
            mask += " | ((uint)kiln_heads" + lane(j) + " & " + std::to_string(1u << j) + "u)";
        b.line("const uint kiln_mask = " + mask + ";");
        const std::string all = std::to_string((1u << lanes_) - 1) + "u";
        b.open("if (kiln_mask == " + all + " && kiln_runs + " + n + " <= " + capacity + ")");
        b.line("vstore" + n + "(kiln_k, 0, " + keys + " + (kiln_runs - " + base + "));");
        // Lane j closes the run begun at lane j - 1: prefix[j] - prefix[j - 1], lane 0 the open
        // run. `prefixes(delay, first)`: lane j holds prefix[j + 1 - delay], `first` before.
        const auto prefixes = [&](std::size_t delay, const std::string& first) {
            std::string text = "(" + uv + ")(";
            for (std::size_t j = 0; j < lanes_; ++j)
                text += (j ? ", " : "") + (j + 1 < delay    ? first
                                           : j + 1 == delay ? std::string("kiln_prefix[0]")
                                                            : "kiln_x" + lane(j - delay));
            return text + ")";
        };
        b.line("vstore" + n + "(as_" + v + n + "(" + prefixes(1, "kiln_prefix[0]") + " - " +
               prefixes(2, "kiln_began") + "), 0, " + values + " + (kiln_runs - 1 - " + base +
               "));");
        b.line("kiln_began = kiln_x" + lane(lanes_ - 2) + ";");
        b.line("kiln_runs += " + n + ";");
        b.close();
        b.open("else");
        b.open("for (uint kiln_m = kiln_mask; kiln_m != 0; kiln_m &= kiln_m - 1)");
        // The lowest head's lane. ctz is OpenCL C 2.0; LLVM makes this popcount one tzcnt (the
        // form through clz stays three instructions and ran the loop at half the speed).
        b.line("const uint kiln_j = popcount(~kiln_m & (kiln_m - 1u));");
        b.open("if (kiln_runs < " + capacity + ")");
        b.line("const ulong idx = kiln_at + kiln_j;");
        for (const auto& statement : input.value.statements) b.line(statement);
        b.line(keys + "[kiln_runs - " + base + "] = " + input.key + ";");
        b.close();
        b.line("if (kiln_runs - 1 < " + capacity + ") " + values + "[kiln_runs - 1 - " + base +
               "] = as_" + v + "(kiln_prefix[kiln_j] - kiln_began);");
        b.line("kiln_began = kiln_prefix[kiln_j];");
        b.line("++kiln_runs;");
        b.close();
        b.close();
        b.close();
        b.line("kiln_open = as_" + v + "(kiln_carry.s0 - kiln_began);");
        b.open("if (kiln_at > begin + 1)");
        b.open("");
        b.line("const ulong idx = kiln_at - 1;");
        for (const auto& statement : input.value.statements) b.line(statement);
        b.line("kiln_previous = " + input.key + ";");
        b.close();
        b.close();
        run_elements(b, input, "kiln_at");
        close_runs(b);
    }

  private:
    /// By vectors too: each lane counts its heads (as -1 each, the comparison's true) and keeps
    /// the index of its last one, so that the chunk's last head needs no walk back. The loop also
    /// sums the values, unless the chunk's first vector is mostly heads: with little work per
    /// vector it keeps two streams from memory (keys and values) going where the finish, with
    /// its work per vector, kept one, and the finish then reads both from the core's cache; the
    /// sum is the open value of a chunk without heads. Where runs are of one or two elements the
    /// finish writes about as much as it reads, and reading the values itself, between its
    /// writes, it ran faster (1.15x for runs of 1 on PoCL 3.1; 1.2-1.3x the other way for runs
    /// of 8 to 1024).
    void runs_and_open(source_builder& b, const reduce_by_key_input& input) const override {
        const std::string n = std::to_string(lanes_), flags = flag_type(input) + n;
        const std::string v = input.value_type, u = sum_type(v), uv = u + n;
        first_head(b, input);
        b.line(flags + " kiln_counts = (" + flags + ")(0);");
        // Each lane's last head as its index less begin; 0 where the lane has seen none.
        b.line(flags + " kiln_last_at = (" + flags + ")(0);");
        std::string lane_at;
        for (std::size_t j = 0; j < lanes_; ++j) lane_at += (j ? ", " : "") + std::to_string(j + 1);
        b.line(flags + " kiln_lane_at = (" + flags + ")(" + lane_at + ");");
        b.line(uv + " kiln_sums = (" + uv + ")(0);");
        b.line("ulong kiln_counted = begin + 1;");
        b.line("int kiln_dense = 0;");
        b.open("if (end - kiln_counted >= " + n + ")");
        load_keys(b, input, "kiln_counted");
        b.line("kiln_dense = -(" + lane_sum("kiln_heads") + ") * 2 >= " + n + ";");
        b.close();
        const auto loop = [&](bool values) {
            b.open("for (; end - kiln_counted >= " + n + "; kiln_counted += " + n + ")");
            load_keys(b, input, "kiln_counted");
            b.line("kiln_counts += kiln_heads;");
            b.line("kiln_last_at = select(kiln_last_at, kiln_lane_at, kiln_heads);");
            b.line("kiln_lane_at += " + n + ";");
            if (values) {
                load(b, input, v, input.value, "kiln_counted", "kiln_values");
                b.line("kiln_sums += as_" + uv + "(kiln_values);");
            }
            b.close();
        };
        b.open("if (kiln_dense)");
        loop(false);
        b.close();
        b.open("else");
        loop(true);
        b.close();
        b.line("kiln_runs += (ulong)(-(" + lane_sum("kiln_counts") + "));");
        std::string last = "kiln_last_at" + lane(0);
        for (std::size_t j = 1; j < lanes_; ++j)
            last = "max(" + last + ", kiln_last_at" + lane(j) + ")";
        b.line("ulong kiln_last = begin + (ulong)" + last + ";");
        b.line(u + " kiln_sum = " + lane_sum("kiln_sums") + ";");
        b.open("for (; kiln_counted < end; ++kiln_counted)");
        b.open("if (" + head_at(b, input, "kiln_counted") + ")");
        b.line("++kiln_runs;");
        b.line("kiln_last = kiln_counted;");
        b.close();
        b.open("");
        b.line("const ulong idx = kiln_counted;");
        for (const auto& statement : input.value.statements) b.line(statement);
        b.line("kiln_sum += as_" + u + "(" + input.value.value + ");");
        b.close();
        b.close();
        b.line(v + " kiln_open;");
        b.open("if (kiln_last == begin && !kiln_dense)");
        b.line("const ulong idx = begin;");
        for (const auto& statement : input.value.statements) b.line(statement);
        b.line("kiln_open = as_" + v + "(kiln_sum + as_" + u + "(" + input.value.value + "));");
        b.close();
        b.open("else");
        open_from(b, input, "kiln_last");
        b.close();
    }

    /// The sum of the lanes of `vector`, as text.
    std::string lane_sum(const std::string& vector) const {
        std::string text = vector + lane(0);
        for (std::size_t j = 1; j < lanes_; ++j) text += " + " + vector + lane(j);
        return text;
    }

    /// Wrapping sums of values of `value_type`: unsigned, as wide as the values.
    static std::string sum_type(const std::string& value_type) {
        return value_type == "long" || value_type == "ulong" ? "ulong" : "uint";
    }

    /// Declares kiln_k (keys `at`.. `at` + lanes - 1), kiln_before (the keys one lane before)
    /// and kiln_heads (their comparison: -1 where a run begins).
    void load_keys(source_builder& b, const reduce_by_key_input& input,
                   const std::string& at) const {
        const element_input key{.value = input.key, .plain_array = input.keys_array};
        load(b, input, input.key_type, key, at, "kiln_k");
        load(b, input, input.key_type, key, at + " - 1", "kiln_before");
        b.line("const " + flag_type(input) + std::to_string(lanes_) +
               " kiln_heads = kiln_k != kiln_before;");
    }

    /// Declares `name`, lanes `at` + j of `element` (of `type`): one load where it is an array's
    /// element, else lane by lane, each lane's statements (the input's) in a scope of their own.
    void load(source_builder& b, const reduce_by_key_input& input, const std::string& type,
              const element_input& element, const std::string& at, const std::string& name) const {
        const std::string n = std::to_string(lanes_);
        if (const std::string& array = element.plain_array; !array.empty()) {
            b.line("const " + type + n + " " + name + " = convert_" + type + n + "(vload" + n +
                   "(0, " + array + " + " + at + "));");
            return;
        }
        b.line(type + n + " " + name + ";");
        for (std::size_t j = 0; j < lanes_; ++j) {
            b.open("");
            b.line("const ulong idx = " + at + " + " + std::to_string(j) + ";");
            for (const auto& statement : input.value.statements) b.line(statement);
            b.line(name + lane(j) + " = " + element.value + ";");
            b.close();
        }
    }

    /// The comparison's lanes for the keys: int or long.
    static std::string flag_type(const reduce_by_key_input& input) {
        const std::string& k = input.key_type;
        return k == "long" || k == "ulong" || k == "double" ? "long" : "int";
    }

    std::size_t lanes_;
};

}  // namespace

std::string reduce_by_key_prefix_chunk_program_source(
    const scan_operation& pairs, const value_combine& combine,
    const declare_input<reduce_by_key_input>& input, std::size_t chunk, scan_schedule schedule,
    std::size_t lanes) {
    return chunk_program_source(pairs, input, chunk, schedule,
                                prefix_run_loops(pairs, combine, lanes));
}

}  // namespace kiln::detail
