#include "lib/quant/samples.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "lib/core/error.h"

namespace mt::quant {
namespace {

namespace fs = std::filesystem;

bool is_npy(const fs::path& path) { return path.extension() == ".npy"; }

bool is_image(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp" || ext == ".ppm" || ext == ".pgm";
}

// Splits one .npy array into samples of the input's shape.
void add_npy_samples(const TensorInfo& input, const std::string& path, std::vector<Sample>& samples, size_t limit) {
  HostArray array = read_npy(path);
  if (array.dtype != input.dtype)
    invalid_input("{}: dtype {} but input '{}' is {}", path, dtype_name(array.dtype), input.name, dtype_name(input.dtype));
  if (array.shape == input.shape) {
    samples.push_back({std::move(array)});
    return;
  }
  const bool trailing_match = !input.shape.empty() && array.shape.size() == input.shape.size() &&
                              std::equal(array.shape.begin() + 1, array.shape.end(), input.shape.begin() + 1);
  if (!trailing_match || input.shape[0] < 1)
    invalid_input("{}: shape {} is neither input '{}' shape {} nor a batch of it", path, shape_str(array.shape),
                  input.name, shape_str(input.shape));
  const int64_t rows = input.shape[0];
  const size_t bytes = input.byte_size();
  for (int64_t first = 0; first + rows <= array.shape[0] && samples.size() < limit; first += rows) {
    HostArray sample{input.dtype, input.shape, ConstData::copy_of(array.data.data() + first / rows * bytes, bytes)};
    samples.push_back(Sample{std::move(sample)});
  }
}

void add_file(const Graph& graph, const fs::path& path, const InputOptions& image_options, std::vector<Sample>& samples,
              size_t limit) {
  if (samples.size() >= limit) return;
  if (is_npy(path)) return add_npy_samples(graph.tensor(graph.inputs[0]), path.string(), samples, limit);
  InputOptions options = image_options;
  options.specs = {path.string()};
  options.random = false;
  samples.push_back(load_inputs(graph, options));
}

}  // namespace

std::vector<Sample> load_samples(const Graph& graph, const std::string& source, const InputOptions& image_options,
                                 size_t max_samples) {
  if (graph.inputs.size() != 1)
    unsupported("calibration takes models with one input; this one has {}", graph.inputs.size());
  const size_t limit = max_samples == 0 ? SIZE_MAX : max_samples;
  std::vector<Sample> samples;
  const fs::path path(source);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file() && (is_npy(entry.path()) || is_image(entry.path()))) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) add_file(graph, file, image_options, samples, limit);
  } else if (is_npy(path)) {
    add_file(graph, path, image_options, samples, limit);
  } else {
    std::ifstream list(path);
    if (!list) fail(ExitCode::failure, "{}: cannot open calibration list", source);
    std::string line;
    while (std::getline(list, line)) {
      if (line.empty() || line[0] == '#') continue;
      fs::path file(line);
      if (file.is_relative()) file = path.parent_path() / file;
      add_file(graph, file, image_options, samples, limit);
    }
  }
  if (samples.empty()) invalid_input("{}: no calibration samples found", source);
  return samples;
}

}  // namespace mt::quant
