// SPDX-License-Identifier: Apache-2.0
// Compiled only to build the test programs' shared precompiled header (tests/CMakeLists.txt).
