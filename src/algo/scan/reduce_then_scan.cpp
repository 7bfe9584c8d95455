// SPDX-License-Identifier: Apache-2.0
// The reduce-then-scan strategy (tile_program.hpp): three passes that never wait on another
// group, for devices that do not promise forward progress. The reduce pass writes each tile's
// aggregate, one group (the spine) turns them into exclusive prefixes, and the downsweep scans
// each tile again from its prefix.
#include <string>

#include "tile_program.hpp"

namespace kiln::detail {
namespace {

/// The reduce and downsweep kernels begin alike: one tile per work-group, `tile` its index,
/// loaded and scanned.
void begin_tile_kernel(tile_program& p, tile_algorithm& algorithm, const char* name) {
    p.begin(name, &algorithm);
    algorithm.declare_arrays();
    p.b.line("const ulong tile = " + source_builder::group_id() + ";");
    algorithm.load_and_scan();
}

/// One work-group walks the tile aggregates in chunks of WG, carrying the running prefix.
void spine_kernel(tile_program& p) {
    source_builder& b = p.b;
    const std::string& t = p.t;
    p.begin(scan_kernel::spine, nullptr);
    b.local_array(t, "kiln_scan", "2 * WG");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    b.line(t + " running = carry;");
    b.line("int have = has_carry;");
    b.open("for (ulong chunk = 0; chunk < tiles; chunk += WG)");
    b.line("const ulong i = chunk + lid;");
    b.line("const uint valid = tiles - chunk < WG ? (uint)(tiles - chunk) : WG;");
    b.line(t + " v = kiln_aggregates[i < tiles ? i : tiles - 1];");
    const std::string scanned = p.group_scan("v");
    b.open("if (i < tiles)");
    b.line("if (lid == 0) kiln_prefixes[i] = running;");
    b.line("else kiln_prefixes[i] = have ? " +
           p.combine("running", "kiln_scan[" + scanned + " + lid - 1]") + " : kiln_scan[" +
           scanned + " + lid - 1];");
    b.close();
    b.line("const " + t + " chunk_total = kiln_scan[" + scanned + " + valid - 1];");
    b.line("running = have ? " + p.combine("running", "chunk_total") + " : chunk_total;");
    b.line("have = 1;");
    b.local_barrier();
    b.close();
    b.line("if (lid == 0) *kiln_total = running;");
    b.end_kernel();
}

}  // namespace

void write_reduce_then_scan_kernels(tile_program& p, tile_algorithm& algorithm) {
    begin_tile_kernel(p, algorithm, scan_kernel::reduce);
    p.b.line("if (lid == 0) kiln_aggregates[tile] = aggregate;");
    p.b.end_kernel();
    spine_kernel(p);
    begin_tile_kernel(p, algorithm, scan_kernel::downsweep);
    p.b.line("const int tile_has_prefix = tile > 0 || has_carry;");
    p.b.line("const " + p.t + " tile_prefix = tile > 0 ? kiln_prefixes[tile] : carry;");
    algorithm.store();
    p.b.end_kernel();
}

}  // namespace kiln::detail
