"""The embedded judge on small hand-made fixtures of each judgment, with its accuracy on each set.

Each set asserts a floor below the accuracy measured when it was written, so a change that makes the judge
worse fails here; `ACCURACY` collects the numbers for the closing report (run with `-s` to see them).
"""

from __future__ import annotations

from engine.graph import Relation
from providers.judge import EntityMention, Relevance
from providers.local_judge import LocalJudge

ACCURACY: dict[str, float] = {}

PARAPHRASE = [
    # (dialogue, fact, relevant?)
    ("Can we push the pricing page launch back a week?", "The pricing page launches on 2026-03-14.", True),
    ("Who is handling the checkout migration now?", "Dana owns the checkout migration.", True),
    ("Did legal sign off on the refund wording?", "Legal reviews every refund term before launch.", True),
    (
        "What database are we on for the analytics service?",
        "Analytics runs on Postgres 16 with pgvector.",
        True,
    ),
    ("Remind me how much the annual plan costs.", "The annual plan is priced at 480 dollars.", True),
    ("Can you book my flight to Lisbon for Tuesday?", "Dana owns the checkout migration.", False),
    ("Can you book my flight to Lisbon for Tuesday?", "The office coffee machine is broken.", False),
    ("What database are we on for the analytics service?", "The team offsite is in Porto in May.", False),
    ("Remind me how much the annual plan costs.", "Raj prefers dark mode in the editor.", False),
    ("Did legal sign off on the refund wording?", "The CI pipeline takes 14 minutes.", False),
]

ENTITIES = [
    (
        EntityMention("Dana", "Dana owns the checkout migration."),
        EntityMention("Dana Kim", "Dana Kim leads checkout work."),
        True,
    ),
    (
        EntityMention("Bob Chen", "Bob Chen approved the budget."),
        EntityMention("Robert Chen", "Robert Chen is the finance lead."),
        True,
    ),
    (
        EntityMention("Dr. Maria Lopez", "Dr. Maria Lopez reviews the contracts."),
        EntityMention("Maria Lopez", "Maria Lopez is our counsel."),
        True,
    ),
    (
        EntityMention("AWS", "We host the gateway on AWS."),
        EntityMention("Amazon Web Services", "Amazon Web Services bills us monthly."),
        True,
    ),
    (
        EntityMention("the checkout migration", "The checkout migration is blocked."),
        EntityMention("checkout migration", "Checkout migration needs the tax table."),
        True,
    ),
    (
        EntityMention("Dana Kim", "Dana Kim leads checkout work."),
        EntityMention("Dana Lee", "Dana Lee designs the mobile app."),
        False,
    ),
    (EntityMention("Priya", "Priya runs the data team."), EntityMention("Raj", "Raj runs support."), False),
    (
        EntityMention("pricing page copy v3", "Copy v3 awaits legal review."),
        EntityMention("pricing page copy v2", "Copy v2 was rejected."),
        False,
    ),
    (
        EntityMention("Postgres", "Analytics runs on Postgres."),
        EntityMention("Temporal", "Background work runs on Temporal."),
        False,
    ),
    (
        EntityMention("Sam Patel", "Sam Patel is the designer."),
        EntityMention("Sam Ortiz", "Sam Ortiz handles payroll."),
        False,
    ),
]

RELATIONS = [
    (
        "We will raise prices by 10% next quarter.",
        "We will not raise prices next quarter.",
        Relation.CONTRADICTS,
    ),
    ("Legal approved the refund line.", "Legal rejected the refund line.", Relation.CONTRADICTS),
    (
        "The public API is enabled for beta users.",
        "The public API is disabled for beta users.",
        Relation.CONTRADICTS,
    ),
    ("Dana can attend the Friday review.", "Dana cannot attend the Friday review.", Relation.CONTRADICTS),
    (
        "The pricing page launches on 2026-03-14.",
        "Launch of the pricing page is on 2026-03-14.",
        Relation.RESTATES,
    ),
    ("Dana owns the checkout migration.", "The checkout migration is owned by Dana.", Relation.RESTATES),
    ("The gateway runs on Postgres 16.", "Postgres 16 backs the gateway.", Relation.RESTATES),
    ("The checkout migration is 40% done.", "The checkout migration is 70% done.", Relation.UPDATES),
    ("We have 120 beta signups.", "We have 450 beta signups.", Relation.UPDATES),
    ("Sprint 12 closed 8 tickets.", "Sprint 12 closed 14 tickets.", Relation.UPDATES),
]

EPISODES = [
    "User: The pricing page needs a new refund line. Assistant: I drafted copy v3 with a 30-day refund line "
    "and sent it to legal for review. User: Good, launch stays on March 14.",
    "User: Dana is taking the checkout migration. Assistant: Noted. She needs the tax rate table before "
    "starting, so the migration is blocked on finance exporting it.",
    "User: Book me a flight to Lisbon for the offsite. Assistant: Booked TAP 1353 on May 4, aisle seat, "
    "and a hotel near Cais do Sodré for three nights.",
]
ABOUT = [
    ("Pricing page copy v3 awaits legal review of its refund line.", 0),
    ("The pricing page launches on March 14.", 0),
    ("Dana owns the checkout migration.", 1),
    ("The checkout migration is blocked on the tax rate table.", 1),
    ("The user flies to Lisbon on TAP 1353 on May 4.", 2),
    ("The hotel for the offsite is near Cais do Sodré.", 2),
]


def _record(name: str, right: int, total: int) -> float:
    ACCURACY[name] = right / total
    print(f"local judge accuracy, {name}: {right}/{total}")
    return ACCURACY[name]


async def test_relevance_paraphrase_vs_unrelated(local_judge: LocalJudge) -> None:
    right = 0
    for dialogue, fact, relevant in PARAPHRASE:
        # A walk sees many candidates at once; the others give the distribution the thresholds come from.
        candidates = [fact] + [f for _, f, _ in PARAPHRASE if f != fact]
        (verdict, *_) = await local_judge.rate_relevance(dialogue, candidates)
        right += (verdict.level >= Relevance.RELEVANT) == relevant
    assert _record("relevance (paraphrase vs unrelated)", right, len(PARAPHRASE)) >= 0.8


async def test_same_entity_one_person_vs_two(local_judge: LocalJudge) -> None:
    verdicts = await local_judge.judge_same_entity([(a, b) for a, b, _ in ENTITIES])
    right = sum(v.same == expected for v, (_, _, expected) in zip(verdicts, ENTITIES, strict=True))
    assert _record("same entity (one under two names vs two)", right, len(ENTITIES)) >= 0.8


async def test_contradiction_vs_restatement_vs_progress(local_judge: LocalJudge) -> None:
    verdicts = await local_judge.judge_contradiction([(old, new) for old, new, _ in RELATIONS])
    right = sum(v.relation is expected for v, (_, _, expected) in zip(verdicts, RELATIONS, strict=True))
    assert _record("contradiction / restatement / update", right, len(RELATIONS)) >= 0.8


async def test_fact_about_this_episode_vs_another(local_judge: LocalJudge) -> None:
    matrix = await local_judge.judge_about([fact for fact, _ in ABOUT], EPISODES)
    right = total = 0
    for (_, home), row in zip(ABOUT, matrix, strict=True):
        for j, verdict in enumerate(row):
            right += verdict.about == (j == home)
            total += 1
    assert _record("fact about episode (this vs another)", right, total) >= 0.8


async def test_boundaries_rank_topic_changes_first(local_judge: LocalJudge) -> None:
    units = [
        "Let's fix the pricing page refund line.",
        "I rewrote the refund line to say 30 days.",
        "Legal should review the refund wording before launch.",
        "Moving on: book my flight to Lisbon for the offsite.",
        "I found TAP 1353 on May 4 with an aisle seat.",
        "Also book a hotel in Lisbon near the river for three nights.",
        "Separately, who owns the checkout migration?",
        "Dana owns the checkout migration now.",
        "Dana needs the tax rate table before the migration starts.",
    ]
    scores = await local_judge.score_boundaries(units)
    top = sorted(range(1, len(units)), key=lambda i: -scores[i].first)[:2]
    right = len(set(top) & {3, 6})
    assert _record("boundaries (true topic starts in the top two)", right, 2) >= 0.5
