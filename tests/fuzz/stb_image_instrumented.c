// stb_image compiled into fuzz_image from the same Debian header as libstb, so that its decoders
// run under AddressSanitizer and coverage too (the executable's definitions take precedence over
// the shared library's): a read past a buffer inside stb_image is then reported, not missed.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
