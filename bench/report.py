"""The markdown report of `bench.cost`: a table of the results for bench/README.md."""

from __future__ import annotations

from pathlib import Path

TABLE_START, TABLE_END = "<!-- bench:results:start -->", "<!-- bench:results:end -->"


def _fmt(summary: dict) -> str:
    return f"{summary['median']:.3g} ({summary['min']:.3g}-{summary['max']:.3g})"


def _headline(results: dict) -> list[str]:
    """The machine, the headline setting and its MAJ / RRMaj table."""
    s, m = results["settings"], results["machine"]
    maj, rr = results["maj"], results["rrmaj"]
    return [
        f"Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']} ({m['torch_threads']} threads), "
        f"transformers {m['transformers']}, {m['device']}; load average {m['load_average_start']} "
        f"at start, {m['load_average_end']} at end.",
        f"Setting (headline, every agent speaks): {s['model']}, {s['label']} {s['strength']}, "
        f"N={s['n']}, M={s['m']}, K={s['k']}, L={s['max_tokens']}, "
        f"{s.get('order', 'fixed')} speaking order, seed {s['seed']}, {len(s['questions'])} "
        f"{s['task']} questions, {s['repeats']} timed MAJ/RRMaj pairs; every answer/trajectory "
        "decodes exactly L tokens.",
        "",
        "| measure | MAJ | RRMaj | RRMaj / MAJ |",
        "|---|---|---|---|",
        f"| wall time, s (median, min-max) | {_fmt(maj['wall_s'])} | {_fmt(rr['wall_s'])} | "
        f"{_fmt(results['wall_ratio_rrmaj_over_maj'])} |",
        f"| decode tokens | {maj['decode_tokens']} | {rr['decode_tokens']} | "
        f"{rr['decode_tokens'] / max(1, maj['decode_tokens']):.3g} |",
        f"| prefill tokens | {maj['prefill_tokens']} | {rr['prefill_tokens']} | "
        f"{rr['prefill_tokens'] / max(1, maj['prefill_tokens']):.3g} |",
        f"| prefill per answer/trajectory / (speakers' prompts + L) | {maj['ratio_speakers']} | "
        f"{rr['ratio_speakers']} | |",
        f"| same, over all N agents' prompts + L | {maj['ratio_all_agents']} | "
        f"{rr['ratio_all_agents']} | |",
        f"| distinct writers per trajectory (mean) | 1 | {rr.get('speakers_per_trajectory')} | |",
        f"| turns that changed prompt (share of turns after the first) | | "
        f"{rr.get('prompt_change_share')} ({rr.get('prompt_changes')} of "
        f"{rr.get('turns', 0) - rr.get('trajectories', 0)}) | |",
    ]


def _corrupted_only(results: dict) -> list[str]:
    """The headline setting beside the earlier one where only corrupted agents write."""
    old = results.get("corrupted_only")
    if not old:
        return []
    s, maj, rr = results["settings"], results["maj"], results["rrmaj"]
    o, orr = old["settings"], old["rrmaj"]
    return [
        "",
        "| setting | K | L | order | writers / trajectory | prompt changes | "
        "prefill MAJ / RRMaj | wall s MAJ / RRMaj | RRMaj / MAJ |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| every agent speaks (headline) | {s['k']} | {s['max_tokens']} | "
        f"{s.get('order', 'fixed')} | {rr.get('speakers_per_trajectory')} | "
        f"{rr.get('prompt_change_share')} | {maj['prefill_tokens']} / {rr['prefill_tokens']} | "
        f"{maj['wall_s']['median']:.3g} / {rr['wall_s']['median']:.3g} | "
        f"{_fmt(results['wall_ratio_rrmaj_over_maj'])} |",
        f"| corrupted only (earlier default: corrupted agents first, only they write) | "
        f"{o['k']} | {o['max_tokens']} | {o['order']} | {orr['speakers_per_trajectory']} | "
        f"{orr['prompt_change_share']} | {old['maj']['prefill_tokens']} / "
        f"{orr['prefill_tokens']} | {old['maj']['wall_s']['median']:.3g} / "
        f"{orr['wall_s']['median']:.3g} | {_fmt(old['wall_ratio_rrmaj_over_maj'])} |",
    ]


def _variants(results: dict) -> list[str]:
    """RRMaj with one optimisation off, and both methods with end-of-sequence allowed."""
    variants, rr = results["variants"], results["rrmaj"]
    if not variants:
        return []
    lines = [
        "",
        "| RRMaj engine variant (one pass) | wall s | prefill tokens | prefill ratio (speakers) | wall / RRMaj median |",
        "|---|---|---|---|---|",
        f"| all optimisations (median of the timed passes) | {rr['wall_s']['median']:.3g} | "
        f"{rr['prefill_tokens']} | {rr['ratio_speakers']} | 1 |",
    ]
    for name in ("no_prefix_sharing", "no_kv_reuse", "no_batching"):
        v = variants[name]
        lines.append(
            f"| {name.replace('_', ' ')} | {v['wall_s']['median']:.3g} | {v['prefill_tokens']} | "
            f"{v['ratio_speakers']} | {v['wall_s']['median'] / rr['wall_s']['median']:.3g} |"
        )
    em, er = variants["eos_allowed_MAJ"], variants["eos_allowed_RRMaj"]
    return lines + [
        "",
        f"End-of-sequence allowed (one pass each): MAJ decoded {em['decode_tokens']} tokens in "
        f"{em['wall_s']['median']:.3g} s, RRMaj {er['decode_tokens']} in {er['wall_s']['median']:.3g} s; "
        f"RRMaj / MAJ wall per decoded token: {variants['eos_allowed_per_token_ratio']}.",
    ]


def _throughput_and_memory(results: dict) -> list[str]:
    """The engine's decode rate beside `model.generate`, and the peak memory of 1 and N agents."""
    tp = results["throughput"]
    lines = [
        "",
        f"Decode throughput, greedy, batch {tp['batch_size']} x {tp['new_tokens']} tokens, same prompts: "
        f"engine {_fmt(tp['decode_tokens_per_s_engine'])} tok/s, `model.generate` "
        f"{_fmt(tp['decode_tokens_per_s_generate'])} tok/s; ratio {_fmt(tp['decode_ratio'])} "
        f"(end to end, prefill included: {_fmt(tp['end_to_end_ratio'])}).",
    ]
    memory = results["memory"]
    if memory:
        one, many = memory["one_agent"], memory["n_agents"]
        field = memory.get("measure", "peak_rss_mb")
        what = (
            "while running (peak reset after loading)" if field == "run_peak_rss_mb" else "process"
        )
        lines.append(
            f"Peak RSS {what}, fresh process, MAJ + RRMaj on one question: 1 agent "
            f"{one[field]} MB, {many['n']} agents {many[field]} MB (ratio {memory['ratio']}, "
            f"+{memory['extra_mb']} MB; weights {one['weights_mb']} MB; whole-process peaks incl. "
            f"loading {one['peak_rss_mb']} / {many['peak_rss_mb']} MB)."
        )
    return lines


def render_table(results: dict) -> str:
    """The markdown table written into bench/README.md."""
    lines = _headline(results) + _corrupted_only(results) + _variants(results)
    lines += _throughput_and_memory(results)
    lines += ["", "| target | value | target | met |", "|---|---|---|---|"]
    for key, row in results["targets"].items():
        lines.append(
            f"| {key} | {row['value']} | {row['target']} | {'yes' if row['met'] else 'NO'} |"
        )
    return "\n".join(lines)


def write_readme(
    path: Path, table: str, start: str = TABLE_START, end: str = TABLE_END, title: str = "Results"
) -> None:
    """Put `table` between the markers `start` and `end` of the README (a section `title` is
    appended when they are missing)."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{start}\n{table}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n## {title}\n\n" + block + "\n"
    path.write_text(text)
