"""Pre-flight check of the judge: three real items end to end before a 5,000-call run.

:func:`preflight` judges ``n`` test items (each reference against the next item's, so both
Supported and Not Supported occur) through a scoring run's :class:`~etclib.judge.runner.Judge`
with a throw-away cache, so every call is made. It reports what was sent and came back, latency
and tokens per call (so a token limit too small for a reasoning model shows before a run cuts
answers), an estimate for the whole test split, and ``problems``. ``etclib judge check``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from etclib.core.errors import EtcError, ServiceError, UnsupportedSettingError
from etclib.data.corpus import Corpus
from etclib.judge import pricing
from etclib.judge.cache import AnswerCache
from etclib.judge.runner import Judge, JudgeSettings, judge_items, run_sync


def preflight(settings: JudgeSettings, corpus: Corpus, n: int = 3) -> dict[str, Any]:
    """Judge ``n`` test items for real; the report described in the module docstring."""
    from etclib.data.task import items

    test = items(corpus, "test")
    n = max(1, min(n, len(test)))
    refs = [it.reference for it in test[:n]]
    preds = [test[(i + 1) % len(test)].reference for i in range(n)]
    decoding = settings.decoding()
    report: dict[str, Any] = {
        "ok": False,
        "provider": settings.provider,
        "model": settings.model,
        "known_model": decoding.info.known,
        "sent": decoding.as_dict(),
        "signature": settings.signature(),
        "max_tokens": settings.token_limit(),
        "items": n,
        "problems": [],
        "notes": [],
    }
    if not decoding.info.known:
        report["notes"].append(
            f"model {settings.model!r} is not in etclib's capability table "
            "(etclib/llm/models.py): it gets temperature 0 and no thinking setting; if the "
            "check passes, those are accepted"
        )
    with tempfile.TemporaryDirectory(prefix="etc-judge-check-") as tmp:
        cache = AnswerCache(Path(tmp) / "check.sqlite3")

        async def run():
            async with Judge(settings, cache=cache) as judge:
                report["format"] = getattr(judge.provider, "response_format", "response_schema")
                start = time.monotonic()
                try:
                    results = await judge_items(judge, preds, refs, desc="judge check")
                finally:
                    report["wall_s"] = round(time.monotonic() - start, 3)
                    usage = judge.usage
                return results, usage

        try:
            results, usage = run_sync(run)
        except UnsupportedSettingError as exc:
            report["problems"].append(f"unsupported setting {exc.setting!r}: {exc}")
            report["detail"] = exc.detail
            return report
        except EtcError as exc:
            report["problems"].append(str(exc))
            if isinstance(exc, ServiceError):
                report["detail"] = exc.detail
            return report
        finally:
            cache.close()
    errors = [r.error for r in results if r.error]
    answered = len(results) - len(errors)
    calls = max(usage.calls, 1)
    per_item = usage.calls / n
    est_calls = round(per_item * len(test))
    tokens_in = usage.input_tokens / calls
    tokens_out = usage.output_tokens / calls
    cached_in = usage.cached_tokens / calls
    cost = pricing.cost_usd(
        settings.model, est_calls * tokens_in, est_calls * tokens_out, est_calls * cached_in
    )
    estimate: dict[str, Any] = {
        "split": "test",
        "items": len(test),
        "calls": est_calls,
        "input_tokens": round(est_calls * tokens_in),
        "cached_input_tokens": round(est_calls * cached_in),
        "output_tokens": round(est_calls * tokens_out),
        "cost_usd": None if cost is None else round(cost, 2),
        "batch_cost_usd": _rounded(
            pricing.batch_cost_usd(settings.model, est_calls * tokens_in, est_calls * tokens_out)
        ),
        "note": "first submission with an empty cache; later ones reuse the references' "
        "decompositions (about a quarter fewer calls)",
    }
    if not answered:  # nothing to measure: an estimate from zero tokens would read $0.00
        estimate = {
            "split": "test",
            "items": len(test),
            "cost_usd": None,
            "why": pricing.NO_ESTIMATE,
        }
    else:
        daily = pricing.daily_limit_note(settings.provider, settings.model, est_calls)
        if daily:
            estimate["daily_limit"] = daily
    report.update(
        served_models=sorted(usage.model_versions),
        signature=settings.signature(usage.model_versions),
        calls=usage.calls,
        retries=usage.retries,
        answers_parsed=not errors,
        item_errors=errors,
        latency_s=round(usage.latency_s / calls, 3),
        input_tokens_per_call=round(tokens_in, 1),
        output_tokens_per_call=round(tokens_out, 1),
        reasoning_tokens_per_call=round(usage.reasoning_tokens / calls, 1),
        max_output_tokens=usage.max_output_tokens,
        cut_answers=usage.cut_answers,
        estimate=estimate,
    )
    report["problems"] += [f"item error: {e}" for e in errors]
    if usage.retries:
        report["notes"].append(
            f"{usage.retries} retries in {usage.calls} calls (rate limits, timeouts or "
            "unparseable answers)"
        )
    limit = report["max_tokens"]
    if usage.cut_answers:
        report["notes"].append(
            f"{usage.cut_answers} answer(s) were cut at the token limit ({limit}) and asked again "
            "with twice it: raise judge_max_tokens (ETC_JUDGE_MAX_TOKENS) or lower the thinking"
        )
    elif usage.max_output_tokens > limit / 2:
        report["notes"].append(
            f"the longest answer took {usage.max_output_tokens} of the {limit}-token limit "
            "(reasoning included): consider a larger judge_max_tokens (ETC_JUDGE_MAX_TOKENS)"
        )
    report["ok"] = not errors
    return report


def format_report(report: dict[str, Any]) -> str:
    """The report as lines for a terminal."""
    sent = report["sent"]
    lines = [
        f"judge check: {report['provider']} {report['model']}"
        + ("" if report["known_model"] else " (not in the capability table)"),
        f"  sent: temperature {sent['temperature']}, thinking {sent['thinking']}, "
        f"max tokens {report['max_tokens']}, structured output {report.get('format', '?')}",
    ]
    if "calls" in report:
        est = report["estimate"]
        if est.get("why"):
            full = f"  full test split ({est['items']} items): {est['why']}"
        else:
            full = (
                f"  full test split ({est['items']} items): about {est['calls']} calls, "
                f"{est['input_tokens']:,} input (of which {est['cached_input_tokens']:,} cached) "
                f"+ {est['output_tokens']:,} output tokens, {pricing.cost_text(est['cost_usd'])}"
            )
            if est.get("batch_cost_usd") is not None:
                full += f" ({pricing.cost_text(est['batch_cost_usd'])} with --batch)"
        lines += [
            f"  served: {', '.join(report['served_models']) or '(not reported)'}",
            f"  {report['items']} items: {report['calls']} calls, {report['retries']} retries, "
            f"answers parsed: {'yes' if report['answers_parsed'] else 'NO'}",
            f"  per call: {report['latency_s']:.2f} s, {report['input_tokens_per_call']:.0f} "
            f"input + {report['output_tokens_per_call']:.0f} output tokens (of which "
            f"{report['reasoning_tokens_per_call']:.0f} reasoning); most in one call "
            f"{report['max_output_tokens']} of the {report['max_tokens']}-token limit",
            full,
            f"  signature: {report['signature']}",
        ]
        if est.get("daily_limit"):
            lines.append(f"  daily limit: {est['daily_limit']}")
    lines += [f"  note: {n}" for n in report["notes"]]
    lines += [f"  problem: {p}" for p in report["problems"]]
    lines.append("  OK" if report["ok"] else "  NOT OK: fix the problems above before a full run")
    return "\n".join(lines)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
