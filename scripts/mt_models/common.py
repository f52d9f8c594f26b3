"""Shared pieces of the model catalogue: the spec of one exportable model, what building it yields,
deterministic seeds, image-like synthetic inputs and the torch.onnx.export wrapper."""
import dataclasses
import io
import warnings
import zlib
from typing import Callable, Optional

import numpy as np
import onnx
import torch
import torch.nn.functional as F

INPUT_NAME = "input"
OUTPUT_NAME = "output"

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


@dataclasses.dataclass
class Built:
    """One exported model: the ONNX graph (one input, one output), the input fed to it and the output the
    exporting framework (or the numpy reference, for graphs built with onnx.helper) computed for it."""
    model: onnx.ModelProto
    input: np.ndarray
    expected: np.ndarray
    exporter: str  # "torch.onnx.export" or "onnx.helper"
    reference: str  # what computed `expected`
    # Graph inputs after the first ("multi_input" models), by name: saved as input_NAME.npy.
    extra_inputs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Spec:
    name: str
    opset: int
    in_ci: bool
    description: str
    build: Callable[[int], Built]  # called with the model's seed
    # "float" models are compared with their fp32 reference (--set ci/all); "qdq" ones are pre-quantized
    # (expected output from PyTorch's int8 execution) and form their own set (--set qdq); "multi_input"
    # ones take several inputs, not all float32 (a text encoder's token ids and attention mask), and form
    # their own set too (--set multi_input), which the tests that feed one image-like input leave out.
    kind: str = "float"

    @property
    def seed(self) -> int:
        return seed_for(self.name)


def seed_for(name: str) -> int:
    """A fixed seed per model name, so adding or reordering models never changes another model."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def smooth_images(batch: int, size: int, seed: int) -> torch.Tensor:
    """Image-like inputs: smooth random colour fields (coarse noise upsampled bilinearly, plus a little
    finer detail) in [0, 1], normalised with the ImageNet mean/std like a real preprocessed photo.
    Unlike white noise these have the spatial correlation that BatchNorm statistics and int8
    calibration expect from real images."""
    g = torch.Generator().manual_seed(seed)
    coarse = torch.rand(batch, 3, 7, 7, generator=g)
    fine = torch.rand(batch, 3, size // 8, size // 8, generator=g)
    img = 0.8 * F.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)
    img = img + 0.2 * F.interpolate(fine, size=(size, size), mode="bilinear", align_corners=False)
    img = img.clamp(0.0, 1.0)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return ((img - mean) / std).float()


def normal_input(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def export_torch(module: torch.nn.Module, x: torch.Tensor, opset: int, preserve_training_ops: bool = False,
                 reference: str = "PyTorch fp32 eval()") -> Built:
    """Exports `module` (put in eval mode) with one static input and records its PyTorch output.

    preserve_training_ops keeps BatchNormalization nodes instead of letting the exporter fold them into
    the preceding Conv (the module still runs in eval mode, with its running statistics)."""
    module.eval()
    with torch.no_grad():
        expected = module(x)
    buf = io.BytesIO()
    mode = torch.onnx.TrainingMode.PRESERVE if preserve_training_ops else torch.onnx.TrainingMode.EVAL
    with warnings.catch_warnings():
        # The exporter warns about every constant it folds and every op whose semantics it approximates;
        # the ones that matter are caught by the shape/op checks of the caller and the tests.
        warnings.simplefilter("ignore")
        torch.onnx.export(module, x, buf, opset_version=opset, input_names=[INPUT_NAME],
                          output_names=[OUTPUT_NAME], do_constant_folding=True, training=mode)
    model = onnx.load_from_string(buf.getvalue())
    return Built(model=model, input=x.detach().numpy().astype(np.float32),
                 expected=expected.detach().numpy().astype(np.float32), exporter="torch.onnx.export",
                 reference=reference)


def helper_model(nodes, initializers, input_shape, output_shape, opset: int, name: str,
                 doc: Optional[str] = None) -> onnx.ModelProto:
    """A graph built with onnx.helper for ops or attribute combinations torch.onnx.export never emits."""
    graph = onnx.helper.make_graph(
        nodes, name,
        [onnx.helper.make_tensor_value_info(INPUT_NAME, onnx.TensorProto.FLOAT, list(input_shape))],
        [onnx.helper.make_tensor_value_info(OUTPUT_NAME, onnx.TensorProto.FLOAT, list(output_shape))],
        initializer=initializers)
    if doc:
        graph.doc_string = doc
    model = onnx.helper.make_model(graph, producer_name="mt export_models.py",
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    # The lowest IR version that carries this opset, so every reader of that opset accepts the file.
    model.ir_version = onnx.helper.find_min_ir_version_for(list(model.opset_import))
    return model
