// cast: element type conversion in any layout. Float to integer truncates toward zero and
// saturates (NaN -> 0); integer to narrower integer wraps; float16 rounds to nearest even.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/float16.h"
#include "lib/ops/saturating_cast.h"

namespace mt::cpu {
namespace {

struct Half {
  uint16_t bits;
};
struct Bool {
  uint8_t byte;  // any non-zero byte reads as true
};

// Storage types: bool is one byte holding 0 or 1; float16 its bit pattern.
template <typename From, typename To>
To convert(From v) {
  if constexpr (std::is_same_v<From, Half>) {
    return convert<float, To>(half_to_float(v.bits));
  } else if constexpr (std::is_same_v<From, Bool>) {
    return convert<uint8_t, To>(v.byte != 0 ? 1 : 0);
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{float_to_half(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<To, Bool>) {
    return Bool{static_cast<uint8_t>(v != From{0} ? 1 : 0)};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return saturating_cast<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
void convert_all(const void* in, void* out, size_t n, ThreadPool* pool) {
  const auto* source = static_cast<const From*>(in);
  auto* destination = static_cast<To*>(out);
  parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) destination[i] = convert<From, To>(source[i]);
  });
}

using ConvertFn = void (*)(const void*, void*, size_t, ThreadPool*);

template <typename From>
ConvertFn pick_to(DType to) {
  switch (to) {
    case DType::f32: return convert_all<From, float>;
    case DType::f16: return convert_all<From, Half>;
    case DType::i8: return convert_all<From, int8_t>;
    case DType::u8: return convert_all<From, uint8_t>;
    case DType::i32: return convert_all<From, int32_t>;
    case DType::i64: return convert_all<From, int64_t>;
    case DType::boolean: return convert_all<From, Bool>;
  }
  return nullptr;
}

ConvertFn pick(DType from, DType to) {
  switch (from) {
    case DType::f32: return pick_to<float>(to);
    case DType::f16: return pick_to<Half>(to);
    case DType::i8: return pick_to<int8_t>(to);
    case DType::u8: return pick_to<uint8_t>(to);
    case DType::i32: return pick_to<int32_t>(to);
    case DType::i64: return pick_to<int64_t>(to);
    case DType::boolean: return pick_to<Bool>(to);
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> check_cast(const Graph&, const Node&) { return std::nullopt; }

void plan_cast(NodeContext& c) {
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  if (x.dtype == y.dtype) {
    const size_t bytes = x.bytes();
    c.add_kernel({x, y}, [bytes](Pointers p, ThreadPool*) { std::memcpy(p[1], p[0], bytes); });
    return;
  }
  const ConvertFn fn = pick(x.dtype, y.dtype);
  c.add_kernel({x, y}, [fn, n](Pointers p, ThreadPool* pool) { fn(p[0], p[1], n, pool); });
}

}  // namespace mt::cpu
