// Times one ncnn model on ncnn's Vulkan backend, for scripts/compare_vulkan.sh (which compiles this
// file against the libncnn it builds outside the tree; nothing here is part of mt's build).
//
//   ncnn_vulkan_timer MODEL.param MODEL.bin INPUT.npy INPUT_BLOB OUTPUT_BLOB fp32|fp16 WARMUP ITERATIONS
//                     [EXPECTED.npy]
//
// Loads the model with use_vulkan_compute on ncnn's default GPU, runs WARMUP unmeasured inferences
// after the first, then ITERATIONS timed ones. One inference is what ncnn's own benchmark times:
// create an extractor, input the host Mat, extract the output to the host (so ncnn's time includes
// uploading the input; mt-bench keeps its input on the device, see docs/vulkan-gpu.md).
// fp32 turns off ncnn's fp16 packing, storage, arithmetic and uniforms (all on by default); fp16
// keeps ncnn's defaults, which ncnn itself narrows to what the device supports.
// With EXPECTED.npy the output of the last run is compared with it, so a wrong conversion shows.
// Prints one JSON object on stdout; exits 2 on a usage error, 1 when loading or running fails.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpu.h"
#include "net.h"

namespace {

struct Npy {
    std::vector<int> shape;
    std::vector<float> data;
};

[[noreturn]] void fail(int code, const std::string& message) {
    std::fprintf(stderr, "ncnn_vulkan_timer: %s\n", message.c_str());
    std::exit(code);
}

// Reads a little-endian float32, C-order .npy file (what scripts/export_models.py writes).
Npy read_npy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(2, path + ": cannot open");
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(2, path + ": not a .npy file");
    uint32_t header_len = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        if (!in.read(reinterpret_cast<char*>(b), 2)) fail(2, path + ": truncated header");
        header_len = b[0] | (b[1] << 8);
    } else {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4)) fail(2, path + ": truncated header");
        header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
    }
    if (header_len > 65536) fail(2, path + ": header too long");
    std::string header(header_len, '\0');
    if (!in.read(header.data(), header_len)) fail(2, path + ": truncated header");
    if (header.find("'descr': '<f4'") == std::string::npos) fail(2, path + ": not float32 little-endian");
    if (header.find("'fortran_order': False") == std::string::npos) fail(2, path + ": Fortran order");
    const size_t open = header.find("'shape': (");
    const size_t close = header.find(')', open);
    if (open == std::string::npos || close == std::string::npos) fail(2, path + ": no shape in header");
    Npy npy;
    size_t count = 1;
    for (size_t i = open + 10; i < close;) {
        if (header[i] < '0' || header[i] > '9') { ++i; continue; }
        char* end = nullptr;
        const long dim = std::strtol(header.c_str() + i, &end, 10);
        if (dim <= 0 || dim > (1 << 24)) fail(2, path + ": bad dimension in shape");
        npy.shape.push_back(int(dim));
        count *= size_t(dim);
        i = size_t(end - header.c_str());
    }
    if (count > (size_t(1) << 28)) fail(2, path + ": too large");
    npy.data.resize(count);
    if (!in.read(reinterpret_cast<char*>(npy.data.data()), std::streamsize(count * sizeof(float))))
        fail(2, path + ": fewer values than its shape says");
    return npy;
}

// The input as ncnn's CHW Mat: a batch-1 NCHW (or CHW) tensor.
ncnn::Mat to_mat(const Npy& npy, const std::string& path) {
    std::vector<int> s = npy.shape;
    if (s.size() == 4 && s[0] == 1) s.erase(s.begin());
    if (s.size() != 3) fail(2, path + ": the timer takes a 1xCxHxW input");
    ncnn::Mat mat(s[2], s[1], s[0]);
    const size_t plane = size_t(s[1]) * s[2];
    for (int c = 0; c < s[0]; ++c) std::memcpy(mat.channel(c), npy.data.data() + c * plane, plane * sizeof(float));
    return mat;
}

// The output's values in C order (channel by channel, skipping ncnn's per-channel padding).
std::vector<float> values(const ncnn::Mat& mat) {
    std::vector<float> out;
    out.reserve(size_t(mat.w) * mat.h * mat.d * mat.c);
    for (int c = 0; c < mat.c; ++c) {
        const float* p = mat.channel(c);
        out.insert(out.end(), p, p + size_t(mat.w) * mat.h * mat.d);
    }
    return out;
}

int to_int(const char* text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0 || v > 1000000) fail(2, std::string("bad ") + what + ": " + text);
    return int(v);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 9 && argc != 10)
        fail(2, "usage: ncnn_vulkan_timer MODEL.param MODEL.bin INPUT.npy INPUT_BLOB OUTPUT_BLOB fp32|fp16 WARMUP "
                "ITERATIONS [EXPECTED.npy]");
    const std::string precision = argv[6];
    if (precision != "fp32" && precision != "fp16") fail(2, "precision must be fp32 or fp16, not " + precision);
    const int warmup = to_int(argv[7], "warm-up count");
    const int iterations = to_int(argv[8], "iteration count");
    if (iterations < 1) fail(2, "at least one iteration");
    const ncnn::Mat input = to_mat(read_npy(argv[3]), argv[3]);

    if (ncnn::get_gpu_count() == 0) fail(1, "no Vulkan device");
    const int exit_code = [&] {
        ncnn::Net net;
        net.opt.use_vulkan_compute = true;
        // The CPU side only feeds the GPU; one thread, as mt-bench's default.
        net.opt.num_threads = 1;
        if (precision == "fp32") {
            net.opt.use_fp16_packed = false;
            net.opt.use_fp16_storage = false;
            net.opt.use_fp16_arithmetic = false;
            net.opt.use_fp16_uniform = false;
        }
        if (net.load_param(argv[1]) != 0) fail(1, std::string(argv[1]) + ": ncnn cannot load this param file");
        if (net.load_model(argv[2]) != 0) fail(1, std::string(argv[2]) + ": ncnn cannot load these weights");

        ncnn::Mat output;
        auto run = [&] {
            ncnn::Extractor ex = net.create_extractor();
            if (ex.input(argv[4], input) != 0) fail(1, std::string("no input blob named ") + argv[4]);
            if (ex.extract(argv[5], output) != 0) fail(1, std::string("extracting ") + argv[5] + " failed");
        };
        using clock = std::chrono::steady_clock;
        const auto t0 = clock::now();
        run();
        const double first_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        for (int i = 0; i < warmup; ++i) run();
        std::vector<double> samples;
        for (int i = 0; i < iterations; ++i) {
            const auto start = clock::now();
            run();
            samples.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
        }
        std::vector<double> sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        const size_t n = sorted.size();
        const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;

        const ncnn::GpuInfo& gpu = ncnn::get_gpu_info(net.opt.vulkan_device_index < 0 ? ncnn::get_default_gpu_index()
                                                                                         : net.opt.vulkan_device_index);
        std::printf("{\"median_ms\": %.4f, \"first_ms\": %.4f, \"samples_ms\": [", median, first_ms);
        for (size_t i = 0; i < n; ++i) std::printf("%s%.4f", i ? ", " : "", samples[i]);
        std::printf("], \"device\": \"%s\", \"fp16_storage\": %s, \"fp16_arithmetic\": %s", gpu.device_name(),
                    gpu.support_fp16_storage() ? "true" : "false", gpu.support_fp16_arithmetic() ? "true" : "false");
        if (argc == 10) {
            const Npy expected = read_npy(argv[9]);
            const std::vector<float> got = values(output);
            if (got.size() != expected.data.size())
                fail(1, "output has " + std::to_string(got.size()) + " values, expected.npy " +
                            std::to_string(expected.data.size()));
            double max_abs = 0, dot = 0, na = 0, nb = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                max_abs = std::max(max_abs, std::fabs(double(got[i]) - expected.data[i]));
                dot += double(got[i]) * expected.data[i];
                na += double(got[i]) * got[i];
                nb += double(expected.data[i]) * expected.data[i];
            }
            std::printf(", \"max_abs_error\": %.6g, \"cosine\": %.8f", max_abs, dot / std::sqrt(na * nb + 1e-30));
        }
        std::printf("}\n");
        return 0;
    }();
    ncnn::destroy_gpu_instance();
    return exit_code;
}
