// SPDX-License-Identifier: Apache-2.0
// The register-exchange FFT pass: a line longer than a group's local memory done in one pass.
//
// Each of the group's W work-items holds E = L / W elements of the line in registers through
// every radix stage (radix R: E / R butterflies j = t + W u per work-item t, in the Stockham
// order of fft_kernels.cpp). Between two stages every output must reach the work-item whose next
// butterfly takes it, but local memory holds only L / Q elements: the exchange runs in Q rounds,
// round q moving the elements whose positions in the line have the bits of q at log2 Q chosen
// bit positions (the chunk bits). Where a chunk bit comes from an element's register (its
// butterfly slot, input or output), the round is known when the kernel is written; where it
// comes from the work-item's id, a branch decides at run time. The chunk bits are chosen so
// that the fewest registers are live at once: a work-item must keep every output it may still
// have to write and every input it may already have read.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fft_kernel_parts.hpp"

namespace kiln::detail::fft_source {
namespace {

// Where one bit of an element's position in the line comes from, on one side of an exchange:
// a bit of the work-item's id, of its butterfly slot u, or of the butterfly's input r (reading
// side) or output m (writing side).
enum class bit_source : std::uint8_t { item, slot, element };
struct position_bit {
    bit_source from;
    std::size_t index;
};

// The log2 sizes of one radix stage of the pass.
struct stage_shape {
    std::size_t length, items, radix, done;  // all log2
};

// The sources of the position bits of a stage's inputs (j + r L / R) or outputs
// ((j - k) R + k + m done, k = j mod done), with j = t + W u.
std::vector<position_bit> position_bits(const stage_shape& s, bool outputs) {
    const auto butterfly = [&](std::size_t i) {
        return i < s.items ? position_bit{bit_source::item, i}
                           : position_bit{bit_source::slot, i - s.items};
    };
    std::vector<position_bit> bits(s.length);
    for (std::size_t p = 0; p < s.length; ++p) {
        if (!outputs)
            bits[p] = p < s.length - s.radix
                          ? butterfly(p)
                          : position_bit{bit_source::element, p - (s.length - s.radix)};
        else
            bits[p] = p < s.done             ? butterfly(p)
                      : p < s.done + s.radix ? position_bit{bit_source::element, p - s.done}
                                             : butterfly(p - s.radix);
    }
    return bits;
}

// One side of an exchange: its position bits, and its registers (slot u, element x) numbered
// u R + x.
struct exchange_side {
    std::vector<position_bit> bits;
    std::size_t slots, radix;  // counts

    std::size_t registers() const { return slots * radix; }
    // The register's bit of a given source and index.
    std::size_t register_bit(std::size_t reg, const position_bit& bit) const {
        const std::size_t value = bit.from == bit_source::slot ? reg / radix : reg % radix;
        return (value >> bit.index) & 1;
    }
    // Whether register `reg` may be moved in round q: its own bits among the chunk bits match q.
    bool may_move(std::size_t reg, std::size_t q, const std::vector<std::size_t>& chunk) const {
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            const position_bit& bit = bits[chunk[i]];
            if (bit.from != bit_source::item && register_bit(reg, bit) != ((q >> i) & 1))
                return false;
        }
        return true;
    }
};

// The most complex values a work-item holds at once during the exchange (outputs it may still
// write plus inputs it may have read), with the chunk bits `chunk` (round bit i at chunk[i]).
std::size_t live_registers(const exchange_side& writer, const exchange_side& reader,
                           const std::vector<std::size_t>& chunk) {
    const std::size_t rounds = std::size_t{1} << chunk.size();
    std::vector<std::size_t> last_write(writer.registers(), 0), first_read(reader.registers());
    for (std::size_t w = 0; w < writer.registers(); ++w)
        for (std::size_t q = 0; q < rounds; ++q)
            if (writer.may_move(w, q, chunk)) last_write[w] = q;
    for (std::size_t r = 0; r < reader.registers(); ++r)
        for (std::size_t q = rounds; q-- > 0;)
            if (reader.may_move(r, q, chunk)) first_read[r] = q;
    std::size_t peak = 0;
    for (std::size_t q = 0; q < rounds; ++q) {
        // While round q writes, then while it reads.
        const auto writing = std::count_if(last_write.begin(), last_write.end(),
                                           [&](std::size_t l) { return l >= q; });
        const auto read_before = std::count_if(first_read.begin(), first_read.end(),
                                               [&](std::size_t f) { return f < q; });
        const auto still_to_write = std::count_if(last_write.begin(), last_write.end(),
                                                  [&](std::size_t l) { return l > q; });
        const auto read_by = std::count_if(first_read.begin(), first_read.end(),
                                           [&](std::size_t f) { return f <= q; });
        peak = std::max(
            {peak, std::size_t(writing + read_before), std::size_t(still_to_write + read_by)});
    }
    return peak;
}

// A chunk bit that a work-item's id decides splits warps when it is one of the id's lowest
// bits: the two halves of a 32-wide warp (bit 4) take turns at no extra local-memory traffic
// (8-byte accesses go a half-warp at a time anyway); lower bits would split half-warps.
std::size_t divergence_cost(const exchange_side& side, std::size_t position) {
    const position_bit& bit = side.bits[position];
    if (bit.from != bit_source::item) return 0;
    return bit.index < 4 ? 1000 : bit.index == 4 ? 1 : 0;
}

// The chunk bits of the exchange from `writer` to `reader` in 2^count rounds: fewest live
// registers, then fewest split warps.
std::vector<std::size_t> choose_chunk_bits(const exchange_side& writer, const exchange_side& reader,
                                           std::size_t count) {
    const std::size_t positions = writer.bits.size();
    std::vector<std::size_t> best, chunk;
    std::size_t best_cost = SIZE_MAX;
    const auto search = [&](auto& self) -> void {
        if (chunk.size() == count) {
            std::size_t cost = 4 * live_registers(writer, reader, chunk);
            for (std::size_t p : chunk)
                cost += divergence_cost(writer, p) + divergence_cost(reader, p);
            if (cost < best_cost) {
                best_cost = cost;
                best = chunk;
            }
            return;
        }
        for (std::size_t p = 0; p < positions; ++p)
            if (std::find(chunk.begin(), chunk.end(), p) == chunk.end()) {
                chunk.push_back(p);
                self(self);
                chunk.pop_back();
            }
    };
    search(search);
    return best;
}

// The position bits of `side` that come from the work-item's id, compressed (chunk bits
// removed), as a run-time expression of `lid`.
std::string item_part(const exchange_side& side, const std::vector<std::size_t>& chunk) {
    std::vector<std::pair<std::size_t, std::size_t>> moves;  // (id bit, compressed position)
    for (std::size_t p = 0; p < side.bits.size(); ++p) {
        if (side.bits[p].from != bit_source::item ||
            std::find(chunk.begin(), chunk.end(), p) != chunk.end())
            continue;
        const std::size_t below =
            std::count_if(chunk.begin(), chunk.end(), [&](std::size_t c) { return c < p; });
        moves.push_back({side.bits[p].index, p - below});
    }
    std::sort(moves.begin(), moves.end());
    std::string text;
    for (std::size_t i = 0; i < moves.size();) {
        std::size_t run = 1;
        while (i + run < moves.size() && moves[i + run].first == moves[i].first + run &&
               moves[i + run].second == moves[i].second + run)
            ++run;
        const std::string from = std::to_string(moves[i].first),
                          to = std::to_string(moves[i].second);
        text += (text.empty() ? "" : " | ") + std::string("(((lid >> ") + from + "u) & " +
                std::to_string((std::size_t{1} << run) - 1) + "u) << " + to + "u)";
        i += run;
    }
    return text.empty() ? "0u" : text;
}

// The compressed position bits of register `reg` of `side` (a constant).
std::size_t register_part(const exchange_side& side, std::size_t reg,
                          const std::vector<std::size_t>& chunk) {
    std::size_t value = 0;
    for (std::size_t p = 0, out = 0; p < side.bits.size(); ++p) {
        if (std::find(chunk.begin(), chunk.end(), p) != chunk.end()) continue;
        if (side.bits[p].from != bit_source::item)
            value |= side.register_bit(reg, side.bits[p]) << out;
        ++out;
    }
    return value;
}

// The run-time test that the work-item takes part in round q on `side` (empty: always).
std::string round_condition(const exchange_side& side, std::size_t q,
                            const std::vector<std::size_t>& chunk) {
    std::size_t mask = 0, value = 0;
    for (std::size_t i = 0; i < chunk.size(); ++i) {
        const position_bit& bit = side.bits[chunk[i]];
        if (bit.from != bit_source::item) continue;
        mask |= std::size_t{1} << bit.index;
        value |= ((q >> i) & 1) << bit.index;
    }
    if (mask == 0) return "";
    return "(lid & " + std::to_string(mask) + "u) == " + std::to_string(value) + "u";
}

// Moves the outputs o{s}_u_m of stage s into the inputs v{s+1}_u_r of stage s + 1 through
// `data` in 2^chunk.size() rounds.
void write_exchange(source_builder& b, std::size_t s, const exchange_side& writer,
                    const exchange_side& reader, const std::vector<std::size_t>& chunk,
                    bool barrier_after) {
    const std::string next = std::to_string(s + 1), here = std::to_string(s);
    b.line("const uint write_base" + here + " = " + item_part(writer, chunk) + ";");
    b.line("const uint read_base" + here + " = " + item_part(reader, chunk) + ";");
    const std::size_t rounds = std::size_t{1} << chunk.size();
    const auto slot_name = [](const exchange_side& side, std::size_t reg) {
        return std::to_string(reg / side.radix) + "_" + std::to_string(reg % side.radix);
    };
    for (std::size_t q = 0; q < rounds; ++q) {
        for (int reading = 0; reading < 2; ++reading) {
            const exchange_side& side = reading ? reader : writer;
            std::vector<std::size_t> moved;
            for (std::size_t reg = 0; reg < side.registers(); ++reg)
                if (side.may_move(reg, q, chunk)) moved.push_back(reg);
            const std::string condition = round_condition(side, q, chunk);
            b.open(condition.empty() || moved.empty() ? "" : "if (" + condition + ")");
            for (std::size_t reg : moved) {
                const std::string at =
                    "data[kiln_fft_swizzle(" + std::string(reading ? "read_base" : "write_base") +
                    here + " + " + std::to_string(register_part(side, reg, chunk)) + "u)]";
                if (reading)
                    b.line("v" + next + "_" + slot_name(side, reg) + " = " + at + ";");
                else
                    b.line(at + " = o" + here + "_" + slot_name(side, reg) + ";");
            }
            b.close();
            if (!reading || q + 1 < rounds || barrier_after) b.local_barrier();
        }
    }
}

}  // namespace

// Parameters as write_pass_kernel's (fft_kernels.cpp); one line per group, not twiddled.
void write_register_pass_kernel(source_builder& b, const fft_types& t, const fft_pass_kernel& k,
                                const fft_input_writer* input) {
    const std::string& ix = t.index;
    const std::size_t length = k.length, items = k.work_group_size, per_item = length / items;
    const std::optional<fft_input_text> input_text = begin_pass_kernel(b, t, k, input);
    // Bank spreading without padding, so that a round's L / Q elements fill the local memory
    // exactly: the low 4 bits XOR the next 4 (elements 16 apart land in different banks).
    b.define("kiln_fft_swizzle",
             "uint kiln_fft_swizzle(uint x) { return x ^ ((x >> 4) & 15u); }\n");
    b.begin_body();
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line("const " + ix + " first = (" + ix + ")get_group_id(0);");
    b.line("if (first >= count) return;");
    b.line("const uint g = 0;");
    b.line("const " + ix + " load_step = b * d, store_step = c * d;");
    line_offsets(b, t, k);

    const auto log2 = [](std::size_t x) { return std::size_t(std::countr_zero(x)); };
    const std::size_t log_rounds = log2(k.exchange_rounds);
    std::size_t done = 1;
    for (std::size_t s = 0; s < k.radices.size(); ++s) {
        const std::size_t radix = k.radices[s], slots = per_item / radix;
        const bool first = s == 0, last = s + 1 == k.radices.size();
        const std::string S = std::to_string(s);
        for (std::size_t u = 0; u < slots && !last; ++u)
            for (std::size_t m = 0; m < radix; ++m)
                b.line(t.complex + " o" + S + "_" + std::to_string(u) + "_" + std::to_string(m) +
                       ";");
        for (std::size_t u = 0; u < slots; ++u) {
            b.open("");
            b.line("const uint j = lid + " + std::to_string(u * items) + "u;");
            b.line("const uint k = j & " + std::to_string(done - 1) + "u;");
            twiddle_powers twiddles(b, t, radix);
            const std::size_t unit = length / (done * radix);
            if (!first)
                twiddles.declare("table[e + k * " + std::to_string(unit) + "u]",
                                 "table[e + k * " + std::to_string(unit * twiddles.split()) + "u]",
                                 "");
            std::vector<std::string> v;
            for (std::size_t r = 0; r < radix; ++r) {
                const std::string name = std::string("x").append(std::to_string(r));
                std::string value = "v" + S + "_" + std::to_string(u) + "_" + std::to_string(r);
                if (first) {
                    value = name + "_input";
                    b.line(t.complex + " " + value + ";");
                    load_input(b, input_text ? &*input_text : nullptr, value,
                               "in_line + (" + ix + ")(j + " + std::to_string(r * length / radix) +
                                   "u) * load_step");
                } else {
                    value = twiddles.times(value, r);
                }
                b.line("const " + t.complex + " " + name + " = " + value + ";");
                v.push_back(name);
            }
            const std::vector<std::string> y = small_dft_writer(b, t, k.inverse).dft(v);
            for (std::size_t m = 0; m < radix; ++m) {
                if (last)
                    b.line("out[out_line + (" + ix + ")((j - k) * " + std::to_string(radix) +
                           "u + k + " + std::to_string(m * done) +
                           "u) * store_step] = " + call("kiln_fft_scaled", y[m], "scale") + ";");
                else
                    b.line("o" + S + "_" + std::to_string(u) + "_" + std::to_string(m) + " = " +
                           y[m] + ";");
            }
            b.close();
        }
        if (!last) {
            const std::size_t next_radix = k.radices[s + 1];
            const stage_shape here{log2(length), log2(items), log2(radix), log2(done)};
            const stage_shape next{log2(length), log2(items), log2(next_radix), log2(done * radix)};
            const exchange_side writer{position_bits(here, true), slots, radix};
            const exchange_side reader{position_bits(next, false), per_item / next_radix,
                                       next_radix};
            for (std::size_t u = 0; u < reader.slots; ++u)
                for (std::size_t r = 0; r < next_radix; ++r)
                    b.line(t.complex + " v" + std::to_string(s + 1) + "_" + std::to_string(u) +
                           "_" + std::to_string(r) + ";");
            write_exchange(b, s, writer, reader, choose_chunk_bits(writer, reader, log_rounds),
                           s + 2 < k.radices.size());
        }
        done *= radix;
    }
    b.end_kernel();
}

}  // namespace kiln::detail::fft_source

namespace kiln::detail {

// A power-of-two length that the group's registers hold: where it is longer than the group's
// local memory, one pass whose stages exchange through local memory a part at a time
// (fft_pass_kernel::exchange_rounds), instead of two passes (twice the global traffic); where it
// fits, one round per exchange (the plan takes it where it saves a stage, fft_steps.cpp). Each
// work-item holds 32 complex floats (16 doubles; 64 registers), at most 512 work-items per group
// (128 registers each of an NVIDIA multiprocessor's 65536); radix stages of at most that many
// elements, as even as they split. NVIDIA's OpenCL (48 KiB of local memory, 4096 complex floats
// in the tuning row) would run 16384-point lines so, in four rounds per exchange (its compiler
// gives the kernel 256 work-items: two passes instead, docs/fft.md). These limits follow from the
// register file, not from measurements.
std::optional<fft_pass_kernel> fft_register_pass(std::size_t n, bool inverse, bool double_precision,
                                                 std::size_t local_elements,
                                                 std::size_t max_work_group_size) {
    constexpr std::size_t most_items = 512, most_rounds = 8;
    const std::size_t per_item = double_precision ? 16 : 32;
    if (!std::has_single_bit(n) || n < 2 * per_item ||
        n / per_item > std::min(most_items, max_work_group_size))
        return std::nullopt;
    const std::size_t rounds = std::bit_ceil((n + local_elements - 1) / local_elements);
    if (rounds > most_rounds) return std::nullopt;
    fft_pass_kernel kernel;
    kernel.length = n;
    const std::size_t bits = std::countr_zero(n), most_bits = std::countr_zero(per_item);
    const std::size_t stages = (bits + most_bits - 1) / most_bits;
    for (std::size_t s = 0; s < stages; ++s)
        kernel.radices.push_back(std::size_t{1} << (bits / stages + (s < bits % stages ? 1 : 0)));
    kernel.work_group_size = n / per_item;
    kernel.inverse = inverse;
    kernel.exchange_rounds = rounds;
    return kernel;
}

}  // namespace kiln::detail
