"""The embedded judge on the labelled judgments the tests own (`tests/fixtures/judgments.jsonl`): one name
under several forms vs two entities, and what a newer fact does to an older one, substitutions included."""

from __future__ import annotations

from bench.judges import evaluate, load_cases
from providers.local_judge import LocalJudge


async def test_embedded_judge_meets_its_accuracy_on_the_labelled_set(local_judge: LocalJudge) -> None:
    cases = load_cases()
    assert len(cases) - 1 + sum(len(c["facts"]) * len(c["episodes"]) for c in cases if c["judgment"] == "about") >= 200
    report = await evaluate(local_judge, cases)
    assert report["same_entity"]["accuracy"] >= 0.90, report
    assert report["contradicts"]["accuracy"] >= 0.85 and report["contradicts"]["recall"] >= 0.85, report
    for judgment in ("restates", "updates", "retires", "about"):
        assert report[judgment]["accuracy"] >= 0.85, (judgment, report)


async def test_substitution_on_the_same_relation_is_a_contradiction(local_judge: LocalJudge) -> None:
    from providers.judge import FactClaim, Relation

    old = FactClaim("Dana owns the checkout migration.", "Dana", "checkout migration")
    pairs = [
        (old, FactClaim("Raj owns the checkout migration.", "Raj", "checkout migration")),
        (old, FactClaim("The checkout migration is owned by Dana.", "checkout migration", "Dana")),
        (old, FactClaim("Dana owns the checkout migration and needs the tax table first.", "Dana",
                        "checkout migration")),
    ]
    verdicts = await local_judge.judge_contradiction(pairs)
    assert [v.relation for v in verdicts] == [Relation.CONTRADICTS, Relation.RESTATES,
                                              Relation.UNRELATED]
