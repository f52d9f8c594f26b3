// JPEG through libjpeg-turbo. Like libpng it reports errors by longjmp, so the decoder state and
// the image being filled live outside read_jpeg's frame (see image_png.cpp). Warnings (corrupt
// entropy-coded data, a premature end of the file) are errors here: libjpeg would otherwise
// return an image padded with gray, and a few hundred bytes declaring 8192 x 8192 pixels would
// decode in full.
// jpeglib.h needs size_t and FILE declared before it.
#include <csetjmp>
#include <cstddef>
#include <cstdio>

#include <jerror.h>
#include <jpeglib.h>

#include "lib/core/error.h"
#include "lib/io/image_decode.h"
#include "lib/io/shared_library.h"

namespace mt {
namespace {

// A progressive JPEG may hold any number of scans, each a pass over the whole image: a small file
// of thousands of scans takes minutes to decode. Real encoders write about 10; libjpeg-turbo's
// own tools stop at 500 (tjDecompress with TJFLAG_LIMITSCANS), as does this.
constexpr int kMaxScans = 500;

// libjpeg's functions, from its shared library opened on the first JPEG (shared_library.h).
struct LibJpeg {
  SharedLibrary library{MT_LIBJPEG_SONAME, "JPEG images"};
#define MT_JPEG_FUNCTION(name) decltype(&jpeg_##name) name = library.function<decltype(&jpeg_##name)>("jpeg_" #name)
  MT_JPEG_FUNCTION(CreateDecompress);
  MT_JPEG_FUNCTION(destroy_decompress);
  MT_JPEG_FUNCTION(finish_decompress);
  MT_JPEG_FUNCTION(mem_src);
  MT_JPEG_FUNCTION(read_header);
  MT_JPEG_FUNCTION(read_scanlines);
  MT_JPEG_FUNCTION(start_decompress);
  MT_JPEG_FUNCTION(std_error);
#undef MT_JPEG_FUNCTION
};

const LibJpeg& libjpeg() {
  static const LibJpeg functions;
  return functions;
}

struct JpegReader {
  jpeg_decompress_struct cinfo{};
  jpeg_error_mgr errors{};
  jpeg_progress_mgr progress{};
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "";
  bool created = false;
  bool cmyk = false;  // a CMYK or YCCK file (unsupported, not invalid)
  ~JpegReader() {
    if (created) libjpeg().destroy_decompress(&cinfo);
  }
};

extern "C" void on_jpeg_error(j_common_ptr cinfo) {
  auto* reader = reinterpret_cast<JpegReader*>(cinfo->client_data);
  (*cinfo->err->format_message)(cinfo, reader->message);
  std::longjmp(reader->jump, 1);
}

extern "C" void on_jpeg_message(j_common_ptr cinfo, int level) {
  // Level -1 is a warning; extraneous bytes before a marker are common in real files and harmless.
  if (level == -1 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA) on_jpeg_error(cinfo);
}

extern "C" void on_jpeg_progress(j_common_ptr cinfo) {
  auto* decompress = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (decompress->input_scan_number <= kMaxScans) return;
  auto* reader = reinterpret_cast<JpegReader*>(cinfo->client_data);
  std::snprintf(reader->message, sizeof reader->message, "more than %d scans", kMaxScans);
  std::longjmp(reader->jump, 1);
}

// Returns false after an error (the text in reader.message) or dimensions above max_pixels
// (message empty).
bool read_jpeg(JpegReader& reader, DecodedImage& image, int channels, int64_t max_pixels) {
  if (setjmp(reader.jump)) return false;
  libjpeg().read_header(&reader.cinfo, TRUE);
  image.width = static_cast<int>(reader.cinfo.image_width);
  image.height = static_cast<int>(reader.cinfo.image_height);
  if (int64_t{image.width} * image.height > max_pixels || image.width == 0 || image.height == 0) return false;
  const J_COLOR_SPACE space = reader.cinfo.jpeg_color_space;
  if (space == JCS_CMYK || space == JCS_YCCK) {
    reader.cmyk = true;
    return false;
  }
  // Gray from a YCbCr or gray file is its luma plane, as stb_image took it; an RGB-coded file is
  // decoded to RGB and converted by decode_image.
  image.channels = channels == 1 && (space == JCS_YCbCr || space == JCS_GRAYSCALE) ? 1 : 3;
  reader.cinfo.out_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  libjpeg().start_decompress(&reader.cinfo);
  if (reader.cinfo.output_components != image.channels) ERREXIT(&reader.cinfo, JERR_BAD_J_COLORSPACE);
  const size_t row = static_cast<size_t>(image.width) * image.channels;
  image.pixels.resize(row * image.height);
  while (reader.cinfo.output_scanline < reader.cinfo.output_height) {
    JSAMPROW line = image.pixels.data() + reader.cinfo.output_scanline * row;
    libjpeg().read_scanlines(&reader.cinfo, &line, 1);
  }
  libjpeg().finish_decompress(&reader.cinfo);
  return true;
}

}  // namespace

DecodedImage decode_jpeg(std::span<const std::byte> bytes, const std::string& path, int channels, int64_t max_pixels) {
  JpegReader reader;
  reader.cinfo.err = libjpeg().std_error(&reader.errors);
  reader.errors.error_exit = on_jpeg_error;
  reader.errors.emit_message = on_jpeg_message;
  reader.cinfo.client_data = &reader;
  reader.progress.progress_monitor = on_jpeg_progress;
  libjpeg().CreateDecompress(&reader.cinfo, JPEG_LIB_VERSION, sizeof(reader.cinfo));
  reader.created = true;
  reader.cinfo.progress = &reader.progress;
  libjpeg().mem_src(&reader.cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  DecodedImage image;
  if (!read_jpeg(reader, image, channels, max_pixels)) {
    if (reader.cmyk) unsupported("{}: CMYK JPEG images are not supported; convert it to RGB", path);
    if (reader.message[0] != '\0') invalid_input("{}: cannot decode image: JPEG: {}", path, reader.message);
    check_image_dimensions(image.width, image.height, path, max_pixels);
  }
  return image;
}

}  // namespace mt
