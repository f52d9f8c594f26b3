"""Pre-quantized ONNX models: torchvision's quantizable networks, quantized by PyTorch for the qnnpack engine
(fuse_model, qnnpack qconfig, prepare, calibrate on image-like inputs, convert) and exported by
torch.onnx.export as QDQ graphs (QuantizeLinear/DequantizeLinear around float ops, uint8 activations, int8
per-channel weights) — the files other quantizers hand to a runtime, and what ONNX Runtime runs in int8.
EfficientNet-B0, which torchvision has no quantizable variant of, is quantized by FX graph mode post-training
quantization (torch.ao.quantization.quantize_fx, the same qnnpack qconfig and calibration) instead.

The recorded expected output is PyTorch's own int8 execution (qnnpack) of the same module; runtimes round
differently, so tests compare a runtime with onnxruntime-node on the same file rather than with it."""
import contextlib

import torch
import torchvision

from .common import Built, Spec, export_torch, seed_for, smooth_images
from .vision import IMAGE_SIZE, OPSET, reestimate_batchnorm

CALIBRATION_BATCHES = 4
CALIBRATION_BATCH_SIZE = 2

# The networks torchvision.models.quantization has (with fuse_model() and qnnpack support). Quantized
# shufflenet_v2 exports only with its blocks' forward rewritten for the exporter (shufflenet_export_forward).
QUANTIZABLE = ("mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50", "shufflenet_v2_x1_0")
# Networks quantized by FX graph mode instead (no quantizable torchvision variant).
FX_QUANTIZED = ("efficientnet_b0",)


def calibration_batches(seed: int):
    return [smooth_images(CALIBRATION_BATCH_SIZE, IMAGE_SIZE, seed * 1000 + 500 + i) for i in range(CALIBRATION_BATCHES)]


def quantized_module(name: str) -> torch.nn.Module:
    """torchvision's quantizable NAME (random weights, BatchNorm re-estimated with the same seed as the fp32
    export of NAME), fused, calibrated on image-like inputs and converted to int8 for qnnpack."""
    seed = seed_for(name)
    torch.manual_seed(seed)
    torch.backends.quantized.engine = "qnnpack"
    model = getattr(torchvision.models.quantization, name)(weights=None, quantize=False)
    reestimate_batchnorm(model, seed)
    model.eval()
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        for batch in calibration_batches(seed):
            model(batch)
    torch.ao.quantization.convert(model, inplace=True)
    return model


def fx_quantized_module(name: str) -> torch.nn.Module:
    """torchvision's float NAME (random weights, BatchNorm re-estimated as for its fp32 export), quantized
    by FX graph mode post-training quantization for qnnpack: prepare_fx with the default qnnpack qconfig
    mapping, calibration on the same image-like batches as quantized_module, convert_fx."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    seed = seed_for(name)
    torch.manual_seed(seed)
    torch.backends.quantized.engine = "qnnpack"
    model = getattr(torchvision.models, name)(weights=None)
    reestimate_batchnorm(model, seed)
    model.eval()
    batches = calibration_batches(seed)
    prepared = prepare_fx(model, get_default_qconfig_mapping("qnnpack"), example_inputs=(batches[0],))
    with torch.no_grad():
        for batch in batches:
            prepared(batch)
    return convert_fx(prepared)


def _requantized(x: torch.Tensor, fn) -> torch.Tensor:
    """fn applied to x's float values, quantized again with x's own parameters: the identity on the int8
    values for data movement, which torch.onnx exports as DequantizeLinear -> ops -> QuantizeLinear."""
    return torch.quantize_per_tensor(fn(x.dequantize()), x.q_scale(), x.q_zero_point(), x.dtype)


def shufflenet_export_forward(self, x: torch.Tensor) -> torch.Tensor:
    """QuantizableInvertedResidual.forward as torch 1.13's exporter takes it, computing the same int8
    values: its channel split (Slice) and channel shuffle (Reshape, Transpose, Reshape) have no quantized
    symbolics ("expected the output of onnx::Slice to be a quantized tensor"), so each runs on dequantized
    values between a DequantizeLinear and a QuantizeLinear with its input's parameters, one pair per op
    (the pattern runtimes take as int8 data movement); the split point is the branch's constant width
    (x.shape of a quantized tensor does not export)."""
    if self.stride == 1:
        half = self.branch2[0].in_channels
        x1 = _requantized(x, lambda f: f[:, :half])
        x2 = _requantized(x, lambda f: f[:, half:])
        out = self.cat.cat([x1, self.branch2(x2)], dim=1)
    else:
        out = self.cat.cat([self.branch1(x), self.branch2(x)], dim=1)
    # channel_shuffle(out, 2), step by step.
    out = _requantized(out, lambda f: f.view(f.shape[0], 2, f.shape[1] // 2, f.shape[2], f.shape[3]))
    out = _requantized(out, lambda f: f.transpose(1, 2).contiguous())
    return _requantized(out, lambda f: f.view(f.shape[0], -1, f.shape[3], f.shape[4]))


@contextlib.contextmanager
def exportable(name: str):
    """Patches what torch.onnx cannot export in NAME's quantized module for the duration of an export."""
    if name != "shufflenet_v2_x1_0":
        yield
        return
    block = torchvision.models.quantization.shufflenetv2.QuantizableInvertedResidual
    original = block.forward
    block.forward = shufflenet_export_forward
    try:
        yield
    finally:
        block.forward = original


def _build(name: str):
    def build(seed: int) -> Built:
        model = fx_quantized_module(name) if name in FX_QUANTIZED else quantized_module(name)
        x = smooth_images(1, IMAGE_SIZE, seed + 1)
        how = "FX graph mode" if name in FX_QUANTIZED else "eager mode"
        with exportable(name):
            return export_torch(model, x, OPSET, reference=f"PyTorch qnnpack int8 ({how}; random weights, BatchNorm "
                                                           "re-estimated, calibrated on image-like inputs)")
    return build


def quantized_specs():
    specs = [Spec(name=f"{name}_qdq", opset=OPSET, in_ci=False,
                  description=f"torchvision.models.quantization.{name} quantized by PyTorch (qnnpack), QDQ export",
                  build=_build(name), kind="qdq")
             for name in QUANTIZABLE]
    specs += [Spec(name=f"{name}_qdq", opset=OPSET, in_ci=False,
                   description=f"torchvision.models.{name} quantized by FX graph mode PTQ (qnnpack), QDQ export",
                   build=_build(name), kind="qdq")
              for name in FX_QUANTIZED]
    return specs
