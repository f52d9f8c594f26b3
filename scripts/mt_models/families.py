"""Model families beyond the torchvision classifiers (issue #15): a vision transformer, a YOLO-style
detection head and the sub-pixel super-resolution network of ONNX's export tutorial, built in PyTorch with seeded random weights and exported with torch.onnx.export. Each is
checked like every other test model: mt-convert, then mt-run against PyTorch's output."""
import torch
import torch.nn as nn
from torchvision.models.vision_transformer import VisionTransformer

from .common import Built, Spec, export_torch, smooth_images

OPSET = 14  # scaled_dot_product attention and LayerNormalization export as their opset-14 forms


def _vit_tiny(seed: int) -> Built:
    """DeiT-Tiny's shape: 224x224 images in 16x16 patches, 12 layers of 3 heads over 192 features."""
    torch.manual_seed(seed)
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
                              mlp_dim=768)
    # torchvision initialises the classification head to zeros (for fine-tuning), which would make every
    # output 0 and the comparison meaningless.
    nn.init.normal_(model.heads.head.weight, std=0.02)
    nn.init.normal_(model.heads.head.bias, std=0.02)
    return export_torch(model, smooth_images(1, 224, seed + 1), OPSET, reference="PyTorch fp32 eval() (random weights)")


class YoloStyle(nn.Module):
    """A small SiLU backbone and a YOLO-style head at two strides: per anchor, the raw map is reshaped and
    transposed to (anchor, y, x, 5 + classes), split into box centre, box size, objectness and class
    scores, decoded with sigmoids against the cell grid, and concatenated into one list of boxes."""

    def __init__(self, classes: int = 4, anchors: int = 3):
        super().__init__()
        self.classes, self.anchors = classes, anchors
        outputs = anchors * (5 + classes)
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU())
        self.down = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU())
        self.head4 = nn.Conv2d(32, outputs, 1)
        self.head8 = nn.Conv2d(64, outputs, 1)

    def decode(self, p: torch.Tensor, stride: int) -> torch.Tensor:
        n, _, h, w = p.shape
        p = p.reshape(n, self.anchors, 5 + self.classes, h, w).permute(0, 1, 3, 4, 2)
        xy, wh, objectness, scores = p.split([2, 2, 1, self.classes], dim=-1)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        grid = torch.stack([xs, ys], -1)
        xy = (xy.sigmoid() * 2 - 0.5 + grid) * stride
        wh = (wh.sigmoid() * 2) ** 2 * stride
        return torch.cat([xy, wh, objectness.sigmoid(), scores.sigmoid()], -1).reshape(n, -1, 5 + self.classes)

    def forward(self, x):
        a = self.stem(x)
        b = self.down(a)
        return torch.cat([self.decode(self.head4(a), 4), self.decode(self.head8(b), 8)], 1)


def _yolo_head(seed: int) -> Built:
    torch.manual_seed(seed)
    # A non-square input, so that a swapped grid axis shows up as an error.
    x = smooth_images(1, 96, seed + 1)[:, :, :64, :]
    return export_torch(YoloStyle(), x, OPSET, reference="PyTorch fp32 eval() (random weights)")


class SuperResolution(nn.Module):
    """The network of ONNX's classic super-resolution export tutorial (Shi et al.'s ESPCN): three
    convolutions and a sub-pixel PixelShuffle (DepthToSpace) upscaling by 3."""

    def __init__(self, upscale: int = 3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 64, 5, padding=2)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 32, 3, padding=1)
        self.conv4 = nn.Conv2d(32, upscale ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.shuffle(self.conv4(x))


def _super_resolution(seed: int) -> Built:
    torch.manual_seed(seed)
    # The tutorial's 224x224 luminance input, here 64x48 to keep the reference backend quick.
    x = smooth_images(1, 64, seed + 1)[:, :1, :, :48]
    return export_torch(SuperResolution(), x, OPSET, reference="PyTorch fp32 eval() (random weights)")


def family_specs():
    return [
        Spec(name="vit_tiny", opset=OPSET, in_ci=True, build=_vit_tiny,
             description="torchvision VisionTransformer in DeiT-Tiny's shape (12 layers, 3 heads, 192 features), "
                         "random weights"),
        Spec(name="yolo_head", opset=OPSET, in_ci=True, build=_yolo_head,
             description="a SiLU backbone and a YOLO-style head (Reshape, Transpose, Split, Sigmoid, Concat) at "
                         "strides 4 and 8, random weights"),
        Spec(name="super_resolution", opset=OPSET, in_ci=True, build=_super_resolution,
             description="ONNX's super-resolution tutorial network (ESPCN: 3 convs and PixelShuffle, i.e. "
                         "DepthToSpace, by 3), random weights"),
    ]
