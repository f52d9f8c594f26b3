#!/usr/bin/python3
"""The markdown table of scripts/compare_vulkan.sh, from the results.tsv and failures.tsv it writes.

    /usr/bin/python3 scripts/compare_vulkan_table.py RESULTS.tsv FAILURES.tsv WARMUP ITERATIONS

Per model and precision: each runtime's time is the median of the rounds' medians, and mt / ncnn is
the median of the rounds' own ratios. ncnn's and mt's runs of one round are adjacent, so the ratio
of a round is measured under nearly the same load; on a busy machine the median of these paired
ratios is steadier than the ratio of the two medians. A model a runtime could not convert or run
is listed under the table with the reason.
"""
import csv
import statistics
import sys


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    results, failures, warmup, iterations = sys.argv[1:]
    rows = list(csv.DictReader(open(results), delimiter="\t"))
    failed = {}
    for line in open(failures):
        model, runtime, why = line.rstrip("\n").split("\t", 2)
        failed[(model, runtime)] = why
    models = list(dict.fromkeys([r["model"] for r in rows] + [m for m, _ in failed]))
    precisions = list(dict.fromkeys(r["precision"] for r in rows)) or ["fp32"]
    rounds = sorted({int(r["round"]) for r in rows})

    def times(model, precision, runtime, column):  # round -> median ms (or CPU ms)
        if (model, runtime) in failed:
            return {}
        return {int(r["round"]): float(r[column]) for r in rows
                if (r["model"], r["precision"], r["runtime"]) == (model, precision, runtime) and r.get(column)}

    def table(column, unit):
        print("| model |" + "".join(f" ncnn {p} {unit} | mt {p} {unit} | mt / ncnn |" for p in precisions))
        print("|---|" + "---:|---:|---:|" * len(precisions))
        for m in models:
            cells = []
            for p in precisions:
                n, t = times(m, p, "ncnn", column), times(m, p, "mt", column)
                ratios = [t[k] / n[k] for k in n if k in t and n[k] > 0]
                cells += [f"{statistics.median(n.values()):.0f}" if n else "-",
                          f"{statistics.median(t.values()):.0f}" if t else "-",
                          f"{statistics.median(ratios):.2f}" if ratios else "-"]
            print(f"| {m} | " + " | ".join(cells) + " |")
        print()

    print("Latency (wall time per inference):")
    print()
    table("median_ms", "ms")
    if any(r.get("cpu_ms") for r in rows):
        print("CPU time per inference (user + system of all the process's threads):")
        print()
        table("cpu_ms", "CPU ms")
    loads = [float(r["load"]) for r in rows if r.get("load")]
    print(f"{len(rounds)} rounds; a runtime's figure is the median of the rounds' medians (each of {iterations} "
          f"timed runs after the first run and {warmup} warm-ups), mt / ncnn the median of the rounds' paired ratios. "
          "CPU time: the run's CPU time less that of the same run with one timed iteration, over "
          f"{iterations} - 1." + (f" 1-minute load average {min(loads):.2f}-{max(loads):.2f} at the runs' starts." if loads else ""))
    if "int8" in precisions:
        print("int8: each runtime's own quantization of the model (ncnn2table with KL and ncnn2int8; mt-quantize), "
              "calibrated on the model's own input, with fp16 activations.")
    errors = {}  # (model, precision) -> (worst max abs error, worst cosine) of ncnn's runs
    for r in rows:
        if r["runtime"] == "ncnn" and r["max_abs_error"]:
            key = (r["model"], r["precision"])
            e, c = errors.get(key, (0.0, 1.0))
            errors[key] = max(e, float(r["max_abs_error"])), min(c, float(r["cosine"]))
    if errors:
        print("ncnn's output against PyTorch's (expected.npy), worst run: " + "; ".join(
            f"{m} {p} max abs {e:.3g}, cosine {c:.6f}" for (m, p), (e, c) in sorted(errors.items())) + ".")
    for (m, runtime), why in sorted(failed.items()):
        print(f"- {m}: {runtime} {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
