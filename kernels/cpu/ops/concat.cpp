// concat and split along any axis, in the layout of the (first computed) input: NHWC channel
// concatenation interleaves per pixel, while a split along the outermost dim in memory is free
// (its outputs view consecutive slices of the input).
#include <cstring>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

// Bytes before and from `axis` (physical) for one tensor: [outer, axis * inner] in memory.
struct Blocks {
  size_t outer = 1, block = 1;  // block: bytes of the axis and everything inside it
};

Blocks blocks_of(const Shape& physical, int axis, size_t element_size) {
  Blocks b;
  b.block = element_size;
  for (int k = 0; k < static_cast<int>(physical.size()); ++k) {
    if (k < axis) b.outer *= static_cast<size_t>(physical[k]);
    else b.block *= static_cast<size_t>(physical[k]);
  }
  return b;
}

}  // namespace

std::optional<std::string> check_concat(const Graph&, const Node&) { return std::nullopt; }

void plan_concat(NodeContext& c) {
  if (!plan_concat_shuffle(c)) plan_concat_blocks(c, {});
}

void plan_concat_blocks(NodeContext& c, const ConcatCopy& copy) {
  const Value first = c.input(0);
  // Prefer the layout of a computed input: constants are reordered at planning for free.
  Layout layout = first.layout;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.is_constant(i)) {
      layout = c.input(i).layout;
      break;
    }
  }
  const size_t rank = first.shape.size();
  const int axis = physical_axis(layout, axis_of(c.node(), attr_int(c.node(), "axis"), rank));
  const size_t element = dtype_size(first.dtype);
  std::vector<Value> values;
  std::vector<size_t> blocks;
  size_t outer = 1;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    values.push_back(c.input(i, layout));
    const Blocks b = blocks_of(physical_shape(values.back().shape, layout), axis, element);
    blocks.push_back(b.block);
    outer = b.outer;
  }
  values.push_back(c.output(0, layout));
  size_t out_block = 0;
  for (size_t b : blocks) out_block += b;
  c.add_kernel(values, [blocks, outer, out_block, copy](Pointers p, ThreadPool* pool) {
    auto* out = static_cast<std::byte*>(p[blocks.size()]);
    parallel_chunks(pool, outer, std::max<size_t>(1, 65536 / std::max<size_t>(1, out_block)),
                    [&](size_t begin, size_t end) {
                      for (size_t o = begin; o < end; ++o) {
                        std::byte* destination = out + o * out_block;
                        for (size_t i = 0; i < blocks.size(); ++i) {
                          const std::byte* source = static_cast<const std::byte*>(p[i]) + o * blocks[i];
                          if (copy) copy(i, destination, source, blocks[i]);
                          else std::memcpy(destination, source, blocks[i]);
                          destination += blocks[i];
                        }
                      }
                    });
  });
}

std::optional<std::string> check_split(const Graph&, const Node&) { return std::nullopt; }

void plan_split(NodeContext& c) {
  const Value x = c.input(0);
  const size_t rank = x.shape.size();
  const int axis = physical_axis(x.layout, axis_of(c.node(), attr_int(c.node(), "axis"), rank));
  const size_t element = dtype_size(x.dtype);
  const Shape physical = x.physical();
  const Blocks in = blocks_of(physical, axis, element);
  std::vector<size_t> blocks;
  for (size_t i = 0; i < c.node().outputs.size(); ++i)
    blocks.push_back(blocks_of(physical_shape(c.output_info(i).shape, x.layout), axis, element).block);

  if (in.outer == 1) {
    // Each output is a contiguous slice of the input: view it.
    size_t offset = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      c.alias(i, x, x.layout, offset);
      offset += blocks[i];
    }
    return;
  }
  std::vector<Value> values{x};
  for (size_t i = 0; i < blocks.size(); ++i) values.push_back(c.output(i, x.layout));
  const size_t outer = in.outer, in_block = in.block;
  c.add_kernel(values, [blocks, outer, in_block](Pointers p, ThreadPool* pool) {
    const auto* source = static_cast<const std::byte*>(p[0]);
    parallel_chunks(pool, outer, std::max<size_t>(1, 65536 / std::max<size_t>(1, in_block)),
                    [&](size_t begin, size_t end) {
                      for (size_t o = begin; o < end; ++o) {
                        const std::byte* from = source + o * in_block;
                        for (size_t i = 0; i < blocks.size(); ++i) {
                          std::memcpy(static_cast<std::byte*>(p[i + 1]) + o * blocks[i], from, blocks[i]);
                          from += blocks[i];
                        }
                      }
                    });
  });
}

}  // namespace mt::cpu
