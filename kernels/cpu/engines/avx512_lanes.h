// The mask of a vector's low lanes, for the tail of a row that does not fill a 16-lane AVX-512
// vector of floats or int32s: the one definition every AVX-512 engine uses (plain integer code, so
// it inlines into functions of any target).
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstddef>

namespace mt::cpu {

// The low `count` lanes of 16 (all of them from 16 on).
inline __mmask16 low_lanes(size_t count) { return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1); }

}  // namespace mt::cpu
#endif
