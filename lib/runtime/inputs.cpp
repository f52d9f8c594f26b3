#include "lib/runtime/inputs.h"

#include <fmt/ranges.h>

#include <filesystem>
#include <random>

#include "lib/core/error.h"
#include "lib/runtime/prepack.h"

namespace mt {
namespace {

// What a caller supplies: "float32 1x3x224x224", or "float32 1x224x224x3 (nhwc)" for an input that
// mt-prepack declared channels-last.
std::string describe(const TensorInfo& info) {
  return fmt::format("{} {}{}", dtype_name(info.dtype), shape_str(caller_shape(info)),
                     info.layout.empty() ? "" : " (" + info.layout + ")");
}

// An image decoded in the model's logical NCHW order, reordered for an input declared "nhwc".
HostArray in_declared_layout(const TensorInfo& info, HostArray image) {
  if (info.layout != kLayoutNhwc || image.shape.size() != 4) return image;
  const Shape nhwc = caller_shape(info);
  if (image.shape != info.shape) return image;  // the shape check in load_inputs names the mismatch
  HostArray result{.dtype = image.dtype, .shape = nhwc, .data = ConstData::allocate(image.data.size())};
  const float* from = image.data.as<float>().data();
  auto* to = reinterpret_cast<float*>(result.data.mutable_data());
  const auto n = static_cast<size_t>(nhwc[0]), h = static_cast<size_t>(nhwc[1]), w = static_cast<size_t>(nhwc[2]),
             c = static_cast<size_t>(nhwc[3]);
  for (size_t b = 0; b < n; ++b)
    for (size_t ch = 0; ch < c; ++ch)
      for (size_t p = 0; p < h * w; ++p) to[(b * h * w + p) * c + ch] = from[(b * c + ch) * h * w + p];
  return result;
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

HostArray load_image_input(const TensorInfo& info, const std::string& path, const InputOptions& options) {
  if (info.dtype != DType::f32 || info.shape.size() != 4)
    invalid_input("input '{}' is {}: an image can only feed a float32 4-D input; give a .npy file", info.name,
                  describe(info));
  ImagePreprocess pre = options.image;
  const int64_t channels = pre.nhwc ? info.shape[3] : info.shape[1];
  const int64_t height = pre.nhwc ? info.shape[1] : info.shape[2];
  const int64_t width = pre.nhwc ? info.shape[2] : info.shape[3];
  if (channels != 1 && channels != 3)
    invalid_input("input '{}' is {}: with --layout {} it has {} channels; images give 1 or 3", info.name,
                  describe(info), pre.nhwc ? "nhwc" : "nchw", channels);
  pre.channels = static_cast<int>(channels);
  if (pre.height == 0) pre.height = static_cast<int>(std::min<int64_t>(height, 65536));
  if (pre.width == 0) pre.width = static_cast<int>(std::min<int64_t>(width, 65536));
  return load_image(path, pre);
}

}  // namespace

InputSpec parse_input_spec(const Graph& graph, const std::string& spec) {
  if (const size_t eq = spec.find('='); eq != std::string::npos) {
    const std::string name = spec.substr(0, eq);
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (graph.inputs[i] == name) return {i, spec.substr(eq + 1)};
    // A single-input model also takes a bare path, which may contain '=' itself.
    if (graph.inputs.size() != 1 || !std::filesystem::exists(spec))
      fail(ExitCode::usage, "--input {}: the model has no input '{}' (inputs: {})", spec, name, fmt::join(graph.inputs, ", "));
  }
  if (graph.inputs.size() != 1)
    fail(ExitCode::usage, "--input {}: the model has {} inputs, so name one as NAME=FILE (inputs: {})", spec,
         graph.inputs.size(), fmt::join(graph.inputs, ", "));
  return {0, spec};
}

HostArray random_array(DType dtype, const Shape& shape, uint64_t seed) {
  HostArray array{.dtype = dtype, .shape = shape};
  const auto count = static_cast<size_t>(numel(shape));
  array.data = ConstData::allocate(count * dtype_size(dtype));
  std::byte* out = array.data.mutable_data();
  std::mt19937_64 rng(seed);
  auto fill = [&]<typename T>(T* values, auto draw) {
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(draw());
  };
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 9);
  std::uniform_int_distribution<int> bit(0, 1);
  switch (dtype) {
    case DType::f32: fill(reinterpret_cast<float*>(out), [&] { return real(rng); }); break;
    case DType::f16:
      // Exact halves: sign, exponent 14 (0.5..1) or below, 10 random mantissa bits.
      fill(reinterpret_cast<uint16_t*>(out), [&] {
        return static_cast<uint16_t>((bit(rng) << 15) | (std::uniform_int_distribution<int>(1, 14)(rng) << 10) |
                                     (rng() & 0x3ff));
      });
      break;
    case DType::i8: fill(reinterpret_cast<int8_t*>(out), [&] { return small(rng); }); break;
    case DType::u8: fill(reinterpret_cast<uint8_t*>(out), [&] { return small(rng); }); break;
    case DType::i32: fill(reinterpret_cast<int32_t*>(out), [&] { return small(rng); }); break;
    case DType::i64: fill(reinterpret_cast<int64_t*>(out), [&] { return small(rng); }); break;
    case DType::boolean: fill(reinterpret_cast<uint8_t*>(out), [&] { return bit(rng); }); break;
  }
  return array;
}

std::vector<HostArray> load_inputs(const Graph& graph, const InputOptions& options) {
  std::vector<std::optional<HostArray>> arrays(graph.inputs.size());
  std::vector<std::string> sources(graph.inputs.size());
  for (const auto& text : options.specs) {
    const InputSpec spec = parse_input_spec(graph, text);
    const TensorInfo& info = graph.tensor(graph.inputs[spec.index]);
    if (arrays[spec.index]) fail(ExitCode::usage, "input '{}' is given twice (--input {})", info.name, text);
    if (spec.path.empty()) fail(ExitCode::usage, "--input {}: no file named", text);
    arrays[spec.index] = ends_with(spec.path, ".npy") ? read_npy(spec.path)
                                                      : in_declared_layout(info, load_image_input(info, spec.path, options));
    sources[spec.index] = spec.path;
  }

  std::vector<std::string> missing;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.inputs[i]);
    if (arrays[i]) continue;
    if (options.random) {
      arrays[i] = random_array(info.dtype, caller_shape(info), options.seed + i);
      continue;
    }
    missing.push_back(fmt::format("'{}' ({})", info.name, describe(info)));
  }
  if (!missing.empty())
    invalid_input("missing input{}: {}; give --input NAME=FILE.npy (or an image), or --random-input",
                  missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));

  std::vector<HostArray> result;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.inputs[i]);
    const HostArray& array = *arrays[i];
    if (array.dtype != info.dtype || array.shape != caller_shape(info))
      invalid_input("input '{}': {} holds {} {}, the model expects {}", info.name, sources[i], dtype_name(array.dtype),
                    shape_str(array.shape), describe(info));
    result.push_back(array);
  }
  return result;
}

}  // namespace mt
