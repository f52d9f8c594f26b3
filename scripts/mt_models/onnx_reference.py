"""Plain numpy implementations of the ONNX semantics that torch cannot export (Resize coordinate modes other
than its own, Upsample-9 linear, Softmax before opset 13), used as the expected output of the graphs built
with onnx.helper. check_against_torch() validates them on the cases PyTorch does implement."""
import numpy as np
import torch
import torch.nn.functional as F

COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _source_coordinates(out_len: int, in_len: int, scale: float, mode: str, dtype) -> np.ndarray:
    x = np.arange(out_len, dtype=dtype)
    scale = dtype(scale)
    if mode == "half_pixel":
        return (x + dtype(0.5)) / scale - dtype(0.5)
    if mode == "pytorch_half_pixel":
        return (x + dtype(0.5)) / scale - dtype(0.5) if out_len > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * dtype(in_len - 1) / dtype(out_len - 1) if out_len > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + dtype(0.5)) / scale
    raise ValueError(f"unknown coordinate_transformation_mode {mode}")


def _nearest_index(coord: np.ndarray, mode: str) -> np.ndarray:
    if mode == "round_prefer_floor":
        return np.where(coord - np.floor(coord) == 0.5, np.floor(coord), np.round(coord))
    if mode == "round_prefer_ceil":
        return np.where(coord - np.floor(coord) == 0.5, np.ceil(coord), np.round(coord))
    if mode == "floor":
        return np.floor(coord)
    if mode == "ceil":
        return np.ceil(coord)
    raise ValueError(f"unknown nearest_mode {mode}")


def _cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution weights for the four taps at offsets -1, 0, 1, 2 from floor(coord)."""
    d = np.abs(np.stack([t + 1, t, 1 - t, 2 - t], axis=-1))
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def resize_matrix(in_len: int, out_len: int, scale: float, mode: str, coordinate_mode: str,
                  nearest_mode: str = "round_prefer_floor", cubic_a: float = -0.75,
                  exclude_outside: int = 0) -> np.ndarray:
    """The [out_len, in_len] matrix that ONNX Resize applies along one axis (every mode is separable)."""
    coord = _source_coordinates(out_len, in_len, scale, coordinate_mode, np.float64)
    m = np.zeros((out_len, in_len))
    rows = np.arange(out_len)
    if mode == "nearest":
        index = _nearest_index(coord, nearest_mode)
        # Runtimes compute the coordinate in float32: refuse shapes where that would pick another pixel.
        index32 = _nearest_index(_source_coordinates(out_len, in_len, scale, coordinate_mode, np.float32).astype(
            np.float64), nearest_mode)
        if not np.array_equal(index, index32):
            raise ValueError(f"nearest {coordinate_mode}/{nearest_mode} {in_len}->{out_len} depends on rounding")
        m[rows, np.clip(index, 0, in_len - 1).astype(np.int64)] = 1.0
    elif mode == "linear":
        coord = np.clip(coord, 0, in_len - 1)
        lo = np.floor(coord).astype(np.int64)
        hi = np.minimum(lo + 1, in_len - 1)
        w = coord - lo
        np.add.at(m, (rows, lo), 1 - w)
        np.add.at(m, (rows, hi), w)
    elif mode == "cubic":
        lo = np.floor(coord).astype(np.int64)
        weights = _cubic_weights(coord - lo, cubic_a)
        taps = lo[:, None] + np.arange(-1, 3)[None, :]
        if exclude_outside:
            weights = np.where((taps >= 0) & (taps < in_len), weights, 0.0)
            weights = weights / weights.sum(axis=1, keepdims=True)
        for k in range(4):
            np.add.at(m, (rows, np.clip(taps[:, k], 0, in_len - 1)), weights[:, k])
    else:
        raise ValueError(f"unknown resize mode {mode}")
    return m


def resize(x: np.ndarray, sizes, scales=None, mode="nearest", coordinate_mode="half_pixel",
           nearest_mode="round_prefer_floor", cubic_a=-0.75, exclude_outside=0) -> np.ndarray:
    """ONNX Resize (opset 13) on every axis; `scales`, when given, is what the coordinate transform uses."""
    out = x.astype(np.float64)
    for axis, (in_len, out_len) in enumerate(zip(x.shape, sizes)):
        scale = scales[axis] if scales is not None else out_len / in_len
        m = resize_matrix(in_len, out_len, scale, mode, coordinate_mode, nearest_mode, cubic_a, exclude_outside)
        out = np.moveaxis(np.tensordot(m, np.moveaxis(out, axis, 0), axes=1), 0, axis)
    return out.astype(np.float32)


def softmax_coerced_2d(x: np.ndarray, axis: int) -> np.ndarray:
    """Softmax of opsets 1-12: the input is flattened to [prod(shape[:axis]), prod(shape[axis:])] and each
    row is normalised, i.e. over all the trailing axes at once, not along `axis` alone."""
    rows = int(np.prod(x.shape[:axis]))
    flat = x.astype(np.float64).reshape(rows, -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape).astype(np.float32)


def check_against_torch() -> None:
    """Raises AssertionError unless resize() matches torch.nn.functional.interpolate on every mode both share;
    run before any expected output is computed with it."""
    x = np.random.default_rng(7).standard_normal((1, 3, 5, 6)).astype(np.float32)
    t = torch.from_numpy(x)
    cases = [
        # (torch call, resize() arguments)
        (dict(size=(7, 13), mode="nearest"), dict(mode="nearest", coordinate_mode="asymmetric", nearest_mode="floor")),
        (dict(size=(3, 4), mode="nearest"), dict(mode="nearest", coordinate_mode="asymmetric", nearest_mode="floor")),
        (dict(size=(7, 13), mode="nearest-exact"),
         dict(mode="nearest", coordinate_mode="half_pixel", nearest_mode="round_prefer_ceil")),
        (dict(size=(7, 13), mode="bilinear", align_corners=False),
         dict(mode="linear", coordinate_mode="pytorch_half_pixel")),
        (dict(size=(3, 4), mode="bilinear", align_corners=False),
         dict(mode="linear", coordinate_mode="pytorch_half_pixel")),
        (dict(size=(7, 13), mode="bilinear", align_corners=True), dict(mode="linear", coordinate_mode="align_corners")),
        (dict(size=(9, 11), mode="bicubic", align_corners=False), dict(mode="cubic", coordinate_mode="half_pixel")),
        (dict(size=(9, 11), mode="bicubic", align_corners=True), dict(mode="cubic", coordinate_mode="align_corners")),
    ]
    for torch_args, ours in cases:
        want = F.interpolate(t, **torch_args).numpy()
        got = resize(x, want.shape, **ours)
        err = float(np.abs(got - want).max())
        assert err < 1e-5, f"resize reference {ours} differs from torch {torch_args} by {err}"
    s = np.random.default_rng(8).standard_normal((2, 3, 4)).astype(np.float32)
    want = torch.softmax(torch.from_numpy(s).reshape(2, 12), dim=1).reshape(2, 3, 4).numpy()
    assert np.abs(softmax_coerced_2d(s, 1) - want).max() < 1e-6, "softmax reference differs from torch"
