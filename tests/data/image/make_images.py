#!/usr/bin/python3
# Writes the small images in this directory that tests/unit/io/test_image.cpp decodes: every PNG
# colour type and bit depth, interlaced PNG, transparency, JPEG with and without chroma subsampling,
# progressive and grayscale JPEG, and binary PNM. Their decoded tensors were captured from the
# stb_image loader before libpng and libjpeg-turbo replaced it (the *.npy files next to them; see
# the test for how they compare). Run once; the outputs are committed.
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
rng = np.random.default_rng(18)


def smooth(height, width, channels):
  """Gradients plus noise: JPEG keeps some detail, PNG every value."""
  y, x = np.mgrid[0:height, 0:width]
  planes = [(x * (37 + 11 * c) + y * (23 + 7 * c)) % 256 for c in range(channels)]
  image = np.stack(planes, axis=-1).astype(np.int32) + rng.integers(-20, 20, (height, width, channels))
  return np.clip(image, 0, 255).astype(np.uint8)


def png_chunks(width, height, depth, colour, rows, interlace=0, extra=b""):
  """A PNG written by hand, for what PIL cannot write (16-bit RGB, Adam7 interlacing)."""
  def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
  header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
  return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def filtered(rows):
  return b"".join(b"\x00" + row.tobytes() for row in rows)


rgb = smooth(9, 13, 3)
Image.fromarray(rgb, "RGB").save(out / "rgb.png")
Image.fromarray(smooth(5, 7, 1)[:, :, 0], "L").save(out / "gray.png")
Image.fromarray(smooth(6, 5, 4), "RGBA").save(out / "rgba.png")
Image.fromarray(smooth(4, 6, 2), "LA").save(out / "gray_alpha.png")
Image.fromarray(rgb, "RGB").quantize(16).save(out / "palette.png")
Image.fromarray(smooth(5, 11, 1)[:, :, 0] > 100).save(out / "bilevel.png")  # 1 bit per pixel
Image.fromarray((smooth(6, 4, 1)[:, :, 0].astype(np.uint16) * 257 + 3), "I;16").save(out / "gray16.png")
# 16-bit RGB, big-endian samples.
rgb16 = smooth(3, 5, 3).astype(">u2") * 251 + 7
(out / "rgb16.png").write_bytes(png_chunks(5, 3, 16, 2, filtered(rgb16)))
# Adam7: the passes' pixels in order, each pass's rows filtered separately.
ad = smooth(7, 9, 3)
passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]
data = b""
for y0, x0, dy, dx in passes:
  sub = ad[y0::dy, x0::dx]
  if sub.size:
    data += filtered(sub)
(out / "interlaced.png").write_bytes(png_chunks(9, 7, 8, 2, data, interlace=1))
# tRNS on an RGB image: one colour transparent (dropped with the alpha channel).
trns = struct.pack(">HHH", *rgb[0, 0])
tr = zlib.crc32(b"tRNS" + trns)
(out / "rgb_trns.png").write_bytes(png_chunks(13, 9, 8, 2, filtered(rgb), extra=struct.pack(">I", 6) + b"tRNS" + trns + struct.pack(">I", tr)))

photo = smooth(11, 17, 3)
Image.fromarray(photo, "RGB").save(out / "rgb420.jpg", quality=90)  # 4:2:0, odd size
Image.fromarray(photo, "RGB").save(out / "rgb444.jpg", quality=95, subsampling=0)
Image.fromarray(photo, "RGB").save(out / "progressive.jpg", quality=85, progressive=True)
Image.fromarray(photo[:, :, 1], "L").save(out / "gray.jpg", quality=90)
Image.fromarray(rgb, "RGB").save(out / "rgb.ppm")
Image.fromarray(rgb[:, :, 0], "L").save(out / "gray.pgm")

# Hostile and unsupported files (no tensors: each must be refused with its own error).
hostile = out / "hostile"
hostile.mkdir(exist_ok=True)
(hostile / "huge_header.png").write_bytes(png_chunks(100000, 100000, 8, 2, zlib.compress(b"\x00" * 64)))
jpeg = bytearray((out / "rgb420.jpg").read_bytes())
sof = jpeg.index(b"\xff\xc0")
jpeg[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)  # height, width
(hostile / "huge_header.jpg").write_bytes(bytes(jpeg))
(hostile / "truncated.png").write_bytes((out / "rgb.png").read_bytes()[:200])
(hostile / "truncated.jpg").write_bytes((out / "rgb420.jpg").read_bytes()[:500])
Image.fromarray(photo, "RGB").convert("CMYK").save(hostile / "cmyk.jpg")
Image.fromarray(rgb, "RGB").save(hostile / "rgb.bmp")


def progressive_gray_jpeg(scan_limit=None):
  """An 8x8 black gray progressive JPEG written by hand with every scan successive approximation
  allows: DC and each of the 63 AC coefficients on its own, first at bit 13, then refined bit by
  bit (14 scans each, 896 in all). Valid, and each scan a full pass over the image: the decoder's
  scan limit is what refuses it. scan_limit keeps only the first scans (a file that decodes)."""
  def segment(marker, body):
    return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body
  one_code = bytes([1] + [0] * 15) + b"\x00"  # one code of length 1 ('0') for symbol 0
  data = b"\xff\xd8" + segment(0xDB, b"\x00" + b"\x01" * 64)
  data += segment(0xC2, struct.pack(">BHHB", 8, 8, 8, 1) + b"\x01\x11\x00")
  data += segment(0xC4, b"\x00" + one_code + b"\x10" + one_code)
  scans = []
  for first, last in [(0, 0)] + [(k, k) for k in range(1, 64)]:
    scans.append((first, last, 0, 13))
    scans += [(first, last, bit + 1, bit) for bit in range(12, -1, -1)]
  for first, last, high, low in scans[:scan_limit]:
    # Every scan codes its one block in one bit ('0': DC difference 0, end of band, no correction).
    data += segment(0xDA, bytes([1, 1, 0x00, first, last, high << 4 | low])) + b"\x7f"
  return data + b"\xff\xd9"


(hostile / "many_scans.jpg").write_bytes(progressive_gray_jpeg())
(out / "few_scans.jpg").write_bytes(progressive_gray_jpeg(scan_limit=30))
