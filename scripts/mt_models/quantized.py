"""Pre-quantized ONNX models: torchvision's quantizable networks, quantized by PyTorch for the qnnpack engine
(fuse_model, qnnpack qconfig, prepare, calibrate on image-like inputs, convert) and exported by
torch.onnx.export as QDQ graphs (QuantizeLinear/DequantizeLinear around float ops, uint8 activations, int8
per-channel weights) — the files other quantizers hand to a runtime, and what ONNX Runtime runs in int8.

The recorded expected output is PyTorch's own int8 execution (qnnpack) of the same module; runtimes round
differently, so tests compare a runtime with onnxruntime-node on the same file rather than with it."""
import torch
import torchvision

from .common import Built, Spec, export_torch, seed_for, smooth_images
from .vision import IMAGE_SIZE, OPSET, reestimate_batchnorm

CALIBRATION_BATCHES = 4
CALIBRATION_BATCH_SIZE = 2

# The networks torchvision.models.quantization has (with fuse_model() and qnnpack support) that torch 1.13's
# exporter can write: quantized shufflenet_v2 fails there ("ONNX symbolic expected the output of onnx::Slice to
# be a quantized tensor": its channel split has no quantized Slice symbolic), so it has no QDQ export.
QUANTIZABLE = ("mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50")


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
        for i in range(CALIBRATION_BATCHES):
            model(smooth_images(CALIBRATION_BATCH_SIZE, IMAGE_SIZE, seed * 1000 + 500 + i))
    torch.ao.quantization.convert(model, inplace=True)
    return model


def _build(name: str):
    def build(seed: int) -> Built:
        model = quantized_module(name)
        x = smooth_images(1, IMAGE_SIZE, seed + 1)
        return export_torch(model, x, OPSET, reference="PyTorch qnnpack int8 (random weights, BatchNorm "
                                                       "re-estimated, calibrated on image-like inputs)")
    return build


def quantized_specs():
    return [Spec(name=f"{name}_qdq", opset=OPSET, in_ci=False,
                 description=f"torchvision.models.quantization.{name} quantized by PyTorch (qnnpack), QDQ export",
                 build=_build(name), kind="qdq")
            for name in QUANTIZABLE]
