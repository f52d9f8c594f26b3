"""Small models that exercise ops, attribute combinations and opsets the torchvision models at opset 13 never
produce ("other exporters"). Each is exported with torch.onnx.export at the opsets where the ONNX form changes,
or built with onnx.helper (expected output from the numpy reference) where torch cannot emit the op."""
import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import onnx_reference as ref
from .common import INPUT_NAME, OUTPUT_NAME, Built, Spec, export_torch, helper_model, normal_input

X4 = (1, 8, 10, 12)  # the default input: small, with distinct dims so transposed axes show up as errors


class Fn(nn.Module):
    """A parameter-free model from a function."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class ConvTransposes(nn.Module):
    def __init__(self):
        super().__init__()
        # stride 2 + output_padding + groups, then dilation 2 with output_padding 1 and no bias.
        self.up1 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.up2 = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=2, output_padding=1, dilation=2, bias=False)

    def forward(self, x):
        return self.up2(torch.relu(self.up1(x)))


class Signal1d(nn.Module):
    """1-D signals (rank 3): Conv1d with stride, dilation, padding and groups, ConvTranspose1d with output
    padding, max pooling with ceil_mode, average pooling without the padding counted, reflection padding."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 12, 5, stride=2, padding=3, dilation=2, groups=2)
        self.up = nn.ConvTranspose1d(12, 6, 4, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        y = self.up(torch.relu(self.conv(x)))
        y = F.max_pool1d(y, 3, stride=2, padding=1, ceil_mode=True)
        y = F.avg_pool1d(y, 3, stride=1, padding=1, count_include_pad=False)
        return F.pad(y, (2, 3), mode="reflect")


class Volume3d(nn.Module):
    """3-D volumes (rank 5): Conv3d and ConvTranspose3d with strides, dilations, padding and groups, max
    pooling with ceil_mode, average pooling without the padding counted."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(4, 6, (2, 3, 3), stride=(2, 1, 2), padding=(1, 1, 0), dilation=(2, 1, 1), groups=2)
        self.up = nn.ConvTranspose3d(6, 4, (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1),
                                     dilation=(1, 2, 1), groups=2)

    def forward(self, x):
        y = self.up(torch.relu(self.conv(x)))
        y = F.max_pool3d(y, 3, stride=2, padding=1, ceil_mode=True)
        return F.avg_pool3d(y, 2, stride=1, padding=1, count_include_pad=False)


class ConvBnRelu(nn.Module):
    """Unfused Conv + BatchNormalization + Relu/Clip chains, the input mt-fuse folds."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        for bn in (self.bn1, self.bn2):  # statistics far from the identity, so a skipped BN shows
            bn.running_mean.normal_(0.0, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.normal_(0.0, 0.2)

    def forward(self, x):
        return F.relu6(self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class LayerNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = nn.LayerNorm(12)
        self.last2 = nn.LayerNorm((10, 12))
        for ln in (self.last, self.last2):
            ln.weight.data.uniform_(0.5, 1.5)
            ln.bias.data.normal_(0.0, 0.2)

    def forward(self, x):
        return self.last(x) + self.last2(2.0 * x + 1.0)


class MatMuls(nn.Module):
    def __init__(self):
        super().__init__()
        self.batched = nn.Parameter(torch.randn(8, 12, 7) * 0.3)  # batch dims [8] broadcast against [1, 8]
        self.plain = nn.Parameter(torch.randn(12, 5) * 0.3)

    def forward(self, x):
        return torch.cat([x @ self.batched, x @ self.plain, x @ x.transpose(-1, -2)], dim=-1)


def _split(x):
    a, b, c = torch.split(x, [2, 5, 1], dim=1)
    y = torch.cat([c * 2.0, torch.relu(a), torch.sigmoid(b)], dim=1)
    left, right = y.chunk(2, dim=3)
    return torch.cat([right, left - right], dim=3)


def _squeeze_unsqueeze(x):
    a = x[:, 2:3].squeeze(1)  # [1, 10, 12]
    b = x[:, :1, 4:5].squeeze()  # every size-1 axis: [12]
    return (a + b).unsqueeze(-1).unsqueeze(1)  # [1, 1, 10, 12, 1]


def _gather(x):
    scalar = x[:, -1]  # rank-0 negative index: [1, 10, 12]
    listed = x.index_select(3, torch.tensor([11, 0, 5, 5, 2]))  # repeated indices: [1, 8, 10, 5]
    nested = x[:, torch.tensor([[0, 7], [3, 3]])]  # 2-D indices: [1, 2, 2, 10, 12]
    return torch.cat([scalar.flatten(), listed.flatten(), nested.flatten()])


def _expand(x):
    return x[:, :, :1].expand(1, 8, 10, 12) * x + x.mean(dim=1, keepdim=True).expand(1, 8, 10, 12)


def _reduce_mean(x):
    return x.mean(dim=(2, 3), keepdim=True) + x.mean(dim=1, keepdim=True) + x.mean(dim=-1).unsqueeze(-1)


def _clips(x):
    return F.relu6(3.0 * x) + F.hardtanh(x, -0.5, 1.5) + x.clamp(min=0.1) + x.clamp(max=-0.2)


def _transpose_rank5(x):
    return x.reshape(1, 2, 4, 10, 12).permute(0, 3, 1, 4, 2)  # [1, 10, 2, 12, 4]


def _torch(what, opsets, make_module, input_shape=X4, preserve_training_ops=False, check=None, note=""):
    """One spec per opset: op_<what>_opset<N>, exported by torch from make_module() (built after seeding)."""
    specs = []
    for opset in opsets:
        def build(seed, opset=opset):
            torch.manual_seed(seed)
            module = make_module()
            x = torch.from_numpy(normal_input(input_shape, seed + 1))
            built = export_torch(module, x, opset, preserve_training_ops=preserve_training_ops)
            if check:
                check(built)
            return built
        specs.append(Spec(name=f"op_{what}_opset{opset}", opset=opset, in_ci=True,
                          description=f"torch.onnx.export of {note or what}", build=build))
    return specs


def _resize_check(**reference_args):
    """Confirms that the ONNX Resize semantics torch exported give torch's own output (catches exports where
    torch approximates, and shapes where float rounding would pick different pixels)."""
    def check(built):
        want = ref.resize(built.input, built.expected.shape, **reference_args)
        err = float(np.abs(want - built.expected).max())
        if err > 1e-5:
            raise AssertionError(f"ONNX Resize {reference_args} differs from the PyTorch output by {err}")
    return check


def _torch_resize(what, opsets, input_shape, reference_args, **interpolate_args):
    return _torch(what, opsets, lambda: Fn(lambda x: F.interpolate(x, **interpolate_args)), input_shape,
                  check=_resize_check(**reference_args), note=f"F.interpolate({interpolate_args})")


def _int64(name, values):
    return onnx.helper.make_tensor(name, onnx.TensorProto.INT64, [len(values)], list(values))


def _float(name, values):
    return onnx.helper.make_tensor(name, onnx.TensorProto.FLOAT, [len(values)], list(values))


def _helper_resize(what, input_shape, sizes=None, scales=None, mode="nearest", coordinate_mode="half_pixel",
                   nearest_mode="round_prefer_floor", cubic_a=-0.75, exclude_outside=0):
    """A single opset-13 Resize node with the given attributes; sizes or scales as an initializer."""
    def build(seed):
        x = normal_input(input_shape, seed + 1)
        if sizes is not None:
            out_shape = list(sizes)
            inputs, inits = [INPUT_NAME, "", "", "sizes"], [_int64("sizes", sizes)]
        else:
            out_shape = [int(np.floor(d * s)) for d, s in zip(input_shape, scales)]
            inputs, inits = [INPUT_NAME, "", "scales"], [_float("scales", scales)]
        node = onnx.helper.make_node("Resize", inputs, [OUTPUT_NAME], mode=mode,
                                     coordinate_transformation_mode=coordinate_mode, nearest_mode=nearest_mode,
                                     cubic_coeff_a=cubic_a, exclude_outside=exclude_outside)
        model = helper_model([node], inits, input_shape, out_shape, 13, f"op_{what}")
        expected = ref.resize(x, out_shape, scales, mode, coordinate_mode, nearest_mode, cubic_a, exclude_outside)
        return Built(model, x, expected, "onnx.helper", "numpy reference of ONNX Resize")
    attrs = f"mode={mode} coordinate_transformation_mode={coordinate_mode}"
    attrs += f" nearest_mode={nearest_mode}" if mode == "nearest" else ""
    attrs += f" cubic_coeff_a={cubic_a} exclude_outside={exclude_outside}" if mode == "cubic" else ""
    how = f"sizes={list(sizes)}" if sizes is not None else f"scales={list(scales)}"
    return [Spec(name=f"op_{what}_opset13", opset=13, in_ci=True,
                 description=f"onnx.helper Resize {attrs} {how}", build=build)]


def _helper_upsample_linear(seed):
    shape, scales = (1, 3, 5, 6), [1.0, 1.0, 2.0, 3.0]
    x = normal_input(shape, seed + 1)
    out_shape = [int(d * s) for d, s in zip(shape, scales)]
    node = onnx.helper.make_node("Upsample", [INPUT_NAME, "scales"], [OUTPUT_NAME], mode="linear")
    model = helper_model([node], [_float("scales", scales)], shape, out_shape, 9, "op_upsample_linear")
    # Upsample-9 maps output x to input x / scale (what Resize calls "asymmetric").
    expected = ref.resize(x, out_shape, scales, "linear", "asymmetric")
    return Built(model, x, expected, "onnx.helper", "numpy reference of ONNX Upsample-9 linear")


def _helper_softmax_opset11(seed):
    shape = (1, 4, 5, 6)
    x = normal_input(shape, seed + 1)
    node = onnx.helper.make_node("Softmax", [INPUT_NAME], [OUTPUT_NAME], axis=1)
    model = helper_model([node], [], shape, shape, 11, "op_softmax_axis1")
    return Built(model, x, ref.softmax_coerced_2d(x, 1), "onnx.helper",
                 "numpy reference of Softmax-11 (normalises over all axes from 1 on)")


def _helper_if_constant(seed):
    """An If whose condition is constant after folding (Shape(x)[1] == 4, as exporters write shape
    checks): the importer inlines the then-branch (x times an initializer of its own, then Relu) and
    never translates the else-branch, which holds an op mt cannot import (Unique)."""
    shape = (1, 4, 5, 6)
    x = normal_input(shape, seed + 1)
    h, T = onnx.helper, onnx.TensorProto
    scale = np.linspace(-1.0, 1.0, 4, dtype=np.float32).reshape(1, 4, 1, 1)
    then_branch = h.make_graph(
        [h.make_node("Mul", [INPUT_NAME, "scale"], ["scaled"]), h.make_node("Relu", ["scaled"], ["then_out"])],
        "then", [], [h.make_tensor_value_info("then_out", T.FLOAT, list(shape))],
        initializer=[onnx.numpy_helper.from_array(scale, "scale")])
    else_branch = h.make_graph(
        [h.make_node("Unique", [INPUT_NAME], ["else_out"], sorted=1)], "else", [],
        [h.make_tensor_value_info("else_out", T.FLOAT, None)])
    nodes = [
        h.make_node("Shape", [INPUT_NAME], ["shape"]),
        h.make_node("Gather", ["shape", "one"], ["channels"]),
        h.make_node("Equal", ["channels", "four"], ["is_four"]),
        h.make_node("If", ["is_four"], [OUTPUT_NAME], then_branch=then_branch, else_branch=else_branch),
    ]
    inits = [h.make_tensor("one", T.INT64, [], [1]), h.make_tensor("four", T.INT64, [], [4])]
    model = helper_model(nodes, inits, shape, shape, 13, "op_if_constant")
    return Built(model, x, np.maximum(x * scale, 0.0).astype(np.float32), "onnx.helper",
                 "numpy: the then-branch (Relu(x * scale))")


def _helper_if_runtime(seed):
    """An If whose condition is computed at run time (ReduceMax(x) > 0.5): both branches are imported and
    where() selects, so the output must be the then-branch's (Relu(x) * 2) and not the else-branch's (-x)."""
    shape = (1, 4, 5, 6)
    x = normal_input(shape, seed + 1)
    h, T = onnx.helper, onnx.TensorProto
    then_branch = h.make_graph(
        [h.make_node("Relu", [INPUT_NAME], ["positive"]), h.make_node("Add", ["positive", "positive"], ["then_out"])],
        "then", [], [h.make_tensor_value_info("then_out", T.FLOAT, list(shape))])
    else_branch = h.make_graph([h.make_node("Neg", [INPUT_NAME], ["else_out"])], "else", [],
                               [h.make_tensor_value_info("else_out", T.FLOAT, list(shape))])
    nodes = [
        h.make_node("ReduceMax", [INPUT_NAME], ["peak"], keepdims=0),
        h.make_node("Greater", ["peak", "half"], ["is_high"]),
        h.make_node("If", ["is_high"], [OUTPUT_NAME], then_branch=then_branch, else_branch=else_branch),
    ]
    model = helper_model(nodes, [h.make_tensor("half", T.FLOAT, [], [0.5])], shape, shape, 13, "op_if_runtime")
    expected = 2.0 * np.maximum(x, 0.0) if x.max() > 0.5 else -x
    return Built(model, x, expected.astype(np.float32), "onnx.helper", "numpy: the branch the condition picks")


def op_specs():
    small = (1, 3, 5, 6)
    specs = []
    specs += _torch("conv_transpose", (9, 13), ConvTransposes, (1, 8, 5, 6),
                    note="ConvTranspose2d stride 2 + output_padding + groups 2, then dilation 2")
    specs += _torch("conv_bn_relu", (9, 13), ConvBnRelu, preserve_training_ops=True,
                    note="Conv+BatchNorm+Relu and depthwise Conv+BatchNorm+Relu6 kept unfused")
    specs += _torch("pad_constant", (9, 13), lambda: Fn(lambda x: F.pad(F.pad(x, (1, 2, 0, 3), value=0.5),
                                                                         (-1, 0, 2, -2))),
                    note="constant Pad with a value, then with negative (cropping) pads")
    specs += _torch("pad_reflect", (9, 13), lambda: Fn(lambda x: F.pad(x, (3, 1, 2, 4), mode="reflect")))
    specs += _torch("pad_edge", (11, 17), lambda: Fn(lambda x: F.pad(x, (3, 1, 2, 4), mode="replicate")))
    specs += _torch("signal1d", (11, 13), Signal1d, (1, 8, 40),
                    note="Conv1d, ConvTranspose1d, MaxPool1d (ceil_mode), AvgPool1d and reflection Pad on rank 3")
    specs += _torch("volume3d", (13,), Volume3d, (1, 4, 5, 6, 7),
                    note="Conv3d, ConvTranspose3d, MaxPool3d (ceil_mode) and AvgPool3d on rank 5")
    specs += _torch("split", (11, 13), lambda: Fn(_split), note="Split with sizes [2, 5, 1] and in halves")
    specs += _torch("squeeze_unsqueeze", (11, 13), lambda: Fn(_squeeze_unsqueeze))
    specs += _torch("hardsigmoid", (9, 13), lambda: Fn(lambda x: F.hardsigmoid(3.0 * x)))
    specs += _torch("clip", (9, 11), lambda: Fn(_clips), note="relu6, hardtanh and one-sided clamps")
    specs += _torch("hardswish", (13, 14), lambda: Fn(lambda x: F.hardswish(3.0 * x)),
                    note="hardswish (HardSigmoid*Mul before opset 14, HardSwish from 14)")
    specs += _torch("softmax_axis1", (9, 13), lambda: Fn(lambda x: torch.softmax(x, dim=1)), small,
                    note="softmax over axis 1 of 4 (Transpose+Softmax+Transpose before opset 13)")
    specs += [Spec(name="op_softmax_axis1_opset11", opset=11, in_ci=True,
                   description="onnx.helper Softmax axis=1 at opset 11 (coerced-to-2D semantics)",
                   build=_helper_softmax_opset11)]
    specs += [Spec(name="op_if_constant_opset13", opset=13, in_ci=True,
                   description="onnx.helper If on a condition constant after shape folding (branch inlined)",
                   build=_helper_if_constant)]
    specs += [Spec(name="op_if_runtime_opset13", opset=13, in_ci=True,
                   description="onnx.helper If on a condition computed at run time (both branches, where)",
                   build=_helper_if_runtime)]
    specs += _torch("transpose_rank5", (13,), lambda: Fn(_transpose_rank5))
    specs += _torch("layernorm", (13, 17), LayerNorms,
                    note="LayerNorm over the last axis and the last two (decomposed before opset 17)")
    specs += _torch("gelu", (13,), lambda: Fn(lambda x: F.gelu(2.0 * x)), note="GELU as the Erf subgraph")
    specs += _torch("gelu_tanh", (17,), lambda: Fn(lambda x: F.gelu(2.0 * x, approximate="tanh")))
    specs += _torch("matmul_broadcast", (9, 13), MatMuls, note="MatMul with batch broadcast, 2-D and x @ x^T")
    specs += _torch("reduce_mean", (13,), lambda: Fn(_reduce_mean))
    specs += _torch("gather", (11, 13), lambda: Fn(_gather), note="Gather with scalar, repeated and 2-D indices")
    specs += _torch("expand", (9, 13), lambda: Fn(_expand))

    # Resize/Upsample as torch exports them ...
    nearest = dict(mode="nearest", coordinate_mode="asymmetric", nearest_mode="floor")
    specs += _torch_resize("upsample_nearest", (9,), small, nearest, scale_factor=2, mode="nearest")
    specs += _torch_resize("resize_nearest", (11,), small, nearest, scale_factor=2, mode="nearest")
    specs += _torch_resize("resize_nearest_sizes", (13,), small, nearest, size=(7, 13), mode="nearest")
    specs += _torch_resize("resize_nearest_down", (13,), (1, 3, 10, 12), nearest, size=(7, 5), mode="nearest")
    linear = dict(mode="linear", coordinate_mode="pytorch_half_pixel")
    specs += _torch_resize("resize_bilinear", (11,), small, linear, scale_factor=2, mode="bilinear",
                           align_corners=False)
    specs += _torch_resize("resize_bilinear_sizes", (13,), small, linear, size=(7, 13), mode="bilinear",
                           align_corners=False)
    specs += _torch_resize("resize_bilinear_down", (13,), (1, 3, 10, 12), linear, size=(7, 5), mode="bilinear",
                           align_corners=False)
    specs += _torch_resize("resize_bilinear_align_corners", (13,), small,
                           dict(mode="linear", coordinate_mode="align_corners"), size=(7, 13), mode="bilinear",
                           align_corners=True)
    specs += _torch_resize("resize_bicubic", (13,), small, dict(mode="cubic", coordinate_mode="half_pixel"),
                           size=(9, 11), mode="bicubic", align_corners=False)
    specs += _torch_resize("resize_bicubic_align_corners", (11,), small,
                           dict(mode="cubic", coordinate_mode="align_corners"), size=(9, 11), mode="bicubic",
                           align_corners=True)
    specs += _torch_resize("resize_linear_1d", (13,), (1, 3, 10), linear, size=23, mode="linear",
                           align_corners=False)
    specs += _torch_resize("resize_nearest_1d", (13,), (1, 3, 10), nearest, size=25, mode="nearest")
    # ... and the coordinate/rounding modes only other exporters produce.
    specs += _helper_resize("resize_nearest_half_pixel", small, scales=[1.0, 1.0, 2.0, 3.0])
    specs += _helper_resize("resize_nearest_align_corners", small, sizes=[1, 3, 9, 11],
                            coordinate_mode="align_corners", nearest_mode="round_prefer_ceil")
    specs += _helper_resize("resize_nearest_asymmetric_ceil", (1, 3, 7, 9), sizes=[1, 3, 3, 4],
                            coordinate_mode="asymmetric", nearest_mode="ceil")
    specs += _helper_resize("resize_nearest_tf_half_pixel", small, scales=[1.0, 1.0, 2.0, 3.0],
                            coordinate_mode="tf_half_pixel_for_nn")
    specs += _helper_resize("resize_nearest_pytorch_half_pixel", small, sizes=[1, 3, 1, 8],
                            coordinate_mode="pytorch_half_pixel", nearest_mode="floor")
    specs += _helper_resize("resize_linear_half_pixel", small, sizes=[1, 3, 1, 9], mode="linear")
    specs += _helper_resize("resize_cubic_exclude_outside", small, sizes=[1, 3, 9, 11], mode="cubic",
                            cubic_a=-0.5, exclude_outside=1)
    specs += [Spec(name="op_upsample_linear_opset9", opset=9, in_ci=True,
                   description="onnx.helper Upsample-9 mode=linear scales=[1, 1, 2, 3]",
                   build=_helper_upsample_linear)]
    return specs
