// Model inputs from the command line: NAME=FILE specs (.npy or images), random inputs, and the
// checks that every input is present with the shape and dtype the model declares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/io/image.h"
#include "lib/io/npy.h"
#include "lib/ir/graph.h"

namespace mt {

struct InputOptions {
  std::vector<std::string> specs;  // "NAME=FILE" or, for a single-input model, "FILE"
  // Image preprocessing; height/width 0 = the input's own spatial size, channels follow the
  // input's shape (image.nhwc decides which dims are H, W and C).
  ImagePreprocess image;
  // Fill every input not given by a spec with seeded random values: floats uniform in [-1, 1),
  // integers uniform in [0, 10), bools 0 or 1.
  bool random = false;
  uint64_t seed = 0;
};

// Loads one array per graph input, in graph.inputs order. Errors: an unknown input name or a
// spec given twice (usage); a missing input, listed by name with its dtype and shape, or a file
// whose dtype or shape differs from the input's (invalid_input, naming input, file, expected and
// given). Files ending in .npy are arrays; anything else is decoded as an image.
std::vector<HostArray> load_inputs(const Graph& graph, const InputOptions& options);

// Uniform random values for a tensor of `dtype` and `shape` (see InputOptions::random).
HostArray random_array(DType dtype, const Shape& shape, uint64_t seed);

// Splits "NAME=FILE" when NAME is a graph input; a single-input model also takes "FILE" (with an
// '=' in it only if that file exists).
struct InputSpec {
  size_t index = 0;  // into graph.inputs
  std::string path;
};
InputSpec parse_input_spec(const Graph& graph, const std::string& spec);

}  // namespace mt
