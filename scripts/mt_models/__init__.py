"""Test and benchmark models for mt: torchvision networks and small single-op graphs, exported to ONNX
together with a seeded input and the PyTorch (or numpy reference) output for it. See export_models.py."""
