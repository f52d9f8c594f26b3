"""Detection models with their post-processing (issue #15), exported at opset 11 (NonMaxSuppression's):

- detection_tail (ci): a YOLO-style tail on a raw head output: corner boxes, the best class per box,
  the top 64 candidates (TopK), torchvision's batched_nms, and the kept boxes with score and class.
- ssdlite320_mobilenet_v3_large (all): torchvision's SSDlite network, anchors and box decoding, with its
  post-processing written in static shapes (below), checked at export against torchvision's own.

torchvision's SSD post-processing (SSD.postprocess_detections) cannot be exported for a static-shape
runtime as it is: per class it keeps the scores above score_thresh by boolean indexing (NonZero and
GatherND: the number kept is the data), then takes the top min(topk_candidates, that number) (a K
computed from it), runs batched_nms inside an If on whether any box is left, and finally sorts all
classes' survivors by score and keeps detections_per_img. mt-convert refuses those by design (an
output size that depends on the data). The static form computes the same detections: per class the
top topk_candidates scores (those at or below score_thresh rank last, and NonMaxSuppression's
score_threshold drops them, so this is torchvision's filter-then-top-k), then one NonMaxSuppression
over the classes as batches, whose count of valid rows mt carries to the output. Its rows are in class
order, best first within a class, and it has no cross-class cap: with at most detections_per_img
detections (checked at export), they are exactly torchvision's, ordered by class.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models.detection.image_list import ImageList
from torchvision.ops import batched_nms, clip_boxes_to_image

from .common import Built, Spec, export_torch, smooth_images
from .vision import reestimate_batchnorm

OPSET = 11


class DetectionTail(nn.Module):
    """Raw head output (1, boxes, 4 + classes): box centre and size, class logits."""

    def __init__(self, candidates: int = 64, iou: float = 0.45):
        super().__init__()
        self.candidates, self.iou = candidates, iou

    def forward(self, x):
        p = x[0]
        centre, size = p[:, :2], p[:, 2:4]
        boxes = torch.cat([centre - size / 2, centre + size / 2], 1)
        scores, labels = p[:, 4:].sigmoid().max(1)
        top, index = scores.topk(self.candidates)
        boxes, labels = boxes[index], labels[index]
        keep = batched_nms(boxes, top, labels, self.iou)
        return torch.cat([boxes[keep], top[keep, None], labels[keep, None].float()], 1)


def _detection_tail(seed: int) -> Built:
    g = torch.Generator().manual_seed(seed)
    boxes, classes = 400, 5
    centre = torch.rand(1, boxes, 2, generator=g) * 160  # crowded: many candidates overlap
    size = 20 + torch.rand(1, boxes, 2, generator=g) * 100
    logits = torch.randn(1, boxes, classes, generator=g) * 2
    x = torch.cat([centre, size, logits], 2)
    return export_torch(DetectionTail(), x, OPSET, reference="PyTorch fp32 eval() with torchvision.ops.batched_nms")


class _NonMaxSuppression(torch.autograd.Function):
    """ONNX's NonMaxSuppression over boxes [B, N, 4] and scores [B, 1, N] (each batch row its own class):
    rows (b, 0, index), computed in PyTorch with torchvision.ops.nms, exported as the ONNX op."""

    @staticmethod
    def forward(ctx, boxes, scores, max_per_class: int, iou: float, score_threshold: float):
        rows = []
        for b in range(boxes.shape[0]):
            s = scores[b, 0]
            above = torch.nonzero(s > score_threshold).flatten()
            index = above[torchvision.ops.nms(boxes[b, above], s[above], iou)[:max_per_class]]
            rows.append(torch.stack([torch.full_like(index, b), torch.zeros_like(index), index], 1))
        return torch.cat(rows)

    @staticmethod
    def symbolic(g, boxes, scores, max_per_class, iou, score_threshold):
        return g.op("NonMaxSuppression", boxes, scores,
                    g.op("Constant", value_t=torch.tensor([max_per_class], dtype=torch.int64)),
                    g.op("Constant", value_t=torch.tensor([iou], dtype=torch.float32)),
                    g.op("Constant", value_t=torch.tensor([score_threshold], dtype=torch.float32)))


class SsdLiteStatic(nn.Module):
    """torchvision's SSD (its normalisation, backbone, head, anchors and box decoding) with the
    post-processing in static shapes: (x1, y1, x2, y2, score, label) rows. Images of the size the model
    resizes to (320 x 320), so that its resize is the identity and is left out."""

    def __init__(self, ssd, size: int = 320):
        super().__init__()
        self.ssd, self.size = ssd, size

    def forward(self, images):
        ssd = self.ssd
        x = ssd.transform.normalize(images)  # (image - mean) / std, per channel
        features = list(ssd.backbone(x).values())
        head = ssd.head(features)
        anchors = ssd.anchor_generator(ImageList(x, [(self.size, self.size)] * len(x)), features)[0]
        boxes = ssd.box_coder.decode_single(head["bbox_regression"][0], anchors)  # the first image's
        boxes = clip_boxes_to_image(boxes, (self.size, self.size))
        scores = F.softmax(head["cls_logits"][0], -1)[:, 1:].t()  # classes x anchors, background dropped
        k = ssd.topk_candidates
        top, index = scores.topk(k, dim=1)
        candidates = boxes[index]  # classes x k x 4
        kept = _NonMaxSuppression.apply(candidates, top[:, None, :], k, ssd.nms_thresh, ssd.score_thresh)
        label, position = kept[:, 0], kept[:, 2]
        flat = label * k + position
        return torch.cat([candidates.reshape(-1, 4)[flat], top.reshape(-1)[flat, None], (label + 1)[:, None].float()],
                         1)


def _ssdlite(seed: int) -> Built:
    torch.manual_seed(seed)
    # score_thresh 0.9 (torchvision's default is 0.001): about 120 detections survive, fewer than
    # detections_per_img (300), so that torchvision's result is the whole set the static form computes.
    ssd = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                      score_thresh=0.9)
    # torchvision initialises the class predictors (std 0.03) so that, untrained, every class scores
    # 1/91 everywhere: detections would be ties. Wider weights give distinct scores.
    for block in ssd.head.classification_head.module_list:
        nn.init.normal_(block[1].weight, std=0.5)
    model = SsdLiteStatic(ssd)
    norms = reestimate_batchnorm(model, seed, size=320)
    x = (smooth_images(1, 320, seed + 1) * 0.25 + 0.5).clamp(0, 1)  # an image in [0, 1], as torchvision takes
    built = export_torch(model, x, OPSET, reference=f"PyTorch fp32 eval() (random weights, {norms} BatchNorm "
                                                    "layers re-estimated), equal to torchvision's own detections")
    # The static form against torchvision's own post-processing, both ordered by class then score.
    with torch.no_grad():
        theirs = ssd([x[0]])[0]
    mine = torch.from_numpy(built.expected)
    assert 0 < len(mine) <= ssd.detections_per_img, f"ssdlite320: {len(mine)} detections"
    order = sorted(range(len(theirs["labels"])), key=lambda i: (int(theirs["labels"][i]), -float(theirs["scores"][i])))
    theirs = torch.cat([theirs["boxes"], theirs["scores"][:, None], theirs["labels"][:, None].float()], 1)[order]
    assert theirs.shape == mine.shape and torch.allclose(theirs, mine, atol=1e-4), \
        f"ssdlite320: the static post-processing differs from torchvision's ({theirs.shape} vs {mine.shape})"
    return built


def detection_specs():
    return [
        Spec(name="detection_tail", opset=OPSET, in_ci=True, build=_detection_tail,
             description="a detector's post-processing on a raw head output (400 boxes, 5 classes): corner boxes, "
                         "best class, TopK 64, torchvision batched_nms, the kept boxes with score and class"),
        Spec(name="ssdlite320_mobilenet_v3_large", opset=OPSET, in_ci=False, build=_ssdlite,
             description="torchvision ssdlite320_mobilenet_v3_large, random weights, with its post-processing in "
                         "static shapes (per-class TopK 300 and NonMaxSuppression), equal to torchvision's"),
    ]
