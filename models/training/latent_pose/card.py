"""The model cards written next to the ONNX files: what each phase was trained on, how, and how well it did."""
import datetime

import numpy as np


def fmt(v):
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return str(v)


def table(header, rows):
    """Markdown table lines: header list, rows list of lists."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return lines


def write_card(path, *, title, summary, facts, data_lines, training, sections):
    """Markdown card. facts: dict shown as a list under the summary (file, size, parameters, seed, command...);
    data_lines: lines about the data; training: dict; sections: list of (heading, lines)."""
    lines = [f"# {title}", "", summary, "",
             f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}"]
    lines += [f"- {k}: {fmt(v)}" for k, v in facts.items()]
    lines += ["", "## Data", "", *data_lines, "", "## Training", ""]
    lines += [f"- {k}: {fmt(v)}" for k, v in training.items()]
    for heading, body in sections:
        lines += ["", f"## {heading}", "", *body]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
