// SPDX-License-Identifier: Apache-2.0
// KILN_MISTAKE(mistake, twin): the mistake when built with KILN_WITH_MISTAKE, else its twin,
// so that each case is otherwise valid code (must_not_compile.sh builds both).
#pragma once
#ifdef KILN_WITH_MISTAKE
#define KILN_MISTAKE(mistake, twin) mistake
#else
#define KILN_MISTAKE(mistake, twin) twin
#endif
