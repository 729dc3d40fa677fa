"""Namesakes: what the memory knows of an entity decides which one a mention denotes, and a bare shared name
decides nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.entities import (
    Candidate,
    Description,
    clashes,
    describe,
    describe_mention,
    describes,
    holds_role,
    namesakes,
    resolve,
)

CTO = Candidate(1, ("Alex",), describe(["Alex"], ["Alex is our CTO.", "Alex approved the Q3 hiring plan."]))
GYM = Candidate(2, ("Alex from the climbing gym",),
                describe(["Alex from the climbing gym"], ["Alex from the climbing gym belays the user."]))
ROLE = Candidate(3, ("CTO",))
BOTH = {1: 0.9, 2: 0.9, 3: 0.9}


def test_descriptions_come_from_names_and_the_facts_that_describe_them() -> None:
    assert CTO.description == Description(roles=("cto",))
    assert GYM.description == Description(ties=("climbing gym",))
    assert describe(["Priya"], ["Priya works on the platform team."]) == Description(ties=("platform team",))
    assert describe(["Dana"], ["Dana is the user's sister."]) == Description(roles=("user sister",))
    assert describe(["our PM Dana"], []) == Description(roles=("pm",))
    # A fact of what someone did describes nothing.
    assert not describe(["Alex"], ["Alex approved the Q3 hiring plan."])


def test_a_mention_is_described_by_its_name_or_an_apposition_in_its_note() -> None:
    assert describe_mention("Alex", "Alex, our CTO, signed off the cloud budget.") == Description(roles=("cto",))
    assert describe_mention("Alex", "Alex (CTO) signed off the cloud budget.") == Description(roles=("cto",))
    assert describe_mention("Alex from the gym", "Alex from the gym booked the wall.") == Description(ties=("gym",))
    assert not describe_mention("Alex", "Alex said the offsite moves to May.")
    assert not describe_mention("Alex", "Alex, who joined in May, said hello.")
    # Beside the name anywhere in the note; a list of other people describes no one.
    assert describe_mention("Alex", "The user met Alex, our CTO, at lunch.") == Description(roles=("cto",))
    assert not describe_mention("Alex", "Alex, Dana and Raj approved the plan.")


def test_description_matching_and_clashes() -> None:
    assert describes(Description(ties=("gym",)), GYM.description)
    assert describes(Description(roles=("cto",)), CTO.description)
    assert clashes(GYM.description, CTO.description)
    assert not clashes(Description(), CTO.description) and not clashes(Description(roles=("pm",)), Description())
    assert holds_role("the CTO", CTO.description) and not holds_role("the user", describe(["Dana"], [
        "Dana is the user's manager."]))


def test_a_role_resolves_to_its_one_holder_not_to_the_role_itself() -> None:
    assert resolve("the CTO", Description(), [CTO, GYM, ROLE], BOTH).entity_id == 1


def test_a_described_mention_resolves_to_the_namesake_it_describes() -> None:
    said = describe_mention("Alex", "Alex, our CTO, signed off the cloud budget.")
    assert resolve("Alex", said, [CTO, GYM], BOTH).entity_id == 1
    gym = describe_mention("Alex from the gym", "Alex from the gym booked the wall.")
    assert resolve("Alex from the gym", gym, [CTO, GYM], BOTH).entity_id == 2
    # A judge that says no is not overruled by the words.
    assert resolve("Alex from the gym", gym, [CTO, GYM], {1: 0.9}).entity_id is None


def test_a_bare_shared_name_stays_unresolved_among_its_namesakes() -> None:
    resolution = resolve("Alex", Description(), [CTO, GYM], BOTH)
    assert resolution.unresolved and resolution.entity_id is None and set(resolution.among) == {1, 2}


def test_a_namesake_described_otherwise_is_a_new_entity() -> None:
    bakery = describe_mention("Alex from the bakery", "Alex from the bakery sells rye.")
    assert resolve("Alex from the bakery", bakery, [CTO, GYM], BOTH) == resolve("x", Description(), [], {})


def test_one_namesake_resolves_as_the_judge_says() -> None:
    assert resolve("Dana", Description(), [Candidate(7, ("Dana Whitfield",))], {7: 0.8}).entity_id == 7
    assert namesakes("Dana", [Candidate(7, ("Dana Whitfield",)), Candidate(8, ("Raj",))]) == [
        Candidate(7, ("Dana Whitfield",))]


_FIRST = st.sampled_from(["Alex", "Dana", "Sam", "Priya", "Jo"])
_QUALIFIER = st.sampled_from(["", " from the climbing gym", " Lee", " Whitfield", " (CTO)", " on the platform team"])
_NOTE = st.sampled_from(["{} said the budget is fine.", "{} approved it.", "The launch moved, {} said.", "{}"])


@given(_FIRST, st.lists(_QUALIFIER, min_size=2, max_size=4, unique=True), _NOTE,
       st.lists(st.floats(0.5, 1.0), min_size=4, max_size=4))
def test_a_bare_shared_name_never_resolves_with_two_or_more_candidates(
    first: str, qualifiers: list[str], note: str, scores: list[float]
) -> None:
    candidates = [Candidate(i + 1, (first + q,), describe([first + q], [])) for i, q in enumerate(qualifiers)]
    # Whatever the judge says of each, the bare first name in a note that does not describe it settles nothing.
    same = {c.id: s for c, s in zip(candidates, scores, strict=False)}
    description = describe_mention(first, note.format(first))
    resolution = resolve(first, description, candidates, same)
    assert resolution.entity_id is None and set(resolution.among) == {c.id for c in candidates}
