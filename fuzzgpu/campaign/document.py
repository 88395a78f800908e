"""The report a person reads first: ``report/report.md`` and ``report/report.html`` (the same
content, the HTML with its plots embedded), for a campaign of one process and for a parallel one
(its workers' states combined): what to act on, the findings per class, the plots over time, the
shapes.  ``report.txt`` and ``report.json`` (:mod:`.report`) stay the terminal's and the machines'.

The document is built once as blocks (:data:`Block`) and rendered twice (:func:`markdown`,
:func:`html`), so the two never say different things.
"""

from __future__ import annotations

import base64
import html as _html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..files import write_atomic
from .plot import plot_findings_over_time, plot_programs_per_second, plot_weak_rates
from .timeline import first_seen

#: ("h1"|"h2"|"p"|"strong"|"ul"|"table"|"img", ...): one piece of the document
Block = tuple[Any, ...]
#: "What to look at" names at most this many new classes (the table lists them all)
MAX_ACT = 12


def campaign_blocks(*, title: str, exit_line: str, head: Sequence[tuple[str, str]], classes: Mapping[str, Mapping[str, Any]],
                    findings: Sequence[Mapping[str, Any]], shapes: Mapping[str, Mapping[str, Any]],
                    not_covered: Mapping[str, int], timeline: Sequence[Mapping[str, Any]], corpus: Path,
                    plots: Mapping[str, tuple[str | None, str]]) -> list[Block]:
    """The report's blocks.  ``plots``: name -> (file, note) from :func:`draw_plots`."""
    seen = first_seen(timeline)
    out: list[Block] = [("h1", title), ("strong", exit_line)]
    act = []
    for key, c in sorted(classes.items(), key=lambda kv: (-int(kv[1].get("findings", 0)), kv[0])):
        if c.get("known"):
            continue
        if c.get("file"):
            act.append(f"`{key}`: {int(c.get('findings', 0))} finding(s), entry `{c['file']}` -- read it with "
                       f"`fuzzgpu explain {corpus / str(c['file'])}`, then judge it (docs/fuzzing.md, \"What CI expects of an entry\")")
        else:
            act.append(f"`{key}`: NOT SAVED as an entry" + (f", kept raw in `{c['raw']}`" if c.get("raw") else "") + " -- look at it first")
    if len(act) > MAX_ACT:
        act = act[:MAX_ACT] + [f"... and {len(act) - MAX_ACT} more new class(es): the table below lists them all"]
    known = [(k, c) for k, c in classes.items() if c.get("known")]
    if known:
        act.append(f"{sum(int(c.get('findings', 0)) for _, c in known)} finding(s) in {len(known)} known class(es), counted, "
                   "not saved again: " + ", ".join(f"`{k}` ({c.get('writeup') or 'known list'}"
                                             + (f": {c['title']}" if c.get("title") else "") + ")" for k, c in known))
    out += [("h2", "What to look at"), ("ul", act or ["no finding: nothing to act on"])]
    out += [("h2", "The run"), ("table", ("", ""), [(k, v) for k, v in head])]
    rows = []
    for key, c in sorted(classes.items(), key=lambda kv: (-int(kv[1].get("findings", 0)), kv[0])):
        status = "KNOWN" if c.get("known") else "NEW" if c.get("file") else "NOT SAVED"
        where = c.get("writeup") if c.get("known") else c.get("file") or c.get("raw") or "-"
        t = seen.get(key)
        rows.append((f"`{key}`", status, str(int(c.get("findings", 0))), f"{t:.0f}" if t is not None else "-", str(where or "-")))
    out += [("h2", "Findings per class"),
            ("table", ("class", "status", "distinct findings", "first seen (s)", "entry / write-up"), rows) if rows
            else ("p", "No finding.")]
    if findings:
        out += [("p", "Entries saved (the representative of each class):"),
                ("ul", [f"`{f.get('file')}` {f.get('shape', '?')}: {f.get('summary', '')}" for f in findings])]
    out += [("h2", "Over time")]
    for name, alt in (("findings-over-time", "distinct findings per class over time"),
                      ("programs-per-second", "programs judged and run per second over time")):
        file, note = plots.get(name, (None, "not drawn"))
        out.append(("img", file, alt, note))
    srows = []
    for name, s in sorted(shapes.items()):
        rate = f"{s['weak'] / s['instances']:.2e}" if s.get("instances") else "-"
        srows.append((name, str(int(s.get("programs", 0))), f"{float(s.get('instances', 0)):.4g}", rate, str(int(s.get("failures", 0))),
                      str(int(s.get("findings", 0))), str(int(s.get("known", 0))), str(int(s.get("repeats", 0))),
                      str(int(s.get("unsupported", 0)))))
    out += [("h2", "Shapes"),
            ("p", "programs: programs judged (the evidence cache's answers and the draws not covered included); "
                  "failures: programs that broke the property (the shrink candidates that still failed included: more than the "
                  "findings); entries: classes first saved from this shape; known: failures in a "
                  "class of the known list; repeats: failures in a class that already had an entry (a shrink's candidates "
                  "included; those met while generating are also counted as variants of it); "
                  "not covered: programs not judged."),
            ("table", ("shape", "programs", "instances", "weak rate", "failures", "entries", "known", "repeats", "not covered"), srows)]
    file, note = plots.get("weak-rates", (None, "not drawn"))
    out.append(("img", file, "weak (non-SC) outcomes per instance, per shape", note))
    if not_covered:
        out += [("h2", "Not covered (programs that were not judged, and why)"),
                ("table", ("programs", "why"), [(str(n), why) for why, n in sorted(not_covered.items(), key=lambda kv: -kv[1])[:20]])]
    return out


def draw_plots(d: Path, timeline: Sequence[Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]],
               shapes: Mapping[str, Mapping[str, Any]], backend: str, what: str) -> dict[str, tuple[str | None, str]]:
    """Every plot of the report into ``d`` (a stale one from an earlier report removed first)."""
    out = {
        "findings-over-time": plot_findings_over_time(timeline, classes, d / "findings-over-time.png", what),
        "programs-per-second": plot_programs_per_second(timeline, d / "programs-per-second.png", what),
        "weak-rates": plot_weak_rates(shapes, d / "weak-rates.png", backend),
    }
    for name, (file, _) in out.items():
        if file is None:
            (d / f"{name}.png").unlink(missing_ok=True)  # never a plot of an earlier run beside this report
    return out


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(blocks: Sequence[Block]) -> str:
    lines: list[str] = []
    for b in blocks:
        kind = b[0]
        if kind == "h1":
            lines += [f"# {b[1]}", ""]
        elif kind == "h2":
            lines += [f"## {b[1]}", ""]
        elif kind == "strong":
            lines += [f"**{b[1]}**", ""]
        elif kind == "p":
            lines += [b[1], ""]
        elif kind == "ul":
            lines += [f"- {x}" for x in b[1]] + [""]
        elif kind == "table":
            head, rows = b[1], b[2]
            lines.append("| " + " | ".join(_md_cell(h) for h in head) + " |")
            lines.append("|" + "---|" * len(head))
            lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
            lines.append("")
        elif kind == "img":
            file, alt, note = b[1], b[2], b[3]
            lines += [f"![{alt}]({file})" if file else f"_{alt}: {note}_", ""]
    return "\n".join(lines)


def _inline(text: str) -> str:
    """``code`` spans and **bold** of the markdown text, as HTML (everything else escaped)."""
    parts = str(text).split("`")
    return "".join(f"<code>{_html.escape(p)}</code>" if i % 2 else _html.escape(p) for i, p in enumerate(parts))


def html(blocks: Sequence[Block], d: Path) -> str:
    """The blocks as one HTML page, each plot embedded (base64 PNG): the file stands alone."""
    body: list[str] = []
    title = next((b[1] for b in blocks if b[0] == "h1"), "fuzzgpu report")
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{_inline(b[1])}</{kind}>")
        elif kind == "strong":
            body.append(f"<p class=\"exit\"><strong>{_inline(b[1])}</strong></p>")
        elif kind == "p":
            body.append(f"<p>{_inline(b[1])}</p>")
        elif kind == "ul":
            body.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b[1]) + "</ul>")
        elif kind == "table":
            head, rows = b[1], b[2]
            th = "" if not any(head) else "<tr>" + "".join(f"<th>{_inline(h)}</th>" for h in head) + "</tr>"
            body.append("<table>" + th + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rows)
                        + "</table>")
        elif kind == "img":
            file, alt, note = b[1], b[2], b[3]
            if file and (d / file).is_file():
                data = base64.b64encode((d / file).read_bytes()).decode()
                body.append(f"<figure><img alt=\"{_html.escape(alt)}\" src=\"data:image/png;base64,{data}\">"
                            f"<figcaption>{_html.escape(alt)} ({_html.escape(file)})</figcaption></figure>")
            else:
                body.append(f"<p class=\"nothing\"><em>{_html.escape(alt)}: {_html.escape(note)}</em></p>")
    style = ("body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}code{font-size:90%}"
             ".exit{font-size:110%}img{max-width:100%}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_html.escape(title)}</title>"
            f"<style>{style}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_documents(d: Path, blocks: Sequence[Block]) -> None:
    write_atomic(d / "report.md", markdown(blocks))
    write_atomic(d / "report.html", html(blocks, d))


__all__ = ["Block", "campaign_blocks", "draw_plots", "html", "markdown", "write_documents"]
