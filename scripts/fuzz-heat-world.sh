#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the heat-world reader for a bounded time: scripts/fuzz.sh heat_world_reader.
#
# usage: scripts/fuzz-heat-world.sh [SECONDS] [LIBFUZZER_FLAG...]
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" heat_world_reader "$@"
