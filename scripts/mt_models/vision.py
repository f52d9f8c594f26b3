"""torchvision networks with random weights (weights=None) and re-estimated BatchNorm statistics,
exported at opset 13 with a static 1x3x224x224 input."""
import torch
import torchvision

from .common import Built, Spec, export_torch, smooth_images

IMAGE_SIZE = 224
OPSET = 13
CALIBRATION_BATCHES = 8
CALIBRATION_BATCH_SIZE = 2


class SegmentationOutput(torch.nn.Module):
    """torchvision segmentation models return {'out': ...}; ONNX export wants the tensor."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def reestimate_batchnorm(model: torch.nn.Module, seed: int, size: int = IMAGE_SIZE) -> int:
    """Replaces the running statistics of every BatchNorm layer by the cumulative average over a few batches
    of image-like inputs, and returns how many layers it updated.

    With random weights the default statistics (mean 0, var 1) are far from the real activations: outputs
    collapse towards zero or explode and int8 calibration degenerates. Only the BatchNorm layers run in
    training mode, so dropout and stochastic depth stay off while the statistics are gathered."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    model.eval()
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # cumulative moving average over all calibration batches
        norm.train()
    with torch.no_grad():
        for i in range(CALIBRATION_BATCHES if norms else 0):
            model(smooth_images(CALIBRATION_BATCH_SIZE, size, seed * 1000 + i))
    model.eval()
    return len(norms)


def _build(factory):
    def build(seed: int) -> Built:
        torch.manual_seed(seed)
        model = factory()
        norms = reestimate_batchnorm(model, seed)
        x = smooth_images(1, IMAGE_SIZE, seed + 1)
        built = export_torch(model, x, OPSET)
        built.reference += f" (random weights, {norms} BatchNorm layers re-estimated)" if norms else \
            " (random weights, no BatchNorm)"
        return built
    return build


def _classifier(name: str, in_ci: bool, **kwargs) -> Spec:
    factory = getattr(torchvision.models, name)
    return Spec(name=name, opset=OPSET, in_ci=in_ci, description=f"torchvision.models.{name}, random weights",
                build=_build(lambda: factory(weights=None, **kwargs)))


def _segmentation(name: str, in_ci: bool, **kwargs) -> Spec:
    factory = getattr(torchvision.models.segmentation, name)
    return Spec(name=name, opset=OPSET, in_ci=in_ci,
                description=f"torchvision.models.segmentation.{name}, random weights, returns the 'out' tensor",
                build=_build(lambda: SegmentationOutput(
                    factory(weights=None, weights_backbone=None, aux_loss=False, **kwargs))))


def vision_specs():
    return [
        _classifier("mobilenet_v2", True),
        _classifier("mobilenet_v3_small", True),
        _classifier("mobilenet_v3_large", False),
        _classifier("resnet18", True),
        _classifier("resnet50", False),
        _classifier("squeezenet1_1", True),
        _classifier("shufflenet_v2_x1_0", True),
        _classifier("efficientnet_b0", False),
        _classifier("mnasnet1_0", False),
        _classifier("googlenet", False, aux_logits=False, init_weights=True),
        _classifier("densenet121", False),
        _classifier("convnext_tiny", False),
        _segmentation("deeplabv3_mobilenet_v3_large", False),
        _segmentation("lraspp_mobilenet_v3_large", True),
    ]
