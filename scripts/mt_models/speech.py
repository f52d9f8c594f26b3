"""Keyword spotters: small recurrent classifiers over MFCC-like frames ([1, T, F], batch first), with seeded
random weights, exported at opset 13. One runs two stacked nn.LSTM layers and classifies the last step's
hidden state; the other a bidirectional nn.GRU (linear_before_reset=1, as PyTorch exports it) whose outputs
are averaged over time. Both are small enough for CI."""
import numpy as np
import torch
import torch.nn as nn

from .common import Built, Spec, export_torch

OPSET = 13
FRAMES = 49  # one second of 10 ms hops with 25 ms windows, as speech-commands front ends produce
COEFFICIENTS = 10  # MFCC coefficients per frame
KEYWORDS = 12  # the speech-commands task: 10 words, silence, unknown


def mfcc_like_frames(seed: int) -> torch.Tensor:
    """[1, FRAMES, COEFFICIENTS]: noise smoothed over 5 frames (features drift slowly, as cepstra of speech
    do), each coefficient scaled down with its index (higher cepstral coefficients are smaller)."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((FRAMES + 4, COEFFICIENTS))
    smooth = np.stack([noise[i:i + 5].mean(axis=0) for i in range(FRAMES)])
    scale = 4.0 / np.sqrt(1.0 + np.arange(COEFFICIENTS))
    return torch.from_numpy((smooth * scale)[None].astype(np.float32))


class LstmKeywordSpotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(COEFFICIENTS, 24, num_layers=2, batch_first=True)
        self.classifier = nn.Linear(24, KEYWORDS)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.classifier(y[:, -1])


class GruKeywordSpotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(COEFFICIENTS, 20, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(40, KEYWORDS)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.classifier(y.mean(dim=1))


def _build(factory):
    def build(seed: int) -> Built:
        torch.manual_seed(seed)
        built = export_torch(factory(), mfcc_like_frames(seed + 1), OPSET)
        built.reference += " (random weights)"
        return built
    return build


def speech_specs():
    return [
        Spec(name="kws_lstm", opset=OPSET, in_ci=True,
             description=f"keyword spotter: 2-layer nn.LSTM (hidden 24) over [1, {FRAMES}, {COEFFICIENTS}] "
                         "MFCC-like frames, last step -> Linear, random weights",
             build=_build(LstmKeywordSpotter)),
        Spec(name="kws_gru", opset=OPSET, in_ci=True,
             description=f"keyword spotter: bidirectional nn.GRU (hidden 20) over [1, {FRAMES}, {COEFFICIENTS}] "
                         "MFCC-like frames, mean over time -> Linear, random weights",
             build=_build(GruKeywordSpotter)),
    ]
