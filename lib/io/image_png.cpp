// PNG through libpng. libpng reports errors by longjmp: everything between setjmp and the calls
// that may jump lives outside read_png's frame (in PngReader and the DecodedImage it fills), so
// the jump skips no destructor and leaves no local in an indeterminate state.
#include <png.h>

#include <csetjmp>
#include <cstring>

#include "lib/core/error.h"
#include "lib/io/image_decode.h"
#include "lib/io/shared_library.h"

namespace mt {
namespace {

// libpng's functions, from its shared library opened on the first PNG (shared_library.h).
struct LibPng {
  SharedLibrary library{MT_LIBPNG_SONAME, "PNG images"};
#define MT_PNG_FUNCTION(name) decltype(&png_##name) name = library.function<decltype(&png_##name)>("png_" #name)
  MT_PNG_FUNCTION(create_info_struct);
  MT_PNG_FUNCTION(create_read_struct);
  MT_PNG_FUNCTION(destroy_read_struct);
  MT_PNG_FUNCTION(error);
  MT_PNG_FUNCTION(get_bit_depth);
  MT_PNG_FUNCTION(get_channels);
  MT_PNG_FUNCTION(get_color_type);
  MT_PNG_FUNCTION(get_error_ptr);
  MT_PNG_FUNCTION(get_image_height);
  MT_PNG_FUNCTION(get_image_width);
  MT_PNG_FUNCTION(get_io_ptr);
  MT_PNG_FUNCTION(longjmp);
  MT_PNG_FUNCTION(read_end);
  MT_PNG_FUNCTION(read_image);
  MT_PNG_FUNCTION(read_info);
  MT_PNG_FUNCTION(read_update_info);
  MT_PNG_FUNCTION(set_chunk_malloc_max);
  MT_PNG_FUNCTION(set_expand_gray_1_2_4_to_8);
  MT_PNG_FUNCTION(set_interlace_handling);
  MT_PNG_FUNCTION(set_longjmp_fn);
  MT_PNG_FUNCTION(set_palette_to_rgb);
  MT_PNG_FUNCTION(set_read_fn);
  MT_PNG_FUNCTION(set_strip_16);
  MT_PNG_FUNCTION(set_strip_alpha);
#undef MT_PNG_FUNCTION
};

const LibPng& libpng() {
  static const LibPng functions;
  return functions;
}

struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const unsigned char* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  char message[256] = "";
  std::vector<png_bytep> rows;
  ~PngReader() {
    if (png != nullptr) libpng().destroy_read_struct(&png, &info, nullptr);
  }
};

extern "C" void on_png_error(png_structp png, png_const_charp text) {
  auto* reader = static_cast<PngReader*>(libpng().get_error_ptr(png));
  std::snprintf(reader->message, sizeof reader->message, "%s", text);
  libpng().longjmp(png, 1);
}

extern "C" void on_png_warning(png_structp, png_const_charp) {}  // ancillary-chunk trouble: the pixels are fine

extern "C" void read_png_bytes(png_structp png, png_bytep out, png_size_t length) {
  auto* reader = static_cast<PngReader*>(libpng().get_io_ptr(png));
  if (length > reader->size - reader->offset) libpng().error(png, "truncated file");
  std::memcpy(out, reader->data + reader->offset, length);
  reader->offset += length;
}

// Returns false after a libpng error (the text in reader.message) or dimensions above
// max_pixels (message empty: the caller reports them).
bool read_png(PngReader& reader, DecodedImage& image, int64_t max_pixels) {
  if (setjmp(*libpng().set_longjmp_fn(reader.png, std::longjmp, sizeof(std::jmp_buf)))) return false;
  libpng().set_read_fn(reader.png, &reader, read_png_bytes);
  libpng().read_info(reader.png, reader.info);
  const png_uint_32 width = libpng().get_image_width(reader.png, reader.info),
                    height = libpng().get_image_height(reader.png, reader.info);
  image.width = static_cast<int>(std::min<png_uint_32>(width, INT32_MAX));
  image.height = static_cast<int>(std::min<png_uint_32>(height, INT32_MAX));
  if (int64_t{width} * height > max_pixels || width == 0 || height == 0) return false;
  // To 8-bit gray or RGB, as stb_image did: palettes and 1, 2, 4-bit gray expanded (scaled to
  // 0..255), 16-bit samples cut to the high byte, alpha (and tRNS transparency) dropped.
  const int colour = libpng().get_color_type(reader.png, reader.info);
  libpng().set_expand_gray_1_2_4_to_8(reader.png);
  libpng().set_palette_to_rgb(reader.png);
  libpng().set_strip_16(reader.png);
  libpng().set_strip_alpha(reader.png);
  libpng().set_interlace_handling(reader.png);
  libpng().read_update_info(reader.png, reader.info);
  image.channels = (colour & PNG_COLOR_MASK_COLOR) ? 3 : 1;
  if (libpng().get_channels(reader.png, reader.info) != image.channels ||
      libpng().get_bit_depth(reader.png, reader.info) != 8)
    libpng().error(reader.png, "unexpected layout after conversion to 8 bits");
  const size_t row = static_cast<size_t>(width) * image.channels;
  image.pixels.resize(row * height);
  reader.rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) reader.rows[y] = image.pixels.data() + y * row;
  libpng().read_image(reader.png, reader.rows.data());
  libpng().read_end(reader.png, nullptr);
  return true;
}

}  // namespace

DecodedImage decode_png(std::span<const std::byte> bytes, const std::string& path, int64_t max_pixels) {
  PngReader reader;
  reader.data = reinterpret_cast<const unsigned char*>(bytes.data());
  reader.size = bytes.size();
  reader.png = libpng().create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_png_error, on_png_warning);
  if (reader.png != nullptr) reader.info = libpng().create_info_struct(reader.png);
  if (reader.info == nullptr) fail(ExitCode::failure, "{}: cannot decode image: out of memory", path);
  // Ancillary chunks (text, ICC profiles) are bounded too: libpng refuses any above 8 MB.
  libpng().set_chunk_malloc_max(reader.png, 8 << 20);
  DecodedImage image;
  if (!read_png(reader, image, max_pixels)) {
    if (reader.message[0] != '\0') invalid_input("{}: cannot decode image: PNG: {}", path, reader.message);
    check_image_dimensions(image.width, image.height, path, max_pixels);
  }
  return image;
}

}  // namespace mt
