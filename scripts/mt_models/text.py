"""A small text encoder (issue #15's model families): token embedding (Gather) and learned positions,
nn.TransformerEncoder, and mean pooling over the tokens the attention mask keeps, as sentence-embedding
models compute it. Its two inputs are the token ids and the attention mask (int64, 1 for a token, 0 for
padding), at a fixed sequence length; the mask also masks the attention (src_key_padding_mask), so a
converter that ignored it would mix padding into the valid tokens and differ from PyTorch."""
import io
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn

from .common import INPUT_NAME, OUTPUT_NAME, Built, Spec

OPSET = 14
MASK_NAME = "attention_mask"


class TextEncoder(nn.Module):
    def __init__(self, vocab: int = 1000, length: int = 16, features: int = 64, heads: int = 4, layers: int = 2,
                 hidden: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab, features)
        self.positions = nn.Parameter(torch.randn(1, length, features) * 0.02)
        layer = nn.TransformerEncoderLayer(features, heads, hidden, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) + self.positions
        y = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        keep = attention_mask.unsqueeze(-1).to(y.dtype)
        return (y * keep).sum(1) / keep.sum(1)


def _text_encoder(seed: int) -> Built:
    torch.manual_seed(seed)
    model = TextEncoder().eval()
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, 1000, (3, 16), generator=g)
    mask = torch.ones(3, 16, dtype=torch.int64)
    mask[0, 11:] = 0  # padded sentences of 11 and 5 tokens, and a full one
    mask[1, 5:] = 0
    with torch.no_grad():
        expected = model(ids, mask)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids, mask), buf, opset_version=OPSET, input_names=[INPUT_NAME, MASK_NAME],
                          output_names=[OUTPUT_NAME], do_constant_folding=True)
    return Built(model=onnx.load_from_string(buf.getvalue()), input=ids.numpy(),
                 expected=expected.numpy().astype(np.float32), exporter="torch.onnx.export",
                 reference="PyTorch fp32 eval() (random weights)", extra_inputs={MASK_NAME: mask.numpy()})


def text_specs():
    return [
        Spec(name="text_encoder", opset=OPSET, in_ci=True, build=_text_encoder, kind="multi_input",
             description="token embedding + 2-layer nn.TransformerEncoder (4 heads, 64 features, 16 tokens) with "
                         "an attention mask input, mean-pooled over the kept tokens; random weights"),
    ]
