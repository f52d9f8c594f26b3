#!/usr/bin/python3
"""Writes tests/unit/eval/golden_spatial.inc: small conv, pool and resize cases with
expected outputs for the reference kernel tests.

Expected values come from PyTorch wherever PyTorch computes the same function:
  conv2d / conv_transpose2d   F.conv2d, F.conv_transpose2d (asymmetric pads: F.pad / cropping)
  max_pool2d / avg_pool2d     F.max_pool2d, F.avg_pool2d (symmetric pads; asymmetric pads
                              without ceil_mode through F.pad)
  resize                      F.interpolate: nearest = asymmetric + floor, nearest-exact =
                              half_pixel + round_prefer_ceil (= tf_half_pixel_for_nn + floor),
                              (bi)linear/bicubic align_corners=False = half_pixel and
                              pytorch_half_pixel, align_corners=True = align_corners.
Everything else (the ONNX Resize modes PyTorch lacks, pools with asymmetric pads and
ceil_mode) is computed in numpy straight from the ONNX / PyTorch definitions; the same numpy
code is first checked against every PyTorch case above, so both sources agree.

Usage: /usr/bin/python3 scripts/gen_reference_goldens_spatial.py [--out PATH]
"""

import argparse
import math
import pathlib

import numpy as np
import torch
import torch.nn.functional as F

FLOAT_MAX = float(np.finfo(np.float32).max)
TOLERANCE = 1e-5


def rand(rng, shape, scale=1.0):
    """Random test data, rounded to 3 decimals to keep the header short."""
    return np.round(rng.standard_normal(shape) * scale, 3).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# conv2d / conv_transpose2d


def conv_case(name, rng, x_shape, w_shape, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1,
              bias=True, act=(-FLOAT_MAX, FLOAT_MAX)):
    x = rand(rng, x_shape)
    w = rand(rng, w_shape, 0.5)
    b = rand(rng, (w_shape[0],)) if bias else None
    top, left, bottom, right = pads
    xt = F.pad(torch.from_numpy(x), (left, right, top, bottom))
    y = F.conv2d(xt, torch.from_numpy(w), None if b is None else torch.from_numpy(b), stride=strides,
                 dilation=dilations, groups=group)
    y = torch.clamp(y, act[0], act[1]).numpy()
    return dict(name=name, transposed=False, x=x, w=w, b=b, strides=strides, pads=pads, dilations=dilations,
                group=group, output_padding=(0, 0), act=act, y=y)


def conv_transpose_case(name, rng, x_shape, w_shape, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
                        group=1, output_padding=(0, 0), bias=True, act=(-FLOAT_MAX, FLOAT_MAX)):
    x = rand(rng, x_shape)
    w = rand(rng, w_shape, 0.5)
    b = rand(rng, (w_shape[1] * group,)) if bias else None
    full = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), None if b is None else torch.from_numpy(b),
                              stride=strides, output_padding=output_padding, groups=group, dilation=dilations)
    top, left, bottom, right = pads
    y = full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right]
    y = torch.clamp(y, act[0], act[1]).numpy()
    return dict(name=name, transposed=True, x=x, w=w, b=b, strides=strides, pads=pads, dilations=dilations,
                group=group, output_padding=output_padding, act=act, y=y)


def conv_cases(rng):
    return [
        conv_case("conv 3x3 valid", rng, (1, 1, 5, 5), (1, 1, 3, 3), bias=False),
        conv_case("conv stride 2 pad 1 with bias", rng, (2, 3, 6, 7), (4, 3, 3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        conv_case("conv dilation 2 asymmetric pads", rng, (1, 2, 7, 8), (3, 2, 3, 3), strides=(1, 2),
                  pads=(1, 0, 2, 1), dilations=(2, 2)),
        conv_case("conv group 2 rectangular kernel", rng, (1, 4, 5, 6), (6, 2, 3, 2), group=2, pads=(0, 1, 1, 0)),
        conv_case("conv depthwise multiplier 2", rng, (1, 3, 6, 6), (6, 1, 3, 3), strides=(2, 2), pads=(1, 1, 1, 1),
                  group=3),
        conv_case("conv depthwise 5x5 dilation (2,1)", rng, (2, 2, 9, 7), (2, 1, 5, 5), pads=(4, 2, 4, 2),
                  dilations=(2, 1), group=2),
        conv_case("conv 1x1 stride 3", rng, (1, 3, 7, 5), (2, 3, 1, 1), strides=(3, 3)),
        conv_case("conv pads wider than the kernel", rng, (1, 1, 2, 3), (2, 1, 2, 2), pads=(3, 2, 3, 3)),
        conv_case("conv with relu6 clamp", rng, (1, 2, 4, 4), (3, 2, 3, 3), pads=(1, 1, 1, 1), act=(0.0, 6.0)),
        conv_transpose_case("conv_transpose stride 2 pad 1 output_padding 1", rng, (1, 2, 3, 3), (2, 3, 3, 3),
                            strides=(2, 2), pads=(1, 1, 1, 1), output_padding=(1, 1)),
        conv_transpose_case("conv_transpose group 2 dilation asymmetric pads", rng, (2, 4, 3, 4), (4, 2, 2, 3),
                            strides=(2, 1), pads=(0, 1, 1, 0), dilations=(1, 2), group=2, bias=False),
        conv_transpose_case("conv_transpose stride 1", rng, (1, 3, 4, 4), (3, 2, 3, 3)),
        conv_transpose_case("conv_transpose depthwise stride 3", rng, (1, 3, 3, 2), (3, 1, 2, 2), strides=(3, 3),
                            group=3, output_padding=(2, 1)),
        conv_transpose_case("conv_transpose with clamp", rng, (1, 2, 3, 3), (2, 2, 3, 3), strides=(2, 2),
                            pads=(1, 1, 1, 1), act=(-0.5, 0.5)),
    ]


# ---------------------------------------------------------------------------------------------
# pooling


def pool_output_length(size, k, s, d, begin, end, ceil_mode):
    extent = d * (k - 1) + 1
    span = size + begin + end - extent
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + begin:
        out -= 1
    return out


def pool_numpy(x, op, k, s, pads, d, ceil_mode, count_include_pad):
    """The definition: windows of taps start + i*d; padding is -inf for max and 0 for average;
    count_include_pad divides by the taps inside the padded input (as PyTorch does)."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    oh = pool_output_length(h, k[0], s[0], d[0], top, bottom, ceil_mode)
    ow = pool_output_length(w, k[1], s[1], d[1], left, right, ceil_mode)
    y = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        rows = [i * s[0] - top + a * d[0] for a in range(k[0])]
        for j in range(ow):
            cols = [j * s[1] - left + b * d[1] for b in range(k[1])]
            valid = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            padded = [(r, q) for r in rows for q in cols if -top <= r < h + bottom and -left <= q < w + right]
            values = np.stack([x[:, :, r, q].astype(np.float64) for r, q in valid], axis=-1)
            if op == "max_pool2d":
                y[:, :, i, j] = values.max(axis=-1)
            else:
                y[:, :, i, j] = values.sum(axis=-1) / (len(padded) if count_include_pad else len(valid))
    return y.astype(np.float32)


def pool_case(name, rng, op, x_shape, k, s=(1, 1), pads=(0, 0, 0, 0), d=(1, 1), ceil_mode=0, count_include_pad=0):
    x = rand(rng, x_shape)
    expected = pool_numpy(x, op, k, s, pads, d, ceil_mode, count_include_pad)
    top, left, bottom, right = pads
    xt = torch.from_numpy(x)
    if top == bottom and left == right:
        source = "torch"
        if op == "max_pool2d":
            y = F.max_pool2d(xt, k, s, (top, left), d, ceil_mode=bool(ceil_mode)).numpy()
        else:
            y = F.avg_pool2d(xt, k, s, (top, left), ceil_mode=bool(ceil_mode),
                             count_include_pad=bool(count_include_pad)).numpy()
    elif not ceil_mode and (op == "max_pool2d" or count_include_pad):
        source = "torch"
        fill = -math.inf if op == "max_pool2d" else 0.0
        xt = F.pad(xt, (left, right, top, bottom), value=fill)
        pool = F.max_pool2d(xt, k, s, 0, d) if op == "max_pool2d" else F.avg_pool2d(xt, k, s, 0)
        y = pool.numpy()
    else:
        source = "numpy"
        y = expected
    assert y.shape == expected.shape, (name, y.shape, expected.shape)
    assert np.abs(y - expected).max() <= TOLERANCE, (name, np.abs(y - expected).max())
    return dict(name=name, source=source, op=op, x=x, k=k, s=s, pads=pads, d=d, ceil_mode=ceil_mode,
                count_include_pad=count_include_pad, y=y)


def pool_cases(rng):
    mp, ap = "max_pool2d", "avg_pool2d"
    return [
        pool_case("max 3x3 stride 1", rng, mp, (1, 2, 5, 6), (3, 3)),
        pool_case("max 2x2 stride 2 pad 1 ceil (last window dropped)", rng, mp, (1, 1, 5, 5), (2, 2), (2, 2),
                  (1, 1, 1, 1), ceil_mode=1),
        pool_case("max 3x3 stride 2 pad 1 ceil", rng, mp, (1, 1, 6, 7), (3, 3), (2, 2), (1, 1, 1, 1), ceil_mode=1),
        pool_case("max dilation 2 kernel 2x3 pad 1", rng, mp, (2, 2, 6, 7), (2, 3), (1, 1), (1, 1, 1, 1), (2, 2)),
        pool_case("max dilation ceil stride 2", rng, mp, (1, 1, 9, 8), (3, 3), (2, 2), (1, 1, 1, 1), (2, 2),
                  ceil_mode=1),
        pool_case("max asymmetric pads", rng, mp, (1, 2, 5, 5), (2, 2), (2, 2), (0, 1, 1, 0)),
        pool_case("max asymmetric pads ceil", rng, mp, (1, 1, 6, 5), (3, 2), (2, 2), (1, 0, 0, 1), ceil_mode=1),
        pool_case("avg 3x3 stride 1", rng, ap, (1, 2, 5, 6), (3, 3)),
        pool_case("avg pad 1 excluding padding", rng, ap, (1, 1, 5, 6), (3, 3), (2, 2), (1, 1, 1, 1)),
        pool_case("avg pad 1 including padding", rng, ap, (1, 1, 5, 6), (3, 3), (2, 2), (1, 1, 1, 1),
                  count_include_pad=1),
        pool_case("avg ceil including padding (window past the padding)", rng, ap, (1, 1, 6, 6), (3, 3), (2, 2),
                  (1, 1, 1, 1), ceil_mode=1, count_include_pad=1),
        pool_case("avg ceil excluding padding", rng, ap, (1, 2, 6, 7), (3, 2), (2, 2), (1, 1, 1, 1), ceil_mode=1),
        pool_case("avg ceil no pads", rng, ap, (1, 1, 5, 5), (2, 2), (2, 2), ceil_mode=1),
        pool_case("avg asymmetric pads including padding", rng, ap, (1, 1, 5, 6), (2, 3), (2, 2), (1, 0, 0, 2),
                  count_include_pad=1),
        pool_case("avg asymmetric pads excluding padding", rng, ap, (1, 1, 5, 6), (2, 3), (2, 2), (1, 0, 0, 2)),
        pool_case("avg asymmetric pads ceil including padding", rng, ap, (1, 1, 6, 5), (3, 3), (2, 2), (0, 1, 2, 0),
                  ceil_mode=1, count_include_pad=1),
    ]


# ---------------------------------------------------------------------------------------------
# resize (ONNX Resize, opset 13/18, without antialias)


def source_coordinate(mode, o, scale, in_len, out_len):
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out_len > 1 else 0.0
    if mode == "align_corners":
        return 0.0 if out_len == 1 else o * (in_len - 1) / (out_len - 1)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_half_pixel_for_nn":
        return (o + 0.5) / scale
    raise ValueError(mode)


def nearest_index(nearest_mode, x, in_len):
    base = math.floor(x)
    fraction = x - base
    if nearest_mode == "round_prefer_floor":
        index = base + (1 if fraction > 0.5 else 0)
    elif nearest_mode == "round_prefer_ceil":
        index = base + (1 if fraction >= 0.5 else 0)
    elif nearest_mode == "floor":
        index = base
    else:
        index = math.ceil(x)
    return min(max(index, 0), in_len - 1)


def cubic_coefficients(r, a):
    return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a]


def axis_matrix(in_len, out_len, scale, mode, coord, nearest_mode, a, exclude_outside):
    """out_len x in_len interpolation weights along one axis."""
    m = np.zeros((out_len, in_len))
    for o in range(out_len):
        x = source_coordinate(coord, o, scale, in_len, out_len)
        if mode == "nearest":
            m[o, nearest_index(nearest_mode, x, in_len)] = 1.0
        elif mode == "linear":
            x = min(max(x, 0.0), in_len - 1.0)
            base = math.floor(x)
            m[o, base] += 1.0 - (x - base)
            m[o, min(base + 1, in_len - 1)] += x - base
        else:
            base = math.floor(x)
            taps = [base - 1 + i for i in range(4)]
            weights = cubic_coefficients(x - base, a)
            if exclude_outside:
                weights = [wt if 0 <= t < in_len else 0.0 for t, wt in zip(taps, weights)]
                total = sum(weights)
                weights = [wt / total for wt in weights]
            for t, wt in zip(taps, weights):
                m[o, min(max(t, 0), in_len - 1)] += wt
    return m


def resize_numpy(x, sizes, scales, mode, coord, nearest_mode, a, exclude_outside):
    y = x.astype(np.float64)
    for axis, (in_len, out_len) in enumerate(zip(x.shape, sizes)):
        scale = scales[axis] if scales else out_len / in_len
        if in_len == out_len and scale == 1.0:
            continue  # axes that keep their size and scale are copied (as ONNX Runtime does)
        m = axis_matrix(in_len, out_len, scale, mode, coord, nearest_mode, a, exclude_outside)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, axis, 0), axes=1), 0, axis)
    return y.astype(np.float32)


def torch_resize(x, sizes, scales, mode, coord, nearest_mode, a, exclude_outside):
    """PyTorch's output for the ONNX configuration, or None if PyTorch has no equivalent."""
    rank = x.ndim
    if rank < 3 or sizes[:2] != list(x.shape[:2]) or (scales and scales[:2] != [1.0, 1.0]):
        return None
    changed = sizes[2:] != list(x.shape[2:]) or (scales and any(s != 1.0 for s in scales[2:]))
    if not changed or exclude_outside or (mode == "cubic" and (a != -0.75 or rank != 4)):
        return None
    torch_mode = None
    align = None
    if mode == "nearest":
        if coord == "asymmetric" and nearest_mode == "floor":
            torch_mode = "nearest"
        elif (coord, nearest_mode) in (("half_pixel", "round_prefer_ceil"), ("tf_half_pixel_for_nn", "floor")):
            torch_mode = "nearest-exact"
    else:
        pytorch_like = coord == "half_pixel" or (coord == "pytorch_half_pixel" and min(sizes[2:]) > 1)
        if pytorch_like or coord == "align_corners":
            torch_mode = {"linear": {3: "linear", 4: "bilinear", 5: "trilinear"}[rank], "cubic": "bicubic"}[mode]
            align = coord == "align_corners"
    if torch_mode is None:
        return None
    kwargs = {"mode": torch_mode}
    if align is not None:
        kwargs["align_corners"] = align
    # align_corners ignores scales; otherwise PyTorch uses scale_factor in the coordinate transform exactly
    # as ONNX uses scales.
    if scales and not align:
        kwargs["scale_factor"] = tuple(scales[2:])
        kwargs["recompute_scale_factor"] = False
    else:
        kwargs["size"] = tuple(sizes[2:])
    y = F.interpolate(torch.from_numpy(x), **kwargs).numpy()
    assert list(y.shape) == sizes, (y.shape, sizes)
    return y


def resize_case(rng, x_shape, sizes, mode, coord, nearest_mode="round_prefer_floor", a=-0.75, exclude_outside=0,
                scales=None, label=""):
    x = rand(rng, x_shape)
    expected = resize_numpy(x, sizes, scales, mode, coord, nearest_mode, a, exclude_outside)
    y = torch_resize(x, sizes, scales, mode, coord, nearest_mode, a, exclude_outside)
    if y is not None:
        assert np.abs(y - expected).max() <= TOLERANCE, (mode, coord, nearest_mode, np.abs(y - expected).max())
    name = f"{mode} {coord}" + (f" {nearest_mode}" if mode == "nearest" else "")
    name += f" {'x'.join(map(str, x_shape))}->{'x'.join(map(str, sizes))}" + (f" {label}" if label else "")
    return dict(name=name, source="numpy" if y is None else "torch", x=x, sizes=sizes, scales=scales or [],
                mode=mode, coord=coord, nearest_mode=nearest_mode, a=a, exclude_outside=exclude_outside,
                y=expected if y is None else y)


COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
UP = ([1, 1, 3, 4], [1, 1, 6, 9])    # H doubles exactly, so asymmetric nearest hits .5 ties
DOWN = ([1, 1, 6, 9], [1, 1, 4, 4])


def resize_cases(rng):
    cases = []
    for x_shape, sizes in (UP, DOWN):
        for coord in COORDS:
            for nearest_mode in NEAREST_MODES:
                cases.append(resize_case(rng, x_shape, sizes, "nearest", coord, nearest_mode))
            cases.append(resize_case(rng, x_shape, sizes, "linear", coord))
            cases.append(resize_case(rng, x_shape, sizes, "cubic", coord))
        cases.append(resize_case(rng, x_shape, sizes, "cubic", "half_pixel", exclude_outside=1))
        cases.append(resize_case(rng, x_shape, sizes, "cubic", "asymmetric", a=-0.5))
        cases.append(resize_case(rng, x_shape, sizes, "cubic", "align_corners", a=-0.5, exclude_outside=1))
    # An output of length 1, where pytorch_half_pixel and align_corners have their special case.
    for coord in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        for mode in ("nearest", "linear", "cubic"):
            cases.append(resize_case(rng, [1, 1, 4, 5], [1, 1, 1, 3], mode, coord))
    # Scales given (ONNX Resize with scales): they, not the size ratio, drive the transform.
    scales = [1.0, 1.0, 1.7, 0.6]
    for mode, coord, nearest_mode in (("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_ceil"),
                                      ("linear", "half_pixel", ""), ("cubic", "half_pixel", ""),
                                      ("linear", "asymmetric", "")):
        cases.append(resize_case(rng, [1, 2, 5, 4], [1, 2, 8, 2], mode, coord, nearest_mode or "round_prefer_floor",
                                 scales=scales, label="scales"))
    # Every axis whose size changes is interpolated, the channel axis and rank 3 included.
    cases.append(resize_case(rng, [1, 2, 3, 3], [1, 3, 5, 2], "linear", "half_pixel", label="channels"))
    cases.append(resize_case(rng, [1, 2, 3, 3], [1, 3, 5, 2], "cubic", "align_corners", label="channels"))
    cases.append(resize_case(rng, [1, 2, 3, 3], [2, 3, 5, 2], "nearest", "half_pixel", label="batch"))
    cases.append(resize_case(rng, [2, 3, 5], [2, 3, 8], "linear", "half_pixel", label="rank 3"))
    cases.append(resize_case(rng, [2, 3, 5], [2, 3, 8], "nearest", "asymmetric", "floor", label="rank 3"))
    # Axes that keep size and scale are copied: nearest tf_half_pixel_for_nn + ceil would otherwise map
    # channel c to c + 1.
    cases.append(resize_case(rng, [1, 3, 2, 3], [1, 3, 4, 5], "nearest", "tf_half_pixel_for_nn", "ceil",
                             label="identity channels"))
    return cases


# ---------------------------------------------------------------------------------------------
# C++ output


def floats(values):
    flat = np.asarray(values, dtype=np.float32).ravel()
    items = [np.format_float_scientific(v, unique=True, trim="0") + "f" for v in flat]
    return wrap(items)


def ints(values):
    return "{" + ", ".join(str(int(v)) for v in values) + "}"


def doubles(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def wrap(items, indent="      ", width=116):
    """A braced initializer list, broken into lines of at most `width` columns."""
    if not items:
        return "{}"
    lines = [[]]
    for item in items:
        if lines[-1] and len(indent) + len(", ".join(lines[-1] + [item])) + 1 > width:
            lines.append([])
        lines[-1].append(item)
    return "{\n" + ",\n".join(indent + ", ".join(line) for line in lines) + "}"


def emit_conv(case):
    b = case["b"]
    return (f'  {{"{case["name"]}", {str(case["transposed"]).lower()},\n'
            f'   {ints(case["x"].shape)}, {floats(case["x"])},\n'
            f'   {ints(case["w"].shape)}, {floats(case["w"])},\n'
            f'   {floats(b) if b is not None else "{}"},\n'
            f'   {ints(case["strides"])}, {ints(case["pads"])}, {ints(case["dilations"])}, {case["group"]}, '
            f'{ints(case["output_padding"])}, {repr(float(case["act"][0]))}, {repr(float(case["act"][1]))},\n'
            f'   {ints(case["y"].shape)}, {floats(case["y"])}}},\n')


def emit_pool(case):
    return (f'  {{"{case["name"]}", "{case["source"]}", "{case["op"]}",\n'
            f'   {ints(case["x"].shape)}, {floats(case["x"])},\n'
            f'   {ints(case["k"])}, {ints(case["s"])}, {ints(case["pads"])}, {ints(case["d"])}, {case["ceil_mode"]}, '
            f'{case["count_include_pad"]},\n'
            f'   {ints(case["y"].shape)}, {floats(case["y"])}}},\n')


def emit_resize(case):
    return (f'  {{"{case["name"]}", "{case["source"]}",\n'
            f'   {ints(case["x"].shape)}, {floats(case["x"])},\n'
            f'   {ints(case["sizes"])}, {doubles(case["scales"])}, "{case["mode"]}", "{case["coord"]}", '
            f'"{case["nearest_mode"]}", {repr(float(case["a"]))}, {case["exclude_outside"]},\n'
            f'   {floats(case["y"])}}},\n')


HEADER = """\
// Golden cases for the conv, pool and resize reference kernels: inputs, attributes and expected
// outputs from PyTorch 1.13 (source "torch") or numpy from the ONNX definition (source "numpy").
// Generated by scripts/gen_reference_goldens_spatial.py; do not edit.
#pragma once

#include <cstdint>
#include <vector>

namespace mt::golden {

struct ConvCase {
  const char* name;
  bool transposed;  // conv_transpose2d rather than conv2d
  std::vector<int64_t> x_shape;
  std::vector<float> x;
  std::vector<int64_t> w_shape;
  std::vector<float> w;
  std::vector<float> bias;  // empty: no bias input
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  std::vector<int64_t> output_padding;
  double act_min, act_max;
  std::vector<int64_t> y_shape;
  std::vector<float> y;
};

struct PoolCase {
  const char* name;
  const char* source;
  const char* op;
  std::vector<int64_t> x_shape;
  std::vector<float> x;
  std::vector<int64_t> kernel_shape, strides, pads, dilations;
  int64_t ceil_mode, count_include_pad;
  std::vector<int64_t> y_shape;
  std::vector<float> y;
};

struct ResizeCase {
  const char* name;
  const char* source;
  std::vector<int64_t> x_shape;
  std::vector<float> x;
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  const char* mode;
  const char* coordinate_transformation_mode;
  const char* nearest_mode;
  double cubic_coeff_a;
  int64_t exclude_outside;
  std::vector<float> y;  // shape: sizes
};

"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = pathlib.Path(__file__).resolve().parent.parent
    parser.add_argument("--out", default=root / "tests/unit/eval/golden_spatial.inc")
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(20240501)
    convs, pools, resizes = conv_cases(rng), pool_cases(rng), resize_cases(rng)
    text = HEADER
    text += "inline const std::vector<ConvCase> kConvCases = {\n" + "".join(map(emit_conv, convs)) + "};\n\n"
    text += "inline const std::vector<PoolCase> kPoolCases = {\n" + "".join(map(emit_pool, pools)) + "};\n\n"
    text += "inline const std::vector<ResizeCase> kResizeCases = {\n" + "".join(map(emit_resize, resizes)) + "};\n\n"
    text += "}  // namespace mt::golden\n"
    pathlib.Path(args.out).write_text(text)
    torch_count = sum(c["source"] == "torch" for c in pools + resizes) + len(convs)
    print(f"wrote {args.out}: {len(convs)} conv, {len(pools)} pool, {len(resizes)} resize cases "
          f"({torch_count} from PyTorch), {len(text)} bytes")


if __name__ == "__main__":
    main()
