// SPDX-License-Identifier: Apache-2.0
// Kernel generators for sorting: the LSD radix sort passes and the stable merge sort passes.
#pragma once

#include <cstddef>
#include <functional>
#include <kiln/detail/algo/sort_tuning.hpp>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/detail/target_features.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

/// A count or size written into a sort kernel's source, in decimal.
inline std::string num(unsigned long long value) {
    return std::to_string(value);
}

/// How a sort key's bits become an unsigned number whose order is the wanted order.
enum class sort_key_kind { unsigned_integer, signed_integer, floating };

struct sort_key_info {
    sort_key_kind kind = sort_key_kind::unsigned_integer;
    /// Floating point: where the NaNs start, above the infinity's bits (half and bfloat16 are
    /// both 2 bytes).
    unsigned mantissa_bits = 0;
    std::size_t bytes = 4;  ///< 2 (half, bfloat16), 4 or 8
};

/// The shape of one radix sort program: tuning constants are compiled in.
struct radix_sort_shape {
    sort_key_info keys;
    bool descending = false;
    std::size_t value_bytes = 0;  ///< the bytes (4 or 8) of values moving along, 0 for none
    unsigned radix_bits = 8;
    unsigned work_group_size = 256;
    unsigned items_per_work_item = 16;
    /// Sub-group size for the group scans inside tile ranking (0: local memory only).
    std::size_t sub_group_size = 0;
    /// Rank tiles by a multi-split over sub-groups of 32 work-items (ballots where `ballots`,
    /// local memory otherwise) instead of rounds of 4-bit counting. The work-group size must be
    /// a multiple of 32.
    bool multi_split = false;
    /// The multi-split finds peers by kiln_ballot over sub-groups of 32 (the target's).
    bool ballots = false;
    /// The multi-split finds peers by kiln_match_any instead (NVIDIA's warps, with ballots).
    bool match_any = false;
    /// Whose device vocabulary the kernels call.
    target_features target{};
    /// The multi-split's values (value_bytes != 0) go through a local array of their own,
    /// ranked with the keys (radix_sort_tuning::values_beside_keys); otherwise through the keys'
    /// array after them.
    bool values_beside_keys = false;
    /// Also generate the single-pass kernels (kiln_onesweep_*), for devices where work-groups
    /// that started earlier keep making progress.
    bool single_pass = false;
    /// The CPU strategy (radix_chunks.cpp): one work-item per chunk of keys counts and scatters
    /// in plain loops, instead of work-groups ranking tiles; the program then holds only the
    /// chunk kernels, kiln_radix_scan and kiln_radix_finish.
    bool chunks = false;
    /// The single pass's histogram kernel: copies of its counters (never 0), which copy a
    /// work-item counts into, their layout, and whether peers add once (kiln_match_any where
    /// match_any, through local memory otherwise).
    radix_histogram_tuning histogram{.copies = 1};
    /// The registers a work-item may hold (-cl-nv-maxrregcount), 0 for no limit.
    unsigned register_limit = 0;

    unsigned radix() const { return 1u << radix_bits; }
    /// One pass per digit of the key: 16-bit keys take 2 of 8 bits, not a 4-byte key's 4.
    unsigned passes() const {
        return (static_cast<unsigned>(keys.bytes) * 8 + radix_bits - 1) / radix_bits;
    }
    /// The single pass's histogram kernel runs groups of its own size (at most 256): NVIDIA's
    /// OpenCL allows it no more, whatever the passes' groups.
    unsigned histogram_group() const { return work_group_size < 256 ? work_group_size : 256; }
    unsigned tile() const { return work_group_size * items_per_work_item; }
    /// The program cache's key: every field above, each of which changes the generated text
    /// or the program's build options.
    std::string key() const;
    /// The program's build options (the register limit).
    std::string build_options() const;
};

/// The bytes of local memory that the tile kernels of `s` (kiln_radix_downsweep, and
/// kiln_onesweep_pass where single_pass) declare at most, as radix_tile_setup and
/// multi_split_setup declare them: what plan_radix_sort keeps within the device's local memory.
std::size_t radix_tile_local_bytes(const radix_sort_shape& s);

/// The single pass's kernels (radix_onesweep.cpp):
///   histogram (keys, n, histogram): every pass's digit counts at once
///   offsets   (histogram, control, n): the counts into offsets, in place
///   pass      (keys_a, keys_b, [values_a, values_b], offsets, control, status, n, shift, pass)
struct onesweep_kernels {
    kernel_description histogram, offsets, pass;
};

/// The kernels of a radix sort program for `shape`, as radix_sort_source writes them and the
/// host binds them (sort.cpp):
///   count   (keys_a, keys_b, state, n, chunk, shift, counts): kiln_radix_upsweep, or
///           kiln_radix_chunk_count for the chunk strategy
///   scan    (counts, blocks, state, n): kiln_radix_scan
///   scatter (keys_a, keys_b, [values_a, values_b], counts, state, n, chunk, shift):
///           kiln_radix_downsweep, or kiln_radix_chunk_scatter
///   finish  (keys_a, keys_b, [values_a, values_b], state, n, keys_back): kiln_radix_finish (the
///           keys come back only where keys_back is not 0)
/// and with single_pass the onesweep kernels.
struct radix_sort_kernels {
    explicit radix_sort_kernels(const radix_sort_shape& shape);
    kernel_description count, scan, scatter, finish;
    std::optional<onesweep_kernels> single_pass;
    /// Every kernel of the program.
    std::vector<kernel_description> all() const;
};

/// Kernels kiln_radix_upsweep, kiln_radix_scan, kiln_radix_downsweep and kiln_radix_finish, and
/// with single_pass kiln_onesweep_histogram, kiln_onesweep_offsets and kiln_onesweep_pass; see
/// sort_kernels.cpp and radix_onesweep.cpp for what each does and the device-side state they
/// share.
std::string radix_sort_source(const radix_sort_shape& shape);

/// A program of the single pass's histogram kernel alone (its shape single_pass), as
/// radix_sort_source writes it: the tests count digits with every histogram variant without
/// compiling each variant's whole single-pass sort.
std::string radix_onesweep_histogram_source(const radix_sort_shape& shape);

/// The chunk strategy's kernels kiln_radix_chunk_count and kiln_radix_chunk_scatter
/// (radix_chunks.cpp), after the helpers radix_sort_source defines.
void radix_chunk_kernels(source_builder& b, const radix_sort_shape& s);

// Pieces of the radix tile code shared by sort_kernels.cpp, radix_tile.cpp, radix_onesweep.cpp
// and radix_multi_split.cpp.
std::string radix_bits_type(std::size_t bytes);  ///< "ushort", "uint" or "ulong"
/// The bits of a key held in a variable `k` of radix_bits_type(key.bytes), as kernel text: an
/// unsigned number of that type whose ascending order is the sort order (16-bit keys would
/// otherwise promote, and descending's ~ set bits above them). Segmented sort compares by it.
std::string ordered_bits(const sort_key_info& key, bool descending);
std::string radix_padded(const std::string& index);  ///< a local tile index, bank-padded
/// Whether the radix tiles hold keys in a stored form unlike the keys' own bits: floating-point
/// keys, whose order takes a few instructions to reach (sort_kernels.cpp, stored_bits). The
/// downsweep converts them as it loads a tile and back as it writes it; the single pass keeps the
/// stored form in memory from its first moving pass to its last, its kernel declaring
/// `stored_in` and `stored_out`: whether the keys in memory are in that form when it reads them
/// and once it has written them.
bool radix_keys_convert(const radix_sort_shape& s);
/// The keys crossing between memory and a tile, into it (`kept` "stored_in") or out of it
/// ("stored_out"): `emit(convert)` once where no conversion is needed (convert false) or the
/// downsweep always converts (true); in the single pass, a uniform branch on `kept` between the
/// two.
void radix_keys_crossing(source_builder& b, const radix_sort_shape& s, bool single_pass,
                         const std::string& kept, const std::function<void(bool convert)>& emit);
/// The multi-split's local arrays; its count step (loads the tile at `base`, `valid` keys, into
/// registers, ranks them and fills kiln_start and kiln_end); its place step (moves the keys to
/// their ranks in kiln_keys, and with values_beside_keys the tile's values to the same ranks in
/// kiln_values); otherwise its values' step, once the keys have left kiln_keys (loads the tile's
/// values and moves them to the same ranks in kiln_values, which shares kiln_keys' memory).
void multi_split_setup(source_builder& b, const radix_sort_shape& s);
/// The bytes of the arrays multi_split_setup declares.
std::size_t multi_split_local_bytes(const radix_sort_shape& s);
void multi_split_count(source_builder& b, const radix_sort_shape& s, bool single_pass);
void multi_split_place(source_builder& b, const radix_sort_shape& s);
void multi_split_place_values(source_builder& b, const radix_sort_shape& s);

/// Names shared by the tile code of the classic and the single-pass downsweeps.
struct radix_tile_names {
    std::string key, value, G, R, K;
    unsigned g, k, r;
    explicit radix_tile_names(const radix_sort_shape& s);
};

/// The keys' (and values') slots of the kernels that move them: keys_a, keys_b and, with
/// values, values_a and values_b; `keys_b` read-only where `b_const` (the finish kernel).
void radix_data_slots(kernel_description& kernel, const radix_sort_shape& s, bool b_const);

/// Local arrays of the tile code.
void radix_tile_setup(source_builder& b, const radix_sort_shape& s, bool single_pass);

void radix_tile_pointers(source_builder& b, const radix_sort_shape& s);

/// Coalesced loads of the tile at `base` (`valid` keys), item j*G + t to work-item t.
void radix_tile_load(source_builder& b, const radix_sort_shape& s, bool single_pass);

/// Sorts the loaded tile stably by the pass's digit in rounds of rank_round_bits (LSD within
/// the tile), then marks where each digit starts and ends in it (kiln_start and kiln_end,
/// cleared before).
void radix_tile_rank(source_builder& b, const radix_sort_shape& s);

/// Writes the ranked tile to kiln_run[digit] + its place within the digit: consecutive
/// work-items write consecutive keys of one digit, which coalesces. In the single pass,
/// kiln_run[digit] already has the digit's start in the tile taken off (one local read less).
/// A position past the end is not written: the ranks of a correct tile never give one, but a
/// device that miscompiled the ranking (PoCL 5.0 on the GPU machine, 2026-11-22) left tiles
/// unsorted, and `i - kiln_start[d]` then wrapped, writing 16 GB past the buffer (SIGSEGV; on a
/// GPU it would corrupt other allocations). A wrong sort is reported by the tests instead.
/// The multi-split's values follow in a second round through the same local array, each to the
/// position its key went to.
void radix_tile_scatter(source_builder& b, const radix_sort_shape& s, bool single_pass);

/// The single pass's kernels (kiln_onesweep_histogram, kiln_onesweep_offsets, kiln_onesweep_pass).
void radix_onesweep_kernels(source_builder& b, const radix_sort_shape& shape);
/// kiln_onesweep_histogram alone, as radix_onesweep_kernels writes it.
void radix_onesweep_histogram_kernel(source_builder& b, const radix_sort_shape& shape);

/// The shape of one merge sort program.
struct merge_sort_shape {
    std::string key_type;           ///< the keys' OpenCL C type
    std::string comparator_source;  ///< definitions of the comparator and what it calls
    /// less(a, b) on keys held in variables a and b (converted as the comparator takes them):
    /// whether a goes before b.
    std::string comparator_call;
    unsigned work_group_size = 256;  ///< also the length of the runs sorted inside one group
    /// The program cache's key: every field above. The comparator's whole source is in it, since
    /// two functions may share a name.
    std::string key() const;
};

/// The kernels of a merge sort program for `shape`, as merge_sort_source writes them and the host
/// binds them (sort.cpp):
///   block_sort  (keys, dst, order, n, claims, broken, stamp): kiln_merge_block_sort, sorts runs
///               of work_group_size keys into dst
///   pass        (src, dst, order_src, order_dst, n, width, claims, broken, stamp):
///               kiln_merge_pass, merges runs by ranks found by binary search
///   serial_pass (src, dst, order_src, order_dst, n, width): kiln_merge_serial_pass, merges each
///               pair of runs in one work-item
///   copy_keys   (src, dst, n): kiln_merge_copy_keys
/// A comparator that is not a strict weak order can give two keys one place in block_sort and
/// pass: each place written is claimed in `claims` with the kernel's `stamp` (atomic_xchg), and
/// a place claimed twice sets *broken. serial_pass's merges are a permutation whatever the
/// comparator says.
struct merge_sort_kernels {
    explicit merge_sort_kernels(const merge_sort_shape& shape);
    kernel_description block_sort, pass, serial_pass, copy_keys;
    /// Every kernel of the program.
    std::vector<kernel_description> all() const;
};

/// The kernels merge_sort_kernels describes.
std::string merge_sort_source(const merge_sort_shape& shape);

/// The kernels that move values through a permutation of uint indices, as permutation_source
/// writes them:
///   iota      (order, n): kiln_order_iota, order[i] = i
///   gather4/8 (src, dst, order, n): kiln_gather4/8, dst[i] = src[order[i]] for 4- or 8-byte
///             elements
///   copy4/8   (src, dst, n): kiln_copy4/8
struct permutation_kernels {
    permutation_kernels();
    kernel_description iota, gather4, gather8, copy4, copy8;
    /// The gather and copy kernels of elements of `bytes` (4 or 8).
    const kernel_description& gather(std::size_t bytes) const {
        return bytes == 8 ? gather8 : gather4;
    }
    const kernel_description& copy(std::size_t bytes) const { return bytes == 8 ? copy8 : copy4; }
    /// Every kernel of the program.
    std::vector<kernel_description> all() const;
};

/// The kernels permutation_kernels describes.
std::string permutation_source();

}  // namespace kiln::detail
