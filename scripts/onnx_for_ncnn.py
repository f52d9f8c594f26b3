#!/usr/bin/python3
"""Rewrites an ONNX model into the form ncnn's onnx2ncnn reads, for scripts/compare_vulkan.sh.

onnx2ncnn looks weights up by the name a node reads; it has no Identity layer and does not follow an
Identity to the initializer behind it. PyTorch's exporter writes such Identity nodes when two layers
have equal parameters (it keeps one initializer: mobilenet_v3_large's squeeze-excitation biases).
This gives each Identity of an initializer its own copy of the initializer under the output's name
and bypasses every other Identity; nothing else changes.

    /usr/bin/python3 scripts/onnx_for_ncnn.py IN.onnx OUT.onnx
"""
import sys

import onnx


def without_identities(model: onnx.ModelProto) -> onnx.ModelProto:
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    graph_outputs = {o.name for o in graph.output}
    rename = {}  # output of a bypassed Identity -> the value it passes on
    kept = []
    for node in graph.node:
        if node.op_type != "Identity":
            kept.append(node)
            continue
        source, target = node.input[0], node.output[0]
        source = rename.get(source, source)
        if source in initializers:
            copy = onnx.TensorProto()
            copy.CopyFrom(initializers[source])
            copy.name = target
            graph.initializer.append(copy)
            initializers[target] = copy
        elif target in graph_outputs:
            kept.append(node)  # a graph output keeps its name (onnx2ncnn then refuses it); not in the zoo
        else:
            rename[target] = source
    for node in kept:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    del graph.node[:]
    graph.node.extend(kept)
    return model


def main() -> int:
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} IN.onnx OUT.onnx", file=sys.stderr)
        return 2
    try:
        model = onnx.load(sys.argv[1])
        onnx.checker.check_model(model)  # an empty file parses as an empty model
    except Exception as error:  # onnx raises several types for unreadable or invalid files
        print(f"{sys.argv[1]}: not a valid ONNX model: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
    onnx.save(without_identities(model), sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
