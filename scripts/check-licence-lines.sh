#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a tracked source file (C++, CUDA, CMake, shell, Python) lacks the SPDX line that names
# kiln's licence (LICENSE) within its first two lines (after a script's #! line).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' '*.cuh' '*CMakeLists.txt' '*.cmake' '*.sh' '*.py' |
    while read -r file; do
        head -2 "$file" | grep -q "SPDX-License-Identifier: Apache-2.0" || echo "$file"
    done)
if [ -n "$missing" ]; then
    echo "$missing" | head -40
    echo "kiln: these files lack the line 'SPDX-License-Identifier: Apache-2.0' at their head" >&2
    exit 1
fi
echo "licence lines: every source file names Apache-2.0"
