// The scan family's kernel source: tile scan, decoupled look-back, reduce-then-scan passes.
#include <algorithm>
#include <functional>
#include <kiln/algo/scan_kernels.hpp>
#include <kiln/detail/group_collectives.hpp>

namespace kiln::detail {
namespace {

class scan_writer {
  public:
    /// Where a tile keeps its elements' 0/1 flags (none: the tile holds whole values).
    enum class flag_storage { none, bytes, ballots };

    scan_writer(source_builder& b, const scan_operation& op, const algorithm_policy& policy,
                bool exclusive, bool scatter)
        : b_(b),
          op_(op),
          policy_(policy),
          t_(op.value_type),
          exclusive_(exclusive),
          scatter_(scatter) {
        b_.constant("WG", policy.work_group_size);
        b_.constant("ITEMS", policy.items_per_work_item);
        b_.constant("TILE", policy.tile_size());
        // Earlier tiles read at once by the look-back: a warp's worth, at most the group.
        b_.constant("KILN_WINDOW", std::min<std::size_t>(32, policy.work_group_size));
        // Earlier tiles each lane of a sub-group look-back reads at once.
        b_.constant("KILN_DEPTH", std::max<std::size_t>(1, policy.lookback_depth));
        // One padding slot per 128 bytes of tile values (32 4-byte ones, 16 8-byte ones):
        // work-items reading their ITEMS consecutive elements then hit different local-memory
        // banks. (One per 32 elements left 8-byte pairs at 8 items with 2-way conflicts.)
        const unsigned shift = op.value_bytes <= 4 ? 5 : op.value_bytes <= 8 ? 4 : 3;
        b_.define("pad", "#define KILN_PAD(i) ((i) + ((i) >> " + std::to_string(shift) +
                             "))\n#define KILN_PADDED_TILE (TILE + (TILE >> " +
                             std::to_string(shift) + "))");
    }

    std::string combine(const std::string& a, const std::string& b) {
        return op_.combine(b_, a, b);
    }

    /// Kernel header and the pointers into the scratch lease.
    element_text begin(const std::string& name, bool with_out, const declare_input* input) {
        b_.begin_kernel(name, policy_.work_group_size);
        b_.scalar_parameter<std::uint64_t>("n");
        if (with_out && !scatter_) b_.parameter("global " + t_ + "* out");
        b_.parameter("global uchar* kiln_temp");
        b_.parameter("int has_carry");
        b_.parameter(t_ + " carry");
        element_text element;
        if (input) element = (*input)(b_);
        if (!element.kept_type.empty()) kept_type_ = element.kept_type;
        b_.begin_body();
        b_.line("const ulong tiles = (n + TILE - 1) / TILE;");
        b_.line("global " + t_ + "* kiln_total = (global " + t_ + "*)(kiln_temp + 64);");
        const std::string slot = op_.value_bytes <= 8 ? "8" : "16";
        b_.line("global ulong* kiln_state = (global ulong*)(kiln_temp + 128);");
        b_.line("const ulong kiln_values = 128 + (tiles + 1) / 2 * 16;");
        b_.line("global " + t_ + "* kiln_aggregates = (global " + t_ +
                "*)(kiln_temp + kiln_values);");
        b_.line("global " + t_ + "* kiln_prefixes = (global " + t_ +
                "*)(kiln_temp + kiln_values + tiles * " + slot + ");");
        return element;
    }

    /// Local arrays of a tile kernel (OpenCL C wants them at kernel scope). A compaction's
    /// counts and a flag-and-payload input's flags (see element_text::compose) are 0 or 1 per
    /// element: the tile keeps them as bits, one word per 32 elements, each written by a
    /// sub-group ballot where sub-groups of 32 exist, else as bytes (converted on read), padded
    /// by one word per 32 words so that work-items reading their ITEMS consecutive bytes fall on
    /// different banks. Either leaves room for more groups per compute unit beside the staged
    /// kept values or payloads.
    void declare_tile_arrays(const element_text& element) {
        if (flags_of(element) == flag_storage::ballots) {
            b_.local_array("uint", "kiln_flag_bits", "TILE / 32 + 1");
        } else if (flags_of(element) == flag_storage::bytes) {
            b_.define("flag_pad",
                      "#define KILN_FLAG_PAD(i) ((i) + (((i) >> 7) << 2))\n"
                      "#define KILN_PADDED_FLAGS (TILE + ((TILE >> 7) << 2))");
            b_.local_array("uchar", "kiln_flags", "KILN_PADDED_FLAGS");
        } else {
            b_.local_array(t_, "kiln_tile", "KILN_PADDED_TILE");
        }
        if (split_tile(element))
            b_.local_array(element.payload_type, "kiln_payload", "KILN_PADDED_TILE");
        b_.local_array(t_, "kiln_scan", "2 * WG");
        if (byte_counts(element))
            b_.local_array(element.kept_type, "kiln_kept", "KILN_PADDED_TILE");
        b_.line("const uint lid = " + source_builder::local_id() + ";");
    }

    /// The 0/1 flag of this work-item's item `j` (counted from its first), at tile index `item`.
    std::string flag_at(const element_text& element, const std::string& j,
                        const std::string& item) const {
        if (register_flags(element)) return "((kiln_my_flags >> (" + j + ")) & 1)";
        if (flags_of(element) == flag_storage::ballots)
            return "((kiln_flag_bits[(" + item + ") >> 5] >> ((" + item + ") & 31)) & 1)";
        return "kiln_flags[KILN_FLAG_PAD(" + item + ")]";
    }

    /// The tile's scanned input at this work-item's item `j`, as the scan's type; `item` is its
    /// index in the tile (by default first + j).
    std::string tile_at(const element_text& element, const std::string& j,
                        std::string item = {}) const {
        if (item.empty()) item = "first + " + j;
        if (byte_counts(element)) return "((" + t_ + ")" + flag_at(element, j, item) + ")";
        if (split_tile(element))
            return element.compose(flag_at(element, j, item),
                                   "kiln_payload[KILN_PAD(" + item + ")]");
        return "kiln_tile[KILN_PAD(" + item + ")]";
    }

    /// Loads tile `tile` (coalesced, through the expression), scans each work-item's items and
    /// the work-items' totals; leaves `aggregate`, the tile's combination.
    void load_and_scan(const element_text& element) {
        const flag_storage flags = flags_of(element);
        b_.line("const ulong base = tile * TILE;");
        b_.line("const uint valid = n - base < TILE ? (uint)(n - base) : TILE;");
        std::function<void()> fast;
        if (flags == flag_storage::none && wide_input(element))
            fast = [&] { load_wide(element); };
        else if (policy_.full_tiles == tile_access::unrolled)
            fast = [&] { load_elements(element, false); };
        by_fullness(fast, [&] { load_elements(element, true); });
        b_.local_barrier();
        b_.line("const uint first = lid * ITEMS;");
        b_.line(
            "const uint count = first < valid ? (valid - first < ITEMS ? valid - first : "
            "ITEMS) : 0;");
        if (register_flags(element)) {
            gather_flags(flags);
            b_.line(t_ + " acc = (" + t_ + ")popcount(kiln_my_flags);");
        } else {
            // Work-items past the tile's end start from the tile's first item (the tile's
            // aggregate never includes them; no flag of theirs is set).
            b_.line(t_ + " acc = " + tile_at(element, "0", "(first < valid ? first : 0)") + ";");
            const std::string next = combine("acc", tile_at(element, "j"));
            if (unrolled_items()) {
                b_.line("#pragma unroll");
                b_.open("for (uint j = 1; j < ITEMS; ++j)");
                b_.line("if (j < count) acc = " + next + ";");
            } else {
                b_.open("for (uint j = 1; j < count; ++j)");
                b_.line("acc = " + next + ";");
            }
            b_.close();
        }
        scanned_at_ = group_scan("acc");
        b_.line("const " + t_ + " aggregate = kiln_scan[" + scanned_at_ +
                " + (valid - 1) / ITEMS];");
    }

    /// Each work-item loads its ITEMS elements WG apart, behind bounds checks where `guarded`.
    void load_elements(const element_text& element, bool guarded) {
        const flag_storage flags = flags_of(element);
        if (unrolled_items()) b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.line("const uint k = j * WG + lid;");
        if (flags == flag_storage::ballots) b_.line("uint kiln_flag = 0;");
        b_.open(guarded ? "if (k < valid)" : "");
        b_.line("const ulong idx = base + k;");
        for (const auto& statement : element.statements) b_.line(statement);
        const std::string flag = split_tile(element) ? element.flag : element.value;
        if (flags == flag_storage::ballots)
            b_.line("kiln_flag = (" + flag + ") != 0;");
        else if (flags == flag_storage::bytes)
            b_.line("kiln_flags[KILN_FLAG_PAD(k)] = (uchar)(" + flag + ");");
        if (byte_counts(element))
            b_.line("kiln_kept[KILN_PAD(k)] = " + element.kept_value + ";");
        else if (split_tile(element))
            b_.line("kiln_payload[KILN_PAD(k)] = " + element.payload + ";");
        else
            b_.line("kiln_tile[KILN_PAD(k)] = " + element.value + ";");
        b_.close();
        if (flags == flag_storage::ballots) {
            // Every lane runs the ballot (the loop is uniform); a sub-group's 32 consecutive
            // elements make one word.
            group_collectives warp(b_, policy_.sub_group_size, policy_.ptx_shuffles);
            b_.line("const uint kiln_bits = " + warp.ballot("kiln_flag") + ";");
            b_.line("if ((lid & 31) == 0) kiln_flag_bits[k >> 5] = kiln_bits;");
        }
        b_.close();
    }

    /// A full tile through 16-byte loads: each work-item its ITEMS / lanes loads, WG apart,
    /// each giving `lanes` consecutive elements. The padding puts a pad slot only every 2^s
    /// elements, a multiple of the lanes, so a load's elements stay consecutive in the tile.
    void load_wide(const element_text& element) {
        const std::string lanes = std::to_string(element.lanes.size());
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS / " + lanes + "; ++j)");
        b_.line("const uint kiln_q = j * WG + lid;");
        for (const auto& load : element.wide_loads)
            b_.line("const " + load.wide_type + " " + load.name + "_in = ((global const " +
                    load.wide_type + "*)(" + load.name + " + base))[kiln_q];");
        b_.line("const uint kiln_slot = KILN_PAD(" + lanes + " * kiln_q);");
        for (std::size_t lane = 0; lane < element.lanes.size(); ++lane) {
            b_.open("");
            b_.line("const ulong idx = base + " + lanes + " * kiln_q + " + std::to_string(lane) +
                    ";");
            for (const auto& statement : element.lanes[lane].statements) b_.line(statement);
            b_.line("kiln_tile[kiln_slot + " + std::to_string(lane) +
                    "] = " + element.lanes[lane].value + ";");
            b_.close();
        }
        b_.close();
    }

    /// `kiln_my_flags`: bit j is the flag of this work-item's item j (none past `count`).
    void gather_flags(flag_storage flags) {
        const std::string word = policy_.items_per_work_item <= 32 ? "uint" : "ulong";
        if (flags == flag_storage::ballots) {
            const std::string mask =
                policy_.items_per_work_item == 32 ? "0xffffffffu" : "((1u << ITEMS) - 1u)";
            // Two words hold the ITEMS bits wherever they begin (words past the tile's end are
            // masked off).
            b_.line(
                "const ulong kiln_two_words = ((ulong)kiln_flag_bits[(first >> 5) + 1] << 32) | "
                "kiln_flag_bits[first >> 5];");
            b_.line("const uint kiln_my_flags = (uint)(kiln_two_words >> (first & 31)) & " + mask +
                    ";");
            return;
        }
        b_.line(word + " kiln_my_flags = 0;");
        b_.open("for (uint j = 0; j < count; ++j)");
        b_.line("kiln_my_flags |= (" + word + ")(kiln_flags[KILN_FLAG_PAD(first + j)] != 0) << j;");
        b_.close();
    }

    /// Writes the tile's results given its prefix (tile_has_prefix, tile_prefix).
    void store(const element_text& element) {
        if (byte_counts(element)) return store_compaction(element);
        b_.line("int have = tile_has_prefix;");
        b_.line(t_ + " running = tile_prefix;");
        b_.open("if (lid > 0)");
        b_.line("running = have ? " +
                combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") + " : kiln_scan[" +
                scanned_at_ + " + lid - 1];");
        b_.line("have = 1;");
        b_.close();
        // Each work-item rewrites only its own items: no barrier before.
        if (unrolled_items() && !scatter_) {
            b_.line("#pragma unroll");
            b_.open("for (uint j = 0; j < ITEMS; ++j)");
            b_.open("if (j < count)");
        } else {
            b_.open("for (uint j = 0; j < count; ++j)");
        }
        b_.line("const " + t_ + " x = " + tile_at(element, "j") + ";");
        if (scatter_) {
            b_.line("const int had = have;");
            b_.line("const " + t_ + " before = running;");
            b_.line("running = have ? " + combine("running", "x") + " : x;");
            b_.line("have = 1;");
            b_.open("");
            b_.line("const ulong idx = base + first + j;");
            element.scatter(b_);
            b_.close();
            b_.close();
            return;
        }
        if (exclusive_) b_.line("kiln_tile[KILN_PAD(first + j)] = running;");
        b_.line("running = have ? " + combine("running", "x") + " : x;");
        b_.line("have = 1;");
        if (!exclusive_) b_.line("kiln_tile[KILN_PAD(first + j)] = running;");
        if (unrolled_items()) b_.close();
        b_.close();
        b_.local_barrier();
        std::function<void()> fast;
        if (const std::size_t lanes = wide_store_lanes(); lanes > 1)
            fast = [this, lanes] { store_wide(lanes); };
        else if (policy_.full_tiles == tile_access::unrolled)
            fast = [this] { store_elements(false); };
        by_fullness(fast, [this] { store_elements(true); });
    }

    void store_elements(bool guarded) {
        if (unrolled_items()) b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.line("const uint k = j * WG + lid;");
        b_.line(std::string(guarded ? "if (k < valid) " : "") +
                "out[base + k] = kiln_tile[KILN_PAD(k)];");
        b_.close();
    }

    /// A full tile through 16-byte stores of `lanes` consecutive results each.
    void store_wide(std::size_t lanes) {
        const std::string count = std::to_string(lanes), wide = t_ + count;
        std::string parts;
        for (std::size_t lane = 0; lane < lanes; ++lane)
            parts += (lane ? ", " : "") + std::string("kiln_tile[kiln_slot + ") +
                     std::to_string(lane) + "]";
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS / " + count + "; ++j)");
        b_.line("const uint kiln_q = j * WG + lid;");
        b_.line("const uint kiln_slot = KILN_PAD(" + count + " * kiln_q);");
        b_.line("((global " + wide + "*)(out + base))[kiln_q] = (" + wide + ")(" + parts + ");");
        b_.close();
    }

    /// Compaction: each work-item moves its kept values to their rank in the tile (through
    /// registers, since ranks fall on other work-items' items), then the group writes the tile's
    /// kept values in order, neighbouring work-items to neighbouring elements.
    void store_compaction(const element_text& element) {
        const std::string kept = "kiln_kept";
        b_.line("const uint kiln_before = lid > 0 ? (uint)kiln_scan[" + scanned_at_ +
                " + lid - 1] : 0;");
        b_.line("__private " + kept_type_ + " kiln_mine[ITEMS];");
        b_.line("#pragma unroll");
        b_.line("for (uint j = 0; j < ITEMS; ++j) kiln_mine[j] = " + kept +
                "[KILN_PAD(first + j)];");
        b_.local_barrier();
        b_.line("uint kiln_rank = kiln_before;");
        b_.line("#pragma unroll");
        b_.open("for (uint j = 0; j < ITEMS; ++j)");
        b_.open("if (j < count && " + flag_at(element, "j", "first + j") + " != 0)");
        b_.line("const uint r = kiln_rank++;");
        b_.line(kept + "[KILN_PAD(r)] = kiln_mine[j];");
        b_.close();
        b_.close();
        b_.local_barrier();
        // Counts include the carry (the count before the part); outputs begin at it.
        b_.line(
            "const ulong kiln_first = (ulong)(tile_has_prefix ? tile_prefix : 0) - "
            "(ulong)carry;");
        b_.open("for (uint s = lid; s < (uint)aggregate; s += WG)");
        b_.line("if (kiln_first + s < kiln_capacity) kiln_out[kiln_first + s] = " + kept +
                "[KILN_PAD(s)];");
        b_.close();
    }

    void lookback_kernel(const declare_input& input) {
        const element_text element = begin("kiln_scan_lookback", true, &input);
        declare_tile_arrays(element);
        b_.line("local uint kiln_tile_number;");
        b_.line("local int kiln_has_prefix;");
        b_.line("local " + t_ + " kiln_prefix;");
        if (!sub_group_lookback()) {
            b_.line("local ulong kiln_window_flag[KILN_WINDOW];");
            b_.line("local " + t_ + " kiln_window_value[KILN_WINDOW];");
            b_.line("local int kiln_window_done;");
        }
        // Ticket order: a tile's id is taken when its group starts, so every tile it waits for
        // belongs to a group that started earlier.
        b_.line("if (lid == 0) kiln_tile_number = atomic_inc((volatile global uint*)kiln_temp);");
        b_.local_barrier();
        b_.line("const ulong tile = kiln_tile_number;");
        load_and_scan(element);
        b_.open("if (lid == 0)");
        b_.line("if (tile > 0) {");
        publish("aggregate", 1);
        b_.line("}");
        b_.line("kiln_has_prefix = tile == 0 ? has_carry : 0;");
        b_.line("kiln_prefix = carry;");
        b_.close();
        if (sub_group_lookback())
            sub_group_lookback_loop();
        else
            window_lookback_loop();
        b_.open("if (lid == 0)");
        b_.line("const " + t_ + " inclusive = kiln_has_prefix ? " +
                combine("kiln_prefix", "aggregate") + " : aggregate;");
        publish("inclusive", 2);
        b_.line("if (tile == tiles - 1) *kiln_total = inclusive;");
        b_.close();
        b_.local_barrier();
        b_.line("const int tile_has_prefix = kiln_has_prefix;");
        b_.line("const " + t_ + " tile_prefix = kiln_prefix;");
        store(element);
        b_.end_kernel();
    }

    /// The look-back through local memory: KILN_WINDOW work-items read the states of as many
    /// earlier tiles at once (waiting for each to be published), then work-item 0 folds them
    /// from the nearest back to the first inclusive prefix; the window moves back until one is
    /// found.
    void window_lookback_loop() {
        b_.open("if (tile > 0)");
        b_.line("ulong end = tile;");
        b_.open("for (;;)");
        b_.open("if (lid < KILN_WINDOW)");
        b_.line("ulong flag = 0;");
        b_.open("if (end > lid)");
        b_.line("const ulong k = end - 1 - lid;");
        b_.line("ulong word = 0;");
        b_.open("do");
        b_.line("word = *(volatile global ulong*)&kiln_state[k];");
        b_.line("flag = " + flag_of("word") + ";");
        b_.close_with("while (flag == 0);");
        read_value("k", "word");
        b_.line("kiln_window_value[lid] = value;");
        b_.close();
        b_.line("kiln_window_flag[lid] = flag;");
        b_.close();
        b_.local_barrier();
        b_.open("if (lid == 0)");
        b_.line("int have = kiln_has_prefix;");
        b_.line(t_ + " prefix = kiln_prefix;");
        b_.line("int done = 0;");
        b_.open("for (uint j = 0; j < KILN_WINDOW && !done; ++j)");
        b_.line("if (kiln_window_flag[j] == 0) break;");
        b_.line("const " + t_ + " value = kiln_window_value[j];");
        b_.line("prefix = have ? " + combine("value", "prefix") + " : value;");
        b_.line("have = 1;");
        b_.line("done = kiln_window_flag[j] == 2;");
        b_.close();
        b_.line("kiln_has_prefix = have;");
        b_.line("kiln_prefix = prefix;");
        b_.line("kiln_window_done = done || end <= KILN_WINDOW;");
        b_.close();
        b_.local_barrier();
        b_.line("if (kiln_window_done) break;");
        b_.line("end -= KILN_WINDOW;");
        b_.close();
        b_.close();
    }

    bool sub_group_lookback() const {
        return policy_.sub_group_size > 0 && policy_.sub_group_size <= 32;
    }

    /// The look-back within the first sub-group (warp), with no group barrier inside: each lane
    /// reads KILN_DEPTH consecutive earlier states at once (lane 0 the nearest), waits for them
    /// to be published and folds them back to the first inclusive prefix it meets; a ballot finds
    /// the nearest lane that met one, and a shuffle reduction combines the lanes up to it, older
    /// lanes as the earlier operands. The window moves back until some lane met an inclusive
    /// prefix (tile 0 always publishes one). A fold by one work-item through local memory cost
    /// two barriers and a serial loop per window, while later tiles waited.
    void sub_group_lookback_loop() {
        group_collectives warp(b_, policy_.sub_group_size, policy_.ptx_shuffles);
        const std::string sg = std::to_string(policy_.sub_group_size);
        b_.open("if (tile > 0 && lid < " + sg + ")");
        b_.line("int have = 0;");
        b_.line(t_ + " prefix = carry;");
        b_.line("ulong end = tile;");
        b_.open("for (;;)");
        b_.line("ulong kiln_words[KILN_DEPTH];");
        b_.line("#pragma unroll");
        b_.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
        b_.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
        b_.line(
            "kiln_words[m] = end > back ? *(volatile global ulong*)&kiln_state[end - 1 - back] : "
            "0;");
        b_.close();
        b_.line("int lane_have = 0;");
        b_.line("int lane_inclusive = 0;");
        b_.line(t_ + " lane_value = carry;");
        b_.line("#pragma unroll");
        b_.open("for (uint m = 0; m < KILN_DEPTH; ++m)");
        b_.line("const ulong back = (ulong)lid * KILN_DEPTH + m;");
        b_.open("if (end > back && !lane_inclusive)");
        b_.line("const ulong k = end - 1 - back;");
        b_.line("ulong word = kiln_words[m];");
        b_.line("ulong flag = " + flag_of("word") + ";");
        b_.open("while (flag == 0)");
        b_.line("word = *(volatile global ulong*)&kiln_state[k];");
        b_.line("flag = " + flag_of("word") + ";");
        b_.close();
        read_value("k", "word");
        b_.line("lane_value = lane_have ? " + combine("value", "lane_value") + " : value;");
        b_.line("lane_have = 1;");
        b_.line("lane_inclusive = flag == 2;");
        b_.close();
        b_.close();
        b_.line("const uint stop = " + warp.ballot("lane_inclusive") + ";");
        b_.line("const uint nearest = stop != 0 ? popcount((stop & (0u - stop)) - 1u) : " + sg +
                ";");
        b_.line("int take = lane_have && lid <= nearest;");
        b_.open("for (uint kiln_d = 1; kiln_d < " + sg + "; kiln_d *= 2)");
        warp.shuffle_down(t_, "kiln_older", "lane_value", "kiln_d", op_.components);
        warp.shuffle_down("int", "kiln_older_taken", "take", "kiln_d");
        b_.open("if (lid + kiln_d < " + sg + " && kiln_older_taken)");
        b_.line("lane_value = take ? " + combine("kiln_older", "lane_value") + " : kiln_older;");
        b_.line("take = 1;");
        b_.close();
        b_.close();
        b_.open("if (take)");
        b_.line("prefix = have ? " + combine("lane_value", "prefix") + " : lane_value;");
        b_.line("have = 1;");
        b_.close();
        b_.line("if (stop != 0 || end <= " + sg + " * KILN_DEPTH) break;");
        b_.line("end -= " + sg + " * KILN_DEPTH;");
        b_.close();
        b_.open("if (lid == 0)");
        b_.line("kiln_has_prefix = have;");
        b_.line("kiln_prefix = prefix;");
        b_.close();
        b_.close();
    }

    void reduce_kernel(const declare_input& input) {
        const element_text element = begin("kiln_scan_reduce", true, &input);
        declare_tile_arrays(element);
        b_.line("const ulong tile = " + source_builder::group_id() + ";");
        load_and_scan(element);
        b_.line("if (lid == 0) kiln_aggregates[tile] = aggregate;");
        b_.end_kernel();
    }

    /// One work-group walks the tile aggregates in chunks of WG, carrying the running prefix.
    void spine_kernel() {
        begin("kiln_scan_spine", false, nullptr);
        b_.local_array(t_, "kiln_scan", "2 * WG");
        b_.line("const uint lid = " + source_builder::local_id() + ";");
        b_.line(t_ + " running = carry;");
        b_.line("int have = has_carry;");
        b_.open("for (ulong chunk = 0; chunk < tiles; chunk += WG)");
        b_.line("const ulong i = chunk + lid;");
        b_.line("const uint valid = tiles - chunk < WG ? (uint)(tiles - chunk) : WG;");
        b_.line(t_ + " v = kiln_aggregates[i < tiles ? i : tiles - 1];");
        scanned_at_ = group_scan("v");
        b_.open("if (i < tiles)");
        b_.line("if (lid == 0) kiln_prefixes[i] = running;");
        b_.line("else kiln_prefixes[i] = have ? " +
                combine("running", "kiln_scan[" + scanned_at_ + " + lid - 1]") + " : kiln_scan[" +
                scanned_at_ + " + lid - 1];");
        b_.close();
        b_.line("const " + t_ + " chunk_total = kiln_scan[" + scanned_at_ + " + valid - 1];");
        b_.line("running = have ? " + combine("running", "chunk_total") + " : chunk_total;");
        b_.line("have = 1;");
        b_.local_barrier();
        b_.close();
        b_.line("if (lid == 0) *kiln_total = running;");
        b_.end_kernel();
    }

    void downsweep_kernel(const declare_input& input) {
        const element_text element = begin("kiln_scan_downsweep", true, &input);
        declare_tile_arrays(element);
        b_.line("const ulong tile = " + source_builder::group_id() + ";");
        load_and_scan(element);
        b_.line("const int tile_has_prefix = tile > 0 || has_carry;");
        b_.line("const " + t_ + " tile_prefix = tile > 0 ? kiln_prefixes[tile] : carry;");
        store(element);
        b_.end_kernel();
    }

  private:
    /// Scans `value` across the group in kiln_scan; returns where the results lie.
    std::string group_scan(const std::string& value) {
        return group_collectives(b_, policy_.sub_group_size, policy_.ptx_shuffles)
            .inclusive_scan(
                "kiln_scan", "lid", "WG", value,
                [this](const std::string& x, const std::string& y) { return combine(x, y); }, t_,
                op_.components);
    }

    /// Full tiles through `fast` (where not empty), a part's last tile through `guarded`.
    void by_fullness(const std::function<void()>& fast, const std::function<void()>& guarded) {
        if (!fast) return guarded();
        b_.open("if (valid == TILE)");
        fast();
        b_.close();
        b_.open("else");
        guarded();
        b_.close();
    }

    /// Whether full tiles scan each work-item's items in unrolled loops (any fast tile access).
    bool unrolled_items() const { return policy_.full_tiles != tile_access::guarded; }

    /// Whether full tiles load through 16-byte loads: asked for, and the input allows it.
    bool wide_input(const element_text& element) const {
        return policy_.full_tiles == tile_access::wide && !element.lanes.empty() &&
               policy_.items_per_work_item % element.lanes.size() == 0;
    }

    /// Results per 16-byte store of full tiles, or 1 for element stores: scalar values of 4 or
    /// 8 bytes, where asked for.
    std::size_t wide_store_lanes() const {
        const bool fits = op_.components == 1 && (op_.value_bytes == 4 || op_.value_bytes == 8);
        const std::size_t lanes = fits ? 16 / op_.value_bytes : 1;
        const bool wide = policy_.full_tiles == tile_access::wide;
        return wide && policy_.items_per_work_item % lanes == 0 ? lanes : 1;
    }

    /// Stream compaction staging its kept values, its counts held as flags.
    bool byte_counts(const element_text& element) const {
        return scatter_ && element.style == scatter_style::staged_compaction;
    }

    /// A scattering input given as a flag and a payload, its tile split in two arrays.
    bool split_tile(const element_text& element) const {
        return scatter_ && static_cast<bool>(element.compose);
    }

    flag_storage flags_of(const element_text& element) const {
        if (!byte_counts(element) && !split_tile(element)) return flag_storage::none;
        return policy_.ballot_flags && policy_.sub_group_size == 32 &&
                       policy_.items_per_work_item <= 32
                   ? flag_storage::ballots
                   : flag_storage::bytes;
    }

    /// Whether each work-item gathers its items' flags in one register word (kiln_my_flags),
    /// counts them at once and tests them from there when it stages its kept values. Split tiles
    /// read their flags where they use them: a register more across the look-back cost the
    /// reduce_by_key kernel 8 registers (32 to 40 at 128x16, ptxas -v for sm_90).
    bool register_flags(const element_text& element) const {
        return byte_counts(element) && policy_.items_per_work_item <= 64;
    }

    /// The flag of a state word.
    std::string flag_of(const std::string& word) const {
        switch (op_.packing) {
            case state_packing::low_32_bits:
                return word + " >> 32";
            case state_packing::count_62_bits:
            case state_packing::pair_30_32_bits:
                return word + " >> 62";
            case state_packing::separate:
                break;
        }
        return word;
    }

    /// `value`: the value of tile k, whose state word has been read (and its flag seen).
    void read_value(const std::string& k, const std::string& word) {
        if (op_.packing == state_packing::low_32_bits) {
            b_.line("const " + t_ + " value = as_" + t_ + "((uint)" + word + ");");
            return;
        }
        if (op_.packing == state_packing::pair_30_32_bits) {
            b_.line(t_ + " value;");
            b_.line("value.x = (uint)(" + word + " >> 32) & 0x3fffffffu;");
            b_.line("value.y = (uint)" + word + ";");
            return;
        }
        if (op_.packing == state_packing::count_62_bits) {
            b_.line("const " + t_ + " value = " + word + " & (((ulong)1 << 62) - 1);");
            return;
        }
        // Written before the flag, behind a fence: fence here too, then volatile loads, which
        // skip the non-coherent L1 of GPUs. Component by component: CUDA's vector types cannot
        // be copied from volatile memory.
        b_.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
        b_.line(t_ + " value;");
        b_.line("global " + t_ + "* kiln_source = flag == 2 ? &kiln_prefixes[" + k +
                "] : &kiln_aggregates[" + k + "];");
        if (op_.components == 1) {
            b_.line("value = *(volatile global " + t_ + "*)kiln_source;");
        } else {
            const std::string scalar = t_.substr(0, t_.size() - 1);
            for (unsigned c = 0; c < op_.components; ++c)
                b_.line(std::string("value.") + "xyzw"[c] + " = ((volatile global " + scalar +
                        "*)kiln_source)[" + std::to_string(c) + "];");
        }
    }

    /// Publishes `value` with `flag` (1: aggregate, 2: inclusive prefix) for this tile. Packed
    /// states are one 64-bit word, stored at once: no fence needed. Wider values are written
    /// first and the flag after them, behind a fence.
    void publish(const std::string& value, int flag) {
        const std::string f = std::to_string(flag);
        switch (op_.packing) {
            case state_packing::low_32_bits:
                b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f +
                        " << 32) | as_uint(" + value + ");");
                return;
            case state_packing::count_62_bits:
                b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f + " << 62) | " +
                        value + ";");
                return;
            case state_packing::pair_30_32_bits:
                b_.line("*(volatile global ulong*)&kiln_state[tile] = ((ulong)" + f +
                        " << 62) | ((ulong)" + value + ".x << 32) | " + value + ".y;");
                return;
            case state_packing::separate:
                break;
        }
        b_.line(std::string(flag == 1 ? "kiln_aggregates" : "kiln_prefixes") + "[tile] = " + value +
                ";");
        b_.release_store("ulong", "&kiln_state[tile]", f);
    }

    source_builder& b_;
    const scan_operation& op_;
    const algorithm_policy& policy_;
    std::string t_;
    bool exclusive_;
    bool scatter_;
    std::string scanned_at_;  // where the group scan left its results in kiln_scan
    std::string kept_type_;   // what staged scatters gather
};

}  // namespace

bool lookback_allowed(const device& dev, state_packing packing) {
    return groups_make_progress(dev) &&
           (packing != state_packing::separate || global_fence_orders_device(dev));
}

std::vector<std::string> scan_kernel_names() {
    return {"kiln_scan_lookback", "kiln_scan_reduce", "kiln_scan_spine", "kiln_scan_downsweep"};
}

std::string scan_program_source(const scan_operation& op, const declare_input& input,
                                const algorithm_policy& policy, bool exclusive, bool scatter) {
    source_builder builder;
    scan_writer writer(builder, op, policy, exclusive, scatter);
    writer.lookback_kernel(input);
    writer.reduce_kernel(input);
    writer.spine_kernel();
    writer.downsweep_kernel(input);
    return builder.str();
}

}  // namespace kiln::detail
